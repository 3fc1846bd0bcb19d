package openai

import (
	"sync"
	"time"
)

// result is how a call that the breaker let through ended.
type result int

const (
	success result = iota // the server answered: closes the breaker
	failure               // the server failed: counts towards opening it
	neutral               // no verdict (the caller gave up, or a 400): changes nothing
)

// breaker is a circuit breaker over consecutive failed calls. Closed, it
// lets every call through. After threshold consecutive failures it opens:
// calls fail fast until cooldown has passed. Then it is half-open: one
// trial call goes through while the others keep failing fast; the trial's
// success closes it, its failure opens it for another cooldown.
type breaker struct {
	threshold int // ≤ 0 disables the breaker
	cooldown  time.Duration

	mu       sync.Mutex
	failures int       // consecutive
	until    time.Time // open until then, once failures ≥ threshold
	trial    bool      // half-open and the trial call is under way
}

// allow reports whether a call may go ahead, and whether it is the
// half-open trial; if not, wait is how long the breaker stays open (0 while
// a trial call is under way). A call allowed must end with record.
func (b *breaker) allow(now time.Time) (ok, trial bool, wait time.Duration) {
	if b.threshold <= 0 {
		return true, false, 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.failures < b.threshold:
		return true, false, 0
	case now.Before(b.until):
		return false, false, b.until.Sub(now)
	case b.trial:
		return false, false, 0
	}
	b.trial = true
	return true, true, 0
}

// record ends a call that allow let through; trial is what allow said.
func (b *breaker) record(now time.Time, trial bool, r result) {
	if b.threshold <= 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if trial {
		b.trial = false
	}
	switch r {
	case success:
		b.failures = 0
	case failure:
		b.failures++
		if b.failures >= b.threshold {
			b.until = now.Add(b.cooldown)
		}
	}
}
