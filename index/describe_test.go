package index_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/index"
	"github.com/agentmem/agentmem/internal/testutil"
	"github.com/agentmem/agentmem/llm/llmtest"
)

// TestModelChunkDescriber: with a model, a chunk's summary, topics and
// entities are the model's (validated, deduplicated, capped); a model
// that is down, or whose answer is malformed (not JSON, or not the
// object asked for), leaves the description to the heuristics.
func TestModelChunkDescriber(t *testing.T) {
	srv := llmtest.NewServer(t)
	d := &index.ModelChunkDescriber{Chat: testutil.NewChat(t, srv.BaseURL())}
	turns := []*agentmem.Message{
		{ThreadID: "t", Seq: 1, Role: agentmem.RoleUser, Name: "Alice", Content: "We adopted a puppy called Mochi in Porto."},
		{ThreadID: "t", Seq: 2, Role: agentmem.RoleAssistant, Content: "Congratulations! How old is Mochi?"},
	}

	srv.Push(llmtest.Text("```json\n" + `{"summary": " Alice adopted a puppy, Mochi, in Porto. ", "topics": ["pets", "pets", " adoption ", "", "a", "b", "c", "d"],
		"entities": ["Mochi", "Porto", "Alice"]}` + "\n```"))
	got, err := d.DescribeChunk(context.Background(), turns)
	if err != nil {
		t.Fatal(err)
	}
	if got.Summary != "Alice adopted a puppy, Mochi, in Porto." || !slices.Equal(got.Topics, []string{"pets", "adoption", "a", "b", "c"}) ||
		!slices.Equal(got.Entities, []string{"Mochi", "Porto", "Alice"}) {
		t.Fatalf("described %+v", got)
	}
	if p := srv.ChatRequests()[0].LastUserMessage(); !strings.Contains(p, "user (Alice): We adopted a puppy called Mochi in Porto.") {
		t.Fatalf("prompt lacks the turns:\n%s", p)
	}

	for _, bad := range []string{`{"topics": ["x"]}`, `{"summary": ""}`, `{"summary": 3}`, `not json`, `Sure! Alice adopted Mochi.`, `{"summary": "x", "topics": "pets"}`} {
		srv.Push(llmtest.Text(bad))
		got, err := d.DescribeChunk(context.Background(), turns)
		if err != nil || got.Summary != "" || !slices.Contains(got.Entities, "Mochi") {
			t.Errorf("answer %s: %+v, %v; want the heuristic description", bad, got, err)
		}
	}

	srv.Push(llmtest.Fail(500), llmtest.Fail(500), llmtest.Fail(500), llmtest.Fail(500))
	got, err = d.DescribeChunk(context.Background(), turns)
	if err != nil {
		t.Fatal(err)
	}
	if got.Summary != "" || !slices.Contains(got.Entities, "Mochi") || !slices.Contains(got.Entities, "Porto") {
		t.Fatalf("fallback description %+v", got)
	}
}

// TestIndexer_ChunkDescriberMalformed: a model whose descriptions are
// not JSON does not fail the index job: the chunk is stored, described
// by the heuristics (the Fallback's extractive summary, the turns'
// topics and names), and a warning says why.
func TestIndexer_ChunkDescriberMalformed(t *testing.T) {
	s := testutil.MustOpenSQLite(t)
	srv := llmtest.NewServer(t)
	srv.Script(func(llmtest.ChatCompletionRequest) llmtest.Reply {
		return llmtest.Text("Here is a summary of the passage: the user said hello.")
	})
	log, logs := testutil.NewLog()
	fallback := index.HeuristicDescriber{Summarize: func(context.Context, []*agentmem.Message) (string, error) { return "extractive", nil }}
	ix := &index.Indexer{Store: s, Describer: &index.ModelChunkDescriber{Chat: testutil.NewChat(t, srv.BaseURL()), Log: log, Fallback: fallback}}
	if err := s.CreateThread(context.Background(), &agentmem.Thread{UserID: "alice", ID: "t", Status: agentmem.ThreadEnded}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendMessages(context.Background(), "alice", "t", []*agentmem.Message{{Role: agentmem.RoleUser, Content: "hello from Lisbon"}}, agentmem.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.EndThread(context.Background(), "alice", "t"); err != nil {
		t.Fatal(err)
	}
	if err := ix.IndexRange(context.Background(), "alice", "t", 1, 1); err != nil {
		t.Fatalf("IndexRange: %v, want the heuristic description", err)
	}
	cs, err := s.FindChunks(context.Background(), "alice", "t")
	if err != nil || len(cs) != 1 {
		t.Fatalf("chunks: %+v, %v; want one", cs, err)
	}
	if c := cs[0]; c.Summary != "extractive" || !slices.Contains(c.Entities, "Lisbon") {
		t.Fatalf("chunk summary=%q entities=%v, want the fallback's", c.Summary, c.Entities)
	}
	if n := len(srv.ChatRequests()); n != 1 {
		t.Fatalf("%d chat requests, want 1", n)
	}
	if !strings.Contains(logs.String(), "answer malformed; describing heuristically") {
		t.Fatalf("no warning in the log:\n%s", logs)
	}
}
