package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"
)

// TestIndexQueued_OneSegment: the messages of one write transaction make
// one full-text index segment, also when, as in a group commit of several
// users' appends, the users' IDs do not rise with the messages' rowids
// (the queue is keyed by user first).
func TestIndexQueued_OneSegment(t *testing.T) {
	ctx := context.Background()
	s := mustOpen(t, Options{})
	var err error
	segments := func() int { return ftsSegments(t, s) }
	for round := range 2 {
		err = s.write(ctx, func(tx *sql.Tx) error {
			for i, user := range []string{"zoe", "yan", "xia", "wim", "val"} {
				_, err := tx.ExecContext(ctx, `INSERT INTO messages (user_id, thread_id, seq, id, role, content, token_count, created_at)
					VALUES (?, 't', ?, ?, 'user', 'a message about kites', 1, 1)`, user, round+1, fmt.Sprintf("m%d-%d", round, i))
				if err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := segments(), round+1; got != want {
			t.Fatalf("after %d transactions of 5 users' messages: %d index segments, want %d", round+1, got, want)
		}
	}
	if err := CheckSearchIndexes(ctx, s); err != nil {
		t.Fatal(err)
	}
}

// TestIndexQueued_MergedInBackground: commits do not merge the full-text
// index's segments (migration 0023_fts_merge.sql); the write loop does,
// once it has nothing else to do. Fifteen transactions make fifteen
// segments (FTS5 itself merges a level only at sixteen), which the loop
// merges four at a time, and the index reads the same.
func TestIndexQueued_MergedInBackground(t *testing.T) {
	ctx := context.Background()
	s := mustOpen(t, Options{})
	segments := func() int { return ftsSegments(t, s) }
	var automerge int
	if err := s.reader.QueryRowContext(ctx, `SELECT v FROM messages_fts_config WHERE k = 'automerge'`).Scan(&automerge); err != nil || automerge != 0 {
		t.Fatalf("messages_fts automerge = %d (%v), want 0", automerge, err)
	}
	for i := range 15 {
		err := s.write(ctx, func(tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, `INSERT INTO messages (user_id, thread_id, seq, id, role, content, token_count, created_at)
				VALUES ('zoe', 't', ?, ?, 'user', ?, 1, 1)`, i+1, fmt.Sprintf("m%d", i), fmt.Sprintf("kites number %d fly", i))
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for segments() > 6 {
		if time.Now().After(deadline) {
			t.Fatalf("%d index segments 10 s after 15 transactions, want 6 at most: not merged", segments())
		}
		time.Sleep(10 * time.Millisecond)
	}
	var n int
	if err := s.reader.QueryRowContext(ctx, `SELECT COUNT(*) FROM messages_fts WHERE messages_fts MATCH 'kites'`).Scan(&n); err != nil || n != 15 {
		t.Fatalf("messages matching kites after the merges: %d (%v), want 15", n, err)
	}
	if err := CheckSearchIndexes(ctx, s); err != nil {
		t.Fatal(err)
	}
}

// ftsSegments returns the number of segments of messages_fts's index.
func ftsSegments(t *testing.T, s *Store) int {
	t.Helper()
	var n int
	if err := s.reader.QueryRowContext(context.Background(), `SELECT COUNT(DISTINCT segid) FROM messages_fts_idx`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
