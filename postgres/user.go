package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/jackc/pgx/v5"
)

// userTables lists every table holding user data; DeleteUser empties them
// of one user. A table added by a migration must be added here (the
// conformance suite's erasure test fails otherwise).
var userTables = []string{"memories", "memory_sources", "memory_history", "vector_versions", "vectors", "message_windows", "messages", "elements", "sessions", "idempotency_keys",
	"reflections", "profiles",
	"summaries", "chunks", "notes", "jobs", "threads", "users",
	"entities", "entity_names", "entity_refs"}

// DeleteUser implements agentmem.UserStore.
//
// It first takes the user's erasure lock (see checkJobRun), which the
// writes of the user's jobs take shared: a job's write in flight commits
// first and is erased with the rest, and a later one finds its job gone.
// Then it locks the user's row, which thread and memory creation wait
// on (see insertThread), then the user's threads, which appends, updates,
// elements and sessions wait on, then the user's vector versions, which
// writers of vectors wait on (see lockVectorVersions): whatever was in
// flight has committed and is erased, and whatever comes later finds no
// thread.
func (s *Store) DeleteUser(ctx context.Context, userID string) (agentmem.Counts, error) {
	var c agentmem.Counts
	err := s.writeRetrying(ctx, func(tx pgx.Tx) error {
		c = agentmem.Counts{}
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, eraseLock, userID); err != nil {
			return fmt.Errorf("lock user: %w", err)
		}
		if _, err := tx.Exec(ctx, `SELECT 1 FROM users WHERE user_id = $1 FOR UPDATE`, userID); err != nil {
			return fmt.Errorf("lock user: %w", err)
		}
		if _, err := tx.Exec(ctx, `SELECT 1 FROM threads WHERE user_id = $1 ORDER BY id FOR UPDATE`, userID); err != nil {
			return fmt.Errorf("lock threads: %w", err)
		}
		if err := lockVectorVersions(ctx, tx, userID); err != nil {
			return err
		}
		for _, table := range userTables {
			tag, err := tx.Exec(ctx, `DELETE FROM `+table+` WHERE user_id = $1`, userID)
			if err != nil {
				return fmt.Errorf("delete %s: %w", table, err)
			}
			n := tag.RowsAffected()
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

// UserRows counts the user's rows in every table of the store's schema
// with a user_id column, but the reference tables (which outlive an
// erasure), read from the catalog rather than from userTables: after
// DeleteUser, and once the jobs it interrupted have stopped, every count
// must be 0, whatever table a later migration adds. Tables without a row
// of the user are listed with 0.
func (s *Store) UserRows(ctx context.Context, userID string) (map[string]int64, error) {
	counts := map[string]int64{}
	err := s.read(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT c.table_name::text FROM information_schema.columns c
			JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
			WHERE c.table_schema = current_schema() AND c.column_name = 'user_id' AND t.table_type = 'BASE TABLE'
				AND c.table_name <> ALL($1) ORDER BY 1`, referenceTables)
		if err != nil {
			return fmt.Errorf("list user tables: %w", err)
		}
		tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return fmt.Errorf("list user tables: %w", err)
		}
		for _, t := range tables {
			var n int64
			if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM `+pgx.Identifier{t}.Sanitize()+` WHERE user_id = $1`, userID).Scan(&n); err != nil {
				return fmt.Errorf("count %s: %w", t, err)
			}
			counts[t] = n
		}
		return nil
	})
	return counts, err
}

// FindUserIDs implements agentmem.UserStore. A negative limit means no
// limit, as in SQLite.
func (s *Store) FindUserIDs(ctx context.Context, after string, limit int) ([]string, error) {
	var lim any = limit
	if limit < 0 {
		lim = nil // LIMIT NULL is LIMIT ALL
	}
	ids := []string{}
	err := s.read(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT user_id FROM users WHERE user_id > $1 ORDER BY user_id LIMIT $2::bigint`, after, lim)
		if err != nil {
			return fmt.Errorf("find users: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				return fmt.Errorf("scan user: %w", err)
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
	err = s.read(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT u.user_id,
				(SELECT COUNT(*) FROM threads t WHERE t.user_id = u.user_id AND t.deleted_at IS NULL),
				(SELECT COALESCE(SUM(t.message_count), 0)::bigint FROM threads t WHERE t.user_id = u.user_id AND t.deleted_at IS NULL),
				(SELECT COUNT(*) FROM memories m WHERE m.user_id = u.user_id AND m.invalid_at IS NULL),
				(SELECT MAX(t.updated_at) FROM threads t WHERE t.user_id = u.user_id AND t.deleted_at IS NULL)
			FROM users u WHERE u.user_id > $1 AND ($3::text IS NULL OR u.user_id = $3) ORDER BY u.user_id LIMIT $2`, after, limit+1, f.UserID)
		if err != nil {
			return fmt.Errorf("find users: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var u agentmem.UserSummary
			if err := rows.Scan(&u.UserID, &u.Threads, &u.Messages, &u.Memories, &u.LastActiveAt); err != nil {
				return fmt.Errorf("scan user: %w", err)
			}
			u.LastActiveAt = utc(u.LastActiveAt)
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
//
// The deletion locks the matching threads first, in id order (as DeleteUser
// does, so the two cannot deadlock). A thread that an append moves past
// the cutoff meanwhile is re-checked after the wait and kept, with all its
// messages.
func (s *Store) DeleteThreadsBefore(ctx context.Context, userID string, cutoff time.Time, dryRun bool) (agentmem.Counts, error) {
	var c agentmem.Counts
	cutoff = agentmem.Timestamp(cutoff)
	if dryRun {
		err := s.read(ctx, func(tx pgx.Tx) error {
			err := tx.QueryRow(ctx, `SELECT
				(SELECT COUNT(*) FROM threads WHERE user_id = $1 AND updated_at < $2),
				(SELECT COUNT(*) FROM messages WHERE user_id = $1 AND thread_id IN (SELECT id FROM threads WHERE user_id = $1 AND updated_at < $2)),
				(SELECT COUNT(*) FROM elements WHERE user_id = $1 AND thread_id IN (SELECT id FROM threads WHERE user_id = $1 AND updated_at < $2)),
				(SELECT COUNT(*) FROM sessions WHERE user_id = $1 AND thread_id IN (SELECT id FROM threads WHERE user_id = $1 AND updated_at < $2))`,
				userID, cutoff).Scan(&c.Threads, &c.Messages, &c.Elements, &c.Sessions)
			if err != nil {
				return fmt.Errorf("count threads: %w", err)
			}
			return nil
		})
		return c, err
	}
	err := s.writeRetrying(ctx, func(tx pgx.Tx) error {
		c = agentmem.Counts{}
		rows, err := tx.Query(ctx, `SELECT id FROM threads WHERE user_id = $1 AND updated_at < $2 ORDER BY id FOR UPDATE`, userID, cutoff)
		if err != nil {
			return fmt.Errorf("lock threads: %w", err)
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return fmt.Errorf("lock threads: %w", err)
		}
		c = agentmem.Counts{}
		if len(ids) == 0 {
			return nil
		}
		c, err = deleteThreads(ctx, tx, userID, ids)
		return err
	})
	return c, err
}

// Stats implements agentmem.UserStore. StoreBytes is Size.
func (s *Store) Stats(ctx context.Context) (*agentmem.Stats, error) {
	var st agentmem.Stats
	err := s.read(ctx, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `SELECT (SELECT COUNT(*) FROM users), (SELECT COUNT(*) FROM threads),
			(SELECT COALESCE(SUM(message_count), 0)::bigint FROM threads)`).Scan(&st.Users, &st.Threads, &st.Messages)
		if err != nil {
			return fmt.Errorf("count: %w", err)
		}
		if st.StoreBytes, err = size(ctx, tx); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT t, COALESCE(pg_total_relation_size(to_regclass(t)), 0)::bigint AS bytes FROM unnest($1::text[]) AS t
			ORDER BY bytes DESC, t`, storeTables)
		if err != nil {
			return fmt.Errorf("measure tables: %w", err)
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
	return &st, nil
}

// ImportThread implements agentmem.ImportStore.
func (s *Store) ImportThread(ctx context.Context, userID string, x *agentmem.ThreadExport) (*agentmem.Thread, error) {
	t, err := agentmem.PrepareImport(userID, x, s.now(), s.tokens())
	if err != nil {
		return nil, err
	}
	err = s.write(ctx, func(tx pgx.Tx) error { return importThread(ctx, tx, userID, x, t) })
	if err != nil {
		return nil, err
	}
	return t, nil
}

// importThread inserts t, prepared from x (agentmem.PrepareImport), with
// x's messages and elements.
func importThread(ctx context.Context, tx pgx.Tx, userID string, x *agentmem.ThreadExport, t *agentmem.Thread) error {
	if err := insertThread(ctx, tx, t); err != nil {
		return err
	}
	if len(x.Messages) > 0 {
		b := &pgx.Batch{}
		queueMessages(b, userID, x.Messages)
		if err := sendBatch(ctx, tx, b, x.Messages); err != nil {
			return err
		}
	}
	for _, e := range x.Elements {
		if err := insertElement(ctx, tx, userID, e); err != nil {
			return err
		}
	}
	return nil
}
