package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
)

// TestReadStatementCache: reads through cached statements give the same
// answers however often they run, when the same query runs again while
// its rows are still open (the statement is not shared then), and when
// more query texts run than the cache holds (the oldest are evicted).
func TestReadStatementCache(t *testing.T) {
	ctx := context.Background()
	s := mustOpen(t, Options{})
	var err error
	err = s.write(ctx, func(tx *sql.Tx) error {
		for i := range 5 {
			if _, err := tx.ExecContext(ctx, `INSERT INTO threads (user_id, id, created_at, updated_at) VALUES ('u', ?, 1, 1)`, fmt.Sprint("t", i)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	const q = `SELECT id FROM threads WHERE user_id = ? ORDER BY id`
	err = s.read(ctx, func(tx *sql.Tx) error {
		outer, err := tx.QueryContext(ctx, q, "u")
		if err != nil {
			return err
		}
		defer outer.Close()
		pairs := 0
		for outer.Next() {
			var a string
			if err := outer.Scan(&a); err != nil {
				return err
			}
			// The same text again, its first rows still open.
			inner, err := tx.QueryContext(ctx, q, "u")
			if err != nil {
				return err
			}
			n := 0
			for inner.Next() {
				n++
			}
			if err := inner.Close(); err != nil {
				return err
			}
			if n != 5 {
				t.Errorf("inner query under %s: %d rows, want 5", a, n)
			}
			pairs++
		}
		if pairs != 5 {
			t.Errorf("outer query: %d rows, want 5 (the inner query disturbed it)", pairs)
		}
		return outer.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := range readStmtCache + 20 {
		// A distinct text each time (the comment), then the first again.
		for _, text := range []string{fmt.Sprintf("%s -- %d", q, i), q} {
			var ids []string
			err := s.read(ctx, func(tx *sql.Tx) error {
				rows, err := tx.QueryContext(ctx, text, "u")
				if err != nil {
					return err
				}
				defer rows.Close()
				for rows.Next() {
					var id string
					if err := rows.Scan(&id); err != nil {
						return err
					}
					ids = append(ids, id)
				}
				return rows.Err()
			})
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(ids) != "[t0 t1 t2 t3 t4]" {
				t.Fatalf("query %d: %v", i, ids)
			}
		}
	}
}

// TestExecStatementCache: a statement run with Exec is prepared once and
// reused, with each run's arguments; a text of several statements (a
// migration's) runs all of them, uncached.
func TestExecStatementCache(t *testing.T) {
	ctx := context.Background()
	s := mustOpen(t, Options{})
	var err error
	const insert = `INSERT INTO threads (user_id, id, created_at, updated_at) VALUES ('u', ?, 1, 1)`
	const several = `CREATE TABLE probe_a (x); CREATE TABLE probe_b (y);`
	err = s.write(ctx, func(tx *sql.Tx) error {
		for i := range 3 {
			if _, err := tx.ExecContext(ctx, insert, fmt.Sprint("t", i)); err != nil {
				return err
			}
		}
		_, err := tx.ExecContext(ctx, several)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var threads, tables int
	if err := s.writer.QueryRowContext(ctx, `SELECT count(*) FROM threads WHERE user_id = 'u'`).Scan(&threads); err != nil {
		t.Fatal(err)
	}
	if err := s.writer.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE name IN ('probe_a', 'probe_b')`).Scan(&tables); err != nil {
		t.Fatal(err)
	}
	if threads != 3 || tables != 2 {
		t.Errorf("%d threads and %d tables, want 3 and 2", threads, tables)
	}
	conn, err := s.writer.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	err = conn.Raw(func(dc any) error {
		c := dc.(*cachingConn)
		if c.stmts[insert] == nil {
			t.Errorf("the insert is not cached")
		}
		if c.stmts[several] != nil {
			t.Errorf("a text of several statements is cached")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
