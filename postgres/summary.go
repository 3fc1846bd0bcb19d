package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentmem/agentmem"
	"github.com/jackc/pgx/v5"
)

const summaryColumns = `user_id, thread_id, version, through_seq, text, token_count, method, model, created_at`

func scanSummary(row interface{ Scan(...any) error }) (*agentmem.Summary, error) {
	var sum agentmem.Summary
	if err := row.Scan(&sum.UserID, &sum.ThreadID, &sum.Version, &sum.ThroughSeq, &sum.Text, &sum.TokenCount, &sum.Method, &sum.Model, &sum.CreatedAt); err != nil {
		return nil, err
	}
	sum.CreatedAt = sum.CreatedAt.UTC()
	return &sum, nil
}

// findSummary returns the newest summary of a thread, nil if it has none.
func findSummary(ctx context.Context, tx pgx.Tx, userID, threadID string) (*agentmem.Summary, error) {
	sum, err := scanSummary(tx.QueryRow(ctx, `SELECT `+summaryColumns+` FROM summaries
		WHERE user_id = $1 AND thread_id = $2 ORDER BY version DESC LIMIT 1`, userID, threadID))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("find summary: %w", err)
	}
	return sum, nil
}

// PutSummary implements agentmem.SummaryStore.
//
// It locks the thread's row FOR UPDATE, as an append does: puts of one
// thread take turns, so each reads the version the previous one wrote
// (two would otherwise both write newest+1, and one would fail), and the
// thread cannot be deleted, nor its last_seq move, until the put commits.
func (s *Store) PutSummary(ctx context.Context, sum *agentmem.Summary) (*agentmem.Summary, error) {
	if err := sum.Validate(); err != nil {
		return nil, err
	}
	sum.TokenCount = s.tokens().CountTokens(sum.Text)
	var out *agentmem.Summary
	err := s.write(ctx, func(tx pgx.Tx) error {
		t, err := findLiveThread(ctx, tx, sum.UserID, sum.ThreadID, forUpdate)
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
		if _, err := tx.Exec(ctx, `INSERT INTO summaries (`+summaryColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
			sum.UserID, sum.ThreadID, sum.Version, sum.ThroughSeq, sum.Text, sum.TokenCount, sum.Method, sum.Model, sum.CreatedAt); err != nil {
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
	err := s.read(ctx, func(tx pgx.Tx) (err error) {
		if _, err := findLiveThread(ctx, tx, userID, threadID, noLock); err != nil {
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
