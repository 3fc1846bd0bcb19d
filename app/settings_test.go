package app_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/app"
	"github.com/agentmem/agentmem/internal/testutil"
	"github.com/agentmem/agentmem/llm/llmtest"
	"github.com/agentmem/agentmem/llm/openai"
	"github.com/agentmem/agentmem/retrieve"
)

// openConfig opens agentmem on db with cfg, closed when the test ends.
func openConfig(t *testing.T, db string, cfg app.Config) *app.App {
	t.Helper()
	cfg.DB = db
	mem, err := app.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mem.Close() })
	return mem
}

// appendTurns appends n turns (a user message and the assistant's reply)
// to the user's thread, creating it.
func appendTurns(t *testing.T, mem *app.App, user, thread string, n int) {
	t.Helper()
	ctx := context.Background()
	if err := mem.CreateThread(ctx, user, &agentmem.Thread{ID: thread, AgentID: "helper"}); err != nil && agentmem.ErrorCode(err) != agentmem.ECONFLICT {
		t.Fatal(err)
	}
	var msgs []*agentmem.Message
	for i := range n {
		msgs = append(msgs,
			&agentmem.Message{Role: agentmem.RoleUser, Content: fmt.Sprintf("Question %d of %s about the kayak trip to Norway.", i+1, thread)},
			&agentmem.Message{Role: agentmem.RoleAssistant, Content: fmt.Sprintf("Answer %d about the kayak trip.", i+1)})
	}
	if _, err := mem.AppendMessages(ctx, user, thread, msgs, ""); err != nil {
		t.Fatal(err)
	}
}

// TestConfig_Window: the window strategy's default bound is the server's
// (15 turns, seed 004, unless configured: turns or messages), and a
// request's own bound wins over it.
func TestConfig_Window(t *testing.T) {
	onBackends(t, func(t *testing.T, db string) {
		window := agentmem.ContextRequest{Strategy: agentmem.StrategyWindow}
		for _, tt := range []struct {
			name     string
			server   agentmem.ContextRequest
			req      agentmem.ContextRequest
			wantMsgs int
		}{
			{"Default", agentmem.ContextRequest{}, window, 30},
			{"Turns", agentmem.ContextRequest{Strategy: agentmem.StrategyWindow, WindowTurns: 3}, agentmem.ContextRequest{}, 6},
			{"Messages", agentmem.ContextRequest{Strategy: agentmem.StrategyWindow, WindowMessages: 5}, agentmem.ContextRequest{}, 5},
			{"RequestWins", agentmem.ContextRequest{Strategy: agentmem.StrategyWindow, WindowTurns: 3}, agentmem.ContextRequest{WindowTurns: 4}, 8},
		} {
			t.Run(tt.name, func(t *testing.T) {
				mem := openConfig(t, testDB(t, db, tt.name), app.Config{Context: tt.server})
				appendTurns(t, mem, "alice", "t", 20)
				c, err := mem.BuildContext(context.Background(), "alice", "t", tt.req)
				if err != nil {
					t.Fatal(err)
				}
				if got := c.Telemetry.IncludedMessages; got != tt.wantMsgs {
					t.Fatalf("included messages = %d, want %d", got, tt.wantMsgs)
				}
			})
		}
	})
}

// testDB returns a database of its own for a subtest: another file for
// SQLite, another schema for PostgreSQL.
func testDB(t *testing.T, db, name string) string {
	if strings.HasPrefix(db, "sqlite:") {
		return "sqlite:" + filepath.Join(t.TempDir(), name+".db")
	}
	return testutil.MustCreateSchema(t)
}

// TestConfig_SummarizeTurns: the server's summarize policy by turns
// (seed 001: summarise past 10 turns, keep 5) asks for a summary of a
// short thread that the default policy, by fraction of the budget, leaves
// whole; once written, the context is the summary and the newest 5 turns.
func TestConfig_SummarizeTurns(t *testing.T) {
	onBackends(t, func(t *testing.T, db string) {
		ctx := context.Background()
		byTurns := openConfig(t, db, app.Config{Context: agentmem.ContextRequest{
			Summarize: &agentmem.SummarizePolicy{TriggerTurns: 10, KeepTurns: 5}}})
		appendTurns(t, byTurns, "alice", "t", 12)
		if _, err := byTurns.BuildContext(ctx, "alice", "t", agentmem.ContextRequest{}); err != nil {
			t.Fatal(err)
		}
		waitIdle(t, byTurns) // the summary the build asked for
		c, err := byTurns.BuildContext(ctx, "alice", "t", agentmem.ContextRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if tm := c.Telemetry; tm.SummaryThroughSeq == 0 || tm.IncludedMessages != 10 {
			t.Fatalf("by turns: summary through %d, %d messages; want a summary and 10 messages", tm.SummaryThroughSeq, tm.IncludedMessages)
		}

		byFraction := openConfig(t, testDB(t, db, "fraction"), app.Config{})
		appendTurns(t, byFraction, "alice", "t", 12)
		if _, err := byFraction.BuildContext(ctx, "alice", "t", agentmem.ContextRequest{}); err != nil {
			t.Fatal(err)
		}
		waitIdle(t, byFraction)
		c, err = byFraction.BuildContext(ctx, "alice", "t", agentmem.ContextRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if tm := c.Telemetry; tm.SummaryThroughSeq != 0 || tm.IncludedMessages != 24 {
			t.Fatalf("by fraction: summary through %d, %d messages; want no summary and 24 messages", tm.SummaryThroughSeq, tm.IncludedMessages)
		}
	})
}

// TestConfig_ChunkTurns: chunks hold the server's k turns.
func TestConfig_ChunkTurns(t *testing.T) {
	onBackends(t, func(t *testing.T, db string) {
		mem := openConfig(t, db, app.Config{ChunkTurns: 3})
		appendTurns(t, mem, "alice", "t", 6) // 12 turns: 4 chunks of 3
		waitIdle(t, mem)
		res, err := mem.Search(context.Background(), "alice", agentmem.SearchRequest{Query: "kayak trip", Scopes: []string{agentmem.ScopeChunks}, TopK: 100})
		if err != nil {
			t.Fatal(err)
		}
		var spans []int64
		for _, r := range res.Results {
			spans = append(spans, r.SeqTo-r.SeqFrom+1)
		}
		if !slices.Equal(spans, []int64{3, 3, 3, 3}) {
			t.Fatalf("chunks span %v messages, want 4 chunks of 3", spans)
		}
	})
}

// TestConfig_RecentSummaries: a new thread's context opens with the
// summaries of the server's number of the user's other threads.
func TestConfig_RecentSummaries(t *testing.T) {
	onBackends(t, func(t *testing.T, db string) {
		for _, tt := range []struct {
			n, want int
		}{{0, 2}, {1, 1}, {3, 3}, {-1, 0}} {
			t.Run(fmt.Sprint(tt.n), func(t *testing.T) {
				ctx := context.Background()
				mem := openConfig(t, testDB(t, db, fmt.Sprint("recent", tt.n)), app.Config{RecentSummaries: tt.n})
				for _, th := range []string{"t1", "t2", "t3"} {
					appendTurns(t, mem, "alice", th, 2)
					if _, err := mem.EndThread(ctx, "alice", th); err != nil {
						t.Fatal(err)
					}
				}
				waitIdle(t, mem)
				appendTurns(t, mem, "alice", "now", 1)
				c, err := mem.BuildContext(ctx, "alice", "now", agentmem.ContextRequest{Format: agentmem.FormatText})
				if err != nil {
					t.Fatal(err)
				}
				if got := strings.Count(c.Text, "\n- At "); got != tt.want {
					t.Fatalf("%d recent summaries, want %d:\n%s", got, tt.want, c.Text)
				}
			})
		}
	})
}

// TestConfig_WarnFraction: the telemetry warns when a context uses the
// server's fraction of its budget.
func TestConfig_WarnFraction(t *testing.T) {
	onBackends(t, func(t *testing.T, db string) {
		req := agentmem.ContextRequest{BudgetTokens: 300}
		warned := func(c *agentmem.Context) bool {
			return slices.ContainsFunc(c.Telemetry.Warnings, func(w string) bool { return strings.Contains(w, "of the budget") })
		}
		def := openConfig(t, db, app.Config{})
		appendTurns(t, def, "alice", "t", 3)
		c, err := def.BuildContext(context.Background(), "alice", "t", req)
		if err != nil {
			t.Fatal(err)
		}
		f := c.Telemetry.Fraction
		if f >= 0.8 || f < 0.2 || warned(c) {
			t.Fatalf("default: fraction %.2f, warnings %q; want between 0.2 and 0.8 and no warning", f, c.Telemetry.Warnings)
		}
		low := openConfig(t, testDB(t, db, "low"), app.Config{WarnFraction: f / 2})
		appendTurns(t, low, "alice", "t", 3)
		if c, err = low.BuildContext(context.Background(), "alice", "t", req); err != nil {
			t.Fatal(err)
		}
		if !warned(c) {
			t.Fatalf("warn at %.2f: fraction %.2f, warnings %q; want a warning", f/2, c.Telemetry.Fraction, c.Telemetry.Warnings)
		}
	})
}

// TestConfig_FactsMinScore: facts less relevant than the server's
// minimum (retrieve.DefaultMinRelevance by default) are left out, unless
// the question asks for another minimum.
func TestConfig_FactsMinScore(t *testing.T) {
	onBackends(t, func(t *testing.T, db string) {
		ctx := context.Background()
		facts := func(mem *app.App, minScore float64) []agentmem.SearchResult {
			t.Helper()
			res, err := mem.Facts(ctx, "alice", agentmem.SearchRequest{Query: "kayak trip in Norway", MinScore: minScore, TopK: 10})
			if err != nil {
				t.Fatal(err)
			}
			return res.Facts
		}
		fill := func(mem *app.App) {
			for _, text := range []string{"User booked a kayak trip in Norway.", "User owns a kayak.", "User went to Norway in 2019.", "User plays the cello."} {
				if _, err := mem.CreateMemory(ctx, "alice", agentmem.MemoryInput{Text: text, Category: "fact"}); err != nil {
					t.Fatal(err)
				}
			}
			waitIdle(t, mem) // their vectors
		}
		lenient := openConfig(t, db, app.Config{FactsMinScore: 0.001})
		fill(lenient)
		all := facts(lenient, 0)
		if len(all) != 4 {
			t.Fatalf("%d facts at the server's 0.001, want all 4", len(all))
		}
		def := openConfig(t, testDB(t, db, "default"), app.Config{})
		fill(def)
		some := facts(def, 0)
		if len(some) == 0 || len(some) >= len(all) {
			t.Fatalf("%d facts at the default minimum, %d at 0.001; want fewer, not none", len(some), len(all))
		}
		for _, f := range some {
			if f.Relevance < retrieve.DefaultMinRelevance {
				t.Fatalf("fact %q of relevance %.2f, under the default %.2f", f.Text, f.Relevance, retrieve.DefaultMinRelevance)
			}
			if f.Text == "User plays the cello." {
				t.Fatalf("the unrelated fact %q is among %v", f.Text, some)
			}
		}
		if got := facts(def, 0.001); len(got) != len(all) {
			t.Fatalf("asking for min_score 0.001: %d facts, want %d", len(got), len(all))
		}
	})
}

// modelServer is a fake model that answers each of the memory pipeline's
// prompts and records which model each kind of prompt asked for.
func modelServer(t *testing.T) (getenv func(string) string, models func() map[string][]string) {
	srv := llmtest.NewServer(t)
	var mu sync.Mutex
	seen := map[string][]string{}
	srv.Script(func(req llmtest.ChatCompletionRequest) llmtest.Reply {
		p := req.LastUserMessage()
		kind, reply := "", llmtest.DefaultReply(req)
		switch {
		case len(req.Tools) > 0:
			kind, reply = "stores", llmtest.Text("DONE") // the choice of stores of a facts question
		case strings.HasPrefix(p, "You extract long-term memories"):
			kind, reply = "extract", llmtest.Text(`{"memories": [{"text": "User plans a kayak trip.", "category": "plan", "confidence": 0.95, "importance": 0.9, "slot": "", "negated": false, "seq": 1}]}`)
		case strings.Contains(p, "New statement: "):
			kind, reply = "consolidate", llmtest.Text(`{"op": "add", "id": "", "reason": "new"}`)
		case strings.HasPrefix(p, "You describe a passage"):
			kind, reply = "describe", llmtest.Text(`{"summary": "A kayak trip.", "topics": ["kayak"], "entities": []}`)
		case strings.HasPrefix(p, "You keep track of the things"):
			kind, reply = "entities", llmtest.Text(`{"entities": []}`)
		case strings.HasPrefix(p, "You reflect on"):
			kind, reply = "reflect", llmtest.Text(`{"reflection_flag": "insight", "insights": [{"category": "goals", "insight_text": "User loves the outdoors.", "confidence": 0.9, "importance": "high"}], "topics": ["kayak"]}`)
		case strings.HasPrefix(p, "You keep the profile"):
			kind, reply = "profile", llmtest.Text("Alice loves kayaking.")
		case strings.HasPrefix(p, "You are updating a conversation summary"):
			kind, reply = "summary", llmtest.Text("Alice planned a kayak trip.")
		case strings.HasPrefix(p, "Facts:"):
			kind, reply = "facts", llmtest.Text("Alice plans a kayak trip [1].")
		}
		mu.Lock()
		if !slices.Contains(seen[kind], req.Model) {
			seen[kind] = append(seen[kind], req.Model)
		}
		mu.Unlock()
		return reply
	})
	getenv = func(k string) string {
		return map[string]string{"OPENAI_BASE_URL": srv.BaseURL(), "OPENAI_API_KEY": "test"}[k]
	}
	models = func() map[string][]string {
		mu.Lock()
		defer mu.Unlock()
		out := map[string][]string{}
		for k, v := range seen {
			out[k] = slices.Clone(v)
		}
		return out
	}
	return getenv, models
}

// useModel stores a memory, appends a turn naming a place, ends the
// thread and asks a question: every prompt of the pipeline is sent.
func useModel(t *testing.T, mem *app.App) {
	t.Helper()
	ctx := context.Background()
	// A memory like the one the model extracts, which consolidation
	// then asks the model about.
	if _, err := mem.CreateMemory(ctx, "alice", agentmem.MemoryInput{Text: "User owns a kayak.", Category: "fact"}); err != nil {
		t.Fatal(err)
	}
	appendTurns(t, mem, "alice", "t", 1)
	if _, err := mem.EndThread(ctx, "alice", "t"); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, mem)
	if _, err := mem.Facts(ctx, "alice", agentmem.SearchRequest{Query: "kayak"}); err != nil {
		t.Fatal(err)
	}
}

// TestConfig_Models: summaries, extraction and reflection ask for their
// own models, the main model when not set.
func TestConfig_Models(t *testing.T) {
	onBackends(t, func(t *testing.T, db string) {
		want := func(summary, extract, reflect, main string) map[string][]string {
			return map[string][]string{"summary": {summary}, "describe": {summary}, "extract": {extract}, "consolidate": {extract},
				"entities": {extract}, "reflect": {reflect}, "profile": {reflect}, "facts": {main}, "stores": {main}}
		}
		for _, tt := range []struct {
			name string
			cfg  app.Config
			want map[string][]string
		}{
			{"Separate", app.Config{LLMModel: "main", SummaryModel: "sum", ExtractModel: "ext", ReflectModel: "refl"}, want("sum", "ext", "refl", "main")},
			{"Main", app.Config{LLMModel: "main"}, want("main", "main", "main", "main")},
		} {
			t.Run(tt.name, func(t *testing.T) {
				getenv, models := modelServer(t)
				tt.cfg.Getenv = getenv
				useModel(t, openConfig(t, testDB(t, db, tt.name), tt.cfg))
				got := models()
				for kind, w := range tt.want {
					if !slices.Equal(got[kind], w) {
						t.Errorf("%s prompts asked for models %q, want %q", kind, got[kind], w)
					}
				}
			})
		}
	})
}

// TestConfig_InsightMinConfidence: insights under the server's confidence
// threshold are dropped.
func TestConfig_InsightMinConfidence(t *testing.T) {
	onBackends(t, func(t *testing.T, db string) {
		for _, tt := range []struct {
			min  float64
			want int
		}{{0, 1}, {0.95, 0}} { // the model's insight has confidence 0.9
			t.Run(fmt.Sprint(tt.min), func(t *testing.T) {
				getenv, _ := modelServer(t)
				mem := openConfig(t, testDB(t, db, fmt.Sprint("conf", tt.min)), app.Config{Getenv: getenv, InsightMinConfidence: tt.min})
				useModel(t, mem)
				kind := agentmem.MemoryInsight
				ins, _, err := mem.FindMemories(context.Background(), "alice", agentmem.MemoryFilter{Kind: &kind})
				if err != nil {
					t.Fatal(err)
				}
				if len(ins) != tt.want {
					t.Fatalf("%d insights, want %d", len(ins), tt.want)
				}
			})
		}
	})
}

// TestConfig_DoneJobsRetention: with a retention, the jobs that are done
// are deleted once it has passed (here at once); without one (0, the
// library's default) they are kept.
func TestConfig_DoneJobsRetention(t *testing.T) {
	onBackends(t, func(t *testing.T, db string) {
		ctx := context.Background()
		jobs := func(mem *app.App, status string) int {
			t.Helper()
			f := agentmem.JobFilter{Limit: agentmem.MaxPageSize}
			if status != "" {
				f.Status = &status
			}
			page, _, err := mem.Store().FindJobs(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			return len(page)
		}
		for _, retention := range []time.Duration{0, time.Millisecond} {
			mem := openConfig(t, db, app.Config{DoneJobsRetention: retention})
			appendTurns(t, mem, fmt.Sprint("u", retention), "t", 2)
			for i := 0; ; i++ {
				idle := jobs(mem, agentmem.JobQueued)+jobs(mem, agentmem.JobRunning) == 0
				if done := jobs(mem, agentmem.JobDone); idle && (retention == 0 && done > 0 || retention > 0 && done == 0) {
					break
				}
				if i == 1000 {
					t.Fatalf("retention %v: %d jobs done, %d queued or running after 20 s", retention, jobs(mem, agentmem.JobDone),
						jobs(mem, agentmem.JobQueued)+jobs(mem, agentmem.JobRunning))
				}
				time.Sleep(20 * time.Millisecond)
			}
			if retention > 0 && jobs(mem, "") != 0 {
				t.Fatalf("retention %v: jobs left %d", retention, jobs(mem, ""))
			}
			mem.Close()
		}
	})
}

// TestConfig_QueryEmbedTimeout: with the model's embeddings, a search
// whose query the embeddings server does not embed (it hangs) gives up
// after the query timeout and searches full-text only, saying so, while
// the indexing client keeps its own, longer timeout; once the queries'
// breaker is open, a search does not wait at all, and a context build
// never waits longer than a search.
func TestConfig_QueryEmbedTimeout(t *testing.T) {
	fake := llmtest.NewServer(t)
	fake.Script(func(llmtest.ChatCompletionRequest) llmtest.Reply {
		return llmtest.Text(`{"memories": [], "entities": []}`)
	})
	const timeout = 300 * time.Millisecond
	mem := openConfig(t, "sqlite:"+filepath.Join(t.TempDir(), "a.db"), app.Config{
		Getenv: func(k string) string {
			return map[string]string{"OPENAI_BASE_URL": fake.BaseURL(), "OPENAI_API_KEY": "test"}[k]
		},
		Embedder: "openai", EmbedModel: "fake-embedding", QueryEmbedTimeout: timeout,
		ModelClient: func(c *openai.Config) { c.Timeout, c.BreakerThreshold, c.BreakerCooldown = time.Minute, 2, time.Minute },
	})
	ctx := context.Background()
	appendTurns(t, mem, "alice", "t", 2)
	waitIdle(t, mem)
	fake.Down(llmtest.Hang())
	search := func() (time.Duration, *agentmem.SearchResponse) {
		t.Helper()
		start := time.Now()
		res, err := mem.Search(ctx, "alice", agentmem.SearchRequest{Query: "kayak trip"})
		if err != nil {
			t.Fatal(err)
		}
		return time.Since(start), res
	}
	for i := range 2 { // the breaker's threshold
		took, res := search()
		if took < timeout || took > timeout+2*time.Second {
			t.Fatalf("search %d took %v, want about %v", i, took, timeout)
		}
		if len(res.Results) == 0 || !slices.Equal(res.Signals, []string{"fulltext"}) || len(res.Warnings) == 0 {
			t.Fatalf("search %d: signals %v, warnings %q, %d results; want full-text results and a warning", i, res.Signals, res.Warnings, len(res.Results))
		}
	}
	if took, _ := search(); took > timeout/2 {
		t.Fatalf("with the breaker open, search took %v", took)
	}
	start := time.Now()
	if _, err := mem.BuildContext(ctx, "alice", "t", agentmem.ContextRequest{Input: "kayak trip"}); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > timeout/2 {
		t.Fatalf("context build took %v", took)
	}
}

// TestMemories_HoldFromWhenSaid: a memory drawn from turns told in the
// past (an imported history) holds from when they were told, not from
// when it was extracted.
func TestMemories_HoldFromWhenSaid(t *testing.T) {
	onBackends(t, func(t *testing.T, db string) {
		ctx := context.Background()
		mem := openConfig(t, db, app.Config{})
		if err := mem.CreateThread(ctx, "alice", &agentmem.Thread{ID: "2024"}); err != nil {
			t.Fatal(err)
		}
		said := time.Date(2024, 3, 2, 9, 30, 0, 0, time.UTC)
		if _, err := mem.AppendMessages(ctx, "alice", "2024", []*agentmem.Message{{Role: agentmem.RoleUser, Content: "I live in Porto.", CreatedAt: said}}, ""); err != nil {
			t.Fatal(err)
		}
		waitIdle(t, mem)
		ms, _, err := mem.FindMemories(ctx, "alice", agentmem.MemoryFilter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(ms) != 1 || !ms[0].ValidFrom.Equal(said) || ms[0].CreatedAt.Before(time.Now().Add(-time.Minute)) {
			t.Fatalf("memories %+v, want one valid from %v, created now", ms, said)
		}
	})
}
