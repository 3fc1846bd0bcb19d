package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/retrieve"
	"github.com/agentmem/agentmem/window"
)

// demoArgs are demo's arguments.
type demoArgs struct {
	db   string
	wait time.Duration
}

func (a *demoArgs) flags(fs *flag.FlagSet) {
	fs.StringVar(&a.db, "db", "", "SQLite file to keep the demo's data in (default: a temporary one, removed afterwards)")
	a.wait = 2 * time.Minute
	fs.Var(value{&a.wait}, "wait", "how long to wait for the background jobs of a step")
}

// runDemo replays seed 001's three scenarios through the HTTP API of a
// real `serve` on a fresh SQLite file, and prints what happens at each
// step: recall across sessions; a new session that opens with what
// reflection learned; compression during a long session. It needs no
// model; with one configured (OPENAI_API_KEY or OPENAI_BASE_URL) memories,
// insights, summaries and the profile are the model's.
func runDemo(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) (err error) {
	var a demoArgs
	_, fs, err := parseCommand("demo", args, getenv, stdout, &a)
	if err != nil {
		return err
	}
	keep, wait := &a.db, &a.wait
	if fs.NArg() > 0 {
		return fmt.Errorf("demo: unexpected argument %q", fs.Arg(0))
	}
	path := *keep
	if path == "" {
		dir, err := os.MkdirTemp("", "agentmem-demo-")
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, os.RemoveAll(dir)) }()
		path = filepath.Join(dir, "demo.db")
	}

	// A real serve, on a free port, logging nothing but warnings.
	srvCtx, stop := context.WithCancel(ctx)
	defer stop()
	pr, pw := io.Pipe()
	served := make(chan error, 1)
	go func() {
		served <- runServe(srvCtx, []string{"--addr", "127.0.0.1:0", "--db", "sqlite:" + path, "--sqlite-synchronous", "NORMAL",
			"--idle-timeout", "0", "--log-level", "warn"}, getenv, pw, stderr)
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		return fmt.Errorf("demo: serve did not start: %w", errors.Join(err, <-served))
	}
	go io.Copy(io.Discard, pr)
	base := strings.TrimSpace(strings.TrimPrefix(line, "listening on "))
	defer func() {
		stop()
		if serr := <-served; serr != nil && !errors.Is(serr, context.Canceled) {
			err = errors.Join(err, serr)
		}
	}()

	d := &demo{base: base, out: stdout, wait: *wait, http: &http.Client{Timeout: time.Minute}}
	model := "no model: built-in extraction, extractive summaries, a profile assembled from memories"
	if getenv("OPENAI_API_KEY") != "" || getenv("OPENAI_BASE_URL") != "" || getenv("AZURE_OPENAI_ENDPOINT") != "" {
		model = "with the configured model"
	}
	fmt.Fprintf(stdout, "agentmem demo: three scenarios against %s (%s)\n", base, model)
	return d.run(ctx)
}

// demo drives a serve through its HTTP API.
type demo struct {
	base string
	out  io.Writer
	wait time.Duration
	http *http.Client
}

const demoUser = "maya"

func (d *demo) run(ctx context.Context) error {
	for _, scenario := range []func(context.Context) error{d.recall, d.reflected, d.compressed} {
		if err := scenario(ctx); err != nil {
			return err
		}
	}
	d.step("Done")
	return nil
}

// recall is scenario 1: recall across sessions.
func (d *demo) recall(ctx context.Context) error {
	u := "/v1/users/" + demoUser
	d.step("Scenario 1: recall across sessions")
	d.say("Session 1 (Monday): Maya talks to her financial advisor agent.")
	session1 := []string{
		"user", "Hi, I'm Maya. I'm 35 years old and I work as a teacher in Lisbon.",
		"assistant", "Nice to meet you, Maya! How can I help with your finances?",
		"user", "I want to retire at 60. I'm worried about market volatility eating my savings.",
		"assistant", "That is a common concern. A diversified portfolio and an emergency fund help.",
		"user", "I have two daughters and I'm planning to buy a house next year.",
		"assistant", "Then we should balance saving for the house with your retirement contributions.",
		"user", "I prefer quarterly reviews, and I like data-driven recommendations.",
		"assistant", "Noted: quarterly reviews with the numbers behind each recommendation.",
	}
	if err := d.thread(ctx, "monday", session1); err != nil {
		return err
	}
	if err := d.post(ctx, u+"/threads/monday/end", nil, nil); err != nil {
		return err
	}
	d.say("The session ends: jobs index it (windows, chunks, memories), summarise it, reflect on it and synthesise the profile.")
	if err := d.settle(ctx); err != nil {
		return err
	}
	var mems struct{ Data []*agentmem.Memory }
	if err := d.get(ctx, u+"/memories", &mems); err != nil {
		return err
	}
	d.say(fmt.Sprintf("Memories learned (%d):", len(mems.Data)))
	for _, m := range mems.Data {
		d.item(fmt.Sprintf("[%s/%s] %s", m.Kind, m.Category, m.Text))
	}
	var ref agentmem.Reflection
	if err := d.get(ctx, u+"/threads/monday/reflection", &ref); err != nil {
		return err
	}
	d.say(fmt.Sprintf("Reflection on the session: %s (topics: %s). %s", ref.Status, strings.Join(ref.Topics, ", "), ref.Reason))

	d.say("Session 2 (Thursday): Maya asks what the agent remembers.")
	for _, q := range []string{"When does Maya want to retire?", "How often does she want reviews?"} {
		var res retrieve.Response
		if err := d.post(ctx, u+"/search", map[string]any{"query": q, "top_k": 3, "scopes": []string{"memories", "messages"}}, &res); err != nil {
			return err
		}
		d.say("search: " + q)
		for _, r := range res.Results {
			d.item(fmt.Sprintf("%.2f %s: %s", r.Score, r.Kind, oneLine(r.Text, 100)))
		}
	}
	var facts retrieve.FactsResponse
	if err := d.post(ctx, u+"/facts", map[string]any{"query": "What are Maya's financial goals?"}, &facts); err != nil {
		return err
	}
	d.say("facts: What are Maya's financial goals?")
	d.block(facts.Answer)

	return nil
}

// reflected is scenario 2: a new session opens with what reflection
// learned.
func (d *demo) reflected(ctx context.Context) error {
	u := "/v1/users/" + demoUser
	d.step("Scenario 2: a new session opens with what reflection learned")
	d.say("The advisor agent keeps its own notes about Maya, edited by section:")
	note := "## Client preferences\n- Quarterly reviews, with the numbers behind each recommendation.\n\n## Open items\n- Compare mortgage offers before the next meeting."
	if err := d.post(ctx, u+"/agents/advisor/notes/ops", map[string]any{"operation": "overwrite", "content": note}, nil); err != nil {
		return err
	}
	if err := d.post(ctx, u+"/agents/advisor/notes/ops", map[string]any{"operation": "replace_section_by_header", "section_header": "## Open items",
		"content": "- Compare mortgage offers before the next meeting.\n- Rebalance towards bonds by 5%."}, nil); err != nil {
		return err
	}
	var notes agentmem.Notes
	if err := d.get(ctx, u+"/agents/advisor/notes", &notes); err != nil {
		return err
	}
	d.block(notes.Content)
	if err := d.post(ctx, u+"/threads", map[string]any{"id": "thursday", "agent_id": "advisor"}, nil); err != nil {
		return err
	}
	var profile agentmem.Profile
	if err := d.get(ctx, u+"/profile", &profile); err != nil {
		return err
	}
	d.say(fmt.Sprintf("Maya's profile, version %d (%s, from %d memories):", profile.Version, profile.Method, len(profile.Sources)))
	d.block(profile.Text)
	var c window.Context
	if err := d.post(ctx, u+"/threads/thursday/context", map[string]any{"input": "Can we review my plan for the house in Lisbon?", "budget_tokens": 2000, "format": "text"}, &c); err != nil {
		return err
	}
	d.say("The first context of Thursday's session, before Maya said a word in it:")
	d.block(c.Text)
	d.say("sections (tokens): " + sectionLine(c.Telemetry.Sections))

	return nil
}

// compressed is scenario 3: compression during a long session.
func (d *demo) compressed(ctx context.Context) error {
	u := "/v1/users/" + demoUser
	var c window.Context
	d.step("Scenario 3: compression during a long session")
	var long []string
	topics := []string{"the house deposit", "index funds", "the emergency fund", "school fees", "pension contributions", "insurance"}
	for i := range 60 {
		t := topics[i%len(topics)]
		long = append(long, "user", fmt.Sprintf("Question %d: what should I do about %s this month?", i+1, t),
			"assistant", fmt.Sprintf("Answer %d: for %s, keep it simple and automatic; review it at our quarterly meeting.", i+1, t))
	}
	if err := d.thread(ctx, "long", long); err != nil {
		return err
	}
	req := map[string]any{"input": "Summarise where we are.", "budget_tokens": 700, "strategy": "summarize", "format": "messages"}
	if err := d.post(ctx, u+"/threads/long/context", req, &c); err != nil {
		return err
	}
	tel := c.Telemetry
	d.say(fmt.Sprintf("120 messages, a budget of 700 tokens: %d used, %d messages included, %d left out; summary behind: %v (a job is writing it; meanwhile the history is trimmed).",
		tel.UsedTokens, tel.IncludedMessages, tel.OmittedMessages, tel.SummaryBehind))
	if err := d.settle(ctx); err != nil {
		return err
	}
	if err := d.post(ctx, u+"/threads/long/context", req, &c); err != nil {
		return err
	}
	tel = c.Telemetry
	d.say(fmt.Sprintf("Once the summary job ran: %d tokens used, the summary covers messages 1–%d, %d newest messages verbatim; sections: %s.",
		tel.UsedTokens, tel.SummaryThroughSeq, tel.IncludedMessages, sectionLine(tel.Sections)))
	for _, m := range c.Messages {
		if m.Role == agentmem.RoleSystem {
			d.block(oneLine(m.Content, 600))
			break
		}
	}
	return nil
}

// thread creates a thread of the advisor agent and appends role/content
// pairs to it.
func (d *demo) thread(ctx context.Context, id string, pairs []string) error {
	if err := d.post(ctx, "/v1/users/"+demoUser+"/threads", map[string]any{"id": id, "agent_id": "advisor"}, nil); err != nil {
		return err
	}
	var msgs []map[string]string
	for i := 0; i+1 < len(pairs); i += 2 {
		msgs = append(msgs, map[string]string{"role": pairs[i], "content": pairs[i+1]})
		if id != "long" {
			d.item(fmt.Sprintf("%s: %s", pairs[i], pairs[i+1]))
		}
	}
	for start := 0; start < len(msgs); start += agentmem.MaxBatchMessages {
		batch := msgs[start:min(start+agentmem.MaxBatchMessages, len(msgs))]
		if err := d.post(ctx, "/v1/users/"+demoUser+"/threads/"+id+"/messages", map[string]any{"messages": batch}, nil); err != nil {
			return err
		}
	}
	return nil
}

// settle waits until no job is queued or running (the jobs of the step
// ran), at most d.wait.
func (d *demo) settle(ctx context.Context) error {
	deadline := time.Now().Add(d.wait)
	quiet := 0
	for time.Now().Before(deadline) {
		busy := false
		for _, status := range []string{agentmem.JobQueued, agentmem.JobRunning} {
			var page struct{ Data []*agentmem.Job }
			if err := d.get(ctx, "/v1/jobs?status="+status, &page); err != nil {
				return err
			}
			for _, j := range page.Data {
				busy = busy || j.RunAt.Before(time.Now().Add(time.Second))
			}
		}
		if quiet = quiet + 1; busy {
			quiet = 0
		}
		if quiet == 2 { // idle twice in a row: a job enqueued by the last one had its chance
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return fmt.Errorf("demo: background jobs still running after %v", d.wait)
}

func (d *demo) get(ctx context.Context, path string, out any) error {
	return d.call(ctx, http.MethodGet, path, nil, out)
}

func (d *demo) post(ctx context.Context, path string, in, out any) error {
	return d.call(ctx, http.MethodPost, path, in, out)
}

func (d *demo) call(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, d.base+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := d.http.Do(req)
	if err != nil {
		return fmt.Errorf("demo: %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("demo: %s %s: %w", method, path, err)
	}
	if resp.StatusCode >= 300 {
		return fmt.Errorf("demo: %s %s: %s: %s", method, path, resp.Status, strings.TrimSpace(string(b)))
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("demo: %s %s: %w", method, path, err)
	}
	return nil
}

func (d *demo) step(title string) { fmt.Fprintf(d.out, "\n== %s ==\n", title) }
func (d *demo) say(s string)      { fmt.Fprintln(d.out, s) }
func (d *demo) item(s string)     { fmt.Fprintln(d.out, "  - "+s) }
func (d *demo) block(s string) {
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		fmt.Fprintln(d.out, "  | "+l)
	}
}

// oneLine returns s on one line, cut after n characters.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// sectionLine lists telemetry sections as "name=tokens, …" in a stable
// order.
func sectionLine(sections map[string]int) string {
	var parts []string
	for _, name := range []string{"system", "profile", "notes", "recent_summaries", "entities", "summary", "memories", "messages", "input", "overhead"} {
		if n, ok := sections[name]; ok {
			parts = append(parts, fmt.Sprintf("%s=%d", name, n))
		}
	}
	return strings.Join(parts, ", ")
}
