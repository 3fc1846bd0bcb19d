package postgres_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/postgres"
	"github.com/agentmem/agentmem/storetest"
)

// TestClaimJobs_TwoProcesses: two stores on one schema, as two server
// processes would be, each with 4 workers claiming and completing jobs,
// run each of 300 jobs exactly once.
func TestClaimJobs_TwoProcesses(t *testing.T) {
	t.Parallel()
	dsn := MustCreateSchema(t)
	stores := []*postgres.Store{MustOpen(t, dsn), MustOpen(t, dsn)}
	const total, workers = 300, 4
	for i := range total {
		storetest.MustEnqueueJob(t, stores[i%2], &agentmem.Job{UserID: fmt.Sprintf("user-%d", i%7), Kind: "summarize", RunAt: time.Now().Add(-time.Second)})
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		runs = map[string][]string{} // user/id → the workers that ran it
		errs []error
	)
	for p, s := range stores {
		for w := range workers {
			owner := fmt.Sprintf("p%d-w%d", p, w)
			wg.Go(func() {
				for {
					jobs, err := s.ClaimJobs(ctx, owner, []string{"summarize"}, 3, time.Minute)
					if err == nil {
						for _, j := range jobs {
							mu.Lock()
							runs[j.UserID+"/"+j.ID] = append(runs[j.UserID+"/"+j.ID], owner)
							mu.Unlock()
							if err = s.CompleteJob(ctx, j.UserID, j.ID, owner); err != nil {
								break
							}
						}
					}
					if err != nil {
						mu.Lock()
						errs = append(errs, err)
						mu.Unlock()
						return
					}
					if len(jobs) == 0 {
						return
					}
				}
			})
		}
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Fatal(errs[0])
	}
	for job, owners := range runs {
		if len(owners) != 1 {
			t.Fatalf("job %s ran %d times, by %v", job, len(owners), owners)
		}
	}
	if len(runs) != total {
		t.Fatalf("%d jobs ran, want %d", len(runs), total)
	}
	done := agentmem.JobDone
	if jobs := storetest.AllJobs(t, stores[1], agentmem.JobFilter{Status: &done, Limit: agentmem.MaxPageSize}); len(jobs) != total {
		t.Fatalf("%d jobs done, want %d", len(jobs), total)
	}
}
