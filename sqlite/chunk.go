package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

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

// PutMessageWindows implements agentmem.ChunkStore.
func (s *Store) PutMessageWindows(ctx context.Context, userID, threadID string, ws []agentmem.MessageWindow) error {
	for _, w := range ws {
		if err := agentmem.ValidateText("window", w.Text); err != nil {
			return err
		}
	}
	size := func(i int) int { return len(ws[i].Text) }
	return s.writeSlices(ctx, len(ws), size, func(tx *sql.Tx, from, to int) error {
		ws := ws[from:to]
		if _, err := findLiveThread(ctx, tx, userID, threadID); err != nil {
			return err
		}
		// Prepared once for the batch: a statement compiles in about as
		// long as it runs here.
		var stmts [4]*sql.Stmt
		for i, q := range []string{
			`SELECT rowid FROM messages WHERE user_id = ? AND thread_id = ? AND seq = ? AND role IN ('user', 'assistant')`,
			`INSERT OR IGNORE INTO message_windows (user_id, doc) VALUES (?, ?)`,
			`DELETE FROM message_windows_fts WHERE rowid = ?`,
			`INSERT INTO message_windows_fts (rowid, text, u) VALUES (?, ?, ?)`,
		} {
			st, err := s.writeStmt(ctx, tx, q)
			if err != nil {
				return fmt.Errorf("put windows: %w", err)
			}
			defer st.Close()
			stmts[i] = st
		}
		token := userToken(userID)
		for _, w := range ws {
			var doc int64
			err := stmts[0].QueryRowContext(ctx, userID, threadID, w.Seq).Scan(&doc)
			if err == sql.ErrNoRows {
				continue
			} else if err != nil {
				return fmt.Errorf("put window: %w", err)
			}
			// A message's first window replaces none: deleting it from the
			// contentless index anyway wrote a tombstone for every window,
			// which FTS5's merges then checked every segment against.
			res, err := stmts[1].ExecContext(ctx, userID, doc)
			if err != nil {
				return fmt.Errorf("put window: %w", err)
			}
			if n, err := res.RowsAffected(); err != nil {
				return fmt.Errorf("put window: %w", err)
			} else if n == 0 {
				if _, err := stmts[2].ExecContext(ctx, doc); err != nil {
					return fmt.Errorf("put window: %w", err)
				}
			}
			if _, err := stmts[3].ExecContext(ctx, doc, w.Text, token); err != nil {
				return fmt.Errorf("put window: %w", err)
			}
		}
		return nil
	})
}
