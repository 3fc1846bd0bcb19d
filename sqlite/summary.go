package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/agentmem/agentmem"
)

const summaryColumns = `user_id, thread_id, version, through_seq, text, token_count, method, model, created_at`

func scanSummary(row interface{ Scan(...any) error }) (*agentmem.Summary, error) {
	var (
		sum     agentmem.Summary
		created int64
	)
	if err := row.Scan(&sum.UserID, &sum.ThreadID, &sum.Version, &sum.ThroughSeq, &sum.Text, &sum.TokenCount, &sum.Method, &sum.Model, &created); err != nil {
		return nil, err
	}
	sum.CreatedAt = fromMicros(created)
	return &sum, nil
}

// findSummary returns the newest summary of a thread, nil if it has none.
func findSummary(ctx context.Context, tx *sql.Tx, userID, threadID string) (*agentmem.Summary, error) {
	sum, err := scanSummary(tx.QueryRowContext(ctx, `SELECT `+summaryColumns+` FROM summaries
		WHERE user_id = ? AND thread_id = ? ORDER BY version DESC LIMIT 1`, userID, threadID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("find summary: %w", err)
	}
	return sum, nil
}

// PutSummary implements agentmem.SummaryStore. The write loop runs one
// write at a time, so two puts of a thread never number the same version.
func (s *Store) PutSummary(ctx context.Context, sum *agentmem.Summary) (*agentmem.Summary, error) {
	if err := sum.Validate(); err != nil {
		return nil, err
	}
	sum.TokenCount = s.tokens().CountTokens(sum.Text)
	var out *agentmem.Summary
	err := s.write(ctx, func(tx *sql.Tx) error {
		t, err := findLiveThread(ctx, tx, sum.UserID, sum.ThreadID)
		if err != nil {
			return err
		}
		if sum.ThroughSeq > t.LastSeq {
			return agentmem.Errorf(agentmem.EINVALID, "through_seq %d is beyond the thread's last seq %d.", sum.ThroughSeq, t.LastSeq)
		}
		newest, err := findSummary(ctx, tx, sum.UserID, sum.ThreadID)
		if err != nil {
			return err
		}
		if newest != nil && sum.ThroughSeq <= newest.ThroughSeq {
			out = newest
			return nil
		}
		sum.Version, sum.CreatedAt = 1, s.now()
		if newest != nil {
			sum.Version = newest.Version + 1
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO summaries (`+summaryColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			sum.UserID, sum.ThreadID, sum.Version, sum.ThroughSeq, sum.Text, sum.TokenCount, sum.Method, sum.Model, micros(sum.CreatedAt)); err != nil {
			return fmt.Errorf("insert summary: %w", err)
		}
		out = sum
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// FindSummary implements agentmem.SummaryStore.
func (s *Store) FindSummary(ctx context.Context, userID, threadID string) (*agentmem.Summary, error) {
	var sum *agentmem.Summary
	err := s.read(ctx, func(tx *sql.Tx) (err error) {
		if _, err := findLiveThread(ctx, tx, userID, threadID); err != nil {
			return err
		}
		sum, err = findSummary(ctx, tx, userID, threadID)
		return err
	})
	if err != nil {
		return nil, err
	}
	if sum == nil {
		return nil, agentmem.Errorf(agentmem.ENOTFOUND, "Thread %q has no summary.", threadID)
	}
	return sum, nil
}
