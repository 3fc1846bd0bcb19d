package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/agentmem/agentmem"
	"github.com/jackc/pgx/v5"
)

const chunkColumns = `id, user_id, thread_id, seq_from, seq_to, turns, text, summary, topics, entities, created_at`

// PutChunks implements agentmem.ChunkStore. Each chunk's thread is locked
// FOR KEY SHARE (indexLock), so that the thread cannot be deleted before
// the put commits, and appends to it do not wait.
func (s *Store) PutChunks(ctx context.Context, userID string, cs []*agentmem.Chunk) error {
	for _, c := range cs {
		c.UserID = userID
		if err := c.Validate(); err != nil {
			return err
		}
	}
	ids := make([]string, len(cs))
	err := s.write(ctx, func(tx pgx.Tx) error {
		for i, c := range cs {
			if _, err := findLiveThread(ctx, tx, userID, c.ThreadID, indexLock); err != nil {
				return err
			}
			id := c.ID
			if id == "" {
				id = agentmem.NewID()
			}
			// The chunk of (thread, seq_from) keeps its ID when replaced.
			err := tx.QueryRow(ctx, `INSERT INTO chunks (`+chunkColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
				ON CONFLICT (user_id, thread_id, seq_from) DO UPDATE SET seq_to = excluded.seq_to, turns = excluded.turns, text = excluded.text,
					summary = excluded.summary, topics = excluded.topics, entities = excluded.entities, created_at = excluded.created_at
				RETURNING id`,
				id, userID, c.ThreadID, c.SeqFrom, c.SeqTo, c.Turns, c.Text, c.Summary, c.Topics, c.Entities, agentmem.Timestamp(c.CreatedAt)).Scan(&ids[i])
			if err != nil {
				return fmt.Errorf("put chunk: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for i, c := range cs {
		c.ID, c.CreatedAt = ids[i], agentmem.Timestamp(c.CreatedAt)
	}
	return nil
}

// FindChunks implements agentmem.ChunkStore.
func (s *Store) FindChunks(ctx context.Context, userID, threadID string) ([]*agentmem.Chunk, error) {
	out := []*agentmem.Chunk{}
	err := s.read(ctx, func(tx pgx.Tx) error {
		if _, err := findLiveThread(ctx, tx, userID, threadID, noLock); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT `+chunkColumns+` FROM chunks WHERE user_id = $1 AND thread_id = $2 ORDER BY seq_from`, userID, threadID)
		if err != nil {
			return fmt.Errorf("find chunks: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var c agentmem.Chunk
			if err := rows.Scan(&c.ID, &c.UserID, &c.ThreadID, &c.SeqFrom, &c.SeqTo, &c.Turns, &c.Text, &c.Summary, &c.Topics, &c.Entities, &c.CreatedAt); err != nil {
				return fmt.Errorf("find chunks: %w", err)
			}
			c.CreatedAt = c.CreatedAt.UTC()
			out = append(out, &c)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// LastChunkEnd implements agentmem.ChunkStore.
func (s *Store) LastChunkEnd(ctx context.Context, userID, threadID string) (int64, error) {
	var end int64
	err := s.read(ctx, func(tx pgx.Tx) error {
		if _, err := findLiveThread(ctx, tx, userID, threadID, noLock); err != nil {
			return err
		}
		err := tx.QueryRow(ctx, `SELECT seq_to FROM chunks WHERE user_id = $1 AND thread_id = $2 ORDER BY seq_from DESC LIMIT 1`, userID, threadID).Scan(&end)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		} else if err != nil {
			return fmt.Errorf("last chunk: %w", err)
		}
		return nil
	})
	return end, err
}

// PutMessageWindows implements agentmem.ChunkStore: it sets the messages'
// window_tsv, as the messages' own tsv is made (the first 100,000
// characters, 'english').
func (s *Store) PutMessageWindows(ctx context.Context, userID, threadID string, ws []agentmem.MessageWindow) error {
	seqs := make([]int64, len(ws))
	texts := make([]string, len(ws))
	for i, w := range ws {
		if err := agentmem.ValidateText("window", w.Text); err != nil {
			return err
		}
		seqs[i], texts[i] = w.Seq, w.Text
	}
	if len(ws) == 0 {
		return nil
	}
	// The seqs' range bounds the scan of the thread's messages whatever
	// the planner believes of the thread: with statistics from when it
	// was short (before autovacuum's ANALYZE after a bulk load), it read
	// all of the thread's messages for each slice, seconds at 100,000.
	lo, hi := slices.Min(seqs), slices.Max(seqs)
	return s.write(ctx, func(tx pgx.Tx) error {
		if _, err := findLiveThread(ctx, tx, userID, threadID, indexLock); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `UPDATE messages m SET window_tsv = to_tsvector('english', left(w.text, 100000))
			FROM unnest($3::bigint[], $4::text[]) AS w(seq, text)
			WHERE m.user_id = $1 AND m.thread_id = $2 AND m.seq BETWEEN $5 AND $6 AND m.seq = w.seq AND m.role IN ('user', 'assistant')`,
			userID, threadID, seqs, texts, lo, hi)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("put windows: %w", err)
		}
		return nil
	})
}
