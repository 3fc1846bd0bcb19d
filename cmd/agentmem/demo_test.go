package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/agentmem/agentmem/llm/llmtest"
)

// TestDemo runs `agentmem demo` without a model: the three scenarios of
// seed 001 complete, and what each shows is there — memories recalled in
// a later session, a new session opening with the profile and the last
// session's summary, and a long session compressed into a summary.
func TestDemo(t *testing.T) {
	t.Parallel() // a server of its own; mostly waiting for its jobs
	if testing.Short() {
		t.Skip("the demo runs a server and its jobs")
	}
	var out, errOut bytes.Buffer
	getenv := func(string) string { return "" }
	if err := run(context.Background(), []string{"demo", "--wait", "1m"}, getenv, nil, &out, &errOut); err != nil {
		t.Fatalf("demo: %v\n%s\n%s", err, out.String(), errOut.String())
	}
	got := out.String()
	for _, want := range []string{
		"no model: built-in extraction",
		"[fact/plan] User wants to retire at 60.",
		"Reflection on the session: no-insight",
		"search: When does Maya want to retire?\n  - ",
		"memory: User wants to retire at 60.",
		"Maya's profile, version ",
		"(assembled, from 8 memories)",
		"<session_initialization>\n  | ### Key Insights",
		"### Recent Session Summaries\n  | - At ",
		"### Notes\n  | ## Client preferences",
		"- Rebalance towards bonds by 5%.",
		"### Entities\n  | - Lisbon",
		"summary behind: true",
		"Once the summary job ran:",
		"== Done ==",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("demo output lacks %q", want)
		}
	}
	if t.Failed() {
		t.Log(got)
	}
	if !strings.Contains(got, "the summary covers messages 1–") || strings.Contains(got, "the summary covers messages 1–0,") {
		t.Errorf("the long session was not summarised:\n%s", got)
	}
}

// TestDemo_Model runs the demo with a model (a fake OpenAI-compatible
// server answering each of agentmem's prompts as a model would): the
// memories are the model's, reflection draws insights, and Thursday's
// session opens with the profile the model synthesised.
func TestDemo_Model(t *testing.T) {
	t.Parallel() // a server of its own; mostly waiting for its jobs
	if testing.Short() {
		t.Skip("the demo runs a server and its jobs")
	}
	srv := llmtest.NewServer(t)
	srv.Script(func(req llmtest.ChatCompletionRequest) llmtest.Reply {
		p := req.LastUserMessage()
		switch {
		case strings.HasPrefix(p, "You extract long-term memories"):
			if !strings.Contains(p, "retire at 60") {
				return llmtest.Text(`{"memories": []}`)
			}
			return llmtest.Text(`{"memories": [{"text": "User wants to retire at 60.", "category": "plan", "confidence": 0.95, "importance": 0.9, "slot": "retirement-age", "negated": false, "seq": 3}]}`)
		case strings.Contains(p, "New statement: "):
			return llmtest.Text(`{"op": "add", "id": "", "reason": "new"}`)
		case strings.HasPrefix(p, "You describe a passage"):
			return llmtest.Text(`{"summary": "Maya discussed retirement and a house.", "topics": ["retirement"], "entities": ["Lisbon"]}`)
		case strings.HasPrefix(p, "You keep track of the things"):
			return llmtest.Text(`{"entities": [{"name": "Lisbon", "type": "place", "aliases": [], "action": "discussed", "seq": 1}]}`)
		case strings.HasPrefix(p, "You reflect on"):
			return llmtest.Text(`{"reflection_flag": "insight", "insights": [{"category": "goals", "insight_text": "User is saving for a house and for retirement at 60, and fears market volatility.", "confidence": 0.9, "importance": "high"}], "topics": ["retirement", "house"]}`)
		case strings.HasPrefix(p, "You keep the profile"):
			return llmtest.Text("Maya, 35, teaches in Lisbon; she wants to retire at 60 and buy a house next year, and prefers quarterly, data-driven reviews.")
		case strings.HasPrefix(p, "You are updating a conversation summary"):
			return llmtest.Text("Maya and her advisor went over her goals.")
		}
		return llmtest.DefaultReply(req)
	})
	var out, errOut bytes.Buffer
	getenv := func(k string) string {
		if k == "OPENAI_BASE_URL" {
			return srv.BaseURL()
		}
		if k == "OPENAI_API_KEY" {
			return "test"
		}
		return ""
	}
	if err := run(context.Background(), []string{"demo", "--wait", "1m"}, getenv, nil, &out, &errOut); err != nil {
		t.Fatalf("demo: %v\n%s\n%s", err, out.String(), errOut.String())
	}
	got := out.String()
	for _, want := range []string{
		"(with the configured model)",
		"[fact/plan] User wants to retire at 60.",
		"[insight/goals] User is saving for a house and for retirement at 60",
		"Reflection on the session: processed (topics: retirement, house)",
		"Maya's profile, version ",
		"(llm, from ",
		"### Key Insights\n  | Maya, 35, teaches in Lisbon",
		"### Recent Session Summaries\n  | - At ",
		": Maya and her advisor went over her goals.",
		"== Done ==",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("demo output lacks %q", want)
		}
	}
	if t.Failed() {
		t.Log(got)
	}
}
