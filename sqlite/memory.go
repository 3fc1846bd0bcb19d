package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentmem/agentmem"
)

const memoryColumns = `user_id, id, kind, text, category, confidence, importance, agent_id, thread_id, seq_from, seq_to,
	source, metadata, version, valid_from, invalid_at, superseded_by, created_at, updated_at, processed_at`

// memorySelect is what a read of memories selects: memoryColumns, then
// the memory's sources in order, as a JSON array of objects (read from
// memory_sources' primary key), so that a memory is one statement.
const memorySelect = memoryColumns + `, (SELECT json_group_array(json_object('thread_id', s.thread_id, 'seq_from', s.seq_from, 'seq_to', s.seq_to) ORDER BY s.pos)
	FROM memory_sources s WHERE s.user_id = memories.user_id AND s.memory_id = memories.id)`

// scanMemory scans a row of memorySelect.
func scanMemory(row interface{ Scan(...any) error }) (*agentmem.Memory, error) {
	var (
		m                           agentmem.Memory
		metadata, sources           string
		validFrom, created, updated int64
		invalid, processed          sql.NullInt64
	)
	if err := row.Scan(&m.UserID, &m.ID, &m.Kind, &m.Text, &m.Category, &m.Confidence, &m.Importance, &m.AgentID, &m.ThreadID,
		&m.SeqFrom, &m.SeqTo, &m.Source, &metadata, &m.Version, &validFrom, &invalid, &m.SupersededBy, &created, &updated, &processed, &sources); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(sources), &m.Sources); err != nil {
		return nil, fmt.Errorf("memory %s sources: %w", m.ID, err)
	}
	if len(m.Sources) == 0 {
		m.Sources = nil
	}
	m.Metadata = json.RawMessage(metadata)
	m.ValidFrom, m.InvalidAt = fromMicros(validFrom), fromNullMicros(invalid)
	m.CreatedAt, m.UpdatedAt = fromMicros(created), fromMicros(updated)
	m.ProcessedAt = fromNullMicros(processed)
	return &m, nil
}

func notFoundMemory(id string) error {
	return agentmem.Errorf(agentmem.ENOTFOUND, "Memory %q not found.", id)
}

// findMemory returns a memory of the user with its sources.
func findMemory(ctx context.Context, tx *sql.Tx, userID, id string) (*agentmem.Memory, error) {
	m, err := scanMemory(tx.QueryRowContext(ctx, `SELECT `+memorySelect+` FROM memories WHERE user_id = ? AND id = ?`, userID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFoundMemory(id)
	} else if err != nil {
		return nil, fmt.Errorf("find memory: %w", err)
	}
	return m, nil
}

// insertSource stores the last of m's Sources, which the caller has just
// added to them (Memory.AddSource): its pos is their count. m was read in
// the transaction, whose writes are the only ones (SQLite has one
// writer).
func insertSource(ctx context.Context, tx *sql.Tx, m *agentmem.Memory) error {
	r := m.Sources[len(m.Sources)-1]
	if _, err := tx.ExecContext(ctx, `INSERT INTO memory_sources (user_id, memory_id, thread_id, seq_from, seq_to, pos, invalid) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		m.UserID, m.ID, r.ThreadID, r.SeqFrom, r.SeqTo, len(m.Sources), !m.Valid()); err != nil {
		return fmt.Errorf("insert memory source: %w", err)
	}
	return nil
}

// deleteSources removes the sources of the user's memories ids.
func deleteSources(ctx context.Context, tx *sql.Tx, userID string, ids ...string) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM memory_sources WHERE user_id = ? AND memory_id`+inJSON, userID, jsonList(ids)); err != nil {
		return fmt.Errorf("delete memory sources: %w", err)
	}
	return nil
}

// insertChange records m's current version in its history.
func insertChange(ctx context.Context, tx *sql.Tx, userID string, c *agentmem.MemoryChange) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO memory_history (user_id, memory_id, version, op, text, category, confidence, importance,
		thread_id, seq_from, seq_to, reason, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		userID, c.MemoryID, c.Version, c.Op, c.Text, c.Category, c.Confidence, c.Importance, c.ThreadID, c.SeqFrom, c.SeqTo, c.Reason, micros(c.At))
	if err != nil {
		return fmt.Errorf("insert memory history: %w", err)
	}
	return nil
}

// insertUser records the user (see agentmem.UserStore.FindUserIDs).
func insertUser(ctx context.Context, tx *sql.Tx, userID string, at time.Time) error {
	if _, err := tx.ExecContext(ctx, `INSERT INTO users (user_id, created_at) VALUES (?, ?) ON CONFLICT DO NOTHING`, userID, micros(at)); err != nil {
		return fmt.Errorf("insert user: %w", err)
	}
	return nil
}

// insertMemory stores m, prepared (see agentmem.Memory.Prepare), and its
// history entry "add"; its user is recorded already (insertUser).
func insertMemory(ctx context.Context, tx *sql.Tx, m *agentmem.Memory) error {
	if err := insertMemoryRow(ctx, tx, m); err != nil {
		return err
	}
	return insertChange(ctx, tx, m.UserID, m.Change(agentmem.OpAdd, ""))
}

// insertMemoryRow stores m, validated (its Sources normalised), with its
// sources and without history.
func insertMemoryRow(ctx context.Context, tx *sql.Tx, m *agentmem.Memory) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO memories (`+memoryColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		m.UserID, m.ID, m.Kind, m.Text, m.Category, m.Confidence, m.Importance, m.AgentID, m.ThreadID, m.SeqFrom, m.SeqTo,
		m.Source, string(m.Metadata), m.Version, micros(m.ValidFrom), nullMicros(m.InvalidAt), m.SupersededBy, micros(m.CreatedAt), micros(m.UpdatedAt),
		nullMicros(m.ProcessedAt))
	if agentmem.ErrorCode(formatError(err)) == agentmem.ECONFLICT {
		return agentmem.Errorf(agentmem.ECONFLICT, "Memory %q already exists.", m.ID)
	} else if err != nil {
		return fmt.Errorf("insert memory: %w", err)
	}
	for i, r := range m.Sources {
		if _, err := tx.ExecContext(ctx, `INSERT INTO memory_sources (user_id, memory_id, thread_id, seq_from, seq_to, pos, invalid) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			m.UserID, m.ID, r.ThreadID, r.SeqFrom, r.SeqTo, i+1, !m.Valid()); err != nil {
			return fmt.Errorf("insert memory source: %w", err)
		}
	}
	return nil
}

// CreateMemory implements agentmem.MemoryStore.
func (s *Store) CreateMemory(ctx context.Context, m *agentmem.Memory) error {
	if err := m.Prepare(s.now()); err != nil {
		return err
	}
	return s.write(ctx, func(tx *sql.Tx) error {
		if err := insertUser(ctx, tx, m.UserID, m.CreatedAt); err != nil {
			return err
		}
		return insertMemory(ctx, tx, m)
	})
}

// FindMemoryByID implements agentmem.MemoryStore.
func (s *Store) FindMemoryByID(ctx context.Context, userID, id string) (*agentmem.Memory, error) {
	var m *agentmem.Memory
	err := s.read(ctx, func(tx *sql.Tx) (err error) {
		m, err = findMemory(ctx, tx, userID, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// FindMemories implements agentmem.MemoryStore.
//
//	SELECT … FROM memories WHERE user_id = ? [AND invalid_at IS NULL] [AND kind = ?] [AND category = ?]
//	  [AND agent_id = ?] [AND thread_id = ?] [AND processed_at IS [NOT] NULL] [AND updated_at > ?]
//	  [AND (updated_at, id) < (cursor)]
//	ORDER BY updated_at DESC, id DESC LIMIT n+1
//
// walks memories_user_updated from the cursor, filtering the rows it
// reads.
func (s *Store) FindMemories(ctx context.Context, userID string, f agentmem.MemoryFilter) ([]*agentmem.Memory, string, error) {
	limit, err := agentmem.PageSize(f.Limit)
	if err != nil {
		return nil, "", err
	}
	if err := f.Validate(); err != nil {
		return nil, "", err
	}
	where, args := []string{"user_id = ?"}, []any{userID}
	if !f.IncludeInvalid {
		where = append(where, "invalid_at IS NULL")
	}
	for _, c := range []struct {
		col string
		v   *string
	}{{"kind", f.Kind}, {"category", f.Category}, {"agent_id", f.AgentID}, {"thread_id", f.ThreadID}} {
		if c.v != nil {
			where, args = append(where, c.col+" = ?"), append(args, *c.v)
		}
	}
	if f.Processed != nil {
		cond := "processed_at IS NULL"
		if *f.Processed {
			cond = "processed_at IS NOT NULL"
		}
		where = append(where, cond)
	}
	if f.UpdatedAfter != nil {
		where, args = append(where, "updated_at > ?"), append(args, micros(*f.UpdatedAfter))
	}
	if f.Cursor != "" {
		var c agentmem.MemoryCursor
		if err := agentmem.DecodeCursor(f.Cursor, agentmem.ListOf(agentmem.ListMemories, userID), &c); err != nil {
			return nil, "", err
		}
		where, args = append(where, "(updated_at, id) < (?, ?)"), append(args, c.UpdatedAt, c.ID)
	}
	var mems []*agentmem.Memory
	err = s.read(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT `+memorySelect+` FROM memories WHERE `+strings.Join(where, " AND ")+
			` ORDER BY updated_at DESC, id DESC LIMIT ?`, append(args, limit+1)...)
		if err != nil {
			return fmt.Errorf("find memories: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			m, err := scanMemory(rows)
			if err != nil {
				return fmt.Errorf("scan memory: %w", err)
			}
			mems = append(mems, m)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, "", err
	}
	mems, next := agentmem.MemoryPage(mems, limit, agentmem.ListOf(agentmem.ListMemories, userID))
	return mems, next, nil
}

// updateMemory writes every mutable field of m.
func updateMemory(ctx context.Context, tx *sql.Tx, m *agentmem.Memory) error {
	_, err := tx.ExecContext(ctx, `UPDATE memories SET text = ?, category = ?, confidence = ?, importance = ?, thread_id = ?, seq_from = ?, seq_to = ?,
		metadata = ?, version = ?, invalid_at = ?, superseded_by = ?, updated_at = ?, processed_at = ? WHERE user_id = ? AND id = ?`,
		m.Text, m.Category, m.Confidence, m.Importance, m.ThreadID, m.SeqFrom, m.SeqTo,
		string(m.Metadata), m.Version, nullMicros(m.InvalidAt), m.SupersededBy, micros(m.UpdatedAt), nullMicros(m.ProcessedAt), m.UserID, m.ID)
	if err != nil {
		return fmt.Errorf("update memory: %w", err)
	}
	return nil
}

// UpdateMemory implements agentmem.MemoryStore.
func (s *Store) UpdateMemory(ctx context.Context, userID, id string, upd agentmem.MemoryUpdate) (*agentmem.Memory, error) {
	if err := upd.Validate(); err != nil {
		return nil, err
	}
	var m *agentmem.Memory
	err := s.write(ctx, func(tx *sql.Tx) (err error) {
		m, err = s.updateMemoryTx(ctx, tx, userID, id, upd)
		return err
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// updateMemoryTx is UpdateMemory in tx.
func (s *Store) updateMemoryTx(ctx context.Context, tx *sql.Tx, userID, id string, upd agentmem.MemoryUpdate) (*agentmem.Memory, error) {
	m, err := findMemory(ctx, tx, userID, id)
	if err != nil {
		return nil, err
	}
	n := len(m.Sources)
	if err := m.ApplyUpdate(upd, s.now()); err != nil {
		return nil, err
	}
	if err := updateMemory(ctx, tx, m); err != nil {
		return nil, err
	}
	if len(m.Sources) > n { // the update's turns, new among them
		if err := insertSource(ctx, tx, m); err != nil {
			return nil, err
		}
	}
	return m, insertChange(ctx, tx, userID, m.Change(agentmem.OpUpdate, upd.Reason))
}

// InvalidateMemory implements agentmem.MemoryStore.
func (s *Store) InvalidateMemory(ctx context.Context, userID, id, supersededBy, reason string) (*agentmem.Memory, error) {
	if err := agentmem.ValidateInvalidation(id, supersededBy, reason); err != nil {
		return nil, err
	}
	var m *agentmem.Memory
	err := s.write(ctx, func(tx *sql.Tx) (err error) {
		m, err = s.invalidateMemoryTx(ctx, tx, userID, id, supersededBy, reason)
		return err
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// invalidateMemoryTx is InvalidateMemory in tx.
func (s *Store) invalidateMemoryTx(ctx context.Context, tx *sql.Tx, userID, id, supersededBy, reason string) (*agentmem.Memory, error) {
	m, err := findMemory(ctx, tx, userID, id)
	if err != nil {
		return nil, err
	}
	if !m.Invalidate(supersededBy, s.now()) {
		return m, nil
	}
	if err := updateMemory(ctx, tx, m); err != nil {
		return nil, err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE memory_sources SET invalid = 1 WHERE user_id = ? AND memory_id = ?`, userID, id); err != nil {
		return nil, fmt.Errorf("invalidate memory sources: %w", err)
	}
	return m, insertChange(ctx, tx, userID, m.Change(agentmem.OpInvalidate, reason))
}

// addSourceTx is a MemoryWrite's AddSource in tx.
func addSourceTx(ctx context.Context, tx *sql.Tx, userID, id string, r agentmem.ThreadRange) (*agentmem.Memory, error) {
	m, err := findMemory(ctx, tx, userID, id)
	if err != nil {
		return nil, err
	}
	if !m.AddSource(r) {
		return m, nil
	}
	return m, insertSource(ctx, tx, m)
}

// WriteMemories implements agentmem.MemoryStore.
func (s *Store) WriteMemories(ctx context.Context, userID string, ws []agentmem.MemoryWrite) ([]*agentmem.Memory, error) {
	now := s.now()
	for i := range ws {
		if err := ws[i].Validate(userID, now); err != nil {
			return nil, err
		}
	}
	out := make([]*agentmem.Memory, len(ws))
	err := s.write(ctx, func(tx *sql.Tx) error {
		user := false
		for i, w := range ws {
			var err error
			switch {
			case w.Create != nil:
				if !user {
					if err := insertUser(ctx, tx, userID, now); err != nil {
						return err
					}
					user = true
				}
				out[i], err = w.Create, insertMemory(ctx, tx, w.Create)
			case w.Update != nil:
				out[i], err = s.updateMemoryTx(ctx, tx, userID, w.ID, *w.Update)
			case w.AddSource != nil:
				out[i], err = addSourceTx(ctx, tx, userID, w.ID, *w.AddSource)
			default:
				out[i], err = s.invalidateMemoryTx(ctx, tx, userID, w.ID, w.Invalidate.SupersededBy, w.Invalidate.Reason)
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// DeleteMemory implements agentmem.MemoryStore.
func (s *Store) DeleteMemory(ctx context.Context, userID, id string) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM memories WHERE user_id = ? AND id = ?`, userID, id)
		if err != nil {
			return fmt.Errorf("delete memory: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return notFoundMemory(id)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM memory_history WHERE user_id = ? AND memory_id = ?`, userID, id); err != nil {
			return fmt.Errorf("delete memory history: %w", err)
		}
		if err := deleteSources(ctx, tx, userID, id); err != nil {
			return err
		}
		return deleteVectors(ctx, tx, userID, agentmem.ScopeMemories, []string{id})
	})
}

// FindMemoryHistory implements agentmem.MemoryStore.
func (s *Store) FindMemoryHistory(ctx context.Context, userID, id string) ([]*agentmem.MemoryChange, error) {
	var changes []*agentmem.MemoryChange
	err := s.read(ctx, func(tx *sql.Tx) error {
		if _, err := findMemory(ctx, tx, userID, id); err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `SELECT memory_id, version, op, text, category, confidence, importance, thread_id, seq_from, seq_to, reason, at
			FROM memory_history WHERE user_id = ? AND memory_id = ? ORDER BY version`, userID, id)
		if err != nil {
			return fmt.Errorf("find memory history: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var (
				c  agentmem.MemoryChange
				at int64
			)
			if err := rows.Scan(&c.MemoryID, &c.Version, &c.Op, &c.Text, &c.Category, &c.Confidence, &c.Importance,
				&c.ThreadID, &c.SeqFrom, &c.SeqTo, &c.Reason, &at); err != nil {
				return fmt.Errorf("scan memory history: %w", err)
			}
			c.At = fromMicros(at)
			changes = append(changes, &c)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	return changes, nil
}

// FindMemorySources implements agentmem.MemoryStore.
//
//	SELECT DISTINCT m.id, src.…, m.…, s.text FROM json_each(ranges) r
//	JOIN memory_sources src ON src.thread_id = r.thread AND src.seq_from <= r.seq_to AND src.seq_to >= r.seq_from
//	JOIN memories m ON m.id = src.memory_id
//	LEFT JOIN memories s ON s.id = m.superseded_by
//	WHERE EXISTS (a source i of an invalidated memory in r.thread with i.seq_from <= r.seq_to AND i.seq_to >= r.seq_from)
//
// (every table by the user). The EXISTS probes memory_sources_invalid,
// which holds the sources of invalidated memories only, first (INDEXED
// BY: the planner would rather walk memory_sources_thread): a range none
// of them overlaps costs that probe; the others read the sources of
// their thread from memory_sources_thread. CROSS JOIN keeps the ranges
// outside: otherwise the planner may walk every source of the user and
// probe the ranges.
func (s *Store) FindMemorySources(ctx context.Context, userID string, ranges []agentmem.ThreadRange) ([]agentmem.MemorySource, error) {
	if err := agentmem.ValidateMemorySources(ranges); err != nil {
		return nil, err
	}
	out := []agentmem.MemorySource{}
	if len(ranges) == 0 {
		return out, nil
	}
	rs := make([][]any, len(ranges))
	for i, r := range ranges {
		rs[i] = []any{r.ThreadID, r.SeqFrom, r.SeqTo}
	}
	js, err := json.Marshal(rs)
	if err != nil {
		return nil, err
	}
	err = s.read(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `WITH r AS MATERIALIZED (
				SELECT q.thread_id, q.seq_from, q.seq_to FROM (SELECT json_extract(value, '$[0]') AS thread_id, json_extract(value, '$[1]') AS seq_from,
					json_extract(value, '$[2]') AS seq_to FROM json_each(?)) q
				WHERE EXISTS (SELECT 1 FROM memory_sources i INDEXED BY memory_sources_invalid WHERE i.user_id = ? AND i.thread_id = q.thread_id AND i.invalid = 1
					AND i.seq_from <= q.seq_to AND i.seq_to >= q.seq_from))
			SELECT DISTINCT m.id, src.thread_id, src.seq_from, src.seq_to, m.invalid_at, m.superseded_by, COALESCE(s.text, ''), m.text
			FROM r CROSS JOIN memory_sources src ON src.user_id = ? AND src.thread_id = r.thread_id AND src.seq_from <= r.seq_to AND src.seq_to >= r.seq_from
			JOIN memories m ON m.user_id = src.user_id AND m.id = src.memory_id
			LEFT JOIN memories s ON s.user_id = m.user_id AND s.id = m.superseded_by AND m.superseded_by <> ''`, string(js), userID, userID)
		if err != nil {
			return fmt.Errorf("find memory sources: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var (
				src     agentmem.MemorySource
				invalid sql.NullInt64
			)
			if err := rows.Scan(&src.ID, &src.ThreadID, &src.SeqFrom, &src.SeqTo, &invalid, &src.SupersededBy, &src.SupersededText, &src.Text); err != nil {
				return fmt.Errorf("scan memory source: %w", err)
			}
			src.InvalidAt = fromNullMicros(invalid)
			out = append(out, src)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
