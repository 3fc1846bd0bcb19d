package agentmem_test

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
)

// TestBackgroundCPU: background units run one per core, one fewer while a
// request is in service or has just left (at least one); other work is
// never held.
func TestBackgroundCPU(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(3))
	bg := agentmem.WithBackground(context.Background())
	// most runs 12 units on 6 goroutines and returns how many ran at once
	// at most.
	most := func() int32 {
		var running, peak atomic.Int32
		var wg sync.WaitGroup
		for range 6 {
			wg.Go(func() {
				for range 2 {
					done := agentmem.BackgroundCPU(bg)
					n := running.Add(1)
					for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
					}
					time.Sleep(5 * time.Millisecond) // a gap: the unit's work, so that units overlap
					running.Add(-1)
					done()
				}
			})
		}
		wg.Wait()
		return peak.Load()
	}
	if got := most(); got != 3 {
		t.Errorf("no request: %d units at once, want 3 (GOMAXPROCS)", got)
	}
	leave := agentmem.Foreground()
	if got := most(); got != 2 {
		t.Errorf("a request in service: %d units at once, want 2", got)
	}
	// Not background: at once, whatever runs.
	held := make(chan func(), 2)
	held <- agentmem.BackgroundCPU(bg)
	held <- agentmem.BackgroundCPU(bg)
	start := time.Now()
	agentmem.BackgroundCPU(context.Background())()
	if d := time.Since(start); d > time.Second {
		t.Errorf("a request's work waited %v", d)
	}
	// A loop that waits for other things too is told when a unit may
	// have become free.
	if done, changed := agentmem.TryBackgroundCPU(); done != nil {
		t.Fatal("TryBackgroundCPU took a third unit beside two while a request is in service")
	} else {
		(<-held)()
		select {
		case <-changed:
		case <-time.After(5 * time.Second):
			t.Fatal("a unit ended, and TryBackgroundCPU's channel stayed open")
		}
		held <- agentmem.BackgroundCPU(bg)
	}
	// A unit that waits runs once one ends, and once the request leaves
	// (and its linger is over).
	third := make(chan struct{})
	go func() { agentmem.BackgroundCPU(bg)(); close(third) }()
	select {
	case <-third:
		t.Fatal("a third unit ran beside two while a request is in service")
	case <-time.After(50 * time.Millisecond):
	}
	leave()
	select {
	case <-third:
	case <-time.After(5 * time.Second):
		t.Fatal("the third unit still waits after the request left")
	}
	(<-held)()
	(<-held)()

	runtime.GOMAXPROCS(1)
	leave = agentmem.Foreground()
	defer leave()
	if got := most(); got != 1 {
		t.Errorf("one core, a request in service: %d units at once, want 1 (never none)", got)
	}
}

// TestBackgroundCPUWithin: a unit waited for at most d runs without one
// once d is over, and ends nothing then; one that may run takes a unit.
func TestBackgroundCPUWithin(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	bg := agentmem.WithBackground(context.Background())
	held := agentmem.BackgroundCPU(bg) // the only unit with one core
	start := time.Now()
	done := agentmem.BackgroundCPUWithin(bg, 30*time.Millisecond)
	if d := time.Since(start); d < 30*time.Millisecond || d > 5*time.Second {
		t.Errorf("BackgroundCPUWithin(30 ms) beside a held unit returned after %v", d)
	}
	done()
	if d, _ := agentmem.TryBackgroundCPU(); d != nil {
		t.Fatal("a unit was free after BackgroundCPUWithin ran without one and ended: its done ended the held unit")
	}
	held()
	done = agentmem.BackgroundCPUWithin(bg, time.Hour)
	if d, _ := agentmem.TryBackgroundCPU(); d != nil {
		t.Fatal("BackgroundCPUWithin with a free unit did not take it")
	}
	done()
	d, _ := agentmem.TryBackgroundCPU()
	if d == nil {
		t.Fatal("no unit free after BackgroundCPUWithin's ended")
	}
	d()
}
