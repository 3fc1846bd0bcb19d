package postgres

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/agentmem/agentmem"
	"github.com/jackc/pgx/v5"
)

const notesColumns = `user_id, agent_id, version, operation, content, created_at`

func scanNotes(row interface{ Scan(...any) error }) (*agentmem.Notes, error) {
	var n agentmem.Notes
	if err := row.Scan(&n.UserID, &n.AgentID, &n.Version, &n.Operation, &n.Content, &n.UpdatedAt); err != nil {
		return nil, err
	}
	n.UpdatedAt = n.UpdatedAt.UTC()
	return &n, nil
}

// findNotes returns the newest version of the notes, or version 0 when
// there is none.
func findNotes(ctx context.Context, tx pgx.Tx, userID, agentID string) (*agentmem.Notes, error) {
	n, err := scanNotes(tx.QueryRow(ctx, `SELECT `+notesColumns+` FROM notes
		WHERE user_id = $1 AND agent_id = $2 ORDER BY version DESC LIMIT 1`, userID, agentID))
	if errors.Is(err, pgx.ErrNoRows) {
		return &agentmem.Notes{UserID: userID, AgentID: agentID}, nil
	} else if err != nil {
		return nil, fmt.Errorf("find notes: %w", err)
	}
	return n, nil
}

// FindNotes implements agentmem.NotesStore.
func (s *Store) FindNotes(ctx context.Context, userID, agentID string) (*agentmem.Notes, error) {
	var n *agentmem.Notes
	err := s.read(ctx, func(tx pgx.Tx) (err error) {
		n, err = findNotes(ctx, tx, userID, agentID)
		return err
	})
	if err != nil {
		return nil, err
	}
	return n, nil
}

// PutNotes implements agentmem.NotesStore.
//
// It records the user as insertThread does, which locks the user's row
// until the commit: puts of the user's notes take turns (each reads, at
// READ COMMITTED, the version the previous one wrote, so the check of the
// expected version and the next version number cannot race), and no put
// lands while DeleteUser is erasing the user.
func (s *Store) PutNotes(ctx context.Context, userID, agentID string, op agentmem.NotesOp) (*agentmem.Notes, error) {
	if err := agentmem.ValidateNotesOwner(userID, agentID); err != nil {
		return nil, err
	}
	if err := op.Validate(); err != nil {
		return nil, err
	}
	var out *agentmem.Notes
	err := s.write(ctx, func(tx pgx.Tx) error {
		now := s.now()
		if _, err := tx.Exec(ctx, `INSERT INTO users (user_id, created_at) VALUES ($1, $2)
			ON CONFLICT (user_id) DO UPDATE SET created_at = users.created_at WHERE false`, userID, now); err != nil {
			return fmt.Errorf("insert user: %w", err)
		}
		cur, err := findNotes(ctx, tx, userID, agentID)
		if err != nil {
			return err
		}
		next, err := cur.Next(op, now)
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO notes (`+notesColumns+`) VALUES ($1, $2, $3, $4, $5, $6)`,
			next.UserID, next.AgentID, next.Version, next.Operation, next.Content, next.UpdatedAt)
		if isUniqueViolation(err) { // only if the lock above were lost: a concurrent put took this version
			return agentmem.Errorf(agentmem.ECONFLICT, "The notes moved past version %d meanwhile; read them again and retry.", cur.Version)
		} else if err != nil {
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
//	SELECT … FROM notes WHERE user_id = $1 AND agent_id = $2 AND version < cursor (or MaxInt64)
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
	err = s.read(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT `+notesColumns+` FROM notes
			WHERE user_id = $1 AND agent_id = $2 AND version < $3 ORDER BY version DESC LIMIT $4::bigint`, userID, agentID, before, limit+1)
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
