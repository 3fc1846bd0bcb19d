package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"

	"github.com/agentmem/agentmem"
)

const notesColumns = `user_id, agent_id, version, operation, content, created_at`

func scanNotes(row interface{ Scan(...any) error }) (*agentmem.Notes, error) {
	var (
		n       agentmem.Notes
		created int64
	)
	if err := row.Scan(&n.UserID, &n.AgentID, &n.Version, &n.Operation, &n.Content, &created); err != nil {
		return nil, err
	}
	n.UpdatedAt = fromMicros(created)
	return &n, nil
}

// findNotes returns the newest version of the notes, or version 0 when
// there is none.
func findNotes(ctx context.Context, tx *sql.Tx, userID, agentID string) (*agentmem.Notes, error) {
	n, err := scanNotes(tx.QueryRowContext(ctx, `SELECT `+notesColumns+` FROM notes
		WHERE user_id = ? AND agent_id = ? ORDER BY version DESC LIMIT 1`, userID, agentID))
	if errors.Is(err, sql.ErrNoRows) {
		return &agentmem.Notes{UserID: userID, AgentID: agentID}, nil
	} else if err != nil {
		return nil, fmt.Errorf("find notes: %w", err)
	}
	return n, nil
}

// FindNotes implements agentmem.NotesStore.
func (s *Store) FindNotes(ctx context.Context, userID, agentID string) (*agentmem.Notes, error) {
	var n *agentmem.Notes
	err := s.read(ctx, func(tx *sql.Tx) (err error) {
		n, err = findNotes(ctx, tx, userID, agentID)
		return err
	})
	if err != nil {
		return nil, err
	}
	return n, nil
}

// PutNotes implements agentmem.NotesStore. The write loop runs one write
// at a time, so the version it reads is the one it replaces.
func (s *Store) PutNotes(ctx context.Context, userID, agentID string, op agentmem.NotesOp) (*agentmem.Notes, error) {
	if err := agentmem.ValidateNotesOwner(userID, agentID); err != nil {
		return nil, err
	}
	if err := op.Validate(); err != nil {
		return nil, err
	}
	var out *agentmem.Notes
	err := s.write(ctx, func(tx *sql.Tx) error {
		cur, err := findNotes(ctx, tx, userID, agentID)
		if err != nil {
			return err
		}
		next, err := cur.Next(op, s.now())
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO users (user_id, created_at) VALUES (?, ?) ON CONFLICT DO NOTHING`,
			userID, micros(next.UpdatedAt)); err != nil {
			return fmt.Errorf("insert user: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO notes (`+notesColumns+`) VALUES (?, ?, ?, ?, ?, ?)`,
			next.UserID, next.AgentID, next.Version, next.Operation, next.Content, micros(next.UpdatedAt)); err != nil {
			return fmt.Errorf("insert notes: %w", err)
		}
		out = next
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// FindNotesHistory implements agentmem.NotesStore.
//
//	SELECT … FROM notes WHERE user_id = ? AND agent_id = ? AND version < cursor (or MaxInt64)
//	ORDER BY version DESC LIMIT n+1
func (s *Store) FindNotesHistory(ctx context.Context, userID, agentID string, f agentmem.NotesFilter) ([]*agentmem.Notes, string, error) {
	limit, err := agentmem.PageSize(f.Limit)
	if err != nil {
		return nil, "", err
	}
	before := int64(math.MaxInt64) // no cursor: every version
	if f.Cursor != "" {
		var c agentmem.NotesCursor
		if err := agentmem.DecodeCursor(f.Cursor, agentmem.ListOf(agentmem.ListNotes, userID, agentID), &c); err != nil {
			return nil, "", err
		}
		before = c.Version
	}
	var ns []*agentmem.Notes
	err = s.read(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT `+notesColumns+` FROM notes
			WHERE user_id = ? AND agent_id = ? AND version < ? ORDER BY version DESC LIMIT ?`, userID, agentID, before, limit+1)
		if err != nil {
			return fmt.Errorf("find notes history: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			n, err := scanNotes(rows)
			if err != nil {
				return fmt.Errorf("scan notes: %w", err)
			}
			ns = append(ns, n)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, "", err
	}
	page, next := agentmem.CutPage(ns, limit, agentmem.ListOf(agentmem.ListNotes, userID, agentID), func(last *agentmem.Notes) any { return agentmem.NotesCursor{Version: last.Version} })
	return page, next, nil
}
