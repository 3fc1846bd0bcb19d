package faults_test

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"
)

// JobLease is the --job-lease of the suite's servers: the jobs a killed
// server held run again this long after they were claimed. Short, so
// that the suite waits seconds for them rather than the default's
// minutes; long enough for any job of the suite's load, whose index jobs
// (a thread's turns appended meanwhile, each its memories drawn by the
// built-in model) took more than the 4.5 s a 5 s lease gives a job on a
// 2-core machine running other packages' tests beside it: they timed out
// again at each attempt.
const JobLease = 10 * time.Second

// BackendTimeout bounds each backend's run of a test.
const BackendTimeout = 90 * time.Second

// crashKills is how many times TestCrash kills the server.
const crashKills = 6

// TestCrash kills serve with SIGKILL at random moments under load and
// restarts it on the same database each time; then checks that every
// acknowledged message is stored once, seqs are gap-free, batches retried
// with their key were stored once, every background job is done once,
// and (SQLite) the file is sound. See the package doc.
func TestCrash(t *testing.T) {
	Long(t)
	Backends(t, func(t *testing.T, b Backend) {
		ctx, cancel := context.WithTimeout(context.Background(), BackendTimeout)
		defer cancel()
		srv := StartServe(t, b.DB, "--job-lease", JobLease.String())
		if err := srv.WaitReady(ctx); err != nil {
			t.Fatal(err)
		}
		load := StartLoad(ctx, t, srv.URL, DefaultLoad)

		var recovery Durations
		for range crashKills {
			select {
			case <-ctx.Done():
				t.Fatalf("deadline after %d kills", len(recovery))
			case <-time.After(500*time.Millisecond + rand.N(1500*time.Millisecond)):
			}
			srv.Kill()
			recovery = append(recovery, srv.Restart(ctx))
		}
		time.Sleep(time.Second) // a gap: the last server serves the load for a while
		load.Stop()

		c := NewClient(srv.URL)
		if err := WaitJobs(ctx, c); err != nil {
			t.Fatal(err)
		}
		rep := CheckMessages(ctx, t, c, load)
		memories := CheckMemories(ctx, t, c, load.cfg)
		if code, took := srv.Term(20 * time.Second); code != 0 {
			t.Errorf("serve exited with status %d after SIGTERM (took %v), want 0", code, took)
		}
		db := b.Open(t)
		jobs := CheckJobs(t, db)
		CheckIndex(t, b, db)
		if b.SQLite() {
			CheckSQLiteFile(t, db)
		}
		lo, med, hi := recovery.Stats()
		t.Logf("faults: crash %s: acknowledged=%d messages=%d lost=%d duplicated=%d retried=%d unacknowledged=%d kills=%d recovery_ms=%d/%d/%d conn_errors=%d unavailable=%d jobs_done=%d jobs_rerun=%d memories=%d",
			b.Name, rep.Acknowledged, rep.Messages, rep.Lost, rep.Duplicated, rep.Retried, rep.Unacknowledged, len(recovery), lo, med, hi,
			load.Writes.ConnErrors.Load(), load.Writes.Unavailable.Load(), jobs["done"], jobs["rerun"], memories)
	})
}
