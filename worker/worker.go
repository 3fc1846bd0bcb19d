// Package worker runs agentmem's background jobs (summarise, extract,
// embed…): a Pool claims due jobs from an agentmem.JobStore, runs each with
// the Handler of its kind under a lease, and records the outcome: done,
// queued again after a back-off, or dead once it has used its attempts.
//
// The queue is a table of the store, so any number of pools, in one
// process or many, may share it: the store never leases one job to two of
// them at once, and a job whose pool died runs again when its lease
// expires.
package worker

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"os"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentmem/agentmem"
)

// Handler runs one job. It must be idempotent: a job runs at least once,
// and again if its pool dies, or its lease ends, before the outcome is
// recorded. ctx ends a little before the job's lease does, and when the
// pool stops; the handler must then return soon, as the pool waits for it.
// Returning nil completes the job; an error, or a panic, fails this
// attempt. A handler whose thread no longer exists has nothing to do and
// returns nil (see agentmem.Job).
type Handler func(ctx context.Context, j *agentmem.Job) error

// Defaults of the Pool's zero fields.
const (
	DefaultConcurrency = 4
	DefaultLease       = 5 * time.Minute
	DefaultPoll        = time.Second
	DefaultBackoffBase = time.Second
	DefaultBackoffMax  = 5 * time.Minute
)

// storeDownPause is how long a pool stops claiming jobs after one failed
// because the store was unavailable (agentmem.ErrStoreDown).
const storeDownPause = time.Second

// recordTimeout bounds the store calls that run even when the pool is
// stopping: recording a job's outcome (the work is done; losing its
// outcome would run it again), and a claim in flight (see Pool.claim).
const recordTimeout = 10 * time.Second

// While the store is unavailable, recording an outcome is tried again
// after recordRetryMin, then twice as long each time up to recordRetryMax.
const (
	recordRetryMin = 50 * time.Millisecond
	recordRetryMax = 2 * time.Second
)

// Pool runs jobs from Jobs with Handlers, Concurrency at a time. Set the
// fields before Run; the zero value of each but Jobs and Handlers is a
// default. Run it once.
type Pool struct {
	Jobs agentmem.JobStore
	// Handlers maps a job kind to its handler; the pool claims only these
	// kinds.
	Handlers map[string]Handler
	// Owner names the pool in the leases it takes: unique among the pools
	// sharing a store, and an ID (no spaces or slashes). "" means
	// HOST-PID-RANDOM.
	Owner string
	// Concurrency is how many jobs run at once (DefaultConcurrency when 0).
	Concurrency int
	// Lease is how long a job is leased to the pool when claimed
	// (DefaultLease when 0). Its handler's ctx ends a tenth of it (at most
	// 30 s) before, so that the outcome is recorded while the lease holds:
	// make it longer than the slowest handler should take.
	Lease time.Duration
	// Poll is how often the pool looks for due jobs while it is idle
	// (DefaultPoll when 0); Notify wakes it at once.
	Poll time.Duration
	// Backoff returns how long a job waits after its attempt-th failed run
	// (attempt counts from 1). Nil means ExponentialBackoff(DefaultBackoffBase,
	// DefaultBackoffMax).
	Backoff func(attempt int) time.Duration
	// Log receives one line per failed run (Warn), per dead letter (Error)
	// and per other trouble; nil discards them.
	Log *slog.Logger
	// Now returns the current time, for retry times (time.Now when nil).
	Now func() time.Time

	wakeOnce sync.Once
	wake     chan struct{}

	// pausedUntil is when the pool may claim again after a job found the
	// store unavailable (unix nanoseconds; see pauseClaims).
	pausedUntil atomic.Int64
}

// pauseClaims stops the pool claiming jobs until t (a later pause wins).
func (p *Pool) pauseClaims(t time.Time) {
	for {
		old := p.pausedUntil.Load()
		if t.UnixNano() <= old || p.pausedUntil.CompareAndSwap(old, t.UnixNano()) {
			return
		}
	}
}

// Notify wakes the pool to claim jobs now rather than at its next poll:
// call it after enqueueing a job. It never blocks, and may be called
// before Run, from any goroutine.
func (p *Pool) Notify() {
	select {
	case p.wakeChan() <- struct{}{}:
	default: // a wake-up is pending already
	}
}

func (p *Pool) wakeChan() chan struct{} {
	p.wakeOnce.Do(func() { p.wake = make(chan struct{}, 1) })
	return p.wake
}

// ExponentialBackoff returns a back-off that waits about base after the
// first failure and twice as long after each next one, up to maxDelay,
// with jitter: a random duration between half and all of that, so that
// jobs failing together do not retry together.
func ExponentialBackoff(base, maxDelay time.Duration) func(attempt int) time.Duration {
	return func(attempt int) time.Duration {
		d := maxDelay
		if attempt < 1 {
			attempt = 1
		}
		if attempt < 63 && base<<(attempt-1) > 0 && base<<(attempt-1) < maxDelay {
			d = base << (attempt - 1)
		}
		if d <= 0 {
			return 0
		}
		return d/2 + rand.N(d/2+1)
	}
}

// config is a Pool's fields with the defaults applied.
type config struct {
	owner       string
	handlers    map[string]Handler
	kinds       []string
	concurrency int
	lease       time.Duration
	timeout     time.Duration // of a handler's ctx
	poll        time.Duration
	backoff     func(int) time.Duration
	log         *slog.Logger
	now         func() time.Time
}

func (p *Pool) config() (*config, error) {
	if p.Jobs == nil {
		return nil, errors.New("worker: Pool.Jobs is nil")
	}
	if len(p.Handlers) == 0 {
		return nil, errors.New("worker: Pool has no Handlers")
	}
	for kind, h := range p.Handlers {
		if h == nil {
			return nil, fmt.Errorf("worker: the handler of %q is nil", kind)
		}
	}
	c := &config{
		owner:       p.Owner,
		handlers:    maps.Clone(p.Handlers),
		kinds:       slices.Sorted(maps.Keys(p.Handlers)),
		concurrency: cmp.Or(p.Concurrency, DefaultConcurrency),
		lease:       cmp.Or(p.Lease, DefaultLease),
		poll:        cmp.Or(p.Poll, DefaultPoll),
		backoff:     p.Backoff,
		log:         p.Log,
		now:         p.Now,
	}
	if c.owner == "" {
		c.owner = defaultOwner()
	}
	if err := agentmem.ValidateClaim(c.owner, c.kinds, c.concurrency, c.lease); err != nil {
		return nil, fmt.Errorf("worker: %s", agentmem.ErrorMessage(err))
	}
	if c.poll < 0 {
		return nil, errors.New("worker: Pool.Poll is negative")
	}
	c.timeout = c.lease - min(c.lease/10, 30*time.Second)
	if c.backoff == nil {
		c.backoff = ExponentialBackoff(DefaultBackoffBase, DefaultBackoffMax)
	}
	c.log = agentmem.LoggerOr(c.log)
	if c.now == nil {
		c.now = time.Now
	}
	return c, nil
}

// defaultOwner returns HOST-PID-RANDOM: unique per Run, and telling an
// operator where a job ran.
func defaultOwner() string {
	host, err := os.Hostname()
	if err != nil || agentmem.ValidateID("owner", host) != nil {
		host = "worker"
	}
	return fmt.Sprintf("%s-%d-%08x", host, os.Getpid(), rand.Uint32())
}

// jobKey identifies a job: IDs are unique per user only.
type jobKey struct{ user, id string }

// Run claims and runs jobs until ctx ends; then it waits for the handlers
// in flight, whose ctx ends with it, and returns nil. It returns an error
// only for a misconfigured pool.
//
// A job that a stop interrupts is handed back (JobStore.ReleaseJob):
// queued again at once, its attempt not counted, so that the next start
// (or another pool) runs it without waiting for its lease to expire. A
// handler that finished has its outcome recorded even while the pool
// stops. Only a process that dies leaves its jobs leased.
func (p *Pool) Run(ctx context.Context) error {
	c, err := p.config()
	if err != nil {
		return err
	}
	log := c.log.With("owner", c.owner)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		inFlight = map[jobKey]bool{} // guarded by mu
		freed    = make(chan struct{}, 1)
		failing  bool // whether the last claim failed
		// orphans: a claim failed with the store unavailable, and may have
		// been committed all the same (a connection lost during COMMIT):
		// once a claim succeeds, the jobs leased to this pool that it does
		// not run are handed back (see releaseOrphans).
		orphans bool
	)
	defer wg.Wait()
	wake := p.wakeChan()
	poll := time.NewTimer(0)
	defer poll.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-wake:
		case <-freed:
		case <-poll.C:
		}
		if wait := time.Until(time.Unix(0, p.pausedUntil.Load())); wait > 0 {
			poll.Reset(wait) // the store was unavailable: claim nothing meanwhile
			continue
		}
		mu.Lock()
		n := c.concurrency - len(inFlight)
		mu.Unlock()
		if n > 0 {
			jobs, err := p.claim(ctx, c, n)
			switch {
			case ctx.Err() != nil:
				// Claimed as the stop came: hand them back unstarted.
				for _, j := range jobs {
					p.release(ctx, c, log, j)
				}
				return nil
			case err != nil && !failing:
				log.Warn("claim jobs", agentmem.LogErr, err)
			case err != nil:
				log.Debug("claim jobs", agentmem.LogErr, err)
			case failing:
				log.Info("claim jobs: recovered")
			}
			failing = err != nil
			if err != nil && agentmem.ErrorCode(err) == agentmem.EUNAVAILABLE {
				orphans = true
			}
			for _, j := range jobs {
				k := jobKey{j.UserID, j.ID}
				mu.Lock()
				running := inFlight[k]
				inFlight[k] = true
				mu.Unlock()
				if running {
					// Its lease expired while its handler overran its ctx, and
					// this claim renewed it; the run in flight records the
					// outcome.
					log.Debug("job claimed again while running", agentmem.LogJob, j.ID, agentmem.LogUser, j.UserID)
					continue
				}
				wg.Go(func() {
					p.runJob(ctx, c, log, j)
					mu.Lock()
					delete(inFlight, k)
					mu.Unlock()
					select {
					case freed <- struct{}{}:
					default:
					}
				})
			}
			if err == nil && orphans {
				mu.Lock()
				running := maps.Clone(inFlight)
				mu.Unlock()
				orphans = p.releaseOrphans(ctx, c, log, running) != nil
			}
			if err == nil && len(jobs) == n {
				// Maybe more are due: claim again as soon as a slot frees.
				continue
			}
		}
		poll.Reset(c.poll)
	}
}

// claim claims up to n jobs for the pool. The claim does not end with
// ctx, but runs to its end (within recordTimeout): a claim that the stop
// interrupted may be committed all the same (pgx, when its ctx ends
// during COMMIT, closes the connection and returns the ctx's error while
// the server may have committed), and its jobs would then stay leased to
// a pool that is gone until their lease expired. Finished, it tells
// which jobs it took, and Run hands them back.
func (p *Pool) claim(ctx context.Context, c *config, n int) ([]*agentmem.Job, error) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	return p.Jobs.ClaimJobs(cctx, c.owner, c.kinds, n, c.lease)
}

// runJob runs j's handler and records the outcome.
func (p *Pool) runJob(ctx context.Context, c *config, log *slog.Logger, j *agentmem.Job) {
	log = log.With("job", j.ID, "kind", j.Kind, "user", j.UserID, "attempt", j.Attempts)
	// The handler's writes are background work: a store may let requests'
	// go first. They are the job's (agentmem.WithJob): a store makes them
	// only while the job is still leased to this pool, so a job whose user
	// is erased meanwhile stores nothing after the erasure.
	leased := *j
	leased.LeaseOwner = c.owner
	hctx, cancel := context.WithTimeout(agentmem.WithJob(agentmem.WithBackground(ctx), &leased), c.timeout)
	start := time.Now()
	err := runHandler(hctx, c.handlers[j.Kind], j)
	cancel()
	switch {
	case err == nil:
		if rerr := record(ctx, j, func(rctx context.Context) error { return p.Jobs.CompleteJob(rctx, j.UserID, j.ID, c.owner) }); rerr != nil {
			logUnrecorded(log, rerr, "complete job")
			return
		}
		log.Debug("job done", agentmem.LogDuration, time.Since(start))
	case ctx.Err() != nil:
		p.release(ctx, c, log, j)
		log.Info("job interrupted by the stop and handed back", agentmem.LogErr, err)
	case errors.Is(err, agentmem.ErrStoreDown):
		// The store cannot work now (its database is away, its disk full):
		// not the job's fault. Handed back, its attempt not counted, and
		// the pool waits before it claims again, so that an outage kills
		// no job however long it lasts.
		p.pauseClaims(c.now().Add(storeDownPause))
		rerr := record(ctx, j, func(rctx context.Context) error { return p.Jobs.ReleaseJob(rctx, j.UserID, j.ID, c.owner) })
		if rerr != nil {
			logUnrecorded(log, rerr, "hand back job", "err", err)
		} else {
			log.Warn("job handed back: the store is unavailable", agentmem.LogErr, err, "pause", storeDownPause)
		}
	default:
		attrs := []any{"err", err, "duration", time.Since(start)}
		var pe *panicError
		if errors.As(err, &pe) {
			attrs = append(attrs, "stack", pe.stack)
		}
		delay := c.backoff(j.Attempts)
		rerr := record(ctx, j, func(rctx context.Context) error {
			return p.Jobs.FailJob(rctx, j.UserID, j.ID, c.owner, err.Error(), c.now().Add(delay))
		})
		if rerr != nil {
			logUnrecorded(log, rerr, "fail job", attrs...)
		} else if j.Attempts >= j.MaxAttempts {
			log.Error("job dead", append(attrs, "max_attempts", j.MaxAttempts)...)
		} else {
			log.Warn("job failed", append(attrs, "retry_in", delay)...)
		}
	}
}

// record runs call, which records the outcome of j's run, on a context
// of its own: the work is done (or failed) whether or not the pool is
// stopping, and an outcome not recorded leaves the job running until its
// lease ends (minutes), when it runs again. So while the store is
// unavailable (EUNAVAILABLE: the database is down, or its disk full) the
// call is tried again, with a back-off, until the lease ends; once the
// pool is stopping, for recordTimeout at most. Each try is bounded by
// recordTimeout.
func record(ctx context.Context, j *agentmem.Job, call func(ctx context.Context) error) error {
	end := time.Now().Add(recordTimeout)
	if j.LeaseUntil != nil && j.LeaseUntil.After(end) {
		end = *j.LeaseUntil
	}
	var stopping <-chan struct{} = ctx.Done()
	for wait := recordRetryMin; ; wait = min(2*wait, recordRetryMax) {
		if ctx.Err() != nil && stopping != nil { // the pool stops: recordTimeout more at most
			if stop := time.Now().Add(recordTimeout); stop.Before(end) {
				end = stop
			}
			stopping = nil
		}
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
		err := call(rctx)
		cancel()
		if err == nil || agentmem.ErrorCode(err) != agentmem.EUNAVAILABLE || time.Now().Add(wait).After(end) {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-stopping:
			t.Stop()
		}
	}
}

// releaseOrphans hands back the jobs leased to this pool that it does not
// run (running: those it does): a claim that failed as the store became
// unavailable may have been committed all the same (the connection lost
// during COMMIT), and its jobs would otherwise wait for their lease to
// expire, minutes, before anyone ran them. It reads the running jobs of
// every user, a short list.
func (p *Pool) releaseOrphans(ctx context.Context, c *config, log *slog.Logger, running map[jobKey]bool) error {
	status := agentmem.JobRunning
	f := agentmem.JobFilter{Status: &status, Limit: agentmem.MaxPageSize}
	for {
		jobs, next, err := p.Jobs.FindJobs(ctx, f)
		if err != nil {
			return err
		}
		for _, j := range jobs {
			if j.LeaseOwner == c.owner && !running[jobKey{j.UserID, j.ID}] {
				log.Info("job claimed by a claim that seemed to fail: handed back", agentmem.LogJob, j.ID, agentmem.LogUser, j.UserID, agentmem.LogKind, j.Kind)
				p.release(ctx, c, log, j)
			}
		}
		if next == "" {
			return nil
		}
		f.Cursor = next
	}
}

// release hands j back to the queue as the pool stops (ctx has ended), on
// a context of its own bounded by recordTimeout.
func (p *Pool) release(ctx context.Context, c *config, log *slog.Logger, j *agentmem.Job) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	if err := p.Jobs.ReleaseJob(rctx, j.UserID, j.ID, c.owner); err != nil {
		logUnrecorded(log.With("job", j.ID, "user", j.UserID), err, "release job")
	}
}

// logUnrecorded logs, with attrs (the run's own error, if any), that the
// outcome of a run could not be recorded: expected when the lease passed
// to another pool (ECONFLICT) or the user was erased (ENOTFOUND), a
// problem otherwise.
func logUnrecorded(log *slog.Logger, err error, what string, attrs ...any) {
	attrs = append([]any{"record_err", err}, attrs...)
	switch agentmem.ErrorCode(err) {
	case agentmem.ECONFLICT:
		log.Warn(what+": the lease passed to another worker, whose outcome counts", attrs...)
	case agentmem.ENOTFOUND:
		log.Info(what+": the job no longer exists", attrs...)
	default:
		log.Warn(what, attrs...)
	}
}

// panicError is a handler's panic, recovered.
type panicError struct {
	value any
	stack string
}

func (e *panicError) Error() string { return fmt.Sprintf("panic: %v", e.value) }

// runHandler calls h with a copy of j, turning a panic into a
// *panicError.
func runHandler(ctx context.Context, h Handler, j *agentmem.Job) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &panicError{value: r, stack: string(debug.Stack())}
		}
	}()
	job := *j
	return h(ctx, &job)
}

// Notifying returns store with notify called after each call that stored
// a runnable job: an EnqueueJob that queued one, an AppendMessages whose
// AppendOptions.Jobs queued one in the append's transaction, and an
// UpdateThread that ended a thread with ThreadUpdate.EndJobs. Give it
// the pool's Notify, and the parts that enqueue jobs wake the pool at once
// without being told about it.
func Notifying(store agentmem.Store, notify func()) agentmem.Store {
	return &notifying{Store: store, notify: notify}
}

type notifying struct {
	agentmem.Store
	notify func()
}

func (n *notifying) EnqueueJob(ctx context.Context, j *agentmem.Job) (*agentmem.Job, error) {
	out, err := n.Store.EnqueueJob(ctx, j)
	if err == nil && out.Status == agentmem.JobQueued {
		n.notify()
	}
	return out, err
}

func (n *notifying) ImportUser(ctx context.Context, userID string, x *agentmem.UserExport, opt agentmem.ImportOptions) (*agentmem.ImportResult, error) {
	var jobs [][]*agentmem.Job
	if pick := opt.Jobs; pick != nil {
		opt.Jobs = func(res *agentmem.ImportResult) [][]*agentmem.Job {
			jobs = pick(res)
			return jobs
		}
	}
	out, err := n.Store.ImportUser(ctx, userID, x, opt)
	if err == nil && slices.ContainsFunc(jobs, func(alts []*agentmem.Job) bool {
		return slices.ContainsFunc(alts, func(j *agentmem.Job) bool { return j.Status == agentmem.JobQueued })
	}) {
		n.notify()
	}
	return out, err
}

func (n *notifying) AppendMessages(ctx context.Context, userID, threadID string, msgs []*agentmem.Message, opt agentmem.AppendOptions) ([]*agentmem.Message, error) {
	var jobs []*agentmem.Job
	if pick := opt.Jobs; pick != nil {
		opt.Jobs = func(stored []*agentmem.Message) []*agentmem.Job {
			jobs = pick(stored)
			return jobs
		}
	}
	out, err := n.Store.AppendMessages(ctx, userID, threadID, msgs, opt)
	if err == nil && slices.ContainsFunc(jobs, func(j *agentmem.Job) bool { return j.Status == agentmem.JobQueued }) {
		n.notify()
	}
	return out, err
}

func (n *notifying) UpdateThread(ctx context.Context, userID, threadID string, upd agentmem.ThreadUpdate) (*agentmem.Thread, error) {
	t, err := n.Store.UpdateThread(ctx, userID, threadID, upd)
	if err == nil && t.JustEnded && upd.EndJobs != nil {
		n.notify()
	}
	return t, err
}
