package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agentmem/agentmem"
)

const elementColumns = `id, thread_id, message_id, type, name, content, url, mime_type, display, metadata, created_at`

func scanElement(row interface{ Scan(...any) error }) (*agentmem.Element, error) {
	var (
		e        agentmem.Element
		metadata string
		created  int64
	)
	if err := row.Scan(&e.ID, &e.ThreadID, &e.MessageID, &e.Type, &e.Name, &e.Content, &e.URL, &e.MimeType, &e.Display, &metadata, &created); err != nil {
		return nil, err
	}
	e.Metadata, e.CreatedAt = json.RawMessage(metadata), fromMicros(created)
	return &e, nil
}

// CreateElement implements agentmem.ElementStore.
func (s *Store) CreateElement(ctx context.Context, userID, threadID string, e *agentmem.Element) error {
	if err := e.Validate(); err != nil {
		return err
	}
	if e.ID == "" {
		e.ID = agentmem.NewID()
	}
	if e.CreatedAt.IsZero() {
		e.CreatedAt = s.now()
	} else {
		e.CreatedAt = agentmem.Timestamp(e.CreatedAt)
	}
	e.ThreadID = threadID
	return s.write(ctx, func(tx *sql.Tx) error {
		if _, err := findLiveThread(ctx, tx, userID, threadID); err != nil {
			return err
		}
		return insertElement(ctx, tx, userID, e)
	})
}

func insertElement(ctx context.Context, tx *sql.Tx, userID string, e *agentmem.Element) error {
	if e.MessageID != "" {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM messages WHERE user_id = ? AND id = ? AND thread_id = ?`, userID, e.MessageID, e.ThreadID).Scan(&n); err != nil {
			return fmt.Errorf("find message: %w", err)
		} else if n == 0 {
			return agentmem.Errorf(agentmem.ENOTFOUND, "Message %q not found in thread %q.", e.MessageID, e.ThreadID)
		}
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO elements (user_id, `+elementColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		userID, e.ID, e.ThreadID, e.MessageID, e.Type, e.Name, e.Content, e.URL, e.MimeType, e.Display, string(e.Metadata), micros(e.CreatedAt))
	if agentmem.ErrorCode(formatError(err)) == agentmem.ECONFLICT {
		return agentmem.Errorf(agentmem.ECONFLICT, "Element %q already exists.", e.ID)
	} else if err != nil {
		return fmt.Errorf("insert element: %w", err)
	}
	return nil
}

// FindElements implements agentmem.ElementStore.
func (s *Store) FindElements(ctx context.Context, userID, threadID string, f agentmem.ElementFilter) ([]*agentmem.Element, string, error) {
	limit, err := agentmem.PageSize(f.Limit)
	if err != nil {
		return nil, "", err
	}
	if err := f.Validate(); err != nil {
		return nil, "", err
	}
	q, args := `SELECT `+elementColumns+` FROM elements WHERE user_id = ? AND thread_id = ?`, []any{userID, threadID}
	if f.MessageID != nil {
		q, args = q+` AND message_id = ?`, append(args, *f.MessageID)
	}
	if f.Cursor != "" {
		var c agentmem.TimeIDCursor
		if err := agentmem.DecodeCursor(f.Cursor, agentmem.ListOf(agentmem.ListElements, userID, threadID), &c); err != nil {
			return nil, "", err
		}
		q, args = q+` AND (created_at, id) > (?, ?)`, append(args, c.Time, c.ID)
	}
	var els []*agentmem.Element
	err = s.read(ctx, func(tx *sql.Tx) error {
		find := findLiveThread
		if f.IncludeDeleted {
			find = findThread
		}
		if _, err := find(ctx, tx, userID, threadID); err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, q+` ORDER BY created_at, id LIMIT ?`, append(args, limit+1)...)
		if err != nil {
			return fmt.Errorf("find elements: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			e, err := scanElement(rows)
			if err != nil {
				return fmt.Errorf("scan element: %w", err)
			}
			els = append(els, e)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, "", err
	}
	els, next := agentmem.ElementPage(els, limit, agentmem.ListOf(agentmem.ListElements, userID, threadID))
	return els, next, nil
}

// FindSession implements agentmem.SessionStore.
func (s *Store) FindSession(ctx context.Context, userID, agentID string) (*agentmem.Session, error) {
	sess := agentmem.Session{UserID: userID, AgentID: agentID}
	err := s.read(ctx, func(tx *sql.Tx) error {
		var updated int64
		err := tx.QueryRowContext(ctx, `SELECT s.thread_id, s.updated_at FROM sessions s
			JOIN threads t ON t.user_id = s.user_id AND t.id = s.thread_id AND t.deleted_at IS NULL
			WHERE s.user_id = ? AND s.agent_id = ?`, userID, agentID).Scan(&sess.ThreadID, &updated)
		if errors.Is(err, sql.ErrNoRows) {
			return agentmem.Errorf(agentmem.ENOTFOUND, "No active session for agent %q.", agentID)
		} else if err != nil {
			return fmt.Errorf("find session: %w", err)
		}
		sess.UpdatedAt = fromMicros(updated)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &sess, nil
}

// SetSession implements agentmem.SessionStore.
func (s *Store) SetSession(ctx context.Context, userID, agentID, threadID string) (*agentmem.Session, error) {
	if err := agentmem.ValidateID("agent_id", agentID); err != nil {
		return nil, err
	}
	sess := &agentmem.Session{UserID: userID, AgentID: agentID, ThreadID: threadID, UpdatedAt: s.now()}
	err := s.write(ctx, func(tx *sql.Tx) error {
		if _, err := findLiveThread(ctx, tx, userID, threadID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO sessions (user_id, agent_id, thread_id, updated_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (user_id, agent_id) DO UPDATE SET thread_id = excluded.thread_id, updated_at = excluded.updated_at`,
			userID, agentID, threadID, micros(sess.UpdatedAt))
		if err != nil {
			return fmt.Errorf("set session: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return sess, nil
}

// OpenSession implements agentmem.SessionStore. The single writer makes
// the lookup and the creation one step.
func (s *Store) OpenSession(ctx context.Context, userID, agentID string, t *agentmem.Thread) (*agentmem.Session, bool, error) {
	if err := agentmem.ValidateID("agent_id", agentID); err != nil {
		return nil, false, err
	}
	t.UserID, t.AgentID = userID, agentID
	if err := s.prepareThread(t); err != nil {
		return nil, false, err
	}
	var sess *agentmem.Session
	var created bool
	err := s.write(ctx, func(tx *sql.Tx) error {
		sess, created = &agentmem.Session{UserID: userID, AgentID: agentID}, false
		var updated int64
		err := tx.QueryRowContext(ctx, `SELECT s.thread_id, s.updated_at FROM sessions s
			JOIN threads t ON t.user_id = s.user_id AND t.id = s.thread_id AND t.deleted_at IS NULL
			WHERE s.user_id = ? AND s.agent_id = ?`, userID, agentID).Scan(&sess.ThreadID, &updated)
		if err == nil {
			sess.UpdatedAt = fromMicros(updated)
			return nil
		} else if !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("find session: %w", err)
		}
		if err := insertThread(ctx, tx, t); err != nil {
			return err
		}
		sess.ThreadID, sess.UpdatedAt, created = t.ID, t.CreatedAt, true
		_, err = tx.ExecContext(ctx, `INSERT INTO sessions (user_id, agent_id, thread_id, updated_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (user_id, agent_id) DO UPDATE SET thread_id = excluded.thread_id, updated_at = excluded.updated_at`,
			userID, agentID, t.ID, micros(sess.UpdatedAt))
		if err != nil {
			return fmt.Errorf("set session: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	return sess, created, nil
}
