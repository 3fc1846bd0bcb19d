package reflection_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/internal/testutil"
	"github.com/agentmem/agentmem/profile"
	"github.com/agentmem/agentmem/reflection"
)

// TestEnqueueProfile_WhileRefreshing: a memory written while the profile
// job runs, after it read the memories, and the refresh it asks for
// (EnqueueProfile, as an index job that learned it late does) is not lost
// in the job that runs: a second job follows, not beside it but once it
// is done, and the profile ends up built from every memory. The order of
// the steps is fixed by hand: the memory is written from within the
// job's read of the memories.
func TestEnqueueProfile_WhileRefreshing(t *testing.T) {
	testutil.Backends(t, func(t *testing.T, s agentmem.Store) {
		rf := &reflection.Reflector{Store: s}
		for i := range 5 {
			mustCreateMemory(t, s, fmt.Sprintf("Memory number %d.", i))
		}
		if err := rf.EnqueueProfile(ctx, "alice"); err != nil {
			t.Fatal(err)
		}
		claim := func() []*agentmem.Job {
			t.Helper()
			jobs, err := s.ClaimJobs(ctx, "w", []string{profile.JobKind}, 10, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			return jobs
		}
		first := claim()
		if len(first) != 1 {
			t.Fatalf("claimed %d profile jobs, want 1", len(first))
		}
		var late *agentmem.Memory
		hooked := &readHook{Store: s, after: func() {
			late = mustCreateMemory(t, s, "Memory number 5, written late.")
			if err := rf.EnqueueProfile(ctx, "alice"); err != nil {
				t.Fatal(err)
			}
			if got := claim(); len(got) != 0 {
				t.Fatalf("claimed %d profile jobs while one runs", len(got))
			}
		}}
		pr := &profile.Profiler{Store: hooked}
		if err := pr.Run(ctx, first[0]); err != nil {
			t.Fatal(err)
		}
		if late == nil {
			t.Fatal("the profile job read no memories")
		}
		if err := s.CompleteJob(ctx, "alice", first[0].ID, "w"); err != nil {
			t.Fatal(err)
		}
		if p, err := s.FindProfile(ctx, "alice"); err != nil || len(p.Sources) != 5 {
			t.Fatalf("first profile = %+v, %v; want it built from the 5 memories it read", p, err)
		}
		// The jobs left run as a worker would.
		for range 5 {
			jobs := claim()
			if len(jobs) == 0 {
				break
			}
			for _, j := range jobs {
				if err := pr.Run(ctx, j); err != nil {
					t.Fatal(err)
				}
				if err := s.CompleteJob(ctx, "alice", j.ID, "w"); err != nil {
					t.Fatal(err)
				}
			}
		}
		p, err := s.FindProfile(ctx, "alice")
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Sources) != 6 || !slices.Contains(p.Sources, late.ID) {
			t.Fatalf("profile built from %d memories (%v), want 6 with the late one %s", len(p.Sources), p.Sources, late.ID)
		}
	})
}

func mustCreateMemory(t *testing.T, s agentmem.MemoryStore, text string) *agentmem.Memory {
	t.Helper()
	m := &agentmem.Memory{UserID: "alice", Text: text, Category: "other", Confidence: 1}
	if err := s.CreateMemory(ctx, m); err != nil {
		t.Fatal(err)
	}
	return m
}

// readHook is a store that calls after once, when the first FindMemories
// has returned.
type readHook struct {
	agentmem.Store
	after func()
	done  bool
}

func (h *readHook) FindMemories(ctx context.Context, userID string, f agentmem.MemoryFilter) ([]*agentmem.Memory, string, error) {
	ms, next, err := h.Store.FindMemories(ctx, userID, f)
	if !h.done {
		h.done = true
		h.after()
	}
	return ms, next, err
}
