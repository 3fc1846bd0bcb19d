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
	run := func(jobs []*agentmem.Job) {
		t.Helper()
		for _, j := range jobs {
			if err := ix.Run(ctx, j); err != nil {
				t.Fatal(err)
			}
			if err := s.CompleteJob(ctx, j.UserID, j.ID, "w"); err != nil {
				t.Fatal(err)
			}
		}
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
	if n := queued(t, s); n != 1 {
		t.Fatalf("2 appends while the first job runs queued %d jobs, want 1", n)
	}
	// The index jobs of a user run one at a time: the second waits for the
	// first, which may have read the thread before message 6 was appended.
	if got := claim(); len(got) != 0 {
		t.Fatalf("claimed %d jobs while the user's first index job runs", len(got))
	}
	run(first)
	second := claim()
	if len(second) != 1 {
		t.Fatalf("claimed %d jobs after the first was done, want the second", len(second))
	}
	appendOne(7) // the second runs, the first key is free again
	run(second)
	third := claim()
	if len(third) != 1 {
		t.Fatalf("an append while the second job ran made %d jobs, want 1", len(third))
	}
	run(third)
	vs, err := s.FindVectors(ctx, "alice", emb.Space(), []string{agentmem.ScopeMessages})
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 8 {
		t.Fatalf("%d messages have vectors, want all 8", len(vs))
	}
}

// queued counts the queued index jobs.
func queued(t *testing.T, s agentmem.JobStore) int {
	t.Helper()
	st, kind := agentmem.JobQueued, index.JobKind
	jobs, _, err := s.FindJobs(ctx, agentmem.JobFilter{Status: &st, Kind: &kind})
	if err != nil {
		t.Fatal(err)
	}
	return len(jobs)
}
