package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/jackc/pgx/v5"
)

const threadColumns = `user_id, id, agent_id, title, status, metadata, tags, message_count, last_seq, created_at, updated_at, ended_at, deleted_at`

func scanThread(row interface{ Scan(...any) error }) (*agentmem.Thread, error) {
	var (
		t              agentmem.Thread
		metadata       []byte
		ended, deleted *time.Time
	)
	if err := row.Scan(&t.UserID, &t.ID, &t.AgentID, &t.Title, &t.Status, &metadata, &t.Tags, &t.MessageCount, &t.LastSeq,
		&t.CreatedAt, &t.UpdatedAt, &ended, &deleted); err != nil {
		return nil, err
	}
	t.Metadata = jsonValue(metadata)
	if t.Tags == nil {
		t.Tags = []string{}
	}
	t.CreatedAt, t.UpdatedAt = t.CreatedAt.UTC(), t.UpdatedAt.UTC()
	t.EndedAt, t.DeletedAt = utc(ended), utc(deleted)
	return &t, nil
}

func notFoundThread(id string) error {
	return agentmem.Errorf(agentmem.ENOTFOUND, "Thread %q not found.", id)
}

// findThread returns a thread of the user, soft-deleted ones too. lock is
// noLock, or forUpdate or forShare to hold the thread's row until the
// transaction ends.
func findThread(ctx context.Context, tx pgx.Tx, userID, id, lock string) (*agentmem.Thread, error) {
	t, err := scanThread(tx.QueryRow(ctx, `SELECT `+threadColumns+` FROM threads WHERE user_id = $1 AND id = $2`+lock, userID, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFoundThread(id)
	} else if err != nil {
		return nil, fmt.Errorf("find thread: %w", err)
	}
	return t, nil
}

// findLiveThread is findThread without soft-deleted threads.
func findLiveThread(ctx context.Context, tx pgx.Tx, userID, id, lock string) (*agentmem.Thread, error) {
	t, err := findThread(ctx, tx, userID, id, lock)
	if err == nil && t.DeletedAt != nil {
		return nil, notFoundThread(id)
	}
	return t, err
}

// CreateThread implements agentmem.ThreadStore.
func (s *Store) CreateThread(ctx context.Context, t *agentmem.Thread) error {
	if err := s.prepareThread(t); err != nil {
		return err
	}
	return s.write(ctx, func(tx pgx.Tx) error { return insertThread(ctx, tx, t) })
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

// insertThread records the user and inserts t. The users upsert locks an
// existing users row (DO UPDATE locks the row even when its WHERE skips
// the update) so that a thread is never created for a user while
// DeleteUser, which locks that row first, is erasing them.
func insertThread(ctx context.Context, tx pgx.Tx, t *agentmem.Thread) error {
	if _, err := tx.Exec(ctx, `INSERT INTO users (user_id, created_at) VALUES ($1, $2)
		ON CONFLICT (user_id) DO UPDATE SET created_at = users.created_at WHERE false`, t.UserID, t.CreatedAt); err != nil {
		return fmt.Errorf("insert user: %w", err)
	}
	// ON CONFLICT DO NOTHING, not a unique violation, which would abort
	// the transaction: the thread holding the ID is read next, to say
	// whether it is deleted.
	tag, err := tx.Exec(ctx, `INSERT INTO threads (`+threadColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
		ON CONFLICT (user_id, id) DO NOTHING`,
		t.UserID, t.ID, t.AgentID, t.Title, t.Status, string(t.Metadata), t.Tags, t.MessageCount, t.LastSeq,
		t.CreatedAt, t.UpdatedAt, t.EndedAt, t.DeletedAt)
	if err != nil {
		return fmt.Errorf("insert thread: %w", err)
	}
	if tag.RowsAffected() == 0 {
		held, err := findThread(ctx, tx, t.UserID, t.ID, noLock)
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
	err := s.read(ctx, func(tx pgx.Tx) (err error) {
		t, err = findLiveThread(ctx, tx, userID, id, noLock)
		return err
	})
	return t, err
}

// FindThreads implements agentmem.ThreadStore.
//
//	SELECT … FROM threads WHERE user_id = $1 [AND agent_id = $n] [AND status = $n] [AND tags @> $n]
//	  [AND title ILIKE $n ESCAPE '\'] [AND deleted_at IS [NOT] NULL] [AND updated_at >= $n] [AND updated_at < $n] [AND (updated_at, id) < ($n, $m)]
//	ORDER BY updated_at DESC, id DESC LIMIT n+1
//
// walks the (user_id[, agent_id], updated_at DESC, id DESC) index from the
// cursor, so every page costs the same; tags and titles are checked on
// the rows it visits.
func (s *Store) FindThreads(ctx context.Context, userID string, f agentmem.ThreadFilter) ([]*agentmem.Thread, string, error) {
	limit, err := agentmem.PageSize(f.Limit)
	if err != nil {
		return nil, "", err
	}
	if err := f.Validate(); err != nil {
		return nil, "", err
	}
	list := agentmem.ThreadList(userID)
	var args []any
	// arg adds a parameter and returns its placeholder.
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	where := []string{"user_id = " + arg(userID)}
	if f.AgentID != nil {
		where = append(where, "agent_id = "+arg(*f.AgentID))
	}
	if f.Status != nil {
		where = append(where, "status = "+arg(*f.Status))
	}
	if len(f.Tags) > 0 {
		where = append(where, "tags @> "+arg(f.Tags))
	}
	if f.Title != nil && *f.Title != "" {
		where = append(where, "title ILIKE "+arg(agentmem.LikeContains(*f.Title))+` ESCAPE '\'`)
	}
	switch {
	case f.Deleted:
		where = append(where, "deleted_at IS NOT NULL")
	case !f.IncludeDeleted:
		where = append(where, "deleted_at IS NULL")
	}
	if f.UpdatedSince != nil {
		where = append(where, "updated_at >= "+arg(agentmem.Timestamp(*f.UpdatedSince)))
	}
	if f.UpdatedBefore != nil {
		where = append(where, "updated_at < "+arg(agentmem.Timestamp(*f.UpdatedBefore)))
	}
	if f.Cursor != "" {
		var c agentmem.ThreadCursor
		if err := agentmem.DecodeCursor(f.Cursor, list, &c); err != nil {
			return nil, "", err
		}
		where = append(where, "(updated_at, id) < ("+arg(time.UnixMicro(c.UpdatedAt).UTC())+", "+arg(c.ID)+")")
	}
	q := `SELECT ` + threadColumns + ` FROM threads WHERE ` + strings.Join(where, " AND ") +
		` ORDER BY updated_at DESC, id DESC LIMIT ` + arg(limit+1)
	var threads []*agentmem.Thread
	err = s.read(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, q, args...)
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
		return agentmem.ThreadCursor{UpdatedAt: last.UpdatedAt.UnixMicro(), ID: last.ID}
	})
	return threads, next, nil
}

// UpdateThread implements agentmem.ThreadStore.
func (s *Store) UpdateThread(ctx context.Context, userID, id string, upd agentmem.ThreadUpdate) (*agentmem.Thread, error) {
	if err := upd.Validate(); err != nil {
		return nil, err
	}
	var t *agentmem.Thread
	err := s.write(ctx, func(tx pgx.Tx) (err error) {
		if t, err = findLiveThread(ctx, tx, userID, id, forUpdate); err != nil {
			return err
		}
		now := s.now()
		t.ApplyUpdate(upd, now)
		if err := updateThread(ctx, tx, t); err != nil {
			return err
		}
		if t.JustEnded && upd.EndJobs != nil {
			for _, alts := range upd.EndJobs(t) {
				if _, _, err := enqueuePicked(ctx, tx, userID, alts, now); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return t, nil
}

// updateThread writes every mutable field of t.
func updateThread(ctx context.Context, tx pgx.Tx, t *agentmem.Thread) error {
	_, err := tx.Exec(ctx, `UPDATE threads SET agent_id = $1, title = $2, status = $3, metadata = $4, tags = $5, updated_at = $6, ended_at = $7
		WHERE user_id = $8 AND id = $9`,
		t.AgentID, t.Title, t.Status, string(t.Metadata), t.Tags, t.UpdatedAt, t.EndedAt, t.UserID, t.ID)
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
	return s.writeRetrying(ctx, func(tx pgx.Tx) error {
		t, err := findThread(ctx, tx, userID, id, forUpdate)
		if err != nil {
			return err
		}
		if permanent {
			_, err := deleteThreads(ctx, tx, userID, []string{id})
			return err
		}
		if t.DeletedAt != nil {
			return notFoundThread(id)
		}
		if _, err := tx.Exec(ctx, `UPDATE threads SET deleted_at = $1 WHERE user_id = $2 AND id = $3`, s.now(), userID, id); err != nil {
			return fmt.Errorf("soft delete thread: %w", err)
		}
		if _, err := tx.Exec(ctx, `DELETE FROM sessions WHERE user_id = $1 AND thread_id = $2`, userID, id); err != nil {
			return fmt.Errorf("delete sessions: %w", err)
		}
		return nil
	})
}

// deleteThreads permanently deletes the user's threads ids, whose rows the
// caller has locked (FOR UPDATE, so that no append or attachment is in
// flight), and everything hanging off them (messages with their vectors,
// elements, sessions, idempotency records, summaries, the thread's ranges
// among memories' sources), and counts what it removed. Jobs do not hang
// off a thread and stay (see agentmem.Job), and so do memories drawn from
// the thread (see agentmem.MemoryStore).
func deleteThreads(ctx context.Context, tx pgx.Tx, userID string, ids []string) (agentmem.Counts, error) {
	var c agentmem.Counts
	if err := lockVectorVersions(ctx, tx, userID); err != nil {
		return c, err
	}
	if err := deleteVectorsOf(ctx, tx, userID, agentmem.ScopeMessages, `SELECT id FROM messages WHERE user_id = $1 AND thread_id = ANY($2)`,
		userID, ids); err != nil {
		return c, err
	}
	// A chunk's vectors: its content's (its ID) and its summary's (ID#s).
	if err := deleteVectorsOf(ctx, tx, userID, agentmem.ScopeChunks, `SELECT id FROM chunks WHERE user_id = $1 AND thread_id = ANY($2)
		UNION ALL SELECT id || '`+agentmem.SummaryVectorSuffix+`' FROM chunks WHERE user_id = $1 AND thread_id = ANY($2)`, userID, ids); err != nil {
		return c, err
	}
	if err := deleteVectors(ctx, tx, userID, agentmem.ScopeSummaries, ids); err != nil {
		return c, err
	}
	for _, d := range []struct {
		table string
		n     *int64
	}{
		{"message_windows", nil},
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
		tag, err := tx.Exec(ctx, `DELETE FROM `+d.table+` WHERE user_id = $1 AND thread_id = ANY($2)`, userID, ids)
		if err != nil {
			return c, fmt.Errorf("delete %s: %w", d.table, err)
		}
		if d.n != nil {
			*d.n = tag.RowsAffected()
		}
	}
	tag, err := tx.Exec(ctx, `DELETE FROM threads WHERE user_id = $1 AND id = ANY($2)`, userID, ids)
	if err != nil {
		return c, fmt.Errorf("delete threads: %w", err)
	}
	c.Threads = tag.RowsAffected()
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
	err = s.read(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT `+threadColumns+` FROM threads
			WHERE status = 'active' AND deleted_at IS NULL AND updated_at < $1 AND message_count > 0
			ORDER BY updated_at LIMIT $2`, agentmem.Timestamp(idleSince), limit)
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
	err := s.writeRetrying(ctx, func(tx pgx.Tx) (err error) {
		if t, err = findThread(ctx, tx, userID, id, forUpdate); err != nil || t.DeletedAt == nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE threads SET deleted_at = NULL WHERE user_id = $1 AND id = $2`, userID, id); err != nil {
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
