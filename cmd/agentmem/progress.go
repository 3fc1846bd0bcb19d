package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// progressEvery is how often the progress line is redrawn: a few times a
// second, so that the time it shows moves and the terminal is not flooded.
const progressEvery = 250 * time.Millisecond

// A progress is the line that long work (eval, import, backup) keeps on a
// terminal: "eval locomo: 120/1986 questions, 14 s", rewritten in place
// (\r) with the latest state and the time since the work began. When
// stderr is no terminal (a pipe, a file, a test's buffer) it shows
// nothing, so that logs and tests stay clean; lines written through it
// (Write) pass on either way.
type progress struct {
	out   io.Writer // stderr
	term  bool      // out is a terminal: the line is shown
	now   func() time.Time
	start time.Time

	mu     sync.Mutex
	text   string        // the latest state, without the time
	poll   func() string // when set, asked for the state at each redraw instead
	shown  int           // columns of the line on the screen, 0 for none
	stop   chan struct{} // closed by Done
	done   chan struct{} // closed when the redrawing goroutine has returned (or at once, without one)
	closed bool
	ticker *time.Ticker // of newProgress, stopped by Done
}

// newProgress returns the progress line of work that begins now, on
// stderr when it is a terminal; Done takes the line away.
func newProgress(stderr io.Writer) *progress {
	if !isTerminal(stderr) {
		return startProgress(stderr, false, time.Now, nil)
	}
	t := time.NewTicker(progressEvery)
	p := startProgress(stderr, true, time.Now, t.C)
	p.ticker = t
	return p
}

// startProgress returns a progress on out, a terminal if term, that
// redraws its line at each tick (nil: only when redraw is called) with
// the time of now.
func startProgress(out io.Writer, term bool, now func() time.Time, tick <-chan time.Time) *progress {
	p := &progress{out: out, term: term, now: now, start: now(), stop: make(chan struct{}), done: make(chan struct{})}
	if tick == nil {
		close(p.done)
		return p
	}
	go func() {
		defer close(p.done)
		for {
			select {
			case <-p.stop:
				return
			case <-tick:
				p.redraw()
			}
		}
	}()
	return p
}

// Update sets the state the line shows from its next redraw, such as
// "eval locomo: 120/1986 questions". It costs a formatted string: call it
// as often as the work advances.
func (p *progress) Update(format string, args ...any) {
	if !p.term {
		return
	}
	text := fmt.Sprintf(format, args...)
	p.mu.Lock()
	p.text, p.poll = text, nil
	p.mu.Unlock()
}

// Poll makes the line show state() at each redraw: for work that cannot
// say how far it is but can be looked at (the size of a file written).
func (p *progress) Poll(state func() string) {
	p.mu.Lock()
	p.poll = state
	p.mu.Unlock()
}

// redraw rewrites the line with the state and the time since the work
// began, padding it with spaces over what is left of a longer line.
func (p *progress) redraw() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.term || p.closed {
		return
	}
	text := p.text
	if p.poll != nil {
		text = p.poll()
	}
	if text == "" {
		return
	}
	line := text + ", " + formatElapsed(p.now().Sub(p.start))
	n := utf8.RuneCountInString(line)
	fmt.Fprint(p.out, "\r"+line+strings.Repeat(" ", max(p.shown-n, 0)))
	p.shown = n
}

// clear blanks the line on the screen, leaving the cursor at its start.
// p.mu is held.
func (p *progress) clear() {
	if p.shown > 0 {
		fmt.Fprint(p.out, "\r"+strings.Repeat(" ", p.shown)+"\r")
		p.shown = 0
	}
}

// Write writes b, whole lines, to stderr: above the progress line, which
// the next redraw puts back under it.
func (p *progress) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clear()
	return p.out.Write(b)
}

// Done stops redrawing and takes the line away, leaving the terminal as
// it was for what is printed next. It may be called more than once.
func (p *progress) Done() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	p.clear()
	p.mu.Unlock()
	close(p.stop)
	<-p.done
	if p.ticker != nil {
		p.ticker.Stop()
	}
}

// formatElapsed writes d as the progress line shows it: 14 s, 2 min 05 s,
// 1 h 02 min.
func formatElapsed(d time.Duration) string {
	s := int(d / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%d s", s)
	case s < 3600:
		return fmt.Sprintf("%d min %02d s", s/60, s%60)
	}
	return fmt.Sprintf("%d h %02d min", s/3600, s%3600/60)
}

// isTerminal reports whether w is a terminal: a character device other
// than the null device (a service's stderr sent to /dev/null is a
// character device too, and nobody watches it). Looking at the file's
// mode needs no dependency; it takes a serial line or /dev/zero for a
// terminal, which no one gives as stderr.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	null, err := os.Stat(os.DevNull)
	return err != nil || !os.SameFile(fi, null)
}

// formatMiB writes a size in bytes as the progress line shows it: 12.5 MiB.
func formatMiB(n int64) string {
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}
