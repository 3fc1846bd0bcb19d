package worker_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/internal/testutil"
	"github.com/agentmem/agentmem/storetest"
	"github.com/agentmem/agentmem/worker"
)

var ctx = context.Background()

// MustRun runs p until the returned stop is called (or the test ends) and
// fails if Run returns an error or does not return within 5 s of stop.
func MustRun(tb testing.TB, p *worker.Pool) (stop func()) {
	tb.Helper()
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- p.Run(runCtx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					tb.Errorf("Run: %v", err)
				}
			case <-time.After(5 * time.Second):
				tb.Errorf("Run did not return within 5 s of its ctx ending")
			}
		})
	}
	tb.Cleanup(stop)
	return stop
}

// waitFor polls cond until it holds, failing after timeout.
func waitFor(tb testing.TB, timeout time.Duration, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("waited %v for %s", timeout, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// claimCounting counts the ClaimJobs calls that have returned, so that a
// test can wait for a pool's first claim rather than sleep through it.
type claimCounting struct {
	agentmem.JobStore
	n atomic.Int32
}

func (s *claimCounting) ClaimJobs(ctx context.Context, owner string, kinds []string, n int, lease time.Duration) ([]*agentmem.Job, error) {
	jobs, err := s.JobStore.ClaimJobs(ctx, owner, kinds, n, lease)
	s.n.Add(1)
	return jobs, err
}

// waitStatus waits until the job has the status and returns it.
func waitStatus(tb testing.TB, s agentmem.JobStore, j *agentmem.Job, status string) *agentmem.Job {
	tb.Helper()
	var got *agentmem.Job
	waitFor(tb, 5*time.Second, "job "+j.ID+" to be "+status, func() bool {
		got = storetest.MustFindJob(tb, s, j.UserID, j.ID)
		return got.Status == status
	})
	return got
}

// logBuffer is a slog handler's output, safe to read while written.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// lines returns the lines logged at level whose message contains msg.
func (b *logBuffer) lines(level, msg string) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for line := range strings.Lines(b.buf.String()) {
		if strings.Contains(line, "level="+level+" ") && strings.Contains(line, msg) {
			out = append(out, line)
		}
	}
	return out
}

func newLogger() (*slog.Logger, *logBuffer) {
	b := &logBuffer{}
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug})), b
}

func TestPool_Complete(t *testing.T) {
	s := testutil.MustOpenSQLite(t)
	var (
		runs     atomic.Int32
		payload  atomic.Value
		deadline atomic.Value
	)
	claims := &claimCounting{JobStore: s}
	p := &worker.Pool{
		Jobs: claims,
		Handlers: map[string]worker.Handler{"summarize": func(ctx context.Context, j *agentmem.Job) error {
			runs.Add(1)
			payload.Store(string(j.Payload))
			if dl, ok := ctx.Deadline(); ok {
				deadline.Store(dl)
			}
			return nil
		}},
		Owner: "pool-1",
		Lease: time.Minute,
		Poll:  time.Hour, // only Notify can start the job in time
	}
	MustRun(t, p)
	waitFor(t, 5*time.Second, "the pool's first claim, which finds nothing", func() bool { return claims.n.Load() > 0 })
	claimed := time.Now()
	j := storetest.MustEnqueueJob(t, s, &agentmem.Job{UserID: "alice", Kind: "summarize", Key: "t1", Payload: json.RawMessage(`{"thread_id":"t1"}`)})
	p.Notify()
	done := waitStatus(t, s, j, agentmem.JobDone)
	if done.Attempts != 1 || done.LeaseOwner != "pool-1" || runs.Load() != 1 {
		t.Fatalf("done job = %+v after %d runs, want 1 attempt by pool-1", done, runs.Load())
	}
	if got := payload.Load(); got != `{"thread_id":"t1"}` {
		t.Fatalf("handler saw payload %v", got)
	}
	dl, _ := deadline.Load().(time.Time)
	if dl.IsZero() || dl.After(claimed.Add(time.Minute)) || dl.Before(claimed.Add(30*time.Second)) {
		t.Fatalf("handler ctx deadline %v, want shortly before the lease ends (%v)", dl, claimed.Add(time.Minute))
	}
}

// TestPool_RetryThenDead: a failing job is retried after the back-off and
// is dead after MaxAttempts runs, with its last error; each failure is
// logged once at Warn, the dead letter at Error.
func TestPool_RetryThenDead(t *testing.T) {
	s := testutil.MustOpenSQLite(t)
	log, logs := newLogger()
	const backoff = 50 * time.Millisecond
	var (
		mu    sync.Mutex
		times []time.Time
	)
	p := &worker.Pool{
		Jobs: s,
		Handlers: map[string]worker.Handler{"extract": func(ctx context.Context, j *agentmem.Job) error {
			mu.Lock()
			defer mu.Unlock()
			times = append(times, time.Now())
			return fmt.Errorf("model unavailable (attempt %d)", j.Attempts)
		}},
		Poll:    5 * time.Millisecond,
		Backoff: func(attempt int) time.Duration { return time.Duration(attempt) * backoff },
		Log:     log,
	}
	j := storetest.MustEnqueueJob(t, s, &agentmem.Job{UserID: "alice", Kind: "extract", MaxAttempts: 3})
	stop := MustRun(t, p)
	dead := waitStatus(t, s, j, agentmem.JobDead)
	stop()
	if dead.Attempts != 3 || dead.LastError != "model unavailable (attempt 3)" || dead.LeaseUntil != nil {
		t.Fatalf("dead job = %+v, want 3 attempts and the last error", dead)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(times) != 3 {
		t.Fatalf("handler ran %d times, want 3", len(times))
	}
	for i := 1; i < len(times); i++ {
		if gap, want := times[i].Sub(times[i-1]), time.Duration(i)*backoff; gap < want {
			t.Fatalf("retry %d came after %v, before its back-off of %v", i, gap, want)
		}
	}
	if warns := logs.lines("WARN", "job failed"); len(warns) != 2 || !strings.Contains(warns[0], "attempt=1") || !strings.Contains(warns[0], "retry_in=50ms") {
		t.Fatalf("failure warnings:\n%s", strings.Join(warns, ""))
	}
	if errs := logs.lines("ERROR", "job dead"); len(errs) != 1 || !strings.Contains(errs[0], "attempt 3") {
		t.Fatalf("dead-letter errors:\n%s", strings.Join(errs, ""))
	}
}

// TestPool_Panic: a panicking handler fails its job with the panic as the
// error, and the pool goes on running jobs.
func TestPool_Panic(t *testing.T) {
	s := testutil.MustOpenSQLite(t)
	log, logs := newLogger()
	p := &worker.Pool{
		Jobs: s,
		Handlers: map[string]worker.Handler{
			"bad":  func(ctx context.Context, j *agentmem.Job) error { panic("kaboom") },
			"good": func(ctx context.Context, j *agentmem.Job) error { return nil },
		},
		Concurrency: 1,
		Poll:        5 * time.Millisecond,
		Log:         log,
	}
	bad := storetest.MustEnqueueJob(t, s, &agentmem.Job{UserID: "alice", Kind: "bad", MaxAttempts: 1})
	MustRun(t, p)
	dead := waitStatus(t, s, bad, agentmem.JobDead)
	if dead.LastError != "panic: kaboom" {
		t.Fatalf("last error %q, want the panic", dead.LastError)
	}
	good := storetest.MustEnqueueJob(t, s, &agentmem.Job{UserID: "alice", Kind: "good"})
	p.Notify()
	waitStatus(t, s, good, agentmem.JobDone)
	if errs := logs.lines("ERROR", "job dead"); len(errs) != 1 || !strings.Contains(errs[0], "stack=") {
		t.Fatalf("dead-letter log of the panic, with its stack:\n%s", strings.Join(errs, ""))
	}
}

// TestPool_Stopped: a pool stopped while its handler runs hands the job
// back: another pool runs it at once, long before the first one's lease
// would have ended, on the same attempt.
func TestPool_Stopped(t *testing.T) {
	s := testutil.MustOpenSQLite(t)
	const lease = time.Hour
	started := make(chan struct{})
	first := &worker.Pool{
		Jobs: s,
		Handlers: map[string]worker.Handler{"summarize": func(ctx context.Context, j *agentmem.Job) error {
			close(started)
			<-ctx.Done() // blocks until the pool stops
			return ctx.Err()
		}},
		Owner: "first",
		Lease: lease,
		Poll:  5 * time.Millisecond,
	}
	j := storetest.MustEnqueueJob(t, s, &agentmem.Job{UserID: "alice", Kind: "summarize"})
	stop := MustRun(t, first)
	<-started
	stop()
	back := storetest.MustFindJob(t, s, "alice", j.ID)
	if back.Status != agentmem.JobQueued || back.LeaseUntil != nil || back.LeaseOwner != "" || back.Attempts != 0 || back.LastError != "" {
		t.Fatalf("job of the stopped pool = %+v, want queued again with no lease and no attempt counted", back)
	}
	second := &worker.Pool{
		Jobs:     s,
		Handlers: map[string]worker.Handler{"summarize": func(ctx context.Context, j *agentmem.Job) error { return nil }},
		Owner:    "second",
		Lease:    lease,
		Poll:     5 * time.Millisecond,
	}
	MustRun(t, second)
	done := waitStatus(t, s, j, agentmem.JobDone)
	if done.Attempts != 1 || done.LeaseOwner != "second" {
		t.Fatalf("job finished by the second pool = %+v, want attempt 1 by second", done)
	}
}

// TestPool_StoppedDuringClaim: a stop that comes while a claim is in
// flight must not leave the jobs of that claim leased. A database may
// commit a claim whose caller stopped waiting for the answer: pgx, when
// the claim's ctx ends during COMMIT, closes the connection and returns
// the ctx's error, though the server may have committed. The store here
// behaves so (it claims, then answers the ctx's error if the ctx has
// ended), and the pool is stopped in the middle of its claim: the job
// must be queued again once Run has returned, not leased to a pool that
// is gone until its lease expires.
func TestPool_StoppedDuringClaim(t *testing.T) {
	s := testutil.MustOpenSQLite(t)
	j := storetest.MustEnqueueJob(t, s, &agentmem.Job{UserID: "alice", Kind: "summarize"})
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	p := &worker.Pool{
		Jobs: &stopDuringClaim{Store: s, stop: stop},
		Handlers: map[string]worker.Handler{"summarize": func(ctx context.Context, j *agentmem.Job) error {
			<-ctx.Done()
			return ctx.Err()
		}},
		Owner: "stopping",
		Lease: time.Hour,
	}
	if err := p.Run(runCtx); err != nil {
		t.Fatal(err)
	}
	back := storetest.MustFindJob(t, s, "alice", j.ID)
	if back.Status != agentmem.JobQueued || back.LeaseUntil != nil || back.Attempts != 0 {
		t.Fatalf("job claimed as the pool stopped = %+v, want queued again, with no lease and no attempt counted", back)
	}
}

// stopDuringClaim is a store whose ClaimJobs stops the pool (stop) while
// it claims, commits the claim whatever becomes of ctx, and then answers
// as a driver that stopped waiting does: ctx's error if ctx has ended.
type stopDuringClaim struct {
	agentmem.Store
	stop func()
}

func (s *stopDuringClaim) ClaimJobs(ctx context.Context, owner string, kinds []string, n int, lease time.Duration) ([]*agentmem.Job, error) {
	s.stop()
	jobs, err := s.Store.ClaimJobs(context.WithoutCancel(ctx), owner, kinds, n, lease)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return jobs, err
}

// TestPool_Crashed: a job whose worker died (claimed, never finished nor
// handed back) stays leased; another pool runs it once the lease expires.
func TestPool_Crashed(t *testing.T) {
	s := testutil.MustOpenSQLite(t)
	const lease = 300 * time.Millisecond
	j := storetest.MustEnqueueJob(t, s, &agentmem.Job{UserID: "alice", Kind: "summarize"})
	claimed := storetest.MustClaimJobs(t, s, "dead", nil, 1, lease)
	if len(claimed) != 1 {
		t.Fatalf("claimed %d jobs", len(claimed))
	}
	var ranAt atomic.Value
	second := &worker.Pool{
		Jobs: s,
		Handlers: map[string]worker.Handler{"summarize": func(ctx context.Context, j *agentmem.Job) error {
			ranAt.Store(time.Now())
			return nil
		}},
		Owner: "second",
		Lease: lease,
		Poll:  5 * time.Millisecond,
	}
	MustRun(t, second)
	done := waitStatus(t, s, j, agentmem.JobDone)
	if done.Attempts != 2 || done.LeaseOwner != "second" {
		t.Fatalf("job finished by the second pool = %+v, want attempt 2 by second", done)
	}
	if at := ranAt.Load().(time.Time); at.Before(*claimed[0].LeaseUntil) {
		t.Fatalf("second pool ran the job at %v, before the dead one's lease ended at %v", at, claimed[0].LeaseUntil)
	}
}

// TestPool_LeaseDeadline: a handler's ctx ends before its lease does; a
// handler overrunning it fails the attempt.
func TestPool_LeaseDeadline(t *testing.T) {
	s := testutil.MustOpenSQLite(t)
	p := &worker.Pool{
		Jobs: s,
		Handlers: map[string]worker.Handler{"slow": func(ctx context.Context, j *agentmem.Job) error {
			<-ctx.Done()
			return ctx.Err()
		}},
		Lease:   200 * time.Millisecond,
		Poll:    5 * time.Millisecond,
		Backoff: func(int) time.Duration { return time.Hour },
	}
	j := storetest.MustEnqueueJob(t, s, &agentmem.Job{UserID: "alice", Kind: "slow"})
	MustRun(t, p)
	waitFor(t, 5*time.Second, "the slow job to fail", func() bool {
		got := storetest.MustFindJob(t, s, "alice", j.ID)
		// (Attempts may be 2: under a slow race detector the lease can run
		// out while the failure is recorded, and the pool claims the job
		// again, though not to run it twice.)
		return got.Status == agentmem.JobQueued && got.Attempts >= 1
	})
	if got := storetest.MustFindJob(t, s, "alice", j.ID); !strings.Contains(got.LastError, context.DeadlineExceeded.Error()) {
		t.Fatalf("last error %q, want the deadline", got.LastError)
	}
}

// TestPool_Concurrency: no more than Concurrency handlers run at once, and
// every job runs.
func TestPool_Concurrency(t *testing.T) {
	s := testutil.MustOpenSQLite(t)
	var running, most, ran atomic.Int32
	p := &worker.Pool{
		Jobs: s,
		Handlers: map[string]worker.Handler{"embed": func(ctx context.Context, j *agentmem.Job) error {
			n := running.Add(1)
			defer running.Add(-1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			time.Sleep(10 * time.Millisecond) // a gap: the handler's work, so that handlers overlap
			ran.Add(1)
			return nil
		}},
		Concurrency: 3,
		Poll:        time.Hour,
	}
	const jobs = 20
	for i := range jobs {
		storetest.MustEnqueueJob(t, s, &agentmem.Job{UserID: fmt.Sprintf("user-%d", i%4), Kind: "embed"})
	}
	MustRun(t, p) // claims at once, then again whenever a slot frees
	waitFor(t, 5*time.Second, "every job to run", func() bool { return ran.Load() == jobs })
	if m := most.Load(); m > 3 || m < 2 {
		t.Fatalf("at most %d handlers ran at once, want 3 (2 at least)", m)
	}
	waitFor(t, 5*time.Second, "every job to be done", func() bool {
		return len(storetest.AllJobs(t, s, agentmem.JobFilter{Status: ptr(agentmem.JobDone), Limit: 100})) == jobs
	})
}

func ptr[T any](v T) *T { return &v }

// TestPool_Run: Run returns at once when its ctx ends while idle, and an
// error for a pool it cannot run.
func TestPool_Run(t *testing.T) {
	s := testutil.MustOpenSQLite(t)
	ok := func(ctx context.Context, j *agentmem.Job) error { return nil }
	start := time.Now()
	stop := MustRun(t, &worker.Pool{Jobs: s, Handlers: map[string]worker.Handler{"x": ok}})
	time.Sleep(10 * time.Millisecond) // a gap: Run is idle, waiting for its next poll
	stop()
	if d := time.Since(start); d > time.Second {
		t.Fatalf("idle Run took %v to stop", d)
	}
	for name, p := range map[string]*worker.Pool{
		"NoStore":     {Handlers: map[string]worker.Handler{"x": ok}},
		"NoHandlers":  {Jobs: s},
		"NilHandler":  {Jobs: s, Handlers: map[string]worker.Handler{"x": nil}},
		"BadKind":     {Jobs: s, Handlers: map[string]worker.Handler{"has space": ok}},
		"BadOwner":    {Jobs: s, Handlers: map[string]worker.Handler{"x": ok}, Owner: "a/b"},
		"NegativeTTL": {Jobs: s, Handlers: map[string]worker.Handler{"x": ok}, Lease: -time.Second},
	} {
		if err := p.Run(ctx); err == nil {
			t.Errorf("%s: Run returned nil, want an error", name)
		}
	}
}

func TestExponentialBackoff(t *testing.T) {
	b := worker.ExponentialBackoff(time.Second, time.Minute)
	for attempt, want := range map[int]time.Duration{0: time.Second, 1: time.Second, 2: 2 * time.Second, 4: 8 * time.Second, 7: time.Minute, 100: time.Minute} {
		for range 50 {
			if d := b(attempt); d < want/2 || d > want {
				t.Fatalf("backoff(%d)=%v, want between %v and %v", attempt, d, want/2, want)
			}
		}
	}
	if d := worker.ExponentialBackoff(0, 0)(3); d != 0 {
		t.Fatalf("zero backoff = %v", d)
	}
}

// TestNotifying: with a poll of an hour, the pool runs at once a job
// stored through worker.Notifying, by EnqueueJob or in an append.
func TestNotifying(t *testing.T) {
	s := testutil.MustOpenSQLite(t)
	ran := make(chan string, 4)
	claims := &claimCounting{JobStore: s}
	p := &worker.Pool{
		Jobs:     claims,
		Handlers: map[string]worker.Handler{"summarize": func(ctx context.Context, j *agentmem.Job) error { ran <- j.Key; return nil }},
		Poll:     time.Hour,
	}
	store := worker.Notifying(s, p.Notify)
	MustRun(t, p)
	waitFor(t, 5*time.Second, "the pool's first claim, at start, which finds nothing", func() bool { return claims.n.Load() > 0 })
	if _, err := store.EnqueueJob(context.Background(), &agentmem.Job{UserID: "alice", Kind: "summarize", Key: "enqueued"}); err != nil {
		t.Fatal(err)
	}
	wantRun(t, ran, "enqueued")
	if err := store.CreateThread(context.Background(), &agentmem.Thread{UserID: "alice", ID: "t"}); err != nil {
		t.Fatal(err)
	}
	_, err := store.AppendMessages(context.Background(), "alice", "t", []*agentmem.Message{{Role: "user", Content: "hi"}}, agentmem.AppendOptions{
		Jobs: func([]*agentmem.Message) []*agentmem.Job {
			return []*agentmem.Job{{Kind: "summarize", Key: "appended", Payload: []byte(`{}`)}}
		}})
	if err != nil {
		t.Fatal(err)
	}
	wantRun(t, ran, "appended")
}

func wantRun(t *testing.T, ran chan string, key string) {
	t.Helper()
	select {
	case k := <-ran:
		if k != key {
			t.Fatalf("ran %q, want %q", k, key)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("job %q did not run within 5s: the pool was not woken", key)
	}
}

// flakyJobs is a job store whose outcome calls (CompleteJob, FailJob)
// fail EUNAVAILABLE, as during a database outage, while down is set.
type flakyJobs struct {
	agentmem.JobStore
	down  atomic.Bool
	calls atomic.Int32 // outcome calls refused
}

func (f *flakyJobs) CompleteJob(ctx context.Context, userID, id, owner string) error {
	if f.down.Load() {
		f.calls.Add(1)
		return agentmem.Errorf(agentmem.EUNAVAILABLE, "The database is unavailable; retry.")
	}
	return f.JobStore.CompleteJob(ctx, userID, id, owner)
}

func (f *flakyJobs) FailJob(ctx context.Context, userID, id, owner, errMsg string, retryAt time.Time) error {
	if f.down.Load() {
		f.calls.Add(1)
		return agentmem.Errorf(agentmem.EUNAVAILABLE, "The database is unavailable; retry.")
	}
	return f.JobStore.FailJob(ctx, userID, id, owner, errMsg, retryAt)
}

// TestPool_RecordWhileUnavailable: the outcome of a run that the store
// cannot record while it is unavailable (a database outage) is recorded
// once it is back, within the job's lease: the job does not stay running
// until its lease ends, minutes later, to run again.
func TestPool_RecordWhileUnavailable(t *testing.T) {
	for _, fail := range []bool{false, true} {
		t.Run(map[bool]string{false: "Complete", true: "Fail"}[fail], func(t *testing.T) {
			s := testutil.MustOpenSQLite(t)
			jobs := &flakyJobs{JobStore: s}
			jobs.down.Store(true)
			var runs atomic.Int32
			p := &worker.Pool{
				Jobs: jobs,
				Handlers: map[string]worker.Handler{"index": func(ctx context.Context, j *agentmem.Job) error {
					runs.Add(1)
					if fail {
						return fmt.Errorf("the database went away")
					}
					return nil
				}},
				Lease:   time.Hour,
				Poll:    5 * time.Millisecond,
				Backoff: func(int) time.Duration { return time.Hour },
			}
			j := storetest.MustEnqueueJob(t, s, &agentmem.Job{UserID: "alice", Kind: "index"})
			MustRun(t, p)
			waitFor(t, 5*time.Second, "the outcome to be refused twice", func() bool { return jobs.calls.Load() >= 2 })
			jobs.down.Store(false)
			want := agentmem.JobDone
			if fail {
				want = agentmem.JobQueued
			}
			got := waitStatus(t, s, j, want)
			if runs.Load() != 1 || got.Attempts != 1 || got.LeaseUntil != nil {
				t.Fatalf("job %+v after %d runs, want %s after one run, its lease cleared", got, runs.Load(), want)
			}
		})
	}
}

// TestPool_StoreDown: a job whose run finds the store unavailable
// (agentmem.ErrStoreDown: its database away, its disk full) is handed back
// with its attempt not counted, however often that happens: a job of one
// attempt survives three such runs and is done by the fourth. Another
// failure still counts.
func TestPool_StoreDown(t *testing.T) {
	s := testutil.MustOpenSQLite(t)
	var runs atomic.Int32
	p := &worker.Pool{
		Jobs: s,
		Handlers: map[string]worker.Handler{"index": func(ctx context.Context, j *agentmem.Job) error {
			switch n := runs.Add(1); {
			case j.UserID == "bob":
				return fmt.Errorf("the model failed")
			case n <= 3:
				return fmt.Errorf("write chunks: %w", errors.Join(agentmem.Errorf(agentmem.EUNAVAILABLE, "The database's disk is full."), agentmem.ErrStoreDown))
			}
			return nil
		}},
		Poll:    5 * time.Millisecond,
		Backoff: func(int) time.Duration { return 0 },
	}
	j := storetest.MustEnqueueJob(t, s, &agentmem.Job{UserID: "alice", Kind: "index", MaxAttempts: 1})
	MustRun(t, p)
	if got := waitStatus(t, s, j, agentmem.JobDone); runs.Load() != 4 || got.Attempts != 1 {
		t.Fatalf("job %+v after %d runs, want done by the 4th run, one attempt counted", got, runs.Load())
	}
	other := storetest.MustEnqueueJob(t, s, &agentmem.Job{UserID: "bob", Kind: "index", MaxAttempts: 1})
	if got := waitStatus(t, s, other, agentmem.JobDead); got.Attempts != 1 {
		t.Fatalf("a job failed by its model: %+v, want dead after its one attempt", got)
	}
}

// lostCommitJobs is a job store whose first claim is committed but
// answered with an error, as when the connection to the database is lost
// during COMMIT.
type lostCommitJobs struct {
	agentmem.JobStore
	lost atomic.Bool
}

func (l *lostCommitJobs) ClaimJobs(ctx context.Context, owner string, kinds []string, n int, lease time.Duration) ([]*agentmem.Job, error) {
	jobs, err := l.JobStore.ClaimJobs(ctx, owner, kinds, n, lease)
	if err == nil && len(jobs) > 0 && l.lost.CompareAndSwap(false, true) {
		return nil, errors.Join(agentmem.Errorf(agentmem.EUNAVAILABLE, "The database is unavailable; retry."), agentmem.ErrStoreDown)
	}
	return jobs, err
}

// TestPool_ClaimCommitLost: the jobs of a claim that was committed but
// answered with an error (the connection lost during COMMIT) are handed
// back once the store answers again, and run then, not when their lease
// (an hour here) expires.
func TestPool_ClaimCommitLost(t *testing.T) {
	s := testutil.MustOpenSQLite(t)
	var runs atomic.Int32
	p := &worker.Pool{
		Jobs:     &lostCommitJobs{JobStore: s},
		Handlers: map[string]worker.Handler{"index": func(ctx context.Context, j *agentmem.Job) error { runs.Add(1); return nil }},
		Lease:    time.Hour,
		Poll:     5 * time.Millisecond,
	}
	j := storetest.MustEnqueueJob(t, s, &agentmem.Job{UserID: "alice", Kind: "index"})
	MustRun(t, p)
	if got := waitStatus(t, s, j, agentmem.JobDone); runs.Load() != 1 || got.Attempts != 1 {
		t.Fatalf("job %+v after %d runs, want done once, its lost claim not counted", got, runs.Load())
	}
}

// TestPool_ErasedWhileRunning (issue 28): a handler's ctx names its run
// (agentmem.WithJob, with the pool as owner), so that once the job's user
// is erased while it runs, its writes store nothing: ENOTFOUND, and the
// outcome, which finds no job, is logged at Info, not as a failure.
func TestPool_ErasedWhileRunning(t *testing.T) {
	s := testutil.MustOpenSQLite(t)
	log, logs := newLogger()
	started, erased := make(chan struct{}), make(chan struct{})
	var (
		run      agentmem.JobRun
		writeErr atomic.Value
	)
	p := &worker.Pool{
		Jobs: s,
		Handlers: map[string]worker.Handler{"index": func(ctx context.Context, j *agentmem.Job) error {
			run, _ = agentmem.JobRunFromContext(ctx)
			close(started)
			<-erased
			err := s.CreateMemory(ctx, &agentmem.Memory{UserID: j.UserID, Text: "Learnt too late."})
			writeErr.Store(fmt.Sprint(agentmem.ErrorCode(err)))
			return err
		}},
		Owner: "pool-1",
		Log:   log,
	}
	j := storetest.MustEnqueueJob(t, s, &agentmem.Job{UserID: "alice", Kind: "index"})
	MustRun(t, p)
	var release sync.Once
	t.Cleanup(func() { release.Do(func() { close(erased) }) }) // before the pool's stop, which waits for the handler
	<-started
	if want := (agentmem.JobRun{UserID: "alice", ID: j.ID, Owner: "pool-1"}); run != want {
		t.Fatalf("handler's run = %+v, want %+v", run, want)
	}
	if _, err := s.DeleteUser(ctx, "alice"); err != nil {
		t.Fatal(err)
	}
	release.Do(func() { close(erased) })
	waitFor(t, 5*time.Second, "the outcome to be logged", func() bool {
		return len(logs.lines("INFO", "the job no longer exists")) > 0
	})
	if got := writeErr.Load(); got != agentmem.ENOTFOUND {
		t.Errorf("the handler's write after the erasure: %v, want %s", got, agentmem.ENOTFOUND)
	}
	if ms, _, err := s.FindMemories(ctx, "alice", agentmem.MemoryFilter{}); err != nil || len(ms) != 0 {
		t.Errorf("alice's memories after her erasure = %d, %v; want none", len(ms), err)
	}
}
