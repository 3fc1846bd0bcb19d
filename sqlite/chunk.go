package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/agentmem/agentmem"
)

const chunkColumns = `id, user_id, thread_id, seq_from, seq_to, turns, text, summary, topics, entities, created_at`

// PutChunks implements agentmem.ChunkStore.
func (s *Store) PutChunks(ctx context.Context, userID string, cs []*agentmem.Chunk) error {
	type row struct {
		c                *agentmem.Chunk
		topics, entities []byte
	}
	rows := make([]row, len(cs))
	for i, c := range cs {
		c.UserID = userID
		if err := c.Validate(); err != nil {
			return err
		}
		t, _ := json.Marshal(c.Topics)
		e, _ := json.Marshal(c.Entities)
		rows[i] = row{c, t, e}
	}
	ids := make([]string, len(cs))
	size := func(i int) int {
		return len(cs[i].Text) + len(cs[i].Summary) + len(rows[i].topics) + len(rows[i].entities)
	}
	err := s.writeSlices(ctx, len(cs), size, func(tx *sql.Tx, from, to int) error {
		for i := from; i < to; i++ {
			r := rows[i]
			c := r.c
			if _, err := findLiveThread(ctx, tx, userID, c.ThreadID); err != nil {
				return err
			}
			id := c.ID
			if id == "" {
				id = agentmem.NewID()
			}
			// The chunk of (thread, seq_from) keeps its ID when replaced.
			err := tx.QueryRowContext(ctx, `INSERT INTO chunks (`+chunkColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
				ON CONFLICT (user_id, thread_id, seq_from) DO UPDATE SET seq_to = excluded.seq_to, turns = excluded.turns, text = excluded.text,
					summary = excluded.summary, topics = excluded.topics, entities = excluded.entities, created_at = excluded.created_at
				RETURNING id`,
				id, userID, c.ThreadID, c.SeqFrom, c.SeqTo, c.Turns, c.Text, c.Summary, string(r.topics), string(r.entities), micros(c.CreatedAt)).Scan(&ids[i])
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
	err := s.read(ctx, func(tx *sql.Tx) error {
		if _, err := findLiveThread(ctx, tx, userID, threadID); err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `SELECT `+chunkColumns+` FROM chunks WHERE user_id = ? AND thread_id = ? ORDER BY seq_from`, userID, threadID)
		if err != nil {
			return fmt.Errorf("find chunks: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var (
				c                agentmem.Chunk
				topics, entities string
				created          int64
			)
			if err := rows.Scan(&c.ID, &c.UserID, &c.ThreadID, &c.SeqFrom, &c.SeqTo, &c.Turns, &c.Text, &c.Summary, &topics, &entities, &created); err != nil {
				return fmt.Errorf("find chunks: %w", err)
			}
			if err := json.Unmarshal([]byte(topics), &c.Topics); err != nil {
				return fmt.Errorf("chunk %s topics: %w", c.ID, err)
			}
			if err := json.Unmarshal([]byte(entities), &c.Entities); err != nil {
				return fmt.Errorf("chunk %s entities: %w", c.ID, err)
			}
			c.CreatedAt = fromMicros(created)
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
	err := s.read(ctx, func(tx *sql.Tx) error {
		if _, err := findLiveThread(ctx, tx, userID, threadID); err != nil {
			return err
		}
		err := tx.QueryRowContext(ctx, `SELECT seq_to FROM chunks WHERE user_id = ? AND thread_id = ? ORDER BY seq_from DESC LIMIT 1`, userID, threadID).Scan(&end)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		} else if err != nil {
			return fmt.Errorf("last chunk: %w", err)
		}
		return nil
	})
	return end, err
}

// PutMessageWindows implements agentmem.ChunkStore: a window is a row
// of message_windows (migration 0020_turn_index.sql), its other turns'
// rowids and its length in words; the turns' words are messages_fts's.
func (s *Store) PutMessageWindows(ctx context.Context, userID, threadID string, ws []agentmem.MessageWindow) error {
	for _, w := range ws {
		if err := w.Validate(); err != nil {
			return err
		}
	}
	size := func(i int) int { return 8 * len(ws[i].Turns) }
	return s.writeSlices(ctx, len(ws), size, func(tx *sql.Tx, from, to int) error {
		ws := ws[from:to]
		if _, err := findLiveThread(ctx, tx, userID, threadID); err != nil {
			return err
		}
		// The turns of the windows, read by their seqs' range.
		lo, hi := ws[0].Turns[0], ws[0].Turns[0]
		for _, w := range ws {
			lo, hi = min(lo, slices.Min(w.Turns)), max(hi, slices.Max(w.Turns))
		}
		type turn struct {
			doc   int64
			words float64
		}
		turns := map[int64]turn{}
		rows, err := tx.QueryContext(ctx, `SELECT seq, rowid, name, content FROM messages
			WHERE user_id = ? AND thread_id = ? AND seq BETWEEN ? AND ? AND role IN ('user', 'assistant')`, userID, threadID, lo, hi)
		if err != nil {
			return fmt.Errorf("put windows: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var (
				seq           int64
				t             turn
				name, content string
			)
			if err := rows.Scan(&seq, &t.doc, &name, &content); err != nil {
				return fmt.Errorf("put windows: %w", err)
			}
			if name != "" {
				content = name + ": " + content
			}
			t.words = agentmem.Words(content)
			turns[seq] = t
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("put windows: %w", err)
		}
		put, err := s.writeStmt(ctx, tx, `INSERT INTO message_windows (user_id, doc, near, len) VALUES (?, ?, ?, ?)
			ON CONFLICT (user_id, doc) DO UPDATE SET near = excluded.near, len = excluded.len`)
		if err != nil {
			return fmt.Errorf("put windows: %w", err)
		}
		defer put.Close()
		var near []byte
		for _, w := range ws {
			own, ok := turns[w.Seq]
			if !ok {
				continue
			}
			near = near[:0]
			length := own.words
			for _, seq := range w.Turns {
				t, ok := turns[seq]
				if !ok {
					continue
				}
				length += t.words
				if seq == w.Seq {
					continue
				}
				if len(near) > 0 {
					near = append(near, ',')
				}
				near = strconv.AppendInt(near, t.doc-own.doc, 10)
			}
			if _, err := put.ExecContext(ctx, userID, own.doc, string(near), int64(length)); err != nil {
				return fmt.Errorf("put window: %w", err)
			}
		}
		return nil
	})
}
