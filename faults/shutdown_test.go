package faults_test

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"
)

// ShutdownTimeout is the --shutdown-timeout of TestShutdown's server:
// serve must exit within it of SIGTERM.
const ShutdownTimeout = 10 * time.Second

// shutdownStops is how many times TestShutdown stops the server.
const shutdownStops = 3

// TestShutdown stops serve with SIGTERM under load, and restarts it on the
// same database: serve must exit with status 0 within its shutdown
// timeout, the requests in flight must complete or fail with a
// connection error or 503 (never another answer), no job may be left
// running under a lease once it has exited, and then every check of
// TestCrash holds. See the package doc.
func TestShutdown(t *testing.T) {
	Long(t)
	Backends(t, func(t *testing.T, b Backend) {
		ctx, cancel := context.WithTimeout(context.Background(), BackendTimeout)
		defer cancel()
		srv := StartServe(t, b.DB, "--job-lease", JobLease.String(), "--shutdown-timeout", ShutdownTimeout.String())
		if err := srv.WaitReady(ctx); err != nil {
			t.Fatal(err)
		}
		load := StartLoad(ctx, t, srv.URL, DefaultLoad)
		db := b.Open(t)

		var stops, recovery Durations
		for range shutdownStops {
			select {
			case <-ctx.Done():
				t.Fatalf("deadline after %d stops", len(stops))
			case <-time.After(500*time.Millisecond + rand.N(1500*time.Millisecond)):
			}
			load.Mark()
			code, took := srv.Term(ShutdownTimeout + 10*time.Second)
			if code != 0 || took > ShutdownTimeout {
				t.Errorf("SIGTERM: serve exited with status %d after %v, want 0 within its shutdown timeout (%v)", code, took, ShutdownTimeout)
			}
			stops = append(stops, took)
			// Read before the restart: no worker of the next server has
			// claimed anything yet, so a lease is one the stop left.
			if leased := query(t, db, `SELECT kind, key, status, lease_owner FROM jobs WHERE status = 'running' OR lease_until IS NOT NULL LIMIT 5`); len(leased) > 0 {
				t.Errorf("after SIGTERM, jobs are left running under a lease: %v", leased)
			}
			recovery = append(recovery, srv.Restart(ctx))
		}
		// A gap: the last server serves the load for a while.
		time.Sleep(500 * time.Millisecond)
		load.Stop() // fails the test for any answer but 2xx, a connection error or 503

		c := NewClient(srv.URL)
		if err := WaitJobs(ctx, c); err != nil {
			t.Fatal(err)
		}
		rep := CheckMessages(ctx, t, c, load)
		memories := CheckMemories(ctx, t, c, load.cfg)
		if code, took := srv.Term(ShutdownTimeout + 10*time.Second); code != 0 {
			t.Errorf("serve exited with status %d after SIGTERM (took %v), want 0", code, took)
		}
		jobs := CheckJobs(t, db)
		CheckIndex(t, b, db)
		if b.SQLite() {
			CheckSQLiteFile(t, db)
		}
		slo, smed, shi := stops.Stats()
		_, rmed, rhi := recovery.Stats()
		t.Logf("faults: shutdown %s: acknowledged=%d messages=%d lost=%d duplicated=%d retried=%d unacknowledged=%d stops=%d stop_ms=%d/%d/%d recovery_ms=%d/%d in_flight=%d completed=%d conn_errors=%d unavailable=%d unexpected=%d jobs_done=%d memories=%d",
			b.Name, rep.Acknowledged, rep.Messages, rep.Lost, rep.Duplicated, rep.Retried, rep.Unacknowledged, len(stops), slo, smed, shi, rmed, rhi,
			load.AtMark.OK.Load()+load.AtMark.ConnErrors.Load()+load.AtMark.Unavailable.Load()+load.AtMark.Unexpected.Load(),
			load.AtMark.OK.Load(), load.AtMark.ConnErrors.Load(), load.AtMark.Unavailable.Load(), load.AtMark.Unexpected.Load(), jobs["done"], memories)
	})
}
