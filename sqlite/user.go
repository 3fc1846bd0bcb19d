package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/agentmem/agentmem"
)

// userTables lists every table holding user data; DeleteUser empties them
// of one user. A table added by a migration must be added here (the
// conformance suite's erasure test fails otherwise; search_totals is
// last, as the deletions before it update it). The full-text indexes
// and messages_fts_queue are not: triggers on memories and messages keep
// them in step with those (see migration/0004_memory.sql).
var userTables = []string{"memories", "memory_sources", "memory_history", "vectors", "vector_versions", "messages", "elements", "sessions", "idempotency_keys",
	"reflections", "profiles",
	"summaries", "chunks", "notes", "message_windows", "jobs", "threads", "users",
	"entities", "entity_names", "entity_refs", "search_totals"}

// DeleteUser implements agentmem.UserStore.
func (s *Store) DeleteUser(ctx context.Context, userID string) (agentmem.Counts, error) {
	var c agentmem.Counts
	err := s.write(ctx, func(tx *sql.Tx) error {
		c = agentmem.Counts{}
		for _, table := range userTables {
			res, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE user_id = ?`, userID)
			if err != nil {
				return fmt.Errorf("delete %s: %w", table, err)
			}
			n, _ := res.RowsAffected()
			switch table {
			case "messages":
				c.Messages = n
			case "elements":
				c.Elements = n
			case "sessions":
				c.Sessions = n
			case "threads":
				c.Threads = n
			case "users":
				c.Users = n
			}
		}
		return nil
	})
	return c, err
}

// UserRows counts the user's rows in every table of the schema with a
// user_id column, but the reference tables (api_keys and audit_log, which
// outlive an erasure), read from the schema itself rather than from
// userTables: after DeleteUser, and once the jobs it interrupted have
// stopped, every count must be 0, whatever table a later migration adds.
// Tables without a row of the user are listed with 0.
func (s *Store) UserRows(ctx context.Context, userID string) (map[string]int64, error) {
	counts := map[string]int64{}
	err := s.read(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT m.name FROM pragma_table_list m, pragma_table_info(m.name) p
			WHERE m.schema = 'main' AND m.type = 'table' AND p.name = 'user_id' AND m.name NOT IN ('api_keys', 'audit_log')
			ORDER BY m.name`)
		if err != nil {
			return fmt.Errorf("list user tables: %w", err)
		}
		var tables []string
		for rows.Next() {
			var t string
			if err := rows.Scan(&t); err != nil {
				rows.Close()
				return err
			}
			tables = append(tables, t)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, t := range tables {
			var n int64
			if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM "`+t+`" WHERE user_id = ?`, userID).Scan(&n); err != nil {
				return fmt.Errorf("count %s: %w", t, err)
			}
			counts[t] = n
		}
		return nil
	})
	return counts, err
}

// FindUserIDs implements agentmem.UserStore.
func (s *Store) FindUserIDs(ctx context.Context, after string, limit int) ([]string, error) {
	ids := []string{}
	err := s.read(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT user_id FROM users WHERE user_id > ? ORDER BY user_id LIMIT ?`, after, limit)
		if err != nil {
			return fmt.Errorf("find users: %w", err)
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
	return ids, err
}

// FindUsers implements agentmem.UserStore.
//
//	SELECT user_id, (threads not deleted), (their message_count summed), (valid memories), (their newest updated_at)
//	FROM users WHERE user_id > cursor [AND user_id = filter's] ORDER BY user_id LIMIT n+1
//
// walks the users' primary key from the cursor; each count is a range of
// an index led by user_id (threads_user_updated, memories_user_updated).
func (s *Store) FindUsers(ctx context.Context, f agentmem.UserFilter) ([]*agentmem.UserSummary, string, error) {
	limit, err := agentmem.PageSize(f.Limit)
	if err != nil {
		return nil, "", err
	}
	after, err := f.After()
	if err != nil {
		return nil, "", err
	}
	var users []*agentmem.UserSummary
	err = s.read(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT u.user_id,
				(SELECT COUNT(*) FROM threads t WHERE t.user_id = u.user_id AND t.deleted_at IS NULL),
				(SELECT COALESCE(SUM(t.message_count), 0) FROM threads t WHERE t.user_id = u.user_id AND t.deleted_at IS NULL),
				(SELECT COUNT(*) FROM memories m WHERE m.user_id = u.user_id AND m.invalid_at IS NULL),
				(SELECT MAX(t.updated_at) FROM threads t WHERE t.user_id = u.user_id AND t.deleted_at IS NULL)
			FROM users u WHERE u.user_id > ?1 AND (?2 IS NULL OR u.user_id = ?2) ORDER BY u.user_id LIMIT ?3`, after, f.UserID, limit+1)
		if err != nil {
			return fmt.Errorf("find users: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var u agentmem.UserSummary
			var last sql.NullInt64
			if err := rows.Scan(&u.UserID, &u.Threads, &u.Messages, &u.Memories, &last); err != nil {
				return fmt.Errorf("scan user: %w", err)
			}
			u.LastActiveAt = fromNullMicros(last)
			users = append(users, &u)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, "", err
	}
	users, next := agentmem.UserPage(users, limit)
	return users, next, nil
}

// DeleteThreadsBefore implements agentmem.UserStore.
func (s *Store) DeleteThreadsBefore(ctx context.Context, userID string, cutoff time.Time, dryRun bool) (agentmem.Counts, error) {
	var c agentmem.Counts
	if dryRun {
		err := s.read(ctx, func(tx *sql.Tx) error {
			return tx.QueryRowContext(ctx, `SELECT
				(SELECT COUNT(*) FROM threads WHERE user_id = ?1 AND updated_at < ?2),
				(SELECT COUNT(*) FROM messages WHERE user_id = ?1 AND thread_id IN (SELECT id FROM threads WHERE user_id = ?1 AND updated_at < ?2)),
				(SELECT COUNT(*) FROM elements WHERE user_id = ?1 AND thread_id IN (SELECT id FROM threads WHERE user_id = ?1 AND updated_at < ?2)),
				(SELECT COUNT(*) FROM sessions WHERE user_id = ?1 AND thread_id IN (SELECT id FROM threads WHERE user_id = ?1 AND updated_at < ?2))`,
				userID, micros(cutoff)).Scan(&c.Threads, &c.Messages, &c.Elements, &c.Sessions)
		})
		return c, err
	}
	err := s.write(ctx, func(tx *sql.Tx) (err error) {
		c, err = deleteThreads(ctx, tx, userID, `updated_at < ?`, micros(cutoff))
		return err
	})
	return c, err
}

// Stats implements agentmem.UserStore.
func (s *Store) Stats(ctx context.Context) (*agentmem.Stats, error) {
	var st agentmem.Stats
	err := s.read(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `SELECT (SELECT COUNT(*) FROM users), (SELECT COUNT(*) FROM threads),
			(SELECT COALESCE(SUM(message_count), 0) FROM threads)`).Scan(&st.Users, &st.Threads, &st.Messages)
		if err != nil {
			return err
		}
		// dbstat reads every page: a second or two on a database of a
		// few hundred megabytes, for an operator's call.
		rows, err := tx.QueryContext(ctx, `SELECT s.tbl_name, SUM(d.pgsize) AS bytes FROM dbstat d JOIN sqlite_schema s ON s.name = d.name
			GROUP BY s.tbl_name ORDER BY bytes DESC, s.tbl_name`)
		if err != nil {
			return err
		}
		defer rows.Close()
		st.Tables = []agentmem.TableSize{}
		for rows.Next() {
			var t agentmem.TableSize
			if err := rows.Scan(&t.Table, &t.Bytes); err != nil {
				return err
			}
			st.Tables = append(st.Tables, t)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("stats: %w", err)
	}
	st.StoreBytes = s.Size()
	return &st, nil
}

// ImportThread implements agentmem.ImportStore.
func (s *Store) ImportThread(ctx context.Context, userID string, x *agentmem.ThreadExport) (*agentmem.Thread, error) {
	t, err := agentmem.PrepareImport(userID, x, s.now(), s.tokens())
	if err != nil {
		return nil, err
	}
	err = s.write(ctx, func(tx *sql.Tx) error { return importThread(ctx, tx, userID, x, t) })
	if err != nil {
		return nil, err
	}
	return t, nil
}

// importThread inserts t, prepared from x (agentmem.PrepareImport), with
// x's messages and elements.
func importThread(ctx context.Context, tx *sql.Tx, userID string, x *agentmem.ThreadExport, t *agentmem.Thread) error {
	if err := insertThread(ctx, tx, t); err != nil {
		return err
	}
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO messages (user_id, `+messageColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return fmt.Errorf("prepare insert message: %w", err)
	}
	defer stmt.Close()
	for _, m := range x.Messages {
		if _, err := stmt.ExecContext(ctx, userID, m.ThreadID, m.Seq, m.ID, m.Role, m.Content, m.Name, toolCallsJSON(m.ToolCalls),
			m.ToolCallID, string(m.Metadata), m.TokenCount, micros(m.CreatedAt)); err != nil {
			if agentmem.ErrorCode(formatError(err)) == agentmem.ECONFLICT {
				return agentmem.Errorf(agentmem.ECONFLICT, "Message id %q is already used.", m.ID)
			}
			return fmt.Errorf("insert message: %w", err)
		}
	}
	for _, e := range x.Elements {
		if err := insertElement(ctx, tx, userID, e); err != nil {
			return err
		}
	}
	return nil
}
