package window_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/internal/testutil"
	"github.com/agentmem/agentmem/llm/llmtest"
	"github.com/agentmem/agentmem/window"
)

// claim takes the queued summarize job of the store as a worker would.
func claim(t *testing.T, s agentmem.Store) *agentmem.Job {
	t.Helper()
	jobs, err := s.ClaimJobs(ctx, "test", []string{window.SummarizeJobKind}, 1, time.Minute)
	if err != nil || len(jobs) != 1 {
		t.Fatalf("claim: %d jobs, %v; want the summarize job", len(jobs), err)
	}
	return jobs[0]
}

var lagging = window.Request{Input: "What did we decide?", BudgetTokens: 400, Strategy: window.StrategySummarize,
	Summarize: &window.SummarizePolicy{TriggerFraction: 0.7, KeepFraction: 0.4}}

// TestSummarize_LagThenCatchUp: a long thread without a summary is trimmed
// to the budget, says its summary is behind and asks for one; once the job
// ran (extractive, no model), the context holds the summary and the newest
// turns, and is no longer behind.
func TestSummarize_LagThenCatchUp(t *testing.T) { testutil.Backends(t, testLagThenCatchUp) }

func testLagThenCatchUp(t *testing.T, s agentmem.Store) {
	MustThread(t, s, "alice", "t", conversation(40)...)
	b := MustBuilder(s, window.Options{})

	c, err := b.Build(ctx, "alice", "t", lagging)
	if err != nil {
		t.Fatal(err)
	}
	tel := c.Telemetry
	if !tel.SummaryBehind || tel.SummaryJob == "" || tel.SummaryThroughSeq != 0 || tel.SummaryLag != 80 || tel.UsedTokens > 400 {
		t.Fatalf("before the summary: %+v", tel)
	}
	j := claim(t, s)
	var stored []*agentmem.Summary
	hook := func(_ context.Context, sum *agentmem.Summary) error { stored = append(stored, sum); return nil }
	if err := (&window.Summarizer{Store: s, Stored: hook}).Run(ctx, j); err != nil {
		t.Fatal(err)
	}
	if err := s.CompleteJob(ctx, j.UserID, j.ID, "test"); err != nil {
		t.Fatal(err)
	}
	sum, err := s.FindSummary(ctx, "alice", "t")
	if err != nil {
		t.Fatal(err)
	}
	// Stored saw each version, the newest last.
	if len(stored) == 0 || stored[len(stored)-1].Version != sum.Version || stored[len(stored)-1].Text != sum.Text {
		t.Fatalf("Stored was called with %d summaries; want the newest, version %d, last", len(stored), sum.Version)
	}
	if sum.Method != agentmem.SummaryExtractive || sum.Text == "" || sum.ThroughSeq < 60 || len(strings.Fields(sum.Text)) > 150 {
		t.Fatalf("summary %+v", sum)
	}
	c, err = b.Build(ctx, "alice", "t", lagging)
	if err != nil {
		t.Fatal(err)
	}
	tel = c.Telemetry
	if tel.SummaryBehind || tel.SummaryThroughSeq != sum.ThroughSeq || tel.Sections["summary"] == 0 || tel.UsedTokens > 400 {
		t.Fatalf("after the summary: %+v", tel)
	}
	if first := c.Messages[1]; first.Role != agentmem.RoleUser || !strings.HasPrefix(first.Content, "Turn ") {
		t.Fatalf("the verbatim part should start with a turn: %+v", c.Messages[:2])
	}
	// Running the same job again stores nothing new.
	if err := (&window.Summarizer{Store: s}).Run(ctx, j); err != nil {
		t.Fatal(err)
	}
	if again, _ := s.FindSummary(ctx, "alice", "t"); again.Version != sum.Version {
		t.Fatalf("a re-run wrote version %d over %d", again.Version, sum.Version)
	}
}

// TestSummarize_Model: with a model, the summary is the model's update of
// the old summary with the new turns (seed 001's prompt).
func TestSummarize_Model(t *testing.T) {
	s := testutil.MustOpenSQLite(t)
	MustThread(t, s, "alice", "t", conversation(40)...)
	b := MustBuilder(s, window.Options{})
	if _, err := b.Build(ctx, "alice", "t", lagging); err != nil {
		t.Fatal(err)
	}
	srv := llmtest.NewServer(t)
	srv.Script(func(llmtest.ChatCompletionRequest) llmtest.Reply {
		return llmtest.Text("Alice is planning a Lisbon trip, a grocery budget and a party for Maria.")
	})
	sm := &window.Summarizer{Store: s, Chat: testutil.NewChat(t, srv.BaseURL()), ChunkTokens: 800}
	if err := sm.Run(ctx, claim(t, s)); err != nil {
		t.Fatal(err)
	}
	sum, err := s.FindSummary(ctx, "alice", "t")
	if err != nil {
		t.Fatal(err)
	}
	if sum.Method != agentmem.SummaryLLM || !strings.Contains(sum.Text, "Lisbon") || sum.Version < 2 {
		t.Fatalf("summary %+v, want the model's, written in several steps of 800 tokens", sum)
	}
	reqs := srv.ChatRequests()
	if len(reqs) != int(sum.Version) {
		t.Fatalf("%d model calls for %d versions", len(reqs), sum.Version)
	}
	first, second := reqs[0].LastUserMessage(), reqs[1].LastUserMessage()
	if !strings.Contains(first, "(none yet)") || !strings.Contains(first, "user: Turn 1:") ||
		!strings.Contains(second, "Previous summary:\nAlice is planning") {
		t.Fatalf("prompts:\n%s\n---\n%s", first, second)
	}
}

// TestSummarize_ModelFails: a failing model fails the job (the worker
// retries it) and writes nothing, while the context trims to the budget;
// on the job's last attempt the summary is written extractively instead.
func TestSummarize_ModelFails(t *testing.T) { testutil.Backends(t, testModelFails) }

func testModelFails(t *testing.T, s agentmem.Store) {
	MustThread(t, s, "alice", "t", conversation(40)...)
	b := MustBuilder(s, window.Options{})
	if _, err := b.Build(ctx, "alice", "t", lagging); err != nil {
		t.Fatal(err)
	}
	srv := llmtest.NewServer(t)
	srv.Script(func(llmtest.ChatCompletionRequest) llmtest.Reply { return llmtest.Fail(503) })
	sm := &window.Summarizer{Store: s, Chat: testutil.NewChat(t, srv.BaseURL())}
	j := claim(t, s)
	if err := sm.Run(ctx, j); err == nil {
		t.Fatal("the job succeeded with a failing model")
	}
	if _, err := s.FindSummary(ctx, "alice", "t"); agentmem.ErrorCode(err) != agentmem.ENOTFOUND {
		t.Fatalf("a summary was written: %v", err)
	}
	c, err := b.Build(ctx, "alice", "t", lagging)
	if err != nil || !c.Telemetry.SummaryBehind || c.Telemetry.UsedTokens > 400 {
		t.Fatalf("context while the model fails: %+v, %v", c.Telemetry, err)
	}
	j.Attempts = j.MaxAttempts
	if err := sm.Run(ctx, j); err != nil {
		t.Fatalf("last attempt: %v", err)
	}
	sum, err := s.FindSummary(ctx, "alice", "t")
	if err != nil || sum.Method != agentmem.SummaryExtractive {
		t.Fatalf("after the last attempt: %+v, %v; want an extractive summary", sum, err)
	}
}

func TestSummaryPrompt_Golden(t *testing.T) {
	msgs := conversation(2)
	msgs = append(msgs, &agentmem.Message{Role: agentmem.RoleTool, Content: "ignored"})
	got, err := window.SummaryPrompt("Alice likes Lisbon.", msgs, 100)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "summary_prompt", []byte(got))
}

func TestExtractive(t *testing.T) {
	msgs := []*agentmem.Message{
		{Role: agentmem.RoleUser, Content: "Hi there! I am planning a trip to Lisbon in May. My budget is 2000 euros."},
		{Role: agentmem.RoleAssistant, Content: "Great. Lisbon in May is warm. Do you prefer hotels or apartments?"},
		{Role: agentmem.RoleUser, Content: "Apartments. Also, my daughter Maria is coming to Lisbon with me."},
		{Role: agentmem.RoleAssistant, Content: "Noted. I will look for apartments in Lisbon for two."},
	}
	got := window.Extractive("", msgs, 30)
	if n := len(strings.Fields(got)); n > 30 || n == 0 {
		t.Fatalf("%d words: %q", n, got)
	}
	for _, want := range []string{"Lisbon in May", "2000 euros"} {
		if !strings.Contains(got, want) {
			t.Errorf("summary %q lacks %q", got, want)
		}
	}
	if strings.Contains(got, "Hi there") {
		t.Errorf("summary %q keeps a greeting", got)
	}
	// Cumulative: the old summary's salient sentences survive.
	again := window.Extractive(got, []*agentmem.Message{{Role: agentmem.RoleUser, Content: "Thanks!"}}, 30)
	if !strings.Contains(again, "Lisbon") {
		t.Fatalf("cumulative summary lost the old one: %q", again)
	}
}
