package core

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/agentmem/agentmem"
	"golang.org/x/sync/semaphore"
)

// Work is a class of expensive work, admitted by a semaphore of its own
// (see Admitter), so that a flood of one class neither slows the cheap
// requests (appends, reads, health) nor the other class.
type Work string

// The classes of work an Admitter bounds.
const (
	// WorkSearch is a search, a facts question (its search; the model's
	// answer is not held), and the memories of a context (a context whose
	// memories are refused is built without them, and says so in its
	// warnings, rather than refused). CPU-bound: ranking, vector scans.
	WorkSearch Work = "search"
	// WorkBulk is an import or an export, of a user or a thread: long
	// transactions over a user's whole history.
	WorkBulk Work = "bulk"
)

// Works are the classes of work, in the order metrics list them.
var Works = []Work{WorkSearch, WorkBulk}

// DefaultAdmissionWait is Admission.Wait when 0: long enough to ride out
// a burst (several searches' time), short enough that a client waiting
// on a refusal retries well before it would have given up.
const DefaultAdmissionWait = time.Second

// queuePerSlot bounds the requests waiting for a class, as a multiple of
// its size: past it, a request is refused without waiting, so that what
// a flood holds (a goroutine and a request each) stays bounded. It is
// not what bounds the latency (Admission.Wait is): a burst that the class
// works through within the wait (40 searches at once, each a few
// milliseconds) is served whole, not cut short by the queue.
const queuePerSlot = 64

// Admission sizes an Admitter. The zero value bounds each class by the
// CPUs the process may use (runtime.GOMAXPROCS).
type Admission struct {
	// Search is the weight of searches that may run at once: each weighs
	// 1 (GOMAXPROCS when 0; no bound when negative).
	Search int
	// Bulk is the weight of imports and exports that may run at once:
	// each weighs 1 (GOMAXPROCS/2, at least 1, when 0; no bound when
	// negative).
	Bulk int
	// Wait is how long a request waits for its class's turn before it
	// is refused, EUNAVAILABLE (DefaultAdmissionWait when 0; not at all
	// when negative).
	Wait time.Duration
}

// size returns the size of class w (0: no bound).
func (a Admission) size(w Work) int64 {
	n, def := a.Search, runtime.GOMAXPROCS(0)
	if w == WorkBulk {
		n, def = a.Bulk, max(runtime.GOMAXPROCS(0)/2, 1)
	}
	switch {
	case n < 0:
		return 0
	case n == 0:
		return int64(def)
	}
	return int64(n)
}

// Admitter bounds the concurrency of expensive work, by class (Work):
// each class has a weighted semaphore; a request takes its weight of it
// for as long as its work runs, waits for it at most Admission.Wait, in
// arrival order, and is refused past that, or at once when the class's
// queue is full (queuePerSlot waiting per unit of size), with
// EUNAVAILABLE, which the REST API answers 503 with Retry-After. The
// requests of a class therefore never wait longer than Wait for it, and
// those admitted run with at most its size beside them. A nil *Admitter
// admits everything. It is safe for concurrent use.
type Admitter struct {
	wait    time.Duration
	classes map[Work]*class
}

type class struct {
	sem      *semaphore.Weighted // nil: no bound
	size     int64
	running  atomic.Int64 // weight held
	waiting  atomic.Int64 // requests waiting
	rejected atomic.Uint64
}

// NewAdmitter returns an Admitter sized by opt.
func NewAdmitter(opt Admission) *Admitter {
	a := &Admitter{wait: opt.Wait, classes: map[Work]*class{}}
	if a.wait == 0 {
		a.wait = DefaultAdmissionWait
	}
	for _, w := range Works {
		c := &class{size: opt.size(w)}
		if c.size > 0 {
			c.sem = semaphore.NewWeighted(c.size)
		}
		a.classes[w] = c
	}
	return a
}

// Admit waits for weight of w's semaphore (a weight above the class's size
// takes all of it) and returns the function that gives it back, to be
// called once the work is done. It returns EUNAVAILABLE when the class is
// busy (none came within the wait, or the queue is full), and ctx's error
// when ctx ends first. An unknown class, or a nil Admitter, admits at once.
func (a *Admitter) Admit(ctx context.Context, w Work, weight int64) (release func(), err error) {
	if a == nil {
		return func() {}, nil
	}
	c := a.classes[w]
	if c == nil || c.sem == nil {
		return func() {}, nil
	}
	weight = min(max(weight, 1), c.size)
	if !c.sem.TryAcquire(weight) {
		if a.wait < 0 {
			c.rejected.Add(1)
			return nil, busy(w)
		}
		if c.waiting.Add(1) > queuePerSlot*c.size {
			c.waiting.Add(-1)
			c.rejected.Add(1)
			return nil, busy(w)
		}
		wctx, cancel := context.WithTimeout(ctx, a.wait)
		err := c.sem.Acquire(wctx, weight)
		cancel()
		c.waiting.Add(-1)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			c.rejected.Add(1)
			return nil, busy(w)
		}
	}
	c.running.Add(weight)
	var once atomic.Bool
	return func() {
		if once.CompareAndSwap(false, true) {
			c.running.Add(-weight)
			c.sem.Release(weight)
		}
	}, nil
}

// SearchAdmit returns a's Admit for WorkSearch as retrieve.Options.Admit
// takes it (nil for a nil Admitter: no bound).
func (a *Admitter) SearchAdmit() func(ctx context.Context) (release func(), err error) {
	if a == nil {
		return nil
	}
	return func(ctx context.Context) (func(), error) { return a.Admit(ctx, WorkSearch, 1) }
}

// ErrBusy is joined to the EUNAVAILABLE error of work an Admitter refused.
var ErrBusy = errors.New("admission: too much work of the class at once")

func busy(w Work) error {
	what := "searches"
	if w == WorkBulk {
		what = "imports and exports"
	}
	return errors.Join(agentmem.Errorf(agentmem.EUNAVAILABLE, "The server is busy with other %s; retry shortly.", what), ErrBusy)
}

// AdmissionStats is what an Admitter reports of a class, for metrics.
type AdmissionStats = agentmem.AdmissionStats

// Stats reports each class, in the order of Works (none for a nil
// Admitter).
func (a *Admitter) Stats() []AdmissionStats {
	if a == nil {
		return nil
	}
	out := make([]AdmissionStats, 0, len(Works))
	for _, w := range Works {
		c := a.classes[w]
		out = append(out, AdmissionStats{Work: string(w), Size: c.size, Running: c.running.Load(), Waiting: c.waiting.Load(), Rejected: c.rejected.Load()})
	}
	return out
}

// admit is s's Admitter's Admit (everything is admitted without one).
func (s *Service) admit(ctx context.Context, w Work) (release func(), err error) {
	return s.opt.Admitter.Admit(ctx, w, 1)
}

// AdmissionStats reports the service's admission of expensive work, by
// class (none without an Admitter), for metrics.
func (s *Service) AdmissionStats() []AdmissionStats { return s.opt.Admitter.Stats() }
