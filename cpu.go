package agentmem

import (
	"context"
	"runtime"
	"sync"
	"time"
)

// The CPU is shared between the requests a server serves and its
// background work (WithBackground: index jobs, whose forward passes of
// the built-in model can keep every core busy), and Go schedules
// goroutines without priorities: a request that arrives while background
// work holds every core waits for the scheduler to preempt one, ten
// milliseconds or more. So a request marks itself in service (Foreground)
// and background work runs its CPU-bound loops in units of a millisecond
// or a few (BackgroundCPU): while any request is in service, or one ended
// less than foregroundLinger ago, one core fewer runs background units
// (at least one does, so that it is never starved). The linger matters: a
// request that arrives while background units hold every core is not seen
// until one yields (the scheduler looks at the network at most every ten
// milliseconds then), so a core is kept free while requests keep coming,
// not only while one is in service.
//
// Each unit begins by yielding its core (runtime.Gosched), so that a
// request already waiting to run goes first. Units do not nest: code in a
// unit calls nothing that takes one (an embedder, a store).
var cpuGate = newGate()

type gate struct {
	mu         sync.Mutex
	changed    chan struct{} // closed, and replaced, when a unit may have become free
	foreground int           // requests in service
	lastEnded  time.Time     // when the last request in service ended
	background int           // background units running
	lingered   *time.Timer   // wakes the waiting units when the linger is over
}

// foregroundLinger is how long after a request ends background work
// still leaves a core free for the next: longer than the gap between the
// requests of a client that sends them one after the other.
const foregroundLinger = 5 * time.Millisecond

func newGate() *gate {
	return &gate{changed: make(chan struct{})}
}

// signal wakes the units waiting. g.mu is held.
func (g *gate) signal() {
	close(g.changed)
	g.changed = make(chan struct{})
}

// Foreground marks a request in service until done is called.
func Foreground() (done func()) {
	g := cpuGate
	g.mu.Lock()
	g.foreground++
	g.mu.Unlock()
	return func() {
		g.mu.Lock()
		g.foreground--
		g.lastEnded = time.Now()
		// The units that wait may run once the linger is over: one timer,
		// moved on by each request that ends, not one a request.
		if g.lingered == nil {
			g.lingered = time.AfterFunc(foregroundLinger, func() {
				g.mu.Lock()
				g.signal()
				g.mu.Unlock()
			})
		} else {
			g.lingered.Reset(foregroundLinger)
		}
		g.mu.Unlock()
	}
}

// BackgroundCPU waits until a unit of CPU-bound background work (a
// millisecond or a few, with no other unit held: units do not nest) may
// run, and returns what ends it, when ctx is background work; otherwise it
// returns at once.
func BackgroundCPU(ctx context.Context) (done func()) {
	if !IsBackground(ctx) {
		return func() {}
	}
	runtime.Gosched()
	for {
		done, changed := TryBackgroundCPU()
		if done != nil {
			return done
		}
		<-changed
	}
}

// BackgroundCPUWithin is BackgroundCPU waiting at most d: past it, the
// work runs without a unit (and done does nothing). For units around
// code that may itself take one, such as a store's transaction whose
// caller might hold a unit: it is slowed, never stopped.
func BackgroundCPUWithin(ctx context.Context, d time.Duration) (done func()) {
	if !IsBackground(ctx) {
		return func() {}
	}
	runtime.Gosched()
	var timeout <-chan time.Time
	for {
		done, changed := TryBackgroundCPU()
		if done != nil {
			return done
		}
		if timeout == nil {
			t := time.NewTimer(d)
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-changed:
		case <-timeout:
			return func() {}
		}
	}
}

// TryBackgroundCPU takes a unit of background work if one may run now,
// and returns what ends it; otherwise it returns nil and a channel closed
// when one may have become free, for a loop that also waits for other
// things (SQLite's writer, for its requests' writes).
func TryBackgroundCPU() (done func(), changed <-chan struct{}) {
	g := cpuGate
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.background >= g.limit() { // limit ≥ 1: a unit runs, and will signal
		return nil, g.changed
	}
	g.background++
	return func() {
		g.mu.Lock()
		g.background--
		g.signal()
		g.mu.Unlock()
	}, nil
}

// limit is how many background units may run now: one per core, one
// fewer while a request is in service or one ended less than
// foregroundLinger ago, at least one. g.mu is held.
func (g *gate) limit() int {
	n := runtime.GOMAXPROCS(0)
	if g.foreground > 0 || time.Since(g.lastEnded) < foregroundLinger {
		n--
	}
	return max(n, 1)
}
