package index_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/index"
	"github.com/agentmem/agentmem/internal/testutil"
	"github.com/agentmem/agentmem/llm/lexical"
	"github.com/agentmem/agentmem/worker"
)

// TestIndexer_AppendJobs: an append asking for its index job through
// AppendJobs stores it in its own transaction, and batches appended to a
// thread share jobs as with Enqueue: a batch that a queued job covers
// stores nothing and wakes no worker.
func TestIndexer_AppendJobs(t *testing.T) {
	s := testutil.MustOpenSQLite(t)
	emb := lexical.New(0)
	notified := 0
	ix := &index.Indexer{Store: s, Jobs: s, Emb: emb, Space: emb.Space()}
	appends := worker.Notifying(s, func() { notified++ }) // as app wires it
	if err := s.CreateThread(ctx, &agentmem.Thread{UserID: "alice", ID: "t"}); err != nil {
		t.Fatal(err)
	}
	appendOne := func(i int) {
		t.Helper()
		opt := ix.AppendJobs(agentmem.AppendOptions{})
		if opt.Jobs == nil {
			t.Fatal("AppendJobs set no Jobs")
		}
		if _, err := appends.AppendMessages(ctx, "alice", "t", []*agentmem.Message{{Role: agentmem.RoleUser, Content: fmt.Sprintf("message number %d about gardening", i)}}, opt); err != nil {
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
	if len(first) != 1 || notified != 1 {
		t.Fatalf("5 appends made %d jobs and %d wake-ups, want 1 shared job and 1", len(first), notified)
	}
	appendOne(5) // the first job runs: a second shared job collects
	appendOne(6)
	if n := queued(t, s); n != 1 || notified != 2 {
		t.Fatalf("2 appends while the first job runs queued %d jobs (%d wake-ups in all), want 1 (2)", n, notified)
	}
	if got := claim(); len(got) != 0 { // the index jobs of a user run one at a time
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
	if len(third) != 1 || notified != 3 {
		t.Fatalf("an append while the second job ran made %d jobs (%d wake-ups in all), want 1 (3)", len(third), notified)
	}
	run(third)
	vs, err := s.FindVectors(ctx, "alice", emb.Space(), []string{agentmem.ScopeMessages})
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 8 {
		t.Fatalf("%d messages have vectors, want all 8", len(vs))
	}

	// An indexer that enqueues nothing leaves the options alone.
	for _, off := range []*index.Indexer{nil, {Store: s}} {
		opt := off.AppendJobs(agentmem.AppendOptions{IdempotencyKey: "k"})
		if opt.Jobs != nil || opt.IdempotencyKey != "k" {
			t.Fatalf("AppendJobs of %+v = %+v, want the options unchanged", off, opt)
		}
	}
}
