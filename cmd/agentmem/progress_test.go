package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeClock is a clock the test moves.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

// TestProgress_Terminal: on a terminal, each redraw rewrites the line in
// place (\r) with the latest state and the time since the start, blanks
// what is left of a longer line, steps aside for lines written through
// it, and is taken away by Done.
func TestProgress_Terminal(t *testing.T) {
	var out bytes.Buffer
	clock := &fakeClock{t: time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)}
	p := startProgress(&out, true, clock.now, nil)
	expect := func(what, want string) {
		t.Helper()
		if got := out.String(); got != want {
			t.Fatalf("%s: wrote %q, want %q", what, got, want)
		}
		out.Reset()
	}
	p.redraw()
	expect("no state yet", "")
	p.Update("eval locomo: %d/%d questions", 0, 1986)
	p.redraw()
	expect("start", "\reval locomo: 0/1986 questions, 0 s")
	clock.advance(14*time.Second + 300*time.Millisecond)
	p.Update("eval locomo: %d/%d questions", 120, 1986)
	p.Update("eval locomo: %d/%d questions", 121, 1986) // only the latest is drawn
	p.redraw()
	expect("later", "\reval locomo: 121/1986 questions, 14 s")
	clock.advance(2 * time.Minute)
	p.Update("eval: 9/9")
	p.redraw()
	expect("shorter", "\reval: 9/9, 2 min 14 s"+strings.Repeat(" ", len("eval locomo: 121/1986 questions, 14 s")-len("eval: 9/9, 2 min 14 s")))
	if _, err := p.Write([]byte("eval locomo: vector…\n")); err != nil {
		t.Fatal(err)
	}
	expect("a line above", "\r"+strings.Repeat(" ", len("eval: 9/9, 2 min 14 s"))+"\reval locomo: vector…\n") // the padding is blank already
	p.Poll(func() string { return "backup: 1.5 MiB copied" })
	p.redraw()
	expect("polled", "\rbackup: 1.5 MiB copied, 2 min 14 s")
	p.Done()
	expect("done", "\r"+strings.Repeat(" ", len("backup: 1.5 MiB copied, 2 min 14 s"))+"\r")
	p.redraw()
	p.Done()
	expect("after done", "")
	if _, err := p.Write([]byte("imported: 3 threads\n")); err != nil {
		t.Fatal(err)
	}
	expect("a line after done", "imported: 3 threads\n")
}

// syncBuffer is a buffer that the redrawing goroutine writes while the
// test reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestProgress_Ticks: the line is drawn at each tick of the clock that
// paces it (progressEvery in newProgress), not at each Update: a loop
// that updates it a thousand times draws it once per tick.
func TestProgress_Ticks(t *testing.T) {
	var out syncBuffer
	clock := &fakeClock{t: time.Now()}
	tick := make(chan time.Time)
	p := startProgress(&out, true, clock.now, tick)
	defer p.Done()
	for i := range 1000 {
		p.Update("import: %d", i)
	}
	if got := out.String(); got != "" {
		t.Fatalf("drawn before a tick: %q", got)
	}
	tick <- time.Now()
	waitFor(t, func() bool { return out.String() == "\rimport: 999, 0 s" }, out.String)
	p.Update("import: done")
	tick <- time.Now()
	waitFor(t, func() bool { return strings.Count(out.String(), "\r") == 2 }, out.String)
	if got, want := out.String(), "\rimport: 999, 0 s\rimport: done, 0 s"; got != want {
		t.Fatalf("wrote %q, want %q", got, want)
	}
	if progressEvery < 200*time.Millisecond || progressEvery > time.Second {
		t.Errorf("progressEvery = %v: not a few times a second", progressEvery)
	}
}

// waitFor waits until cond holds, failing the test with what got says
// after 10 s.
func waitFor(t *testing.T, cond func() bool, got func() string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited 10 s; wrote %q", got())
		}
	}
}

// TestProgress_NotATerminal: when stderr is no terminal, a progress
// writes nothing of its own (nothing is drawn, even by ticks), and lines
// written through it pass on unchanged.
func TestProgress_NotATerminal(t *testing.T) {
	var out bytes.Buffer
	p := newProgress(&out)
	p.Update("eval locomo: %d/%d questions", 1, 2)
	p.Poll(func() string { return "backup: 1.0 MiB copied" })
	p.redraw()
	if _, err := p.Write([]byte("a line\n")); err != nil {
		t.Fatal(err)
	}
	p.Done()
	if got := out.String(); got != "a line\n" {
		t.Fatalf("wrote %q, want only the line written through it", got)
	}
}

// TestIsTerminal: a buffer, a pipe, a file and the null device are no
// terminal; a pseudo-terminal is one.
func TestIsTerminal(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	file, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	for name, w := range map[string]io.Writer{"buffer": &bytes.Buffer{}, "pipe": w, "file": file, "null": null} {
		if isTerminal(w) {
			t.Errorf("%s: a terminal", name)
		}
	}
	pty, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal to try: %v", err)
	}
	defer pty.Close()
	if !isTerminal(pty) {
		t.Errorf("a pseudo-terminal is no terminal")
	}
}

// TestProgress_CommandsQuiet: with stderr no terminal, the long commands
// write to it nothing more than before: no progress, no \r.
func TestProgress_CommandsQuiet(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "agentmem.db")
	seed(t, db, "uma", time.Now())
	export := filepath.Join(dir, "uma.json")
	quiet := func(args ...string) {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if err := run(t.Context(), args, func(string) string { return "" }, strings.NewReader(""), &stdout, &stderr); err != nil {
			t.Fatalf("%s: %v", strings.Join(args, " "), err)
		}
		if stderr.Len() > 0 {
			t.Errorf("%s wrote to stderr: %q", strings.Join(args, " "), stderr.String())
		}
	}
	quiet("export", "--db", db, "--user", "uma", "--out", export)
	quiet("import", "--db", filepath.Join(dir, "other.db"), "--user", "uma", export)
	quiet("backup", "--db", db, "--out", filepath.Join(dir, "backup.db"))
	quiet("eval", "locomo", "--data", evalFixture, "--searcher", "bm25", "--json")
	if b, err := os.ReadFile(export); err != nil || !json.Valid(b) {
		t.Errorf("the export: %v", err)
	}
}
