package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/jackc/pgx/v5"
)

const elementColumns = `id, thread_id, message_id, type, name, content, url, mime_type, display, metadata, created_at`

func scanElement(row interface{ Scan(...any) error }) (*agentmem.Element, error) {
	var (
		e        agentmem.Element
		metadata []byte
		created  time.Time
	)
	if err := row.Scan(&e.ID, &e.ThreadID, &e.MessageID, &e.Type, &e.Name, &e.Content, &e.URL, &e.MimeType, &e.Display, &metadata, &created); err != nil {
		return nil, err
	}
	e.Metadata, e.CreatedAt = jsonValue(metadata), created.UTC()
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
	return s.write(ctx, func(tx pgx.Tx) error {
		// FOR SHARE: the thread cannot be deleted before the element is in.
		if _, err := findLiveThread(ctx, tx, userID, threadID, forShare); err != nil {
			return err
		}
		return insertElement(ctx, tx, userID, e)
	})
}

func insertElement(ctx context.Context, tx pgx.Tx, userID string, e *agentmem.Element) error {
	if e.MessageID != "" {
		var found bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM messages WHERE user_id = $1 AND id = $2 AND thread_id = $3)`,
			userID, e.MessageID, e.ThreadID).Scan(&found); err != nil {
			return fmt.Errorf("find message: %w", err)
		} else if !found {
			return agentmem.Errorf(agentmem.ENOTFOUND, "Message %q not found in thread %q.", e.MessageID, e.ThreadID)
		}
	}
	_, err := tx.Exec(ctx, `INSERT INTO elements (user_id, `+elementColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
		userID, e.ID, e.ThreadID, e.MessageID, e.Type, e.Name, e.Content, e.URL, e.MimeType, e.Display, string(e.Metadata), e.CreatedAt)
	if isUniqueViolation(err) {
		return agentmem.Errorf(agentmem.ECONFLICT, "Element %q already exists.", e.ID)
	} else if err != nil {
		return fmt.Errorf("insert element: %w", err)
	}
	return nil
}

// FindElements implements agentmem.ElementStore.
//
//	SELECT … FROM elements WHERE user_id = $1 AND thread_id = $2 [AND message_id = $n]
//	  [AND (created_at, id) > ($n, $m)]
//	ORDER BY created_at, id LIMIT n+1
//
// walks the (user_id, thread_id, created_at, id) index from the cursor.
func (s *Store) FindElements(ctx context.Context, userID, threadID string, f agentmem.ElementFilter) ([]*agentmem.Element, string, error) {
	limit, err := agentmem.PageSize(f.Limit)
	if err != nil {
		return nil, "", err
	}
	if err := f.Validate(); err != nil {
		return nil, "", err
	}
	q, args := `SELECT `+elementColumns+` FROM elements WHERE user_id = $1 AND thread_id = $2`, []any{userID, threadID}
	if f.MessageID != nil {
		args = append(args, *f.MessageID)
		q += ` AND message_id = $` + strconv.Itoa(len(args))
	}
	if f.Cursor != "" {
		var c agentmem.TimeIDCursor
		if err := agentmem.DecodeCursor(f.Cursor, agentmem.ListOf(agentmem.ListElements, userID, threadID), &c); err != nil {
			return nil, "", err
		}
		args = append(args, time.UnixMicro(c.Time).UTC(), c.ID)
		q += ` AND (created_at, id) > ($` + strconv.Itoa(len(args)-1) + `, $` + strconv.Itoa(len(args)) + `)`
	}
	args = append(args, limit+1)
	q += ` ORDER BY created_at, id LIMIT $` + strconv.Itoa(len(args))
	var els []*agentmem.Element
	err = s.read(ctx, func(tx pgx.Tx) error {
		find := findLiveThread
		if f.IncludeDeleted {
			find = findThread
		}
		if _, err := find(ctx, tx, userID, threadID, noLock); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, q, args...)
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
	err := s.read(ctx, func(tx pgx.Tx) error {
		var updated time.Time
		err := tx.QueryRow(ctx, `SELECT s.thread_id, s.updated_at FROM sessions s
			JOIN threads t ON t.user_id = s.user_id AND t.id = s.thread_id AND t.deleted_at IS NULL
			WHERE s.user_id = $1 AND s.agent_id = $2`, userID, agentID).Scan(&sess.ThreadID, &updated)
		if errors.Is(err, pgx.ErrNoRows) {
			return agentmem.Errorf(agentmem.ENOTFOUND, "No active session for agent %q.", agentID)
		} else if err != nil {
			return fmt.Errorf("find session: %w", err)
		}
		sess.UpdatedAt = updated.UTC()
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &sess, nil
}

// SetSession implements agentmem.SessionStore. The user's row, locked
// FOR SHARE first, waits for an OpenSession of the user in progress
// (which locks it FOR UPDATE), and makes one that comes after wait: an
// OpenSession that found no session cannot then overwrite this one with
// the thread it created.
func (s *Store) SetSession(ctx context.Context, userID, agentID, threadID string) (*agentmem.Session, error) {
	if err := agentmem.ValidateID("agent_id", agentID); err != nil {
		return nil, err
	}
	sess := &agentmem.Session{UserID: userID, AgentID: agentID, ThreadID: threadID, UpdatedAt: s.now()}
	err := s.write(ctx, func(tx pgx.Tx) error {
		// No row (no such user) locks nothing: the thread is not found below.
		if _, err := tx.Exec(ctx, `SELECT 1 FROM users WHERE user_id = $1 FOR SHARE`, userID); err != nil {
			return fmt.Errorf("lock user: %w", err)
		}
		// FOR SHARE: the thread cannot be deleted before the session is set.
		if _, err := findLiveThread(ctx, tx, userID, threadID, forShare); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO sessions (user_id, agent_id, thread_id, updated_at) VALUES ($1, $2, $3, $4)
			ON CONFLICT (user_id, agent_id) DO UPDATE SET thread_id = excluded.thread_id, updated_at = excluded.updated_at`,
			userID, agentID, threadID, sess.UpdatedAt)
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

// OpenSession implements agentmem.SessionStore. The user's row, locked
// first, serialises the calls of one user: the second finds the session
// the first made.
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
	err := s.write(ctx, func(tx pgx.Tx) error {
		sess, created = &agentmem.Session{UserID: userID, AgentID: agentID}, false
		if _, err := tx.Exec(ctx, `INSERT INTO users (user_id, created_at) VALUES ($1, $2) ON CONFLICT (user_id) DO NOTHING`, userID, t.CreatedAt); err != nil {
			return fmt.Errorf("insert user: %w", err)
		}
		if _, err := tx.Exec(ctx, `SELECT 1 FROM users WHERE user_id = $1 FOR UPDATE`, userID); err != nil {
			return fmt.Errorf("lock user: %w", err)
		}
		var updated time.Time
		err := tx.QueryRow(ctx, `SELECT s.thread_id, s.updated_at FROM sessions s
			JOIN threads t ON t.user_id = s.user_id AND t.id = s.thread_id AND t.deleted_at IS NULL
			WHERE s.user_id = $1 AND s.agent_id = $2`, userID, agentID).Scan(&sess.ThreadID, &updated)
		if err == nil {
			sess.UpdatedAt = updated.UTC()
			return nil
		} else if !errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("find session: %w", err)
		}
		if err := insertThread(ctx, tx, t); err != nil {
			return err
		}
		sess.ThreadID, sess.UpdatedAt, created = t.ID, t.CreatedAt, true
		_, err = tx.Exec(ctx, `INSERT INTO sessions (user_id, agent_id, thread_id, updated_at) VALUES ($1, $2, $3, $4)
			ON CONFLICT (user_id, agent_id) DO UPDATE SET thread_id = excluded.thread_id, updated_at = excluded.updated_at`,
			userID, agentID, t.ID, sess.UpdatedAt)
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
