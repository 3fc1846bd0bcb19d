package storetest

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/google/go-cmp/cmp"
)

// MustEnqueueJob enqueues j and returns the job stored (j itself, or the
// active job of its key).
func MustEnqueueJob(tb testing.TB, s agentmem.JobStore, j *agentmem.Job) *agentmem.Job {
	tb.Helper()
	out, err := s.EnqueueJob(ctx, j)
	if err != nil {
		tb.Fatalf("EnqueueJob: %v", err)
	}
	return out
}

// MustClaimJobs claims up to n jobs of kinds for owner.
func MustClaimJobs(tb testing.TB, s agentmem.JobStore, owner string, kinds []string, n int, lease time.Duration) []*agentmem.Job {
	tb.Helper()
	jobs, err := s.ClaimJobs(ctx, owner, kinds, n, lease)
	if err != nil {
		tb.Fatalf("ClaimJobs: %v", err)
	}
	if jobs == nil || len(jobs) > n {
		tb.Fatalf("ClaimJobs(n=%d) returned %d jobs (nil: %v)", n, len(jobs), jobs == nil)
	}
	return jobs
}

// MustKillJob enqueues j with a single attempt and fails its run with
// errMsg, so that it is dead (a dead letter), and returns it as stored.
// The other due jobs of its kind that the claim takes are handed back
// as they were (ReleaseJob).
func MustKillJob(tb testing.TB, s agentmem.JobStore, j *agentmem.Job, errMsg string) *agentmem.Job {
	tb.Helper()
	j.MaxAttempts = 1
	j = MustEnqueueJob(tb, s, j)
	const owner = "storetest-kill"
	for _, c := range MustClaimJobs(tb, s, owner, []string{j.Kind}, agentmem.MaxPageSize, time.Minute) {
		var err error
		if c.UserID == j.UserID && c.ID == j.ID {
			err = s.FailJob(ctx, c.UserID, c.ID, owner, errMsg, time.Time{})
		} else {
			err = s.ReleaseJob(ctx, c.UserID, c.ID, owner)
		}
		if err != nil {
			tb.Fatalf("MustKillJob: %v", err)
		}
	}
	dead := MustFindJob(tb, s, j.UserID, j.ID)
	if dead.Status != agentmem.JobDead {
		tb.Fatalf("MustKillJob: job %s is %s, not dead", j.ID, dead.Status)
	}
	return dead
}

// MustFindJob returns the job of the user with the id, through FindJobs.
func MustFindJob(tb testing.TB, s agentmem.JobStore, userID, id string) *agentmem.Job {
	tb.Helper()
	for _, j := range AllJobs(tb, s, agentmem.JobFilter{UserID: &userID}) {
		if j.ID == id {
			return j
		}
	}
	tb.Fatalf("job %s of %s not found", id, userID)
	return nil
}

// AllJobs pages through FindJobs with f (its Limit per page) and returns
// every job listed.
func AllJobs(tb testing.TB, s agentmem.JobStore, f agentmem.JobFilter) []*agentmem.Job {
	tb.Helper()
	all := []*agentmem.Job{}
	for {
		page, next, err := s.FindJobs(ctx, f)
		if err != nil {
			tb.Fatalf("FindJobs: %v", err)
		}
		if page == nil || f.Limit > 0 && len(page) > f.Limit {
			tb.Fatalf("page of %d jobs (nil: %v), limit %d", len(page), page == nil, f.Limit)
		}
		all = append(all, page...)
		if f.Cursor = next; next == "" {
			return all
		}
	}
}

func jobIDs(jobs []*agentmem.Job) []string {
	ids := make([]string, len(jobs))
	for i, j := range jobs {
		ids[i] = j.ID
	}
	return ids
}

func ptr[T any](v T) *T { return &v }

func testEnqueueJob(t *testing.T, s agentmem.Store) {
	before := time.Now().Truncate(time.Microsecond)
	j := MustEnqueueJob(t, s, &agentmem.Job{UserID: "alice", Kind: "summarize", Key: "t1", Payload: json.RawMessage(` {"thread_id": "t1"} `)})
	after := time.Now()
	if j.ID == "" || j.Status != agentmem.JobQueued || j.Attempts != 0 || j.MaxAttempts != agentmem.DefaultJobAttempts ||
		j.LeaseOwner != "" || j.LeaseUntil != nil || j.RunAt.Before(before) || j.RunAt.After(after) ||
		!j.CreatedAt.Equal(j.UpdatedAt) || !j.CreatedAt.Equal(j.RunAt) {
		t.Fatalf("enqueued job = %+v", j)
	}
	if diff := cmp.Diff(j, MustFindJob(t, s, "alice", j.ID), jsonEqual()); diff != "" {
		t.Fatalf("stored job mismatch (-want +got):\n%s", diff)
	}

	t.Run("Dedupe", func(t *testing.T) {
		again := MustEnqueueJob(t, s, &agentmem.Job{UserID: "alice", Kind: "summarize", Key: "t1", Payload: json.RawMessage(`{"other":1}`)})
		if diff := cmp.Diff(j, again, jsonEqual()); diff != "" {
			t.Fatalf("enqueueing an active key returned another job (-first +again):\n%s", diff)
		}
		// Another user, kind or key is another job.
		for _, other := range []*agentmem.Job{
			{UserID: "bob", Kind: "summarize", Key: "t1"},
			{UserID: "alice", Kind: "extract", Key: "t1"},
			{UserID: "alice", Kind: "summarize", Key: "t2"},
		} {
			if got := MustEnqueueJob(t, s, other); got.ID == j.ID {
				t.Fatalf("job %+v deduplicated against %s", other, j.ID)
			}
		}
		if n := len(AllJobs(t, s, agentmem.JobFilter{})); n != 4 {
			t.Fatalf("%d jobs stored, want 4", n)
		}
		// While running, the key still deduplicates; once done, it does not.
		claimed := MustClaimJobs(t, s, "w1", []string{"summarize"}, 10, time.Minute)
		if !slices.Contains(jobIDs(claimed), j.ID) {
			t.Fatalf("claimed %v, want %s among them", jobIDs(claimed), j.ID)
		}
		if got := MustEnqueueJob(t, s, &agentmem.Job{UserID: "alice", Kind: "summarize", Key: "t1"}); got.ID != j.ID || got.Status != agentmem.JobRunning {
			t.Fatalf("enqueue of a running job's key = %+v, want job %s running", got, j.ID)
		}
		if err := s.CompleteJob(ctx, "alice", j.ID, "w1"); err != nil {
			t.Fatal(err)
		}
		if next := MustEnqueueJob(t, s, &agentmem.Job{UserID: "alice", Kind: "summarize", Key: "t1"}); next.ID == j.ID || next.Status != agentmem.JobQueued {
			t.Fatalf("enqueue after completion = %+v, want a new queued job", next)
		}
	})
	t.Run("NoKey", func(t *testing.T) {
		a := MustEnqueueJob(t, s, &agentmem.Job{UserID: "alice", Kind: "embed"})
		b := MustEnqueueJob(t, s, &agentmem.Job{UserID: "alice", Kind: "embed"})
		if a.ID == b.ID || a.Key != a.ID || b.Key != b.ID {
			t.Fatalf("jobs without a key: %s (key %s) and %s (key %s); want two jobs keyed by their IDs", a.ID, a.Key, b.ID, b.Key)
		}
	})
	t.Run("ClientFields", func(t *testing.T) {
		runAt := time.Date(2030, 1, 2, 3, 4, 5, 678901234, time.FixedZone("x", 3600))
		got := MustEnqueueJob(t, s, &agentmem.Job{ID: "job-1", UserID: "carol", Kind: "reflect", Key: "k", MaxAttempts: 2, RunAt: runAt,
			Status: agentmem.JobDead, Attempts: 7, LeaseOwner: "x", LastError: "x"})
		if got.ID != "job-1" || got.MaxAttempts != 2 || !got.RunAt.Equal(runAt.Truncate(time.Microsecond)) || got.RunAt.Location() != time.UTC ||
			got.Status != agentmem.JobQueued || got.Attempts != 0 || got.LeaseOwner != "" || got.LastError != "" || string(got.Payload) != "{}" {
			t.Fatalf("job with client fields = %+v", got)
		}
		if diff := cmp.Diff(got, MustFindJob(t, s, "carol", "job-1"), jsonEqual()); diff != "" {
			t.Fatalf("stored job mismatch (-want +got):\n%s", diff)
		}
		_, err := s.EnqueueJob(ctx, &agentmem.Job{ID: "job-1", UserID: "carol", Kind: "reflect", Key: "other"})
		wantCode(t, err, agentmem.ECONFLICT)
		// IDs are per user.
		MustEnqueueJob(t, s, &agentmem.Job{ID: "job-1", UserID: "dave", Kind: "reflect"})
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		for _, bad := range []*agentmem.Job{
			{Kind: "summarize"},
			{UserID: "alice"},
			{UserID: "alice", Kind: "has space"},
			{UserID: "alice", Kind: "summarize", Payload: json.RawMessage(`[1]`)},
			{UserID: "alice", Kind: "summarize", Payload: json.RawMessage(`{"a":`)},
			{UserID: "alice", Kind: "summarize", MaxAttempts: -1},
			{UserID: "alice", Kind: "summarize", Key: "a\x00b"},
			{UserID: "alice", Kind: "summarize", Key: strings.Repeat("k", agentmem.MaxJobKeyBytes+1)},
			{UserID: "alice", Kind: "summarize", RunAt: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)},
		} {
			_, err := s.EnqueueJob(ctx, bad)
			wantCode(t, err, agentmem.EINVALID)
		}
	})
}

// testEnqueueJobConcurrent: 20 goroutines enqueueing one key at once
// store one job and all get it.
func testEnqueueJobConcurrent(t *testing.T, s agentmem.Store) {
	const n = 20
	ids := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			j, err := s.EnqueueJob(ctx, &agentmem.Job{UserID: "alice", Kind: "summarize", Key: "thread-1", Payload: json.RawMessage(fmt.Sprintf(`{"i":%d}`, i))})
			if errs[i] = err; err == nil {
				ids[i] = j.ID
			}
		})
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("enqueue %d: %v", i, errs[i])
		}
		if ids[i] != ids[0] {
			t.Fatalf("enqueue %d got job %s, enqueue 0 job %s", i, ids[i], ids[0])
		}
	}
	if jobs := AllJobs(t, s, agentmem.JobFilter{}); len(jobs) != 1 {
		t.Fatalf("%d jobs stored, want 1", len(jobs))
	}
}

func testClaimJobs(t *testing.T, s agentmem.Store) {
	now := time.Now()
	var due []string // in run_at order
	for i := range 5 {
		j := MustEnqueueJob(t, s, &agentmem.Job{UserID: "alice", Kind: "summarize", RunAt: now.Add(-time.Duration(5-i) * time.Second)})
		due = append(due, j.ID)
	}
	later := MustEnqueueJob(t, s, &agentmem.Job{UserID: "alice", Kind: "summarize", RunAt: now.Add(time.Hour)})
	other := MustEnqueueJob(t, s, &agentmem.Job{UserID: "bob", Kind: "extract", RunAt: now.Add(-time.Minute)})

	before := time.Now().Truncate(time.Microsecond)
	first := MustClaimJobs(t, s, "w1", []string{"summarize"}, 2, time.Minute)
	after := time.Now()
	if diff := cmp.Diff(due[:2], jobIDs(first)); diff != "" {
		t.Fatalf("first claim mismatch (-want +got):\n%s", diff)
	}
	for _, j := range first {
		if j.Status != agentmem.JobRunning || j.Attempts != 1 || j.LeaseOwner != "w1" || j.LeaseUntil == nil ||
			j.LeaseUntil.Before(before.Add(time.Minute)) || j.LeaseUntil.After(after.Add(time.Minute)) || j.UpdatedAt.Before(before) {
			t.Fatalf("claimed job = %+v", j)
		}
		if diff := cmp.Diff(j, MustFindJob(t, s, "alice", j.ID), jsonEqual()); diff != "" {
			t.Fatalf("stored claim mismatch (-want +got):\n%s", diff)
		}
	}
	// Claimed jobs are not claimed again; jobs not yet due are not claimed;
	// kinds select.
	rest := MustClaimJobs(t, s, "w2", []string{"summarize", "reflect"}, 10, time.Minute)
	if diff := cmp.Diff(due[2:], jobIDs(rest)); diff != "" {
		t.Fatalf("second claim mismatch (-want +got):\n%s", diff)
	}
	if got := MustClaimJobs(t, s, "w2", []string{"summarize"}, 10, time.Minute); len(got) != 0 {
		t.Fatalf("claimed %v with nothing due", jobIDs(got))
	}
	all := MustClaimJobs(t, s, "w3", nil, 10, time.Minute)
	if diff := cmp.Diff([]string{other.ID}, jobIDs(all)); diff != "" {
		t.Fatalf("claim of all kinds mismatch (-want +got):\n%s", diff)
	}
	if got := MustFindJob(t, s, "alice", later.ID); got.Status != agentmem.JobQueued || got.Attempts != 0 {
		t.Fatalf("job not yet due = %+v", got)
	}

	t.Run("ErrInvalid", func(t *testing.T) {
		for _, c := range []struct {
			owner string
			kinds []string
			n     int
			lease time.Duration
		}{
			{"", nil, 1, time.Minute},
			{"w1", nil, 0, time.Minute},
			{"w1", nil, agentmem.MaxPageSize + 1, time.Minute},
			{"w1", nil, 1, 0},
			{"w1", []string{""}, 1, time.Minute},
		} {
			_, err := s.ClaimJobs(ctx, c.owner, c.kinds, c.n, c.lease)
			wantCode(t, err, agentmem.EINVALID)
		}
	})
}

// testClaimJobsLease: a claimed job is not claimed again until its lease
// expires; then another worker takes it, and the first can no longer
// finish it. A job whose lease expires on its last attempt is dead.
func testClaimJobsLease(t *testing.T, s agentmem.Store) {
	// The second claim must come while the first one's lease runs. On a
	// busy machine (the suite runs in parallel) it can come later; the
	// check is then done again, on a new job, with a lease twice as long.
	lease := 50 * time.Millisecond
	var j *agentmem.Job
	for {
		j = MustEnqueueJob(t, s, &agentmem.Job{UserID: "alice", Kind: "summarize", MaxAttempts: 2})
		start := time.Now() // the lease ends at start+lease or later (stored times are rounded to the microsecond)
		if got := MustClaimJobs(t, s, "w1", nil, 10, lease); len(got) != 1 || got[0].ID != j.ID {
			t.Fatalf("first claim = %v", jobIDs(got))
		}
		got := MustClaimJobs(t, s, "w2", nil, 10, lease)
		if time.Since(start) < lease-time.Millisecond {
			if len(got) != 0 {
				t.Fatalf("claimed %v while leased", jobIDs(got))
			}
			break
		}
		if lease >= 10*time.Second {
			t.Fatalf("two claims took more than %v", lease)
		}
		owner := "w1"
		if len(got) == 1 {
			owner = "w2"
		}
		if err := s.CompleteJob(ctx, "alice", j.ID, owner); err != nil { // out of the way of the claims below
			t.Fatal(err)
		}
		lease *= 2
	}
	time.Sleep(2 * lease)
	got := MustClaimJobs(t, s, "w2", nil, 10, lease)
	if len(got) != 1 || got[0].ID != j.ID || got[0].Attempts != 2 || got[0].LeaseOwner != "w2" {
		t.Fatalf("claim after the lease expired = %+v", got)
	}
	wantCode(t, s.CompleteJob(ctx, "alice", j.ID, "w1"), agentmem.ECONFLICT)
	wantCode(t, s.FailJob(ctx, "alice", j.ID, "w1", "late", time.Now()), agentmem.ECONFLICT)

	// w2 dies too, on the last attempt: the job is not run a third time.
	time.Sleep(2 * lease)
	if got := MustClaimJobs(t, s, "w3", nil, 10, lease); len(got) != 0 {
		t.Fatalf("claimed %v after its last attempt", jobIDs(got))
	}
	dead := MustFindJob(t, s, "alice", j.ID)
	if dead.Status != agentmem.JobDead || dead.Attempts != 2 || dead.LeaseUntil != nil || !strings.Contains(dead.LastError, "lease") {
		t.Fatalf("job whose last lease expired = %+v, want dead with an error naming the lease", dead)
	}
	wantCode(t, s.CompleteJob(ctx, "alice", j.ID, "w2"), agentmem.ECONFLICT)

	// A lease that expired with no other worker taking the job still holds.
	k := MustEnqueueJob(t, s, &agentmem.Job{UserID: "alice", Kind: "summarize"})
	MustClaimJobs(t, s, "w1", nil, 10, lease)
	time.Sleep(2 * lease)
	if err := s.CompleteJob(ctx, "alice", k.ID, "w1"); err != nil {
		t.Fatalf("complete after the lease expired, job not taken: %v", err)
	}
}

// testClaimJobsConcurrent: 8 claimers taking jobs 7 at a time from 200
// never get one job twice, and together get all of them.
func testClaimJobsConcurrent(t *testing.T, s agentmem.Store) {
	const jobs, claimers = 200, 8
	for i := range jobs {
		MustEnqueueJob(t, s, &agentmem.Job{UserID: fmt.Sprintf("user-%d", i%5), Kind: "summarize", RunAt: time.Now().Add(-time.Second)})
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		seen  = map[string]string{} // user/id → owner
		dupes []string
		errs  []error
	)
	for c := range claimers {
		owner := fmt.Sprintf("w%d", c)
		wg.Go(func() {
			for {
				got, err := s.ClaimJobs(ctx, owner, []string{"summarize"}, 7, time.Minute)
				mu.Lock()
				if err != nil {
					errs = append(errs, err)
				}
				for _, j := range got {
					key := j.UserID + "/" + j.ID
					if prev, ok := seen[key]; ok {
						dupes = append(dupes, fmt.Sprintf("%s by %s and %s", key, prev, owner))
					}
					seen[key] = owner
				}
				mu.Unlock()
				if err != nil || len(got) == 0 {
					return
				}
			}
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Fatal(errs[0])
	}
	if len(dupes) > 0 {
		t.Fatalf("%d claims of a job claimed already, e.g. %v", len(dupes), dupes[:min(5, len(dupes))])
	}
	if len(seen) != jobs {
		t.Fatalf("claimed %d jobs, want %d", len(seen), jobs)
	}
	running := AllJobs(t, s, agentmem.JobFilter{Status: ptr(agentmem.JobRunning), Limit: agentmem.MaxPageSize})
	if len(running) != jobs {
		t.Fatalf("%d jobs running, want %d", len(running), jobs)
	}
	for _, j := range running {
		if j.Attempts != 1 || j.LeaseOwner != seen[j.UserID+"/"+j.ID] {
			t.Fatalf("job %s: attempts %d, owner %q; want 1 and %q", j.ID, j.Attempts, j.LeaseOwner, seen[j.UserID+"/"+j.ID])
		}
	}
}

func testCompleteJob(t *testing.T, s agentmem.Store) {
	j := MustEnqueueJob(t, s, &agentmem.Job{UserID: "alice", Kind: "summarize"})
	wantCode(t, s.CompleteJob(ctx, "alice", j.ID, "w1"), agentmem.ECONFLICT) // queued, not running
	MustClaimJobs(t, s, "w1", nil, 1, time.Minute)
	wantCode(t, s.CompleteJob(ctx, "alice", j.ID, "w2"), agentmem.ECONFLICT)
	wantCode(t, s.CompleteJob(ctx, "bob", j.ID, "w1"), agentmem.ENOTFOUND)
	wantCode(t, s.CompleteJob(ctx, "alice", "nope", "w1"), agentmem.ENOTFOUND)
	if err := s.CompleteJob(ctx, "alice", j.ID, "w1"); err != nil {
		t.Fatal(err)
	}
	done := MustFindJob(t, s, "alice", j.ID)
	if done.Status != agentmem.JobDone || done.Attempts != 1 || done.LeaseUntil != nil || done.LeaseOwner != "w1" || done.UpdatedAt.Before(j.UpdatedAt) {
		t.Fatalf("completed job = %+v", done)
	}
	wantCode(t, s.CompleteJob(ctx, "alice", j.ID, "w1"), agentmem.ECONFLICT)
	wantCode(t, s.FailJob(ctx, "alice", j.ID, "w1", "x", time.Now()), agentmem.ECONFLICT)
	if got := MustClaimJobs(t, s, "w1", nil, 10, time.Minute); len(got) != 0 {
		t.Fatalf("claimed a done job: %v", jobIDs(got))
	}
}

// testReleaseJob: a job handed back by its stopping worker is queued
// again, claimable at once by another worker, with its lease cleared and
// the attempt not counted; only its lease owner may release it.
func testReleaseJob(t *testing.T, s agentmem.Store) {
	j := MustEnqueueJob(t, s, &agentmem.Job{UserID: "alice", Kind: "summarize", MaxAttempts: 1})
	wantCode(t, s.ReleaseJob(ctx, "alice", j.ID, "w1"), agentmem.ECONFLICT) // queued, not running
	MustClaimJobs(t, s, "w1", nil, 1, time.Hour)
	wantCode(t, s.ReleaseJob(ctx, "alice", j.ID, "w2"), agentmem.ECONFLICT)
	wantCode(t, s.ReleaseJob(ctx, "bob", j.ID, "w1"), agentmem.ENOTFOUND)
	wantCode(t, s.ReleaseJob(ctx, "alice", "nope", "w1"), agentmem.ENOTFOUND)
	if err := s.ReleaseJob(ctx, "alice", j.ID, "w1"); err != nil {
		t.Fatal(err)
	}
	back := MustFindJob(t, s, "alice", j.ID)
	if back.Status != agentmem.JobQueued || back.Attempts != 0 || back.LeaseUntil != nil || back.LeaseOwner != "" {
		t.Fatalf("released job = %+v; want queued, 0 attempts, no lease", back)
	}
	// Another worker claims it at once (the lease of an hour is gone), and
	// its single attempt is still there to use.
	got := MustClaimJobs(t, s, "w2", nil, 10, time.Minute)
	if len(got) != 1 || got[0].ID != j.ID || got[0].Attempts != 1 {
		t.Fatalf("claimed after release: %+v; want the job on attempt 1", got)
	}
	if err := s.CompleteJob(ctx, "alice", j.ID, "w2"); err != nil {
		t.Fatal(err)
	}
	wantCode(t, s.ReleaseJob(ctx, "alice", j.ID, "w2"), agentmem.ECONFLICT) // done
}

// testFailJob: a failed job is queued again at its retry time with its
// lease cleared, until it has used MaxAttempts; then it is dead with its
// last error.
func testFailJob(t *testing.T, s agentmem.Store) {
	later := MustEnqueueJob(t, s, &agentmem.Job{UserID: "alice", Kind: "later"})
	MustClaimJobs(t, s, "w1", []string{"later"}, 1, time.Minute)
	wantCode(t, s.FailJob(ctx, "alice", later.ID, "w2", "not mine", time.Now()), agentmem.ECONFLICT)
	wantCode(t, s.FailJob(ctx, "alice", "nope", "w1", "x", time.Now()), agentmem.ENOTFOUND)
	retryAt := time.Now().Add(time.Hour)
	if err := s.FailJob(ctx, "alice", later.ID, "w1", "boom", retryAt); err != nil {
		t.Fatal(err)
	}
	failed := MustFindJob(t, s, "alice", later.ID)
	if failed.Status != agentmem.JobQueued || failed.LastError != "boom" || failed.LeaseOwner != "" || failed.LeaseUntil != nil ||
		!failed.RunAt.Equal(retryAt.Truncate(time.Microsecond)) || failed.Attempts != 1 {
		t.Fatalf("after a failure: %+v, want queued at the retry time with the error and no lease", failed)
	}
	if got := MustClaimJobs(t, s, "w1", []string{"later"}, 10, time.Minute); len(got) != 0 {
		t.Fatalf("claimed %v before its retry time", jobIDs(got))
	}
	wantCode(t, s.FailJob(ctx, "alice", later.ID, "w1", "again", time.Now()), agentmem.ECONFLICT) // queued, not running

	j := MustEnqueueJob(t, s, &agentmem.Job{UserID: "alice", Kind: "summarize", MaxAttempts: 3})
	for attempt := 1; attempt <= 3; attempt++ {
		got := MustClaimJobs(t, s, "w1", []string{"summarize"}, 10, time.Minute)
		if len(got) != 1 || got[0].ID != j.ID || got[0].Attempts != attempt {
			t.Fatalf("attempt %d: claimed %+v", attempt, got)
		}
		if err := s.FailJob(ctx, "alice", j.ID, "w1", fmt.Sprintf("boom %d", attempt), time.Now()); err != nil {
			t.Fatal(err)
		}
		if got := MustFindJob(t, s, "alice", j.ID); attempt < 3 && (got.Status != agentmem.JobQueued || got.LastError != fmt.Sprintf("boom %d", attempt)) {
			t.Fatalf("after failure %d: %+v, want queued", attempt, got)
		}
	}
	dead := MustFindJob(t, s, "alice", j.ID)
	if dead.Status != agentmem.JobDead || dead.LastError != "boom 3" || dead.Attempts != 3 || dead.LeaseUntil != nil {
		t.Fatalf("after the last failure: %+v, want dead with the last error", dead)
	}
	if got := MustClaimJobs(t, s, "w1", nil, 10, time.Minute); len(got) != 0 {
		t.Fatalf("claimed a dead job: %v", jobIDs(got))
	}
	wantCode(t, s.FailJob(ctx, "alice", j.ID, "w1", "x", time.Now()), agentmem.ECONFLICT)
	// A dead job no longer holds its key.
	if next := MustEnqueueJob(t, s, &agentmem.Job{UserID: "alice", Kind: "summarize", Key: j.Key}); next.ID == j.ID {
		t.Fatalf("enqueue of a dead job's key returned it")
	}

	t.Run("ErrorText", func(t *testing.T) {
		k := MustEnqueueJob(t, s, &agentmem.Job{UserID: "alice", Kind: "other"})
		MustClaimJobs(t, s, "w1", []string{"other"}, 1, time.Minute)
		msg := "bad \xff nul \x00 " + strings.Repeat("é", agentmem.MaxJobErrorBytes)
		if err := s.FailJob(ctx, "alice", k.ID, "w1", msg, time.Now()); err != nil {
			t.Fatal(err)
		}
		got := MustFindJob(t, s, "alice", k.ID)
		if len(got.LastError) > agentmem.MaxJobErrorBytes || !strings.HasPrefix(got.LastError, "bad \uFFFD nul  é") || strings.ContainsRune(got.LastError, 0) {
			t.Fatalf("stored error %q… (%d bytes)", got.LastError[:min(20, len(got.LastError))], len(got.LastError))
		}
	})
}

func testRetryJob(t *testing.T, s agentmem.Store) {
	// A job that dies after its MaxAttempts failures…
	j := MustEnqueueJob(t, s, &agentmem.Job{UserID: "alice", Kind: "summarize", Key: "t1", MaxAttempts: 2, Payload: json.RawMessage(`{"thread_id":"t1"}`)})
	for attempt := 1; attempt <= 2; attempt++ {
		if got := MustClaimJobs(t, s, "w1", []string{"summarize"}, 10, time.Minute); len(got) != 1 || got[0].ID != j.ID {
			t.Fatalf("attempt %d: claimed %v", attempt, jobIDs(got))
		}
		if err := s.FailJob(ctx, "alice", j.ID, "w1", fmt.Sprintf("boom %d", attempt), time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	if dead := MustFindJob(t, s, "alice", j.ID); dead.Status != agentmem.JobDead {
		t.Fatalf("after its last failure: %+v, want dead", dead)
	}
	// …is queued again, at once, with all its attempts and no lease; its
	// last error stays.
	before := time.Now().Truncate(time.Microsecond)
	got, err := s.RetryJob(ctx, "alice", j.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != agentmem.JobQueued || got.Attempts != 0 || got.MaxAttempts != 2 || got.LeaseOwner != "" || got.LeaseUntil != nil ||
		got.LastError != "boom 2" || got.RunAt.Before(before) || got.RunAt.After(time.Now()) || !got.UpdatedAt.Equal(got.RunAt) ||
		got.Key != "t1" || string(got.Payload) != `{"thread_id":"t1"}` {
		t.Fatalf("retried: %+v, want queued now with 0 of 2 attempts, no lease, the last error kept", got)
	}
	if diff := cmp.Diff(got, MustFindJob(t, s, "alice", j.ID)); diff != "" {
		t.Fatalf("stored job mismatch (-returned +stored):\n%s", diff)
	}
	// It is claimable again, and can complete.
	claimed := MustClaimJobs(t, s, "w2", []string{"summarize"}, 10, time.Minute)
	if len(claimed) != 1 || claimed[0].ID != j.ID || claimed[0].Attempts != 1 {
		t.Fatalf("claimed %+v after the retry, want the job on its first attempt", claimed)
	}
	if err := s.CompleteJob(ctx, "alice", j.ID, "w2"); err != nil {
		t.Fatal(err)
	}

	t.Run("ErrNotDead", func(t *testing.T) {
		queued := MustEnqueueJob(t, s, &agentmem.Job{UserID: "alice", Kind: "queued"})
		running := MustEnqueueJob(t, s, &agentmem.Job{UserID: "alice", Kind: "running"})
		MustClaimJobs(t, s, "w1", []string{"running"}, 1, time.Minute)
		for _, x := range []*agentmem.Job{j, queued, running} { // done, queued, running
			before := MustFindJob(t, s, "alice", x.ID)
			_, err := s.RetryJob(ctx, "alice", x.ID)
			wantCode(t, err, agentmem.ECONFLICT)
			if msg := agentmem.ErrorMessage(err); !strings.Contains(msg, "only a dead job can be retried") {
				t.Errorf("RetryJob(%s job): %q", before.Status, msg)
			}
			if diff := cmp.Diff(before, MustFindJob(t, s, "alice", x.ID)); diff != "" {
				t.Fatalf("a refused retry changed the job (-before +after):\n%s", diff)
			}
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		dead := MustKillJob(t, s, &agentmem.Job{UserID: "alice", Kind: "embed"}, "boom")
		_, err := s.RetryJob(ctx, "alice", "nope")
		wantCode(t, err, agentmem.ENOTFOUND)
		_, err = s.RetryJob(ctx, "bob", dead.ID) // another user's
		wantCode(t, err, agentmem.ENOTFOUND)
	})
	t.Run("ErrEqualJobActive", func(t *testing.T) {
		dead := MustKillJob(t, s, &agentmem.Job{UserID: "alice", Kind: "extract", Key: "t9"}, "boom")
		active := MustEnqueueJob(t, s, &agentmem.Job{UserID: "alice", Kind: "extract", Key: "t9"}) // a dead job holds no key
		if active.ID == dead.ID {
			t.Fatal("enqueue of a dead job's key returned it")
		}
		_, err := s.RetryJob(ctx, "alice", dead.ID)
		wantCode(t, err, agentmem.ECONFLICT)
		if msg := agentmem.ErrorMessage(err); !strings.Contains(msg, "an equal job (same kind and key) is already queued or running") {
			t.Errorf("RetryJob with an equal job queued: %q", msg)
		}
		if diff := cmp.Diff(dead, MustFindJob(t, s, "alice", dead.ID)); diff != "" {
			t.Fatalf("a refused retry changed the job (-before +after):\n%s", diff)
		}
		// Running, too.
		MustClaimJobs(t, s, "w1", []string{"extract"}, 1, time.Minute)
		_, err = s.RetryJob(ctx, "alice", dead.ID)
		wantCode(t, err, agentmem.ECONFLICT)
		// Another user's job of the same kind and key is no equal.
		bobs := MustKillJob(t, s, &agentmem.Job{UserID: "bob", Kind: "extract", Key: "t9"}, "boom")
		if got, err := s.RetryJob(ctx, "bob", bobs.ID); err != nil || got.Status != agentmem.JobQueued {
			t.Fatalf("RetryJob(bob's)=%+v, %v; want it queued", got, err)
		}
		// Once the active job is done, the dead one can be retried.
		if err := s.CompleteJob(ctx, "alice", active.ID, "w1"); err != nil {
			t.Fatal(err)
		}
		if got, err := s.RetryJob(ctx, "alice", dead.ID); err != nil || got.Status != agentmem.JobQueued {
			t.Fatalf("RetryJob once the equal job is done=%+v, %v; want it queued", got, err)
		}
	})
}

func testFindJobs(t *testing.T, s agentmem.Store) {
	perUser := map[string]int{}
	for i := range 12 {
		user, kind := "alice", "summarize"
		if i%3 == 0 {
			user = "bob"
		}
		if i%4 == 0 {
			kind = "extract"
		}
		// Client IDs shared by both users: the cursor must tell them apart.
		MustEnqueueJob(t, s, &agentmem.Job{ID: fmt.Sprintf("job-%02d", perUser[user]), UserID: user, Kind: kind, RunAt: time.Now().Add(-time.Minute)})
		perUser[user]++
	}
	// Of three claimed, one is done, one failed (queued again), one running.
	claimed := MustClaimJobs(t, s, "w1", nil, 3, time.Minute)
	if err := s.CompleteJob(ctx, claimed[0].UserID, claimed[0].ID, "w1"); err != nil {
		t.Fatal(err)
	}
	if err := s.FailJob(ctx, claimed[1].UserID, claimed[1].ID, "w1", "boom", time.Now()); err != nil {
		t.Fatal(err)
	}

	all := AllJobs(t, s, agentmem.JobFilter{Limit: 5})
	if len(all) != 12 {
		t.Fatalf("listed %d jobs, want 12", len(all))
	}
	seen := map[string]bool{}
	for i, j := range all {
		seen[j.UserID+"/"+j.ID] = true
		if i > 0 {
			p := all[i-1]
			if c := j.UpdatedAt.Compare(p.UpdatedAt); c > 0 || c == 0 && (j.UserID > p.UserID || j.UserID == p.UserID && j.ID > p.ID) {
				t.Fatalf("jobs %d and %d out of order", i-1, i)
			}
		}
	}
	if len(seen) != 12 {
		t.Fatalf("%d distinct jobs listed, want 12", len(seen))
	}
	for _, tt := range []struct {
		name string
		f    agentmem.JobFilter
		want func(*agentmem.Job) bool
	}{
		{"Status", agentmem.JobFilter{Status: ptr(agentmem.JobQueued), Limit: 3}, func(j *agentmem.Job) bool { return j.Status == agentmem.JobQueued }},
		{"Kind", agentmem.JobFilter{Kind: ptr("extract"), Limit: 2}, func(j *agentmem.Job) bool { return j.Kind == "extract" }},
		{"User", agentmem.JobFilter{UserID: ptr("bob"), Limit: 1}, func(j *agentmem.Job) bool { return j.UserID == "bob" }},
		{"All", agentmem.JobFilter{UserID: ptr("alice"), Kind: ptr("summarize"), Status: ptr(agentmem.JobQueued)}, func(j *agentmem.Job) bool {
			return j.UserID == "alice" && j.Kind == "summarize" && j.Status == agentmem.JobQueued
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var want []string
			for _, j := range all {
				if tt.want(j) {
					want = append(want, j.UserID+"/"+j.ID)
				}
			}
			var got []string
			for _, j := range AllJobs(t, s, tt.f) {
				got = append(got, j.UserID+"/"+j.ID)
			}
			if len(want) == 0 {
				t.Fatal("the case selects no job")
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("jobs mismatch (-want +got):\n%s", diff)
			}
		})
	}
	if got := AllJobs(t, s, agentmem.JobFilter{Status: ptr(agentmem.JobDone)}); len(got) != 1 || got[0].ID != claimed[0].ID {
		t.Fatalf("done jobs %v, want [%s]", jobIDs(got), claimed[0].ID)
	}
	if got := AllJobs(t, s, agentmem.JobFilter{Status: ptr(agentmem.JobRunning)}); len(got) != 1 || got[0].ID != claimed[2].ID {
		t.Fatalf("running jobs %v, want [%s]", jobIDs(got), claimed[2].ID)
	}
	t.Run("ErrInvalid", func(t *testing.T) {
		for _, f := range []agentmem.JobFilter{{Cursor: "garbage!"}, {Limit: -1}, {Limit: agentmem.MaxPageSize + 1}, {Status: ptr("paused")}} {
			_, _, err := s.FindJobs(ctx, f)
			wantCode(t, err, agentmem.EINVALID)
		}
	})
	t.Run("Empty", func(t *testing.T) {
		page, next, err := s.FindJobs(ctx, agentmem.JobFilter{UserID: ptr("nobody")})
		if err != nil || page == nil || len(page) != 0 || next != "" {
			t.Fatalf("FindJobs(nobody) = %v, %q, %v; want an empty non-nil page", page, next, err)
		}
	})
}

// testJobErasure: DeleteUser erases the user's jobs and no one else's;
// permanent thread deletion leaves jobs.
func testJobErasure(t *testing.T, s agentmem.Store) {
	for _, user := range []string{"alice", "bob"} {
		th := MustCreateThread(t, s, &agentmem.Thread{UserID: user, ID: "t1"})
		MustEnqueueJob(t, s, &agentmem.Job{UserID: user, Kind: "summarize", Key: th.ID})
		MustEnqueueJob(t, s, &agentmem.Job{UserID: user, Kind: "extract", Key: th.ID})
	}
	MustClaimJobs(t, s, "w1", []string{"extract"}, 10, time.Minute)
	if err := s.DeleteThread(ctx, "bob", "t1", true); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DeleteUser(ctx, "alice"); err != nil {
		t.Fatal(err)
	}
	if got := AllJobs(t, s, agentmem.JobFilter{UserID: ptr("alice")}); len(got) != 0 {
		t.Fatalf("alice has %d jobs after erasure", len(got))
	}
	if got := AllJobs(t, s, agentmem.JobFilter{UserID: ptr("bob")}); len(got) != 2 {
		t.Fatalf("bob has %d jobs, want 2 (deleting his thread leaves them)", len(got))
	}
}

// testClaimJobsSerial: of the jobs of one user and Serial, one runs at a
// time: a claim takes the oldest due one alone, and the next only once
// it is done, failed, handed back, or its lease expired. Other users,
// other serials and jobs without one are not held up, nor counted against
// n while they wait.
func testClaimJobsSerial(t *testing.T, s agentmem.Store) {
	start := time.Now().Add(-time.Minute)
	enqueue := func(user, serial string, i int) *agentmem.Job {
		t.Helper()
		return MustEnqueueJob(t, s, &agentmem.Job{UserID: user, Kind: "index", Serial: serial, RunAt: start.Add(time.Duration(i) * time.Second)})
	}
	a1, a2, a3 := enqueue("alice", "index", 0), enqueue("alice", "index", 1), enqueue("alice", "index", 2)
	other := enqueue("alice", "profile", 3)
	bob := enqueue("bob", "index", 4)
	free := enqueue("alice", "", 5)
	if a1.Serial != "index" || MustFindJob(t, s, "alice", a1.ID).Serial != "index" {
		t.Fatalf("serial not kept: %+v", MustFindJob(t, s, "alice", a1.ID))
	}

	got := MustClaimJobs(t, s, "w1", nil, 4, time.Minute)
	if diff := cmp.Diff([]string{a1.ID, other.ID, bob.ID, free.ID}, jobIDs(got)); diff != "" {
		t.Fatalf("first claim mismatch (-want +got):\n%s", diff)
	}
	if got := MustClaimJobs(t, s, "w2", nil, 10, time.Minute); len(got) != 0 {
		t.Fatalf("claimed %v while a job of their serial runs", jobIDs(got))
	}
	// Done: the next of the serial is due.
	if err := s.CompleteJob(ctx, "alice", a1.ID, "w1"); err != nil {
		t.Fatal(err)
	}
	if got := MustClaimJobs(t, s, "w2", nil, 10, time.Minute); len(got) != 1 || got[0].ID != a2.ID {
		t.Fatalf("claim after the first was done = %v, want [%s]", jobIDs(got), a2.ID)
	}
	// Failed, to be retried later: the next is due meanwhile.
	if err := s.FailJob(ctx, "alice", a2.ID, "w2", "boom", time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if got := MustClaimJobs(t, s, "w3", nil, 10, time.Minute); len(got) != 1 || got[0].ID != a3.ID {
		t.Fatalf("claim after a failure = %v, want [%s]", jobIDs(got), a3.ID)
	}
	// Handed back: due again, alone.
	if err := s.ReleaseJob(ctx, "alice", a3.ID, "w3"); err != nil {
		t.Fatal(err)
	}
	if got := MustClaimJobs(t, s, "w4", nil, 10, time.Millisecond); len(got) != 1 || got[0].ID != a3.ID {
		t.Fatalf("claim after a release = %v, want [%s]", jobIDs(got), a3.ID)
	}
	// Its worker died: once its lease has expired, the serial is free, and
	// of the job that lost its worker and the one queued behind it, a claim
	// takes the older alone.
	a4 := MustEnqueueJob(t, s, &agentmem.Job{UserID: "alice", Kind: "index", Serial: "index"}) // due after a3, handed back before
	time.Sleep(10 * time.Millisecond)
	if got := MustClaimJobs(t, s, "w5", nil, 10, time.Minute); len(got) != 1 || got[0].ID != a3.ID || got[0].Attempts != 2 {
		t.Fatalf("claim after the lease expired = %v, want [%s] on its second attempt", jobIDs(got), a3.ID)
	}
	if err := s.CompleteJob(ctx, "alice", a3.ID, "w5"); err != nil {
		t.Fatal(err)
	}
	if got := MustClaimJobs(t, s, "w5", nil, 10, time.Minute); len(got) != 1 || got[0].ID != a4.ID {
		t.Fatalf("last claim = %v, want [%s]", jobIDs(got), a4.ID)
	}

	t.Run("ErrInvalid", func(t *testing.T) {
		for _, serial := range []string{"a\x00b", "\xff", strings.Repeat("s", agentmem.MaxJobKeyBytes+1)} {
			_, err := s.EnqueueJob(ctx, &agentmem.Job{UserID: "alice", Kind: "index", Serial: serial})
			wantCode(t, err, agentmem.EINVALID)
		}
	})
}

// testClaimJobsSerialConcurrent: claimers taking jobs at once, in rounds,
// never run two jobs of one user and Serial together: each round claims
// exactly one job of each (user, serial) and every job without a serial,
// until all are done.
func testClaimJobsSerialConcurrent(t *testing.T, s agentmem.Store) {
	const users, serials, perSerial, free, claimers = 4, 2, 5, 8, 6
	for i := range perSerial {
		for u := range users {
			for k := range serials {
				MustEnqueueJob(t, s, &agentmem.Job{UserID: fmt.Sprintf("user-%d", u), Kind: "index", Serial: fmt.Sprintf("s%d", k),
					RunAt: time.Now().Add(-time.Minute + time.Duration(i)*time.Second)})
			}
		}
	}
	for i := range free {
		MustEnqueueJob(t, s, &agentmem.Job{UserID: fmt.Sprintf("user-%d", i%users), Kind: "index", RunAt: time.Now().Add(-time.Minute)})
	}
	for round := range perSerial {
		var (
			wg      sync.WaitGroup
			mu      sync.Mutex
			claimed []*agentmem.Job
			errs    []error
		)
		for c := range claimers {
			wg.Go(func() {
				for {
					got, err := s.ClaimJobs(ctx, fmt.Sprintf("w%d", c), nil, 3, time.Minute)
					mu.Lock()
					claimed = append(claimed, got...)
					if err != nil {
						errs = append(errs, err)
					}
					mu.Unlock()
					if err != nil || len(got) == 0 {
						return
					}
				}
			})
		}
		wg.Wait()
		if len(errs) > 0 {
			t.Fatal(errs[0])
		}
		groups := map[string]int{}
		unserialised := 0
		for _, j := range claimed {
			if j.Serial == "" {
				unserialised++
			} else {
				groups[j.UserID+"/"+j.Serial]++
			}
		}
		for g, n := range groups {
			if n != 1 {
				t.Fatalf("round %d: %d jobs of %s claimed together", round, n, g)
			}
		}
		if len(groups) != users*serials || round == 0 && unserialised != free || round > 0 && unserialised != 0 {
			t.Fatalf("round %d claimed %d serials and %d jobs without one, want %d and %d", round, len(groups), unserialised, users*serials, free)
		}
		for _, j := range claimed {
			if err := s.CompleteJob(ctx, j.UserID, j.ID, j.LeaseOwner); err != nil {
				t.Fatal(err)
			}
		}
	}
	if left := AllJobs(t, s, agentmem.JobFilter{Status: ptr(agentmem.JobQueued)}); len(left) != 0 {
		t.Fatalf("%d jobs left queued", len(left))
	}
}

// testJobBacklog: the backlog counts every user's queued and running jobs
// by kind, with the enqueue time of the oldest; done and dead jobs are
// not waiting.
func testJobBacklog(t *testing.T, s agentmem.Store) {
	if got, err := s.FindJobBacklog(ctx); err != nil || got == nil || len(got) != 0 {
		t.Fatalf("FindJobBacklog of an empty queue = %v, %v; want an empty slice", got, err)
	}
	past := time.Now().Add(-time.Minute)
	first := MustEnqueueJob(t, s, &agentmem.Job{UserID: "alice", Kind: "index", Key: "a", RunAt: past})
	MustEnqueueJob(t, s, &agentmem.Job{UserID: "bob", Kind: "index", Key: "b", RunAt: past})
	done := MustEnqueueJob(t, s, &agentmem.Job{UserID: "bob", Kind: "index", Key: "c", RunAt: past.Add(-time.Minute)})
	MustEnqueueJob(t, s, &agentmem.Job{UserID: "alice", Kind: "reflect", RunAt: time.Now().Add(time.Hour)})
	dead := MustEnqueueJob(t, s, &agentmem.Job{UserID: "carol", Kind: "summarize", MaxAttempts: 1})
	// Claim the two oldest index jobs, in run_at order: done, then first
	// (which stays running).
	claimed := MustClaimJobs(t, s, "w", []string{"index"}, 2, time.Minute)
	if len(claimed) != 2 || claimed[0].ID != done.ID {
		t.Fatalf("claimed %v, want %s first", jobIDs(claimed), done.ID)
	}
	if err := s.CompleteJob(ctx, "bob", done.ID, "w"); err != nil {
		t.Fatal(err)
	}
	if got := MustClaimJobs(t, s, "w", []string{"summarize"}, 1, time.Minute); len(got) != 1 {
		t.Fatalf("claimed %v, want the summarize job", jobIDs(got))
	}
	if err := s.FailJob(ctx, "carol", dead.ID, "w", "boom", time.Now()); err != nil {
		t.Fatal(err)
	}
	got, err := s.FindJobBacklog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	firstJob := MustFindJob(t, s, "alice", first.ID)
	want := []agentmem.JobBacklog{{Kind: "index", Jobs: 2, Oldest: firstJob.CreatedAt}, {Kind: "reflect", Jobs: 1}}
	if len(got) != len(want) {
		t.Fatalf("backlog %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i].Kind != want[i].Kind || got[i].Jobs != want[i].Jobs || got[i].Oldest.IsZero() {
			t.Fatalf("backlog[%d] = %+v, want %+v", i, got[i], want[i])
		}
	}
	if !got[0].Oldest.Equal(firstJob.CreatedAt) {
		t.Fatalf("oldest index job enqueued at %v, want %v (the first's)", got[0].Oldest, firstJob.CreatedAt)
	}
}

// testActiveJobs: FindActiveJobs lists the user's queued and running jobs
// of a kind whose key begins with the prefix, oldest first: not done or
// dead ones, not another user's or kind's, not a key that only contains
// the prefix further on.
func testActiveJobs(t *testing.T, s agentmem.Store) {
	if got, err := s.FindActiveJobs(ctx, "alice", "index", "t1"); err != nil || got == nil || len(got) != 0 {
		t.Fatalf("FindActiveJobs with no jobs = %v, %v; want an empty slice", got, err)
	}
	past := time.Now().Add(-time.Minute)
	queued := MustEnqueueJob(t, s, &agentmem.Job{UserID: "alice", Kind: "index", Key: "t1#a", RunAt: past})
	running := MustEnqueueJob(t, s, &agentmem.Job{UserID: "alice", Kind: "index", Key: "t1:3-4", RunAt: past.Add(-time.Minute)})
	done := MustEnqueueJob(t, s, &agentmem.Job{UserID: "alice", Kind: "index", Key: "t1#b", RunAt: past.Add(-2 * time.Minute)})
	MustEnqueueJob(t, s, &agentmem.Job{UserID: "bob", Kind: "index", Key: "t1#a", RunAt: time.Now().Add(time.Hour)})
	MustEnqueueJob(t, s, &agentmem.Job{UserID: "alice", Kind: "reflect", Key: "t1", RunAt: time.Now().Add(time.Hour)})
	MustEnqueueJob(t, s, &agentmem.Job{UserID: "alice", Kind: "index", Key: "xt1#a", RunAt: time.Now().Add(time.Hour)})
	// Claim done (the oldest run_at), then running; complete done.
	if got := MustClaimJobs(t, s, "w", []string{"index"}, 1, time.Minute); len(got) != 1 || got[0].ID != done.ID {
		t.Fatalf("claimed %v, want %s", jobIDs(got), done.ID)
	}
	if err := s.CompleteJob(ctx, "alice", done.ID, "w"); err != nil {
		t.Fatal(err)
	}
	if got := MustClaimJobs(t, s, "w", []string{"index"}, 1, time.Minute); len(got) != 1 || got[0].ID != running.ID {
		t.Fatalf("claimed %v, want %s", jobIDs(got), running.ID)
	}
	got, err := s.FindActiveJobs(ctx, "alice", "index", "t1")
	if err != nil {
		t.Fatal(err)
	}
	// Oldest first: queued was enqueued before running.
	if ids := jobIDs(got); len(ids) != 2 || ids[0] != queued.ID || ids[1] != running.ID {
		t.Fatalf("active index jobs of t1: %v, want [%s %s]", ids, queued.ID, running.ID)
	}
	if got[1].Status != agentmem.JobRunning || got[0].Status != agentmem.JobQueued || got[0].Key != "t1#a" {
		t.Fatalf("jobs %+v %+v", got[0], got[1])
	}
	if got, err := s.FindActiveJobs(ctx, "alice", "index", "t1:"); err != nil || len(got) != 1 || got[0].ID != running.ID {
		t.Fatalf("active index jobs of t1: = %v, %v; want %s", jobIDs(got), err, running.ID)
	}
	// Keys beyond ASCII: the prefix is compared character for character.
	cafe := MustEnqueueJob(t, s, &agentmem.Job{UserID: "alice", Kind: "index", Key: "caf\u00e9\U0001F600#a"})
	for _, prefix := range []string{"caf", "caf\u00e9", "caf\u00e9\U0001F600#a"} {
		if got, err := s.FindActiveJobs(ctx, "alice", "index", prefix); err != nil || len(got) != 1 || got[0].ID != cafe.ID {
			t.Fatalf("active index jobs of %q: %v, %v; want %s", prefix, jobIDs(got), err, cafe.ID)
		}
	}
	if got, err := s.FindActiveJobs(ctx, "alice", "index", "cafe"); err != nil || len(got) != 0 {
		t.Fatalf("active index jobs of \"cafe\": %v, %v; want none", jobIDs(got), err)
	}
}

// testDeleteDoneJobs: only done jobs last updated before the cutoff go,
// oldest first, at most limit at a time, of every user; queued, running
// and dead jobs stay.
func testDeleteDoneJobs(t *testing.T, s agentmem.Store) {
	past := time.Now().Add(-time.Hour)
	var done []string
	for i, user := range []string{"alice", "bob", "alice"} {
		j := MustEnqueueJob(t, s, &agentmem.Job{UserID: user, Kind: "index", Key: fmt.Sprint(i), RunAt: past.Add(time.Duration(i) * time.Second)})
		claimed := MustClaimJobs(t, s, "w", []string{"index"}, 1, time.Minute)
		if len(claimed) != 1 || claimed[0].ID != j.ID {
			t.Fatalf("claimed %v, want %s", jobIDs(claimed), j.ID)
		}
		if err := s.CompleteJob(ctx, user, j.ID, "w"); err != nil {
			t.Fatal(err)
		}
		done = append(done, j.ID)
	}
	queued := MustEnqueueJob(t, s, &agentmem.Job{UserID: "alice", Kind: "reflect", RunAt: time.Now().Add(time.Hour)})
	running := MustEnqueueJob(t, s, &agentmem.Job{UserID: "bob", Kind: "summarize", RunAt: past})
	MustClaimJobs(t, s, "w", []string{"summarize"}, 1, time.Minute)
	dead := MustEnqueueJob(t, s, &agentmem.Job{UserID: "carol", Kind: "extract", RunAt: past, MaxAttempts: 1})
	MustClaimJobs(t, s, "w", []string{"extract"}, 1, time.Minute)
	if err := s.FailJob(ctx, "carol", dead.ID, "w", "boom", time.Now()); err != nil {
		t.Fatal(err)
	}

	// A cutoff before they were done deletes nothing.
	if n, err := s.DeleteDoneJobs(ctx, past, 10); err != nil || n != 0 {
		t.Fatalf("DeleteDoneJobs before any was done = %d, %v; want 0", n, err)
	}
	later := time.Now().Add(time.Second)
	if n, err := s.DeleteDoneJobs(ctx, later, 2); err != nil || n != 2 {
		t.Fatalf("DeleteDoneJobs limit 2 = %d, %v; want 2", n, err)
	}
	if n, err := s.DeleteDoneJobs(ctx, later, 10); err != nil || n != 1 {
		t.Fatalf("DeleteDoneJobs again = %d, %v; want the last 1", n, err)
	}
	left := map[string]bool{}
	for _, j := range AllJobs(t, s, agentmem.JobFilter{}) {
		left[j.ID] = true
	}
	for _, id := range done {
		if left[id] {
			t.Fatalf("done job %s is still there", id)
		}
	}
	for _, j := range []*agentmem.Job{queued, running, dead} {
		MustFindJob(t, s, j.UserID, j.ID)
	}
	for _, limit := range []int{0, -1, agentmem.MaxPageSize + 1} {
		_, err := s.DeleteDoneJobs(ctx, later, limit)
		wantCode(t, err, agentmem.EINVALID)
	}
}
