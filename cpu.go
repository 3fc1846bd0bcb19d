package agentmem

import (
	"context"
	"runtime"
	"sync"
)

// The CPU is shared between the requests a server serves and its
// background work (WithBackground: index jobs, whose forward passes of
// the built-in model can keep every core busy), and Go schedules
// goroutines without priorities: a request that arrives while background
// work holds every core waits for the scheduler to preempt one, ten
// milliseconds or more. So a request marks itself in service (Foreground)
// and background work runs its CPU-bound loops in units of a few
// milliseconds (BackgroundCPU): while any request is in service, one core
// fewer runs background units (at least one does, so that it is never
// starved).
var cpuGate = newGate()

type gate struct {
	mu         sync.Mutex
	cond       *sync.Cond
	foreground int // requests in service
	background int // background units running
}

func newGate() *gate {
	g := &gate{}
	g.cond = sync.NewCond(&g.mu)
	return g
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
		g.mu.Unlock()
		g.cond.Broadcast()
	}
}

// BackgroundCPU waits until a unit of CPU-bound background work (a few
// milliseconds, with no other unit held: units do not nest) may run, and
// returns what ends it, when ctx is background work; otherwise it returns
// at once.
func BackgroundCPU(ctx context.Context) (done func()) {
	if !IsBackground(ctx) {
		return func() {}
	}
	g := cpuGate
	g.mu.Lock()
	for g.background >= g.limit() {
		g.cond.Wait()
	}
	g.background++
	g.mu.Unlock()
	return func() {
		g.mu.Lock()
		g.background--
		g.mu.Unlock()
		g.cond.Broadcast()
	}
}

// limit is how many background units may run now: one per core, one
// fewer while a request is in service, at least one. g.mu is held.
func (g *gate) limit() int {
	n := runtime.GOMAXPROCS(0)
	if g.foreground > 0 {
		n--
	}
	return max(n, 1)
}
