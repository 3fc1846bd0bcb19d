package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
)

// TestCheckpointLoop: commits leave the write-ahead log to checkpointLoop,
// which copies it into the database file soon after, while the store is
// open (the writer itself never checkpoints).
func TestCheckpointLoop(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "agentmem.db")
	s, err := Open(ctx, path, Options{Synchronous: "NORMAL"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	size := func(name string) int64 {
		fi, err := os.Stat(name)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	if err := s.CreateThread(ctx, &agentmem.Thread{UserID: "alice", ID: "t"}); err != nil {
		t.Fatal(err)
	}
	before := size(path)
	for range 20 {
		msgs := make([]*agentmem.Message, 100)
		for i := range msgs {
			msgs[i] = &agentmem.Message{Role: agentmem.RoleUser, Content: strings.Repeat(fmt.Sprint("words of message ", i, " "), 20)}
		}
		if _, err := s.AppendMessages(ctx, "alice", "t", msgs, agentmem.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if wal := size(path + "-wal"); wal < 1<<20 {
		t.Fatalf("the log holds %d bytes after 2,000 messages; want more than 1 MiB", wal)
	}
	deadline := time.Now().Add(10 * time.Second)
	for size(path) < before+1<<20 {
		if time.Now().After(deadline) {
			t.Fatalf("the database file is %d bytes 10 s after 2,000 messages (%d before them): not checkpointed", size(path), before)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestWrite_RequestsFirst: while a write runs, a queued request-path write
// goes before background work queued earlier, and background writes
// commit one to a transaction.
func TestWrite_RequestsFirst(t *testing.T) {
	ctx := context.Background()
	s := mustOpen(t, Options{Synchronous: "NORMAL"})
	var order []string // appended by the write loop, one fn at a time
	txs := map[string]*sql.Tx{}
	started, release := make(chan struct{}), make(chan struct{})
	first := make(chan error, 1)
	go func() {
		first <- s.write(ctx, func(tx *sql.Tx) error {
			close(started)
			<-release
			return nil
		})
	}()
	<-started
	done := make(chan error, 4)
	write := func(ctx context.Context, name string) {
		go func() {
			done <- s.write(ctx, func(tx *sql.Tx) error {
				order, txs[name] = append(order, name), tx
				return nil
			})
		}()
	}
	bg := agentmem.WithBackground(ctx)
	write(bg, "background 1")
	write(bg, "background 2")
	queued := func(q chan *writeOp, n int) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); len(q) < n; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%d writes queued, want %d", len(q), n)
			}
		}
	}
	queued(s.background, 2)
	write(ctx, "request")
	queued(s.writes, 1)
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if order[0] != "request" || len(order) != 3 {
		t.Fatalf("order %q, want the request first", order)
	}
	if txs["background 1"] == txs["background 2"] {
		t.Fatal("two background writes shared a transaction")
	}
}

// TestWriteSlices: background work's windows and vectors are written in
// slices of about sliceBytes, each a transaction of its own, and all of
// them land; the request path's, in one.
func TestWriteSlices(t *testing.T) {
	ctx := context.Background()
	s := mustOpen(t, Options{Synchronous: "NORMAL"})
	// A vector's bytes: 2 values, an ID of 36, "test/2", "alice".
	const n, vecBytes = 700, 2 + 36 + 6 + 5
	perSlice := sliceBytes / vecBytes
	for _, tc := range []struct {
		ctx    context.Context
		thread string
		txs    int
	}{{ctx, "request", 1}, {agentmem.WithBackground(ctx), "background", (n + perSlice - 1) / perSlice}} {
		if err := s.CreateThread(ctx, &agentmem.Thread{UserID: "alice", ID: tc.thread}); err != nil {
			t.Fatal(err)
		}
		msgs := make([]*agentmem.Message, n)
		seqs := make([]int64, len(msgs))
		for i := range msgs {
			// Every third turn says the words; each turn's window holds one.
			msgs[i] = &agentmem.Message{Role: agentmem.RoleUser, Content: fmt.Sprint("turn ", i)}
			if i%3 == 0 {
				msgs[i].Content = "kiwi " + tc.thread
			}
			seqs[i] = int64(i + 1)
		}
		ws := agentmem.TurnWindows(seqs)
		out, err := s.AppendMessages(ctx, "alice", tc.thread, msgs, agentmem.AppendOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var vs []agentmem.Vector
		for _, m := range out {
			vs = append(vs, agentmem.Vector{Scope: agentmem.ScopeMessages, ID: m.ID, Space: "test/2", Vec: []float32{1, 0}})
		}
		before := vectorSeq(t, s, "alice", "test/2")
		if err := s.PutMessageWindows(tc.ctx, "alice", tc.thread, ws); err != nil {
			t.Fatal(err)
		}
		if err := s.PutVectors(tc.ctx, "alice", vs); err != nil {
			t.Fatal(err)
		}
		if got := vectorSeq(t, s, "alice", "test/2") - before; got != int64(tc.txs) {
			t.Errorf("%s: %d vector writes, want %d", tc.thread, got, tc.txs)
		}
		hits, err := s.SearchText(ctx, "alice", agentmem.TextQuery{Query: "kiwi " + tc.thread, Scopes: []string{agentmem.ScopeMessages}, Limit: 1000,
			Filter: agentmem.SearchFilter{ThreadID: &tc.thread}})
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) != len(ws) {
			t.Errorf("%s: %d messages found by their windows, want %d", tc.thread, len(hits), len(ws))
		}
	}
	if vs, err := s.FindVectors(ctx, "alice", "test/2", nil); err != nil || len(vs) != 2*n {
		t.Fatalf("%d vectors, %v; want %d", len(vs), err, 2*n)
	}
}

// vectorSeq is the seq of the user's vectors of space: one more for each
// transaction that wrote some.
func vectorSeq(t *testing.T, s *Store, user, space string) int64 {
	t.Helper()
	st, err := s.VectorsState(context.Background(), user, space)
	if err != nil {
		t.Fatal(err)
	}
	return st.Seq
}

// TestSyncFor: with FULL, a run of lazyAfter commits of background work
// alone stops waiting for the disk (NORMAL), and the next commit of the
// request path is FULL again; a group holding a request write is FULL.
// With NORMAL nothing changes.
func TestSyncFor(t *testing.T) {
	ctx := context.Background()
	for _, level := range []string{"FULL", "EXTRA", "NORMAL"} {
		t.Run(level, func(t *testing.T) {
			s := mustOpen(t, Options{Synchronous: level})
			var err error
			synchronous := func() int {
				t.Helper()
				var n int
				if err := s.writer.QueryRowContext(ctx, `PRAGMA synchronous`).Scan(&n); err != nil {
					t.Fatal(err)
				}
				return n
			}
			want := map[string]int{"NORMAL": 1, "FULL": 2, "EXTRA": 3}
			vec := []agentmem.Vector{{Scope: agentmem.ScopeMemories, ID: "m1", Space: "test/2", Vec: []float32{1, 0}}}
			for i := 1; i <= lazyAfter; i++ {
				if err := s.PutVectors(agentmem.WithBackground(ctx), "alice", vec); err != nil {
					t.Fatal(err)
				}
				wantLevel := level
				if i == lazyAfter {
					wantLevel = "NORMAL"
				}
				if got := synchronous(); got != want[wantLevel] {
					t.Errorf("after %d background writes in a row: synchronous %d, want %d (%s)", i, got, want[wantLevel], wantLevel)
				}
			}
			if err := s.PutVectors(ctx, "alice", vec); err != nil {
				t.Fatal(err)
			}
			if got := synchronous(); got != want[level] {
				t.Errorf("after a request write: synchronous %d, want %d (%s)", got, want[level], level)
			}
			// A background write and request writes queued together: the
			// group commits at the request path's level.
			if err := s.PutVectors(agentmem.WithBackground(ctx), "alice", vec); err != nil {
				t.Fatal(err)
			}
			err = s.syncFor([]*writeOp{{background: true}, {background: false}})
			if got := synchronous(); err != nil || got != want[level] {
				t.Errorf("a mixed group: synchronous %d, %v; want %d (%s)", got, err, want[level], level)
			}
		})
	}
}

// mustOpen opens a store on a new file, closed when the test ends.
func mustOpen(t *testing.T, opt Options) *Store {
	t.Helper()
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "agentmem.db"), opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
