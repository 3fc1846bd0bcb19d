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
// entities are the model's (validated, deduplicated, capped); a
// malformed answer fails the index job and stores no chunk; a model that
// is down leaves the description to the heuristics.
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

	for _, bad := range []string{`{"topics": ["x"]}`, `{"summary": ""}`, `{"summary": 3}`, `not json`, `{"summary": "x", "topics": "pets"}`} {
		srv.Push(llmtest.Text(bad))
		if _, err := d.DescribeChunk(context.Background(), turns); agentmem.ErrorCode(err) != agentmem.EUNAVAILABLE {
			t.Errorf("answer %s: %v, want EUNAVAILABLE", bad, err)
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

// TestIndexer_ChunkDescriberMalformed: a malformed description fails the
// index job, and no chunk is half-written.
func TestIndexer_ChunkDescriberMalformed(t *testing.T) {
	s := testutil.MustOpenSQLite(t)
	srv := llmtest.NewServer(t)
	srv.Script(func(llmtest.ChatCompletionRequest) llmtest.Reply { return llmtest.Text(`{"summary": 42}`) })
	ix := &index.Indexer{Store: s, Describer: &index.ModelChunkDescriber{Chat: testutil.NewChat(t, srv.BaseURL())}}
	if err := s.CreateThread(context.Background(), &agentmem.Thread{UserID: "alice", ID: "t", Status: agentmem.ThreadEnded}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendMessages(context.Background(), "alice", "t", []*agentmem.Message{{Role: agentmem.RoleUser, Content: "hello"}}, agentmem.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.EndThread(context.Background(), "alice", "t"); err != nil {
		t.Fatal(err)
	}
	if err := ix.IndexRange(context.Background(), "alice", "t", 1, 1); agentmem.ErrorCode(err) != agentmem.EUNAVAILABLE {
		t.Fatalf("IndexRange: %v, want EUNAVAILABLE", err)
	}
	if cs, err := s.FindChunks(context.Background(), "alice", "t"); err != nil || len(cs) != 0 {
		t.Fatalf("chunks after a malformed description: %+v, %v", cs, err)
	}
}
