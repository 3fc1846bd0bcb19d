package sqlite

import (
	"context"
	"database/sql"
	"testing"
)

// TestIndexQueued: messages inserted, changed and deleted within one write
// transaction, before the write loop indexes them, leave the index in
// step with the table; so do those changed in a later one.
func TestIndexQueued(t *testing.T) {
	ctx := context.Background()
	s := mustOpen(t, Options{})
	var err error
	exec := func(tx *sql.Tx, q string) error {
		_, err := tx.ExecContext(ctx, q)
		return err
	}
	insert := `INSERT INTO messages (user_id, thread_id, seq, id, role, content, token_count, created_at) VALUES `
	err = s.write(ctx, func(tx *sql.Tx) error {
		for _, q := range []string{
			insert + `('u', 't', 1, 'a', 'user', 'kept kite', 1, 1), ('u', 't', 2, 'b', 'user', 'deleted kite', 1, 1),
				('u', 't', 3, 'c', 'assistant', 'changed kite', 1, 1), ('u', 't', 4, 'd', 'tool', 'tool kite', 1, 1),
				('u', 't', 5, 'e', 'tool', 'promoted kite', 1, 1)`,
			`DELETE FROM messages WHERE id = 'b'`,
			`UPDATE messages SET content = 'changed glider' WHERE id = 'c'`,
			`UPDATE messages SET role = 'user' WHERE id = 'e'`,
		} {
			if err := exec(tx, q); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckSearchIndexes(ctx, s); err != nil {
		t.Fatal(err)
	}
	count := func(match string) int {
		var n int
		if err := s.reader.QueryRowContext(ctx, `SELECT COUNT(*) FROM messages_fts WHERE messages_fts MATCH ?`, match).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if k, g := count("kite"), count("glider"); k != 2 || g != 1 {
		t.Fatalf("kite in %d messages, glider in %d; want 2 (a, e) and 1 (c)", k, g)
	}
	var queued int
	if err := s.reader.QueryRowContext(ctx, `SELECT COUNT(*) FROM messages_fts_queue`).Scan(&queued); err != nil || queued != 0 {
		t.Fatalf("%d messages left in the queue (%v)", queued, err)
	}
	// Indexed messages changed and deleted later.
	err = s.write(ctx, func(tx *sql.Tx) error {
		for _, q := range []string{
			`UPDATE messages SET content = 'kept glider' WHERE id = 'a'`,
			`UPDATE messages SET role = 'tool' WHERE id = 'e'`,
			`DELETE FROM messages WHERE id = 'c'`,
		} {
			if err := exec(tx, q); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckSearchIndexes(ctx, s); err != nil {
		t.Fatal(err)
	}
	if k, g := count("kite"), count("glider"); k != 0 || g != 1 {
		t.Fatalf("kite in %d messages, glider in %d; want 0 and 1 (a)", k, g)
	}
}
