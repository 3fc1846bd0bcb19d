package faults_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/agentmem/agentmem/internal/testutil"
)

// TestEraseUnderLoad (issue 28, item 4) erases users through DELETE
// /v1/users/{user} while the load appends to every user's threads and the
// workers index them: four of six users, one after the other, each after
// 0.75 s more of load, while their index jobs are running. Once
// the load has stopped, the jobs have run and the server has exited (so
// that no job is left in flight), nothing of an erased user may remain in
// any table with a user_id column (the list is read from the schema), and
// the other users' data must be whole: every turn with its window and
// vector, every job done (CheckJobs, CheckIndex). It prints the rows each
// erasure left behind.
func TestEraseUnderLoad(t *testing.T) {
	Long(t)
	Backends(t, func(t *testing.T, b Backend) {
		ctx, cancel := context.WithTimeout(context.Background(), BackendTimeout)
		defer cancel()
		srv := StartServe(t, b.DB, "--job-lease", JobLease.String())
		if err := srv.WaitReady(ctx); err != nil {
			t.Fatal(err)
		}
		// The suite's load over six users of two threads each, of whom
		// four are erased, one every 0.75 s.
		cfg := DefaultLoad
		cfg.Users, cfg.ThreadsPerUser = 6, 2
		load := StartLoad(ctx, t, srv.URL, cfg)
		c := NewClient(srv.URL)
		erased := []string{UserID(1), UserID(2), UserID(3), UserID(4)}
		kept := []string{UserID(0), UserID(5)}
		var running []int
		for _, user := range erased {
			select {
			case <-ctx.Done():
				t.Fatal("deadline before the erasure")
			case <-time.After(750 * time.Millisecond):
			}
			// Erase while the user's jobs run: wait (a little) for one.
			var jobs struct{ Data []Job }
			for try := 0; try < 200; try++ {
				if code, body, err := c.Do(ctx, http.MethodGet, "/v1/users/"+user+"/jobs?status=running", nil, &jobs); err != nil || code != http.StatusOK {
					t.Fatalf("GET jobs of %s: %d %s %v", user, code, body, err)
				}
				if len(jobs.Data) > 0 {
					break
				}
				time.Sleep(5 * time.Millisecond)
			}
			running = append(running, len(jobs.Data))
			load.Erasing(user)
			var resp struct{ Deleted struct{ Messages int64 } }
			if code, body, err := c.Do(ctx, http.MethodDelete, "/v1/users/"+user, nil, &resp); err != nil || code != http.StatusOK {
				t.Fatalf("DELETE /v1/users/%s: %d %s %v", user, code, body, err)
			}
			if resp.Deleted.Messages == 0 {
				t.Errorf("erasing %s erased no message", user)
			}
		}
		time.Sleep(time.Second) // a gap: the load goes on for the other users
		load.Stop()
		if err := WaitJobs(ctx, c); err != nil {
			t.Fatal(err)
		}
		// The server's exit waits for its jobs in flight: none is left to
		// write once it has exited.
		if code, took := srv.Term(20 * time.Second); code != 0 {
			t.Errorf("serve exited with status %d after SIGTERM (took %v), want 0", code, took)
		}
		var left []string
		for _, user := range erased {
			rows := testutil.MustUserRowsOf(t, b.DB, user)
			if len(rows) > 0 {
				t.Errorf("user %s erased under load: rows left %s", user, testutil.FormatRows(rows))
			}
			left = append(left, user+":["+testutil.FormatRows(rows)+"]")
		}
		for _, user := range kept {
			if rows := testutil.MustUserRowsOf(t, b.DB, user); rows["messages"] == 0 || rows["vectors"] == 0 {
				t.Errorf("user %s, not erased: rows %s; want messages and vectors", user, testutil.FormatRows(rows))
			}
		}
		db := b.Open(t)
		jobs := CheckJobs(t, db)
		CheckIndex(t, b, db)
		if b.SQLite() {
			CheckSQLiteFile(t, db)
		}
		t.Logf("faults: erase %s: erased=%d running_at_erase=%v left=%v appends_ok=%d gone=%d unexpected=%d jobs_done=%d",
			b.Name, len(erased), running, left, load.Writes.OK.Load(), load.Writes.Gone.Load()+load.Reads.Gone.Load(),
			load.Writes.Unexpected.Load()+load.Reads.Unexpected.Load(), jobs["done"])
	})
}
