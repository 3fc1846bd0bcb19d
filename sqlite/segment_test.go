package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
)

// TestIndexQueued_OneSegment: the messages of one write transaction make
// one full-text index segment, also when, as in a group commit of several
// users' appends, the users' IDs do not rise with the messages' rowids
// (the queue is keyed by user first).
func TestIndexQueued_OneSegment(t *testing.T) {
	ctx := context.Background()
	s := mustOpen(t, Options{})
	var err error
	segments := func() int {
		t.Helper()
		var n int
		if err := s.reader.QueryRowContext(ctx, `SELECT COUNT(DISTINCT segid) FROM messages_fts_idx`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
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
