package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/jackc/pgx/v5"
)

const memoryColumns = `user_id, id, kind, text, category, confidence, importance, agent_id, thread_id, seq_from, seq_to,
	source, metadata, version, valid_from, invalid_at, superseded_by, created_at, updated_at, processed_at`

// memorySelect is what a read of memories selects: memoryColumns, then
// the memory's sources in order, as a JSON array of objects (read from
// memory_sources' primary key), so that a memory is one statement.
const memorySelect = memoryColumns + `, (SELECT COALESCE(json_agg(json_build_object('thread_id', s.thread_id, 'seq_from', s.seq_from, 'seq_to', s.seq_to) ORDER BY s.pos), '[]')
	FROM memory_sources s WHERE s.user_id = memories.user_id AND s.memory_id = memories.id)`

// scanMemory scans a row of memorySelect.
func scanMemory(row interface{ Scan(...any) error }) (*agentmem.Memory, error) {
	var (
		m                  agentmem.Memory
		metadata, sources  []byte
		invalid, processed *time.Time
	)
	if err := row.Scan(&m.UserID, &m.ID, &m.Kind, &m.Text, &m.Category, &m.Confidence, &m.Importance, &m.AgentID, &m.ThreadID,
		&m.SeqFrom, &m.SeqTo, &m.Source, &metadata, &m.Version, &m.ValidFrom, &invalid, &m.SupersededBy, &m.CreatedAt, &m.UpdatedAt, &processed, &sources); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(sources, &m.Sources); err != nil {
		return nil, fmt.Errorf("memory %s sources: %w", m.ID, err)
	}
	if len(m.Sources) == 0 {
		m.Sources = nil
	}
	m.Metadata = jsonValue(metadata)
	m.ValidFrom, m.InvalidAt = m.ValidFrom.UTC(), utc(invalid)
	m.CreatedAt, m.UpdatedAt = m.CreatedAt.UTC(), m.UpdatedAt.UTC()
	m.ProcessedAt = utc(processed)
	return &m, nil
}

func notFoundMemory(id string) error {
	return agentmem.Errorf(agentmem.ENOTFOUND, "Memory %q not found.", id)
}

// findMemory returns a memory of the user with its sources; lock is
// noLock, forKeyShare or forUpdate.
func findMemory(ctx context.Context, tx pgx.Tx, userID, id, lock string) (*agentmem.Memory, error) {
	m, err := scanMemory(tx.QueryRow(ctx, `SELECT `+memorySelect+` FROM memories WHERE user_id = $1 AND id = $2`+lock, userID, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFoundMemory(id)
	} else if err != nil {
		return nil, fmt.Errorf("find memory: %w", err)
	}
	return m, nil
}

// insertSource stores the last of m's Sources, which the caller has just
// added to them (Memory.AddSource): its pos is their count. m was read in
// the transaction with its row locked (forUpdate, or forKeyShare by a
// consolidation, of which a user's run one at a time), so no other
// writer takes that pos.
func insertSource(ctx context.Context, tx pgx.Tx, m *agentmem.Memory) error {
	r := m.Sources[len(m.Sources)-1]
	if _, err := tx.Exec(ctx, `INSERT INTO memory_sources (user_id, memory_id, thread_id, seq_from, seq_to, pos, invalid) VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT DO NOTHING`, m.UserID, m.ID, r.ThreadID, r.SeqFrom, r.SeqTo, len(m.Sources), !m.Valid()); err != nil {
		return fmt.Errorf("insert memory source: %w", err)
	}
	return nil
}

// insertChange records m's current version in its history.
func insertChange(ctx context.Context, tx pgx.Tx, userID string, c *agentmem.MemoryChange) error {
	_, err := tx.Exec(ctx, `INSERT INTO memory_history (user_id, memory_id, version, op, text, category, confidence, importance,
		thread_id, seq_from, seq_to, reason, at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
		userID, c.MemoryID, c.Version, c.Op, c.Text, c.Category, c.Confidence, c.Importance, c.ThreadID, c.SeqFrom, c.SeqTo, c.Reason, c.At)
	if err != nil {
		return fmt.Errorf("insert memory history: %w", err)
	}
	return nil
}

// insertUser records the user as insertThread does, locking the users
// row: whatever the transaction then writes for the user is not written
// while DeleteUser, which locks that row first, is erasing them.
func insertUser(ctx context.Context, tx pgx.Tx, userID string, at time.Time) error {
	if _, err := tx.Exec(ctx, `INSERT INTO users (user_id, created_at) VALUES ($1, $2)
		ON CONFLICT (user_id) DO UPDATE SET created_at = users.created_at WHERE false`, userID, at); err != nil {
		return fmt.Errorf("insert user: %w", err)
	}
	return nil
}

// insertMemory stores m, prepared (see agentmem.Memory.Prepare), and its
// history entry "add"; its user is recorded already (insertUser).
func insertMemory(ctx context.Context, tx pgx.Tx, m *agentmem.Memory) error {
	if err := insertMemoryRow(ctx, tx, m); err != nil {
		return err
	}
	return insertChange(ctx, tx, m.UserID, m.Change(agentmem.OpAdd, ""))
}

// insertMemoryRow stores m, validated (its Sources normalised), with its
// sources and without history.
func insertMemoryRow(ctx context.Context, tx pgx.Tx, m *agentmem.Memory) error {
	_, err := tx.Exec(ctx, `INSERT INTO memories (`+memoryColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20)`,
		m.UserID, m.ID, m.Kind, m.Text, m.Category, m.Confidence, m.Importance, m.AgentID, m.ThreadID, m.SeqFrom, m.SeqTo,
		m.Source, string(m.Metadata), m.Version, m.ValidFrom, m.InvalidAt, m.SupersededBy, m.CreatedAt, m.UpdatedAt, m.ProcessedAt)
	if isUniqueViolation(err) {
		return agentmem.Errorf(agentmem.ECONFLICT, "Memory %q already exists.", m.ID)
	} else if err != nil {
		return fmt.Errorf("insert memory: %w", err)
	}
	for i, r := range m.Sources {
		if _, err := tx.Exec(ctx, `INSERT INTO memory_sources (user_id, memory_id, thread_id, seq_from, seq_to, pos, invalid) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
			m.UserID, m.ID, r.ThreadID, r.SeqFrom, r.SeqTo, i+1, !m.Valid()); err != nil {
			return fmt.Errorf("insert memory source: %w", err)
		}
	}
	return nil
}

// CreateMemory implements agentmem.MemoryStore. The user is recorded
// first (insertUser), so that no memory is created while DeleteUser is
// erasing the user.
func (s *Store) CreateMemory(ctx context.Context, m *agentmem.Memory) error {
	if err := m.Prepare(s.now()); err != nil {
		return err
	}
	return s.write(ctx, func(tx pgx.Tx) error {
		if err := insertUser(ctx, tx, m.UserID, m.CreatedAt); err != nil {
			return err
		}
		return insertMemory(ctx, tx, m)
	})
}

// FindMemoryByID implements agentmem.MemoryStore.
func (s *Store) FindMemoryByID(ctx context.Context, userID, id string) (*agentmem.Memory, error) {
	var m *agentmem.Memory
	err := s.read(ctx, func(tx pgx.Tx) (err error) {
		m, err = findMemory(ctx, tx, userID, id, noLock)
		return err
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// FindMemories implements agentmem.MemoryStore.
//
//	SELECT … FROM memories WHERE user_id = $1 [AND invalid_at IS NULL] [AND kind = $n] [AND category = $n]
//	  [AND agent_id = $n] [AND thread_id = $n] [AND processed_at IS [NOT] NULL] [AND updated_at > $n]
//	  [AND (updated_at, id) < ($n, $m)]
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
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	where := []string{"user_id = " + arg(userID)}
	if !f.IncludeInvalid {
		where = append(where, "invalid_at IS NULL")
	}
	for _, c := range []struct {
		col string
		v   *string
	}{{"kind", f.Kind}, {"category", f.Category}, {"agent_id", f.AgentID}, {"thread_id", f.ThreadID}} {
		if c.v != nil {
			where = append(where, c.col+" = "+arg(*c.v))
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
		where = append(where, "updated_at > "+arg(agentmem.Timestamp(*f.UpdatedAfter)))
	}
	if f.Cursor != "" {
		var c agentmem.MemoryCursor
		if err := agentmem.DecodeCursor(f.Cursor, agentmem.ListOf(agentmem.ListMemories, userID), &c); err != nil {
			return nil, "", err
		}
		where = append(where, "(updated_at, id) < ("+arg(time.UnixMicro(c.UpdatedAt).UTC())+", "+arg(c.ID)+")")
	}
	q := `SELECT ` + memorySelect + ` FROM memories WHERE ` + strings.Join(where, " AND ") +
		` ORDER BY updated_at DESC, id DESC LIMIT ` + arg(limit+1)
	var mems []*agentmem.Memory
	err = s.read(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, q, args...)
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
func updateMemory(ctx context.Context, tx pgx.Tx, m *agentmem.Memory) error {
	_, err := tx.Exec(ctx, `UPDATE memories SET text = $1, category = $2, confidence = $3, importance = $4, thread_id = $5, seq_from = $6, seq_to = $7,
		metadata = $8, version = $9, invalid_at = $10, superseded_by = $11, updated_at = $12, processed_at = $13 WHERE user_id = $14 AND id = $15`,
		m.Text, m.Category, m.Confidence, m.Importance, m.ThreadID, m.SeqFrom, m.SeqTo,
		string(m.Metadata), m.Version, m.InvalidAt, m.SupersededBy, m.UpdatedAt, m.ProcessedAt, m.UserID, m.ID)
	if err != nil {
		return fmt.Errorf("update memory: %w", err)
	}
	return nil
}

// UpdateMemory implements agentmem.MemoryStore. The memory's row is locked
// first, so concurrent changes of a memory take turns and number their
// versions one after the other.
func (s *Store) UpdateMemory(ctx context.Context, userID, id string, upd agentmem.MemoryUpdate) (*agentmem.Memory, error) {
	if err := upd.Validate(); err != nil {
		return nil, err
	}
	var m *agentmem.Memory
	err := s.write(ctx, func(tx pgx.Tx) (err error) {
		m, err = s.updateMemoryTx(ctx, tx, userID, id, upd)
		return err
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// updateMemoryTx is UpdateMemory in tx.
func (s *Store) updateMemoryTx(ctx context.Context, tx pgx.Tx, userID, id string, upd agentmem.MemoryUpdate) (*agentmem.Memory, error) {
	m, err := findMemory(ctx, tx, userID, id, forUpdate)
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

// InvalidateMemory implements agentmem.MemoryStore, locking as
// UpdateMemory does.
func (s *Store) InvalidateMemory(ctx context.Context, userID, id, supersededBy, reason string) (*agentmem.Memory, error) {
	if err := agentmem.ValidateInvalidation(id, supersededBy, reason); err != nil {
		return nil, err
	}
	var m *agentmem.Memory
	err := s.write(ctx, func(tx pgx.Tx) (err error) {
		m, err = s.invalidateMemoryTx(ctx, tx, userID, id, supersededBy, reason)
		return err
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// invalidateMemoryTx is InvalidateMemory in tx.
func (s *Store) invalidateMemoryTx(ctx context.Context, tx pgx.Tx, userID, id, supersededBy, reason string) (*agentmem.Memory, error) {
	m, err := findMemory(ctx, tx, userID, id, forUpdate)
	if err != nil {
		return nil, err
	}
	if !m.Invalidate(supersededBy, s.now()) {
		return m, nil
	}
	if err := updateMemory(ctx, tx, m); err != nil {
		return nil, err
	}
	if _, err := tx.Exec(ctx, `UPDATE memory_sources SET invalid = true WHERE user_id = $1 AND memory_id = $2`, userID, id); err != nil {
		return nil, fmt.Errorf("invalidate memory sources: %w", err)
	}
	return m, insertChange(ctx, tx, userID, m.Change(agentmem.OpInvalidate, reason))
}

// addSourceTx is a MemoryWrite's AddSource in tx. It locks the memory's
// row forKeyShare, which a deletion of the memory waits for (and so
// deletes the source too) but no update does: the profile's marking a
// batch of memories processed (FOR NO KEY UPDATE) would otherwise
// deadlock with a consolidation's batch of repeats. Consolidations of a
// user run one at a time (their jobs are serial), so two sources are
// not given one pos (see insertSource).
func addSourceTx(ctx context.Context, tx pgx.Tx, userID, id string, r agentmem.ThreadRange) (*agentmem.Memory, error) {
	m, err := findMemory(ctx, tx, userID, id, forKeyShare)
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
	creates := slices.ContainsFunc(ws, func(w agentmem.MemoryWrite) bool { return w.Create != nil })
	out := make([]*agentmem.Memory, len(ws))
	// Run again if a deadlock's victim: its memories' rows are locked in
	// the order of ws, a profile's marks in another (see PutProfile).
	err := s.writeRetrying(ctx, func(tx pgx.Tx) error {
		// The user's row before any memory's, in the order PutProfile
		// locks them: taken after a memory's, it waited for a profile that
		// waited for that memory (a deadlock).
		if creates {
			if err := insertUser(ctx, tx, userID, now); err != nil {
				return err
			}
		}
		for i, w := range ws {
			var err error
			switch {
			case w.Create != nil:
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

// DeleteMemory implements agentmem.MemoryStore. It locks the user's
// vector versions before the memory's row, in the order DeleteUser takes
// them (see lockVectorVersions).
func (s *Store) DeleteMemory(ctx context.Context, userID, id string) error {
	return s.writeRetrying(ctx, func(tx pgx.Tx) error {
		if err := lockVectorVersions(ctx, tx, userID); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `DELETE FROM memories WHERE user_id = $1 AND id = $2`, userID, id)
		if err != nil {
			return fmt.Errorf("delete memory: %w", err)
		}
		if tag.RowsAffected() == 0 {
			return notFoundMemory(id)
		}
		if _, err := tx.Exec(ctx, `DELETE FROM memory_history WHERE user_id = $1 AND memory_id = $2`, userID, id); err != nil {
			return fmt.Errorf("delete memory history: %w", err)
		}
		if _, err := tx.Exec(ctx, `DELETE FROM memory_sources WHERE user_id = $1 AND memory_id = $2`, userID, id); err != nil {
			return fmt.Errorf("delete memory sources: %w", err)
		}
		return deleteVectors(ctx, tx, userID, agentmem.ScopeMemories, []string{id})
	})
}

// FindMemoryHistory implements agentmem.MemoryStore.
func (s *Store) FindMemoryHistory(ctx context.Context, userID, id string) ([]*agentmem.MemoryChange, error) {
	var changes []*agentmem.MemoryChange
	err := s.read(ctx, func(tx pgx.Tx) error {
		if _, err := findMemory(ctx, tx, userID, id, noLock); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT memory_id, version, op, text, category, confidence, importance, thread_id, seq_from, seq_to, reason, at
			FROM memory_history WHERE user_id = $1 AND memory_id = $2 ORDER BY version`, userID, id)
		if err != nil {
			return fmt.Errorf("find memory history: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var c agentmem.MemoryChange
			if err := rows.Scan(&c.MemoryID, &c.Version, &c.Op, &c.Text, &c.Category, &c.Confidence, &c.Importance,
				&c.ThreadID, &c.SeqFrom, &c.SeqTo, &c.Reason, &c.At); err != nil {
				return fmt.Errorf("scan memory history: %w", err)
			}
			c.At = c.At.UTC()
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
//	SELECT DISTINCT m.id, src.…, m.…, s.text FROM unnest(threads, froms, tos) r
//	JOIN memory_sources src ON src.thread_id = r.thread AND src.seq_from <= r.seq_to AND src.seq_to >= r.seq_from
//	JOIN memories m ON m.id = src.memory_id
//	LEFT JOIN memories s ON s.id = m.superseded_by
//	WHERE EXISTS (a source i of an invalidated memory in r.thread with i.seq_from <= r.seq_to AND i.seq_to >= r.seq_from)
//
// (every table by the user). The EXISTS probes memory_sources_invalid,
// which holds the sources of invalidated memories only, first: a range
// none of them overlaps costs that probe; the others read the sources of
// their thread from memory_sources_thread.
func (s *Store) FindMemorySources(ctx context.Context, userID string, ranges []agentmem.ThreadRange) ([]agentmem.MemorySource, error) {
	if err := agentmem.ValidateMemorySources(ranges); err != nil {
		return nil, err
	}
	out := []agentmem.MemorySource{}
	if len(ranges) == 0 {
		return out, nil
	}
	threads, froms, tos := make([]string, len(ranges)), make([]int64, len(ranges)), make([]int64, len(ranges))
	for i, r := range ranges {
		threads[i], froms[i], tos[i] = r.ThreadID, r.SeqFrom, r.SeqTo
	}
	err := s.read(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `WITH r AS MATERIALIZED (
				SELECT q.thread_id, q.seq_from, q.seq_to FROM unnest($2::text[], $3::bigint[], $4::bigint[]) AS q(thread_id, seq_from, seq_to)
				WHERE EXISTS (SELECT 1 FROM memory_sources i WHERE i.user_id = $1 AND i.thread_id = q.thread_id AND i.invalid
					AND i.seq_from <= q.seq_to AND i.seq_to >= q.seq_from))
			SELECT DISTINCT m.id, src.thread_id, src.seq_from, src.seq_to, m.invalid_at, m.superseded_by, COALESCE(s.text, ''), m.text
			FROM r JOIN memory_sources src ON src.user_id = $1 AND src.thread_id = r.thread_id AND src.seq_from <= r.seq_to AND src.seq_to >= r.seq_from
			JOIN memories m ON m.user_id = src.user_id AND m.id = src.memory_id
			LEFT JOIN memories s ON s.user_id = m.user_id AND s.id = m.superseded_by AND m.superseded_by <> ''`, userID, threads, froms, tos)
		if err != nil {
			return fmt.Errorf("find memory sources: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var src agentmem.MemorySource
			if err := rows.Scan(&src.ID, &src.ThreadID, &src.SeqFrom, &src.SeqTo, &src.InvalidAt, &src.SupersededBy, &src.SupersededText, &src.Text); err != nil {
				return fmt.Errorf("scan memory source: %w", err)
			}
			if src.InvalidAt != nil {
				t := src.InvalidAt.UTC()
				src.InvalidAt = &t
			}
			out = append(out, src)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
