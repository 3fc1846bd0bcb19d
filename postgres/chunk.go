package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/agentmem/agentmem"
	"github.com/jackc/pgx/v5"
)

// chunkColumns are a chunk's columns: its text is not one of them, but
// assembled from its turns (chunkTexts).
const chunkColumns = `id, user_id, thread_id, seq_from, seq_to, turns, summary, topics, entities, created_at`

// PutChunks implements agentmem.ChunkStore. Each chunk's thread is locked
// FOR KEY SHARE (indexLock), so that the thread cannot be deleted before
// the put commits, and appends to it do not wait. A chunk's tsv is its
// text's (read from its turns) and summary's, the first 100,000
// characters of each, and its labels' (migration 0022: as the column
// generated from the text the chunk kept before computed it).
func (s *Store) PutChunks(ctx context.Context, userID string, cs []*agentmem.Chunk) error {
	for _, c := range cs {
		c.UserID = userID
		if err := c.Validate(); err != nil {
			return err
		}
	}
	ids := make([]string, len(cs))
	var texts []string
	err := s.write(ctx, func(tx pgx.Tx) error {
		checked := map[string]bool{}
		ps := make([]passage, len(cs))
		for i, c := range cs {
			if !checked[c.ThreadID] {
				if _, err := findLiveThread(ctx, tx, userID, c.ThreadID, indexLock); err != nil {
					return err
				}
				checked[c.ThreadID] = true
			}
			ps[i] = passage{c.ThreadID, c.SeqFrom, c.SeqTo}
		}
		var err error
		if texts, err = chunkTexts(ctx, tx, userID, ps); err != nil {
			return fmt.Errorf("put chunks: %w", err)
		}
		for i, c := range cs {
			if texts[i] == "" {
				return noTurns(c)
			}
			id := c.ID
			if id == "" {
				id = agentmem.NewID()
			}
			// The chunk of (thread, seq_from) keeps its ID when replaced.
			err := tx.QueryRow(ctx, `INSERT INTO chunks (`+chunkColumns+`, tsv) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10,
					to_tsvector('english', left($11::text, 100000) || E'\n' || left($7::text, 100000))
					|| to_tsvector('english', $8::jsonb) || to_tsvector('english', $9::jsonb))
				ON CONFLICT (user_id, thread_id, seq_from) DO UPDATE SET seq_to = excluded.seq_to, turns = excluded.turns,
					summary = excluded.summary, topics = excluded.topics, entities = excluded.entities, created_at = excluded.created_at, tsv = excluded.tsv
				RETURNING id`,
				id, userID, c.ThreadID, c.SeqFrom, c.SeqTo, c.Turns, c.Summary, c.Topics, c.Entities, agentmem.Timestamp(c.CreatedAt), texts[i]).Scan(&ids[i])
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
		c.ID, c.Text, c.CreatedAt = ids[i], texts[i], agentmem.Timestamp(c.CreatedAt)
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
		var ps []passage
		for rows.Next() {
			var c agentmem.Chunk
			if err := rows.Scan(&c.ID, &c.UserID, &c.ThreadID, &c.SeqFrom, &c.SeqTo, &c.Turns, &c.Summary, &c.Topics, &c.Entities, &c.CreatedAt); err != nil {
				rows.Close()
				return fmt.Errorf("find chunks: %w", err)
			}
			c.CreatedAt = c.CreatedAt.UTC()
			out, ps = append(out, &c), append(ps, passage{c.ThreadID, c.SeqFrom, c.SeqTo})
		}
		rows.Close()
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
//	SELECT p.i, t.text FROM unnest($2::text[], $3::bigint[], $4::bigint[]) WITH ORDINALITY p (thread_id, seq_from, seq_to, i)
//	CROSS JOIN LATERAL (SELECT string_agg(CASE WHEN m.name <> '' THEN m.name ELSE m.role END || ': ' || m.content, E'\n' ORDER BY m.seq) AS text
//		FROM messages m WHERE m.user_id = $1 AND m.thread_id = p.thread_id AND m.seq BETWEEN p.seq_from AND p.seq_to AND (a turn)) t
//
// The same join as agentmem.ChunkText's, cut by agentmem.CutChunkText, as
// on SQLite (a row a chunk, not a row a turn).
func chunkTexts(ctx context.Context, tx pgx.Tx, userID string, ps []passage) ([]string, error) {
	texts := make([]string, len(ps))
	if len(ps) == 0 {
		return texts, nil
	}
	threads := make([]string, len(ps))
	from, to := make([]int64, len(ps)), make([]int64, len(ps))
	for i, p := range ps {
		threads[i], from[i], to[i] = p.thread, p.from, p.to
	}
	rows, err := tx.Query(ctx, `SELECT p.i, coalesce(t.text, '')
		FROM unnest($2::text[], $3::bigint[], $4::bigint[]) WITH ORDINALITY p (thread_id, seq_from, seq_to, i)
		CROSS JOIN LATERAL (SELECT string_agg(CASE WHEN m.name <> '' THEN m.name ELSE m.role END || ': ' || m.content, E'\n' ORDER BY m.seq) AS text
			FROM messages m WHERE m.user_id = $1 AND m.thread_id = p.thread_id AND m.seq BETWEEN p.seq_from AND p.seq_to
				AND m.role IN ('user', 'assistant') AND m.content <> '') t`, userID, threads, from, to)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var i int64
		var text string
		if err := rows.Scan(&i, &text); err != nil {
			return nil, err
		}
		texts[i-1] = agentmem.CutChunkText(text)
	}
	return texts, rows.Err()
}

// fillChunkTexts sets the texts of the hits of scope chunks (see
// chunkTexts).
func fillChunkTexts(ctx context.Context, tx pgx.Tx, userID string, hits []agentmem.TextHit) error {
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

// PutMessageWindows implements agentmem.ChunkStore: a window is a row of
// message_windows (migration 0021_turn_index.sql), its other turns (each
// its seq less the message's) and its length in words (agentmem.Words);
// the turns' words are their own tsv's.
func (s *Store) PutMessageWindows(ctx context.Context, userID, threadID string, ws []agentmem.MessageWindow) error {
	if len(ws) == 0 {
		return nil
	}
	for _, w := range ws {
		if err := w.Validate(); err != nil {
			return err
		}
	}
	// The seqs' range bounds the scan of the thread's messages whatever
	// the planner believes of the thread: with statistics from when it
	// was short (before autovacuum's ANALYZE after a bulk load), it read
	// all of the thread's messages for each slice, seconds at 100,000.
	lo, hi := ws[0].Seq, ws[0].Seq
	for _, w := range ws {
		lo, hi = min(lo, slices.Min(w.Turns)), max(hi, slices.Max(w.Turns))
	}
	return s.write(ctx, func(tx pgx.Tx) error {
		if _, err := findLiveThread(ctx, tx, userID, threadID, indexLock); err != nil {
			return err
		}
		turns := map[int64]agentmem.StoredTurn{}
		rows, err := tx.Query(ctx, `SELECT seq, name, content FROM messages
			WHERE user_id = $1 AND thread_id = $2 AND seq BETWEEN $3 AND $4 AND role IN ('user', 'assistant')`,
			pgx.QueryExecModeExec, userID, threadID, lo, hi)
		if err != nil {
			return fmt.Errorf("put windows: %w", err)
		}
		for rows.Next() {
			var (
				seq           int64
				name, content string
			)
			if err := rows.Scan(&seq, &name, &content); err != nil {
				rows.Close()
				return fmt.Errorf("put windows: %w", err)
			}
			turns[seq] = agentmem.StoredTurn{Key: seq, Words: agentmem.Words(agentmem.TurnText(name, content))}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("put windows: %w", err)
		}
		var (
			seqs, lens []int64
			nears      []string
		)
		for _, w := range ws {
			near, length, ok := agentmem.WindowRow(w, turns)
			if !ok {
				continue
			}
			seqs, nears, lens = append(seqs, w.Seq), append(nears, near), append(lens, int64(length))
		}
		if len(seqs) == 0 {
			return nil
		}
		_, err = tx.Exec(ctx, `INSERT INTO message_windows (user_id, thread_id, seq, near, len)
			SELECT $1, $2, w.seq, w.near, w.len FROM unnest($3::bigint[], $4::text[], $5::int[]) AS w(seq, near, len)
			ON CONFLICT (user_id, thread_id, seq) DO UPDATE SET near = excluded.near, len = excluded.len`,
			userID, threadID, seqs, nears, lens)
		if err != nil {
			return fmt.Errorf("put windows: %w", err)
		}
		return nil
	})
}
