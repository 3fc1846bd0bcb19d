package index_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/index"
	"github.com/agentmem/agentmem/internal/testutil"
	"github.com/agentmem/agentmem/llm/lexical"
)

// TestIndexer_Enqueue: batches appended to a thread share index jobs, and
// no batch is left unindexed, also when it arrives while the shared jobs
// run.
func TestIndexer_Enqueue(t *testing.T) {
	s := testutil.MustOpenSQLite(t)
	emb := lexical.New(0)
	ix := &index.Indexer{Store: s, Jobs: s, Emb: emb, Space: emb.Space()}
	if err := s.CreateThread(ctx, &agentmem.Thread{UserID: "alice", ID: "t"}); err != nil {
		t.Fatal(err)
	}
	appendOne := func(i int) {
		t.Helper()
		msgs, err := s.AppendMessages(ctx, "alice", "t", []*agentmem.Message{{Role: agentmem.RoleUser, Content: fmt.Sprintf("message number %d about gardening", i)}}, agentmem.AppendOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := ix.Enqueue(ctx, "alice", "t", msgs[0].Seq, msgs[0].Seq); err != nil {
			t.Fatal(err)
		}
	}
	claim := func() []*agentmem.Job {
		t.Helper()
		jobs, err := s.ClaimJobs(ctx, "w", []string{index.JobKind}, 10, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		return jobs
	}
	for i := range 5 {
		appendOne(i)
	}
	first := claim()
	if len(first) != 1 {
		t.Fatalf("5 appends made %d jobs, want 1 shared job", len(first))
	}
	appendOne(5) // the first job runs: a second shared job collects
	appendOne(6)
	second := claim()
	if len(second) != 1 {
		t.Fatalf("2 appends while the first job runs made %d jobs, want 1", len(second))
	}
	appendOne(7) // both shared jobs run: a job of its own
	third := claim()
	if len(third) != 1 {
		t.Fatalf("an append while both shared jobs run made %d jobs, want 1", len(third))
	}
	// The first job read the thread before message 6 was appended? It runs
	// now and reads all: every message must end up with a vector.
	for _, j := range append(append(first, second...), third...) {
		if err := ix.Run(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	vs, err := s.FindVectors(ctx, "alice", emb.Space(), []string{agentmem.ScopeMessages})
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 8 {
		t.Fatalf("%d messages have vectors, want all 8", len(vs))
	}
}
