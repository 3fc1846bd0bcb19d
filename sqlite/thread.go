package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentmem/agentmem"
)

const threadColumns = `user_id, id, agent_id, title, status, metadata, tags, message_count, last_seq, created_at, updated_at, ended_at, deleted_at`

func scanThread(row interface{ Scan(...any) error }) (*agentmem.Thread, error) {
	var (
		t                agentmem.Thread
		metadata, tags   string
		created, updated int64
		ended, deleted   sql.NullInt64
	)
	if err := row.Scan(&t.UserID, &t.ID, &t.AgentID, &t.Title, &t.Status, &metadata, &tags, &t.MessageCount, &t.LastSeq, &created, &updated, &ended, &deleted); err != nil {
		return nil, err
	}
	t.Metadata = json.RawMessage(metadata)
	if err := json.Unmarshal([]byte(tags), &t.Tags); err != nil {
		return nil, fmt.Errorf("thread %s tags: %w", t.ID, err)
	}
	t.CreatedAt, t.UpdatedAt = fromMicros(created), fromMicros(updated)
	t.EndedAt, t.DeletedAt = fromNullMicros(ended), fromNullMicros(deleted)
	return &t, nil
}

func notFoundThread(id string) error {
	return agentmem.Errorf(agentmem.ENOTFOUND, "Thread %q not found.", id)
}

const findThreadQuery = `SELECT ` + threadColumns + ` FROM threads WHERE user_id = ? AND id = ?`

// findThread returns a thread of the user, soft-deleted ones too.
func findThread(ctx context.Context, tx *sql.Tx, userID, id string) (*agentmem.Thread, error) {
	t, err := scanThread(tx.QueryRowContext(ctx, findThreadQuery, userID, id))
	return foundThread(t, err, id)
}

// foundThread turns the outcome of scanning the thread id into findThread's.
func foundThread(t *agentmem.Thread, err error, id string) (*agentmem.Thread, error) {
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFoundThread(id)
	} else if err != nil {
		return nil, fmt.Errorf("find thread: %w", err)
	}
	return t, nil
}

// findLiveThread is findThread without soft-deleted threads.
func findLiveThread(ctx context.Context, tx *sql.Tx, userID, id string) (*agentmem.Thread, error) {
	return liveThread(findThread(ctx, tx, userID, id))
}

// liveThread passes on findThread's outcome, with ENOTFOUND for a
// soft-deleted thread.
func liveThread(t *agentmem.Thread, err error) (*agentmem.Thread, error) {
	if err == nil && t.DeletedAt != nil {
		return nil, notFoundThread(t.ID)
	}
	return t, err
}

// CreateThread implements agentmem.ThreadStore.
func (s *Store) CreateThread(ctx context.Context, t *agentmem.Thread) error {
	if err := s.prepareThread(t); err != nil {
		return err
	}
	return s.write(ctx, func(tx *sql.Tx) error { return insertThread(ctx, tx, t) })
}

// prepareThread validates a new thread and fills in its ID, times and
// counts.
func (s *Store) prepareThread(t *agentmem.Thread) error {
	if err := t.Validate(); err != nil {
		return err
	}
	if t.ID == "" {
		t.ID = agentmem.NewID()
	}
	now := s.now()
	t.CreatedAt, t.UpdatedAt, t.MessageCount, t.LastSeq, t.DeletedAt = now, now, 0, 0, nil
	if t.Status == agentmem.ThreadEnded {
		t.EndedAt = &now
	} else {
		t.EndedAt = nil
	}
	return nil
}

func insertThread(ctx context.Context, tx *sql.Tx, t *agentmem.Thread) error {
	tags, _ := json.Marshal(t.Tags)
	if _, err := tx.ExecContext(ctx, `INSERT INTO users (user_id, created_at) VALUES (?, ?) ON CONFLICT DO NOTHING`, t.UserID, micros(t.CreatedAt)); err != nil {
		return fmt.Errorf("insert user: %w", err)
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO threads (`+threadColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (user_id, id) DO NOTHING`,
		t.UserID, t.ID, t.AgentID, t.Title, t.Status, string(t.Metadata), string(tags), t.MessageCount, t.LastSeq,
		micros(t.CreatedAt), micros(t.UpdatedAt), nullMicros(t.EndedAt), nullMicros(t.DeletedAt))
	if err != nil {
		return fmt.Errorf("insert thread: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("insert thread: %w", err)
	} else if n == 0 {
		// The ID is taken: say whether by a deleted thread.
		held, err := findThread(ctx, tx, t.UserID, t.ID)
		if err != nil {
			return err
		}
		return agentmem.ThreadIDTaken(t.ID, held.DeletedAt != nil)
	}
	return nil
}

// FindThreadByID implements agentmem.ThreadStore.
func (s *Store) FindThreadByID(ctx context.Context, userID, id string) (*agentmem.Thread, error) {
	var t *agentmem.Thread
	err := s.read(ctx, func(tx *sql.Tx) (err error) {
		t, err = findLiveThread(ctx, tx, userID, id)
		return err
	})
	return t, err
}

// FindThreads implements agentmem.ThreadStore.
//
//	SELECT … FROM threads WHERE user_id = ? [AND agent_id = ?] [AND status = ?]
//	  [AND EXISTS (SELECT 1 FROM json_each(tags) WHERE value = ?)]… [AND title LIKE ? ESCAPE '\']
//	  [AND deleted_at IS NULL] [AND updated_at >= ?] [AND updated_at < ?] [AND (updated_at, id) < (cursor)]
//	ORDER BY updated_at DESC, id DESC LIMIT n+1
//
// walks the (user_id[, agent_id], updated_at DESC, id DESC) index from the
// cursor, so every page costs the same; tags and titles are checked on
// the rows it visits (LIKE ignores the case of ASCII letters).
func (s *Store) FindThreads(ctx context.Context, userID string, f agentmem.ThreadFilter) ([]*agentmem.Thread, string, error) {
	limit, err := agentmem.PageSize(f.Limit)
	if err != nil {
		return nil, "", err
	}
	if err := f.Validate(); err != nil {
		return nil, "", err
	}
	list := agentmem.ThreadList(userID)
	where, args := []string{"user_id = ?"}, []any{userID}
	if f.AgentID != nil {
		where, args = append(where, "agent_id = ?"), append(args, *f.AgentID)
	}
	if f.Status != nil {
		where, args = append(where, "status = ?"), append(args, *f.Status)
	}
	for _, tag := range f.Tags {
		where, args = append(where, "EXISTS (SELECT 1 FROM json_each(threads.tags) WHERE json_each.value = ?)"), append(args, tag)
	}
	if f.Title != nil && *f.Title != "" {
		where, args = append(where, `title LIKE ? ESCAPE '\'`), append(args, agentmem.LikeContains(*f.Title))
	}
	switch {
	case f.Deleted:
		where = append(where, "deleted_at IS NOT NULL")
	case !f.IncludeDeleted:
		where = append(where, "deleted_at IS NULL")
	}
	if f.UpdatedSince != nil {
		where, args = append(where, "updated_at >= ?"), append(args, micros(*f.UpdatedSince))
	}
	if f.UpdatedBefore != nil {
		where, args = append(where, "updated_at < ?"), append(args, micros(*f.UpdatedBefore))
	}
	if f.Cursor != "" {
		var c agentmem.ThreadCursor
		if err := agentmem.DecodeCursor(f.Cursor, list, &c); err != nil {
			return nil, "", err
		}
		where, args = append(where, "(updated_at, id) < (?, ?)"), append(args, c.UpdatedAt, c.ID)
	}
	var threads []*agentmem.Thread
	err = s.read(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT `+threadColumns+` FROM threads WHERE `+strings.Join(where, " AND ")+
			` ORDER BY updated_at DESC, id DESC LIMIT ?`, append(args, limit+1)...)
		if err != nil {
			return fmt.Errorf("find threads: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			t, err := scanThread(rows)
			if err != nil {
				return fmt.Errorf("scan thread: %w", err)
			}
			threads = append(threads, t)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, "", err
	}
	threads, next := agentmem.CutPage(threads, limit, list, func(last *agentmem.Thread) any {
		return agentmem.ThreadCursor{UpdatedAt: micros(last.UpdatedAt), ID: last.ID}
	})
	return threads, next, nil
}

// UpdateThread implements agentmem.ThreadStore.
func (s *Store) UpdateThread(ctx context.Context, userID, id string, upd agentmem.ThreadUpdate) (*agentmem.Thread, error) {
	if err := upd.Validate(); err != nil {
		return nil, err
	}
	var t *agentmem.Thread
	err := s.write(ctx, func(tx *sql.Tx) (err error) {
		if t, err = findLiveThread(ctx, tx, userID, id); err != nil {
			return err
		}
		now := s.now()
		t.ApplyUpdate(upd, now)
		if err := updateThread(ctx, tx, t); err != nil {
			return err
		}
		if t.JustEnded && upd.EndJobs != nil {
			for _, alts := range upd.EndJobs(t) {
				if err := s.enqueueAlternatives(ctx, tx, userID, alts, now); err != nil {
					return err
				}
			}
		}
		return nil
	})
	return t, err
}

// updateThread writes every mutable field of t.
func updateThread(ctx context.Context, tx *sql.Tx, t *agentmem.Thread) error {
	tags, _ := json.Marshal(t.Tags)
	_, err := tx.ExecContext(ctx, `UPDATE threads SET agent_id = ?, title = ?, status = ?, metadata = ?, tags = ?, updated_at = ?, ended_at = ?
		WHERE user_id = ? AND id = ?`,
		t.AgentID, t.Title, t.Status, string(t.Metadata), string(tags), micros(t.UpdatedAt), nullMicros(t.EndedAt), t.UserID, t.ID)
	if err != nil {
		return fmt.Errorf("update thread: %w", err)
	}
	return nil
}

// EndThread implements agentmem.ThreadStore.
func (s *Store) EndThread(ctx context.Context, userID, id string) (*agentmem.Thread, error) {
	ended := agentmem.ThreadEnded
	return s.UpdateThread(ctx, userID, id, agentmem.ThreadUpdate{Status: &ended})
}

// DeleteThread implements agentmem.ThreadStore.
func (s *Store) DeleteThread(ctx context.Context, userID, id string, permanent bool) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		t, err := findThread(ctx, tx, userID, id)
		if err != nil {
			return err
		}
		if permanent {
			_, err := deleteThreads(ctx, tx, userID, `id = ?`, id)
			return err
		}
		if t.DeletedAt != nil {
			return notFoundThread(id)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE threads SET deleted_at = ? WHERE user_id = ? AND id = ?`, micros(s.now()), userID, id); err != nil {
			return fmt.Errorf("soft delete thread: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE user_id = ? AND thread_id = ?`, userID, id); err != nil {
			return fmt.Errorf("delete sessions: %w", err)
		}
		return nil
	})
}

// deleteThreads permanently deletes the user's threads matching cond (an
// expression over threads' columns with args) and everything hanging off
// them (messages with their vectors and their entries in the full-text
// index, elements, sessions, idempotency records, summaries, the
// thread's ranges among memories' sources), and counts what it removed.
// Jobs do not hang off a thread and stay (see agentmem.Job), and so do
// memories drawn from the thread (see agentmem.MemoryStore).
func deleteThreads(ctx context.Context, tx *sql.Tx, userID, cond string, args ...any) (agentmem.Counts, error) {
	var c agentmem.Counts
	sel := `SELECT id FROM threads WHERE user_id = ? AND ` + cond
	selArgs := append([]any{userID, userID}, args...)
	if err := deleteVectorsOf(ctx, tx, userID, agentmem.ScopeMessages, `SELECT id FROM messages WHERE user_id = ? AND thread_id IN (`+sel+`)`,
		selArgs...); err != nil {
		return c, err
	}
	// A chunk's vectors: its content's (its ID) and its summary's (ID#s).
	if err := deleteVectorsOf(ctx, tx, userID, agentmem.ScopeChunks, `SELECT id FROM chunks WHERE user_id = ? AND thread_id IN (`+sel+`)
		UNION ALL SELECT id || '`+agentmem.SummaryVectorSuffix+`' FROM chunks WHERE user_id = ? AND thread_id IN (`+sel+`)`,
		append(selArgs, selArgs...)...); err != nil {
		return c, err
	}
	if err := deleteVectorsOf(ctx, tx, userID, agentmem.ScopeSummaries, sel, selArgs[1:]...); err != nil {
		return c, err
	}
	for _, d := range []struct {
		table string
		n     *int64
	}{
		{"messages", &c.Messages},
		{"elements", &c.Elements},
		{"sessions", &c.Sessions},
		{"idempotency_keys", nil},
		{"summaries", nil},
		{"chunks", nil},
		{"reflections", nil},
		{"entity_refs", nil},
		{"memory_sources", nil}, // the memories stay, with their provenance
	} {
		res, err := tx.ExecContext(ctx, `DELETE FROM `+d.table+` WHERE user_id = ? AND thread_id IN (`+sel+`)`, selArgs...)
		if err != nil {
			return c, fmt.Errorf("delete %s: %w", d.table, err)
		}
		if d.n != nil {
			*d.n, _ = res.RowsAffected()
		}
	}
	res, err := tx.ExecContext(ctx, `DELETE FROM threads WHERE user_id = ? AND `+cond, append([]any{userID}, args...)...)
	if err != nil {
		return c, fmt.Errorf("delete threads: %w", err)
	}
	c.Threads, _ = res.RowsAffected()
	return c, nil
}

// FindIdleThreads implements agentmem.ThreadStore, through the partial
// index threads_idle.
func (s *Store) FindIdleThreads(ctx context.Context, idleSince time.Time, limit int) ([]*agentmem.Thread, error) {
	limit, err := agentmem.PageSize(limit)
	if err != nil {
		return nil, err
	}
	var out []*agentmem.Thread
	err = s.read(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT `+threadColumns+` FROM threads
			WHERE status = 'active' AND deleted_at IS NULL AND updated_at < ? AND message_count > 0
			ORDER BY updated_at LIMIT ?`, micros(idleSince), limit)
		if err != nil {
			return fmt.Errorf("find idle threads: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			t, err := scanThread(rows)
			if err != nil {
				return fmt.Errorf("find idle threads: %w", err)
			}
			out = append(out, t)
		}
		return rows.Err()
	})
	return out, err
}

// RestoreThread implements agentmem.ThreadStore.
func (s *Store) RestoreThread(ctx context.Context, userID, id string) (*agentmem.Thread, error) {
	if err := agentmem.ValidateID("thread_id", id); err != nil {
		return nil, err
	}
	var t *agentmem.Thread
	err := s.write(ctx, func(tx *sql.Tx) (err error) {
		if t, err = findThread(ctx, tx, userID, id); err != nil || t.DeletedAt == nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE threads SET deleted_at = NULL WHERE user_id = ? AND id = ?`, userID, id); err != nil {
			return fmt.Errorf("restore thread: %w", err)
		}
		t.DeletedAt = nil
		return nil
	})
	if err != nil {
		return nil, err
	}
	return t, nil
}
