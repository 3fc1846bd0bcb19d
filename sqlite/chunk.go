package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/agentmem/agentmem"
)

// chunkColumns are a chunk's columns: its text is not one of them, but
// assembled from its turns (chunkTexts).
const chunkColumns = `id, user_id, thread_id, seq_from, seq_to, turns, summary, topics, entities, created_at`

// PutChunks implements agentmem.ChunkStore. The full-text index of chunks
// is contentless (migration 0021): each chunk's text, read from its turns,
// is written to it here, and a chunk written again leaves it first.
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
	texts := make([]string, len(cs))
	size := func(i int) int {
		return len(cs[i].Text) + len(cs[i].Summary) + len(rows[i].topics) + len(rows[i].entities)
	}
	err := s.writeSlices(ctx, len(cs), size, func(tx *sql.Tx, from, to int) error {
		checked := map[string]bool{}
		var ps []passage
		for _, c := range cs[from:to] {
			if !checked[c.ThreadID] {
				if _, err := findLiveThread(ctx, tx, userID, c.ThreadID); err != nil {
					return err
				}
				checked[c.ThreadID] = true
			}
			ps = append(ps, passage{c.ThreadID, c.SeqFrom, c.SeqTo})
		}
		text, err := chunkTexts(ctx, tx, userID, ps)
		if err != nil {
			return fmt.Errorf("put chunks: %w", err)
		}
		copy(texts[from:], text)
		for i := from; i < to; i++ {
			r := rows[i]
			c := r.c
			if texts[i] == "" {
				return noTurns(c)
			}
			var old int64
			err = tx.QueryRowContext(ctx, `SELECT rowid FROM chunks WHERE user_id = ? AND thread_id = ? AND seq_from = ?`, userID, c.ThreadID, c.SeqFrom).Scan(&old)
			if err == nil {
				_, err = tx.ExecContext(ctx, `DELETE FROM chunks_fts WHERE rowid = ?`, old)
			}
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("put chunk: %w", err)
			}
			id := c.ID
			if id == "" {
				id = agentmem.NewID()
			}
			// The chunk of (thread, seq_from) keeps its ID (and rowid) when
			// replaced.
			var doc int64
			err = tx.QueryRowContext(ctx, `INSERT INTO chunks (`+chunkColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
				ON CONFLICT (user_id, thread_id, seq_from) DO UPDATE SET seq_to = excluded.seq_to, turns = excluded.turns,
					summary = excluded.summary, topics = excluded.topics, entities = excluded.entities, created_at = excluded.created_at
				RETURNING rowid, id`,
				id, userID, c.ThreadID, c.SeqFrom, c.SeqTo, c.Turns, c.Summary, string(r.topics), string(r.entities), micros(c.CreatedAt)).Scan(&doc, &ids[i])
			if err != nil {
				return fmt.Errorf("put chunk: %w", err)
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO chunks_fts (rowid, text, summary, topics, entities) VALUES (?, ?, ?, ?, ?)`,
				doc, texts[i], c.Summary, string(r.topics), string(r.entities)); err != nil {
				return fmt.Errorf("put chunk: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for i, c := range cs {
		c.ID, c.Text, c.CreatedAt = ids[i], texts[i], agentmem.Timestamp(c.CreatedAt)
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
		var ps []passage
		for rows.Next() {
			var (
				c                agentmem.Chunk
				topics, entities string
				created          int64
			)
			if err := rows.Scan(&c.ID, &c.UserID, &c.ThreadID, &c.SeqFrom, &c.SeqTo, &c.Turns, &c.Summary, &topics, &entities, &created); err != nil {
				return fmt.Errorf("find chunks: %w", err)
			}
			if err := json.Unmarshal([]byte(topics), &c.Topics); err != nil {
				return fmt.Errorf("chunk %s topics: %w", c.ID, err)
			}
			if err := json.Unmarshal([]byte(entities), &c.Entities); err != nil {
				return fmt.Errorf("chunk %s entities: %w", c.ID, err)
			}
			c.CreatedAt = fromMicros(created)
			out, ps = append(out, &c), append(ps, passage{c.ThreadID, c.SeqFrom, c.SeqTo})
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("find chunks: %w", err)
		}
		texts, err := chunkTexts(ctx, tx, userID, ps)
		if err != nil {
			return fmt.Errorf("find chunks: %w", err)
		}
		for i, c := range out {
			c.Text = texts[i]
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// noTurns is the error of a chunk whose seqs hold no turn.
func noTurns(c *agentmem.Chunk) error {
	return agentmem.Errorf(agentmem.EINVALID, "Seqs %d…%d of thread %q hold no turn to make a chunk of.", c.SeqFrom, c.SeqTo, c.ThreadID)
}

// passage is the seqs of a thread that a chunk covers.
type passage struct {
	thread   string
	from, to int64
}

// chunkTexts returns the texts of the chunks of the user that cover ps
// (agentmem.ChunkText of each one's turns), joined from their messages in
// one query, each passage a range of the messages' primary key:
//
//	SELECT j.key, (SELECT group_concat(iif(m.name != '', m.name, m.role) || ': ' || m.content, char(10) ORDER BY m.seq)
//		FROM messages m WHERE m.user_id = ? AND m.thread_id = j.value ->> 0 AND m.seq BETWEEN j.value ->> 1 AND j.value ->> 2 AND (a turn))
//	FROM json_each('[["t1", 1, 19], …]') j
//
// The same join as agentmem.ChunkText's, cut by agentmem.CutChunkText:
// reading the turns as rows, to join them in Go with agentmem.ChunkText,
// took twice as long (FindItems of 100 chunks: 3.4 against 1.9 ms), a
// row costing database/sql more than joining it costs SQLite.
func chunkTexts(ctx context.Context, tx *sql.Tx, userID string, ps []passage) ([]string, error) {
	texts := make([]string, len(ps))
	if len(ps) == 0 {
		return texts, nil
	}
	list := make([][3]any, len(ps))
	for i, p := range ps {
		list[i] = [3]any{p.thread, p.from, p.to}
	}
	arg, err := json.Marshal(list)
	if err != nil {
		return nil, err
	}
	rows, err := tx.QueryContext(ctx, `SELECT j.key, coalesce((SELECT group_concat(iif(m.name != '', m.name, m.role) || ': ' || m.content, char(10) ORDER BY m.seq)
			FROM messages m WHERE m.user_id = ? AND m.thread_id = j.value ->> 0 AND m.seq BETWEEN j.value ->> 1 AND j.value ->> 2
				AND m.role IN ('user', 'assistant') AND m.content != ''), '')
		FROM json_each(?) j`, userID, string(arg))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var i int
		var text string
		if err := rows.Scan(&i, &text); err != nil {
			return nil, err
		}
		texts[i] = agentmem.CutChunkText(text)
	}
	return texts, rows.Err()
}

// fillChunkTexts sets the texts of the hits of scope chunks (see
// chunkTexts).
func fillChunkTexts(ctx context.Context, tx *sql.Tx, userID string, hits []agentmem.TextHit) error {
	var ps []passage
	var at []int
	for i, h := range hits {
		if h.Scope == agentmem.ScopeChunks {
			ps, at = append(ps, passage{h.ThreadID, h.SeqFrom, h.SeqTo}), append(at, i)
		}
	}
	texts, err := chunkTexts(ctx, tx, userID, ps)
	if err != nil {
		return fmt.Errorf("chunk texts: %w", err)
	}
	for k, i := range at {
		hits[i].Text = texts[k]
	}
	return nil
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
		turns := map[int64]agentmem.StoredTurn{}
		rows, err := tx.QueryContext(ctx, `SELECT seq, rowid, name, content FROM messages
			WHERE user_id = ? AND thread_id = ? AND seq BETWEEN ? AND ? AND role IN ('user', 'assistant')`, userID, threadID, lo, hi)
		if err != nil {
			return fmt.Errorf("put windows: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var (
				seq           int64
				t             agentmem.StoredTurn
				name, content string
			)
			if err := rows.Scan(&seq, &t.Key, &name, &content); err != nil {
				return fmt.Errorf("put windows: %w", err)
			}
			t.Words = agentmem.Words(agentmem.TurnText(name, content))
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
		for _, w := range ws {
			near, length, ok := agentmem.WindowRow(w, turns)
			if !ok {
				continue
			}
			if _, err := put.ExecContext(ctx, userID, turns[w.Seq].Key, near, int64(length)); err != nil {
				return fmt.Errorf("put window: %w", err)
			}
		}
		return nil
	})
}
