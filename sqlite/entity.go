package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/agentmem/agentmem"
)

const entityColumns = `user_id, id, name, name_key, type, aliases, created_at, updated_at`

func scanEntity(row interface{ Scan(...any) error }, extra ...any) (*agentmem.Entity, error) {
	var (
		e                agentmem.Entity
		key, aliases     string
		created, updated int64
	)
	if err := row.Scan(append([]any{&e.UserID, &e.ID, &e.Name, &key, &e.Type, &aliases, &created, &updated}, extra...)...); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(aliases), &e.Aliases); err != nil {
		return nil, fmt.Errorf("entity %s aliases: %w", e.ID, err)
	}
	e.CreatedAt, e.UpdatedAt = fromMicros(created), fromMicros(updated)
	return &e, nil
}

func notFoundEntity(id string) error {
	return agentmem.Errorf(agentmem.ENOTFOUND, "Entity %q not found.", id)
}

func findEntity(ctx context.Context, tx *sql.Tx, userID, id string) (*agentmem.Entity, error) {
	e, err := scanEntity(tx.QueryRowContext(ctx, `SELECT `+entityColumns+` FROM entities WHERE user_id = ? AND id = ?`, userID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFoundEntity(id)
	} else if err != nil {
		return nil, fmt.Errorf("find entity: %w", err)
	}
	return e, nil
}

// writeEntity inserts e, or updates it when update is set, and rewrites
// the keys that find it.
func writeEntity(ctx context.Context, tx *sql.Tx, e *agentmem.Entity, update bool) error {
	nameKey, aliasKeys := e.Keys()
	aliases, _ := json.Marshal(e.Aliases)
	var err error
	if update {
		_, err = tx.ExecContext(ctx, `UPDATE entities SET name = ?, name_key = ?, type = ?, aliases = ?, updated_at = ? WHERE user_id = ? AND id = ?`,
			e.Name, nameKey, e.Type, string(aliases), micros(e.UpdatedAt), e.UserID, e.ID)
	} else {
		_, err = tx.ExecContext(ctx, `INSERT INTO entities (`+entityColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
			e.UserID, e.ID, e.Name, nameKey, e.Type, string(aliases), micros(e.CreatedAt), micros(e.UpdatedAt))
	}
	if agentmem.ErrorCode(formatError(err)) == agentmem.ECONFLICT {
		if update {
			return agentmem.Errorf(agentmem.ECONFLICT, "Another entity is named %q.", e.Name)
		}
		return agentmem.Errorf(agentmem.ECONFLICT, "Entity %q already exists.", e.ID)
	} else if err != nil {
		return fmt.Errorf("write entity: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM entity_names WHERE user_id = ? AND entity_id = ?`, e.UserID, e.ID); err != nil {
		return fmt.Errorf("delete entity names: %w", err)
	}
	st, err := tx.PrepareContext(ctx, `INSERT INTO entity_names (user_id, key, entity_id, is_name) VALUES (?, ?, ?, ?)`)
	if err != nil {
		return fmt.Errorf("insert entity names: %w", err)
	}
	defer st.Close()
	if _, err := st.ExecContext(ctx, e.UserID, nameKey, e.ID, 1); err != nil {
		return fmt.Errorf("insert entity names: %w", err)
	}
	for _, k := range aliasKeys {
		if _, err := st.ExecContext(ctx, e.UserID, k, e.ID, 0); err != nil {
			return fmt.Errorf("insert entity names: %w", err)
		}
	}
	return nil
}

// PutEntities implements agentmem.EntityStore.
func (s *Store) PutEntities(ctx context.Context, userID string, es []*agentmem.Entity) error {
	for _, e := range es {
		e.UserID = userID
		if err := e.Validate(); err != nil {
			return err
		}
	}
	out := make([]*agentmem.Entity, len(es))
	err := s.write(ctx, func(tx *sql.Tx) error {
		now := s.now()
		if _, err := tx.ExecContext(ctx, `INSERT INTO users (user_id, created_at) VALUES (?, ?) ON CONFLICT DO NOTHING`, userID, micros(now)); err != nil {
			return fmt.Errorf("insert user: %w", err)
		}
		for i, in := range es {
			e, err := scanEntity(tx.QueryRowContext(ctx, `SELECT `+entityColumns+` FROM entities WHERE user_id = ? AND name_key = ?`,
				userID, agentmem.EntityKey(in.Name)))
			switch {
			case errors.Is(err, sql.ErrNoRows):
				e = &agentmem.Entity{UserID: userID, ID: in.ID, Name: in.Name, Type: in.Type, Aliases: in.Aliases}
				if err := e.Prepare(now); err != nil {
					return err
				}
				if err := writeEntity(ctx, tx, e, false); err != nil {
					return err
				}
			case err != nil:
				return fmt.Errorf("find entity: %w", err)
			case in.ID != "" && in.ID != e.ID:
				return agentmem.Errorf(agentmem.ECONFLICT, "Entity %q is named %q already; put it with that id or none.", e.ID, e.Name)
			default:
				if e.Merge(in, now) {
					if err := writeEntity(ctx, tx, e, true); err != nil {
						return err
					}
				}
			}
			out[i] = e
		}
		return nil
	})
	if err != nil {
		return err
	}
	for i, e := range es {
		*e = *out[i]
	}
	return nil
}

// FindEntityByID implements agentmem.EntityStore.
func (s *Store) FindEntityByID(ctx context.Context, userID, id string) (*agentmem.Entity, error) {
	var e *agentmem.Entity
	err := s.read(ctx, func(tx *sql.Tx) (err error) {
		e, err = findEntity(ctx, tx, userID, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	return e, nil
}

// FindEntities implements agentmem.EntityStore. Without keys it walks
// entities_user_updated from the cursor:
//
//	SELECT … FROM entities WHERE user_id = ? [AND type = ?] [AND (updated_at, id) < (cursor)]
//	ORDER BY updated_at DESC, id DESC LIMIT n+1
//
// With keys, it looks each up in entity_names and ranks an entity 1 when
// one of them is its name:
//
//	SELECT …, m.rank FROM (SELECT n.entity_id, MAX(n.is_name) AS rank FROM json_each(keys) k
//	  CROSS JOIN entity_names n ON (n.user_id, n.key) = (?, k.value) GROUP BY n.entity_id) m
//	  CROSS JOIN entities e ON (e.user_id, e.id) = (?, m.entity_id)
//	[WHERE e.type = ?] [AND (m.rank, e.updated_at, e.id) < (cursor)]
//	ORDER BY m.rank DESC, e.updated_at DESC, e.id DESC LIMIT n+1
func (s *Store) FindEntities(ctx context.Context, userID string, f agentmem.EntityFilter) ([]*agentmem.Entity, string, error) {
	limit, err := agentmem.PageSize(f.Limit)
	if err != nil {
		return nil, "", err
	}
	if err := f.Validate(); err != nil {
		return nil, "", err
	}
	var c agentmem.EntityCursor
	if f.Cursor != "" {
		if err := agentmem.DecodeCursor(f.Cursor, agentmem.EntityList(userID, f), &c); err != nil {
			return nil, "", err
		}
	}
	var (
		q     string
		args  []any
		where []string
	)
	if f.Keys == nil {
		q = `SELECT ` + entityColumns + `, 0 FROM entities e WHERE user_id = ?`
		args = []any{userID}
		if f.Cursor != "" {
			where, args = append(where, "(e.updated_at, e.id) < (?, ?)"), append(args, c.UpdatedAt, c.ID)
		}
	} else {
		keys, _ := json.Marshal(f.Keys)
		// CROSS JOIN keeps SQLite's join order: each key looked up by
		// entity_names' primary key, then each entity found by its own.
		// Left to choose, the planner walked all of the user's names
		// (7 ms at 1,000 entities).
		q = `SELECT e.user_id, e.id, e.name, e.name_key, e.type, e.aliases, e.created_at, e.updated_at, m.rank FROM
			(SELECT n.entity_id, MAX(n.is_name) AS rank FROM json_each(?) AS k CROSS JOIN entity_names AS n
				ON n.user_id = ? AND n.key = k.value GROUP BY n.entity_id) AS m
			CROSS JOIN entities AS e ON e.user_id = ? AND e.id = m.entity_id WHERE 1`
		args = []any{string(keys), userID, userID}
		if f.Cursor != "" {
			where, args = append(where, "(m.rank, e.updated_at, e.id) < (?, ?, ?)"), append(args, c.Rank, c.UpdatedAt, c.ID)
		}
	}
	if f.Type != nil {
		where, args = append(where, "e.type = ?"), append(args, *f.Type)
	}
	for _, w := range where {
		q += " AND " + w
	}
	if f.Keys == nil {
		q += ` ORDER BY e.updated_at DESC, e.id DESC LIMIT ?`
	} else {
		q += ` ORDER BY m.rank DESC, e.updated_at DESC, e.id DESC LIMIT ?`
	}
	args = append(args, limit+1)
	var (
		es    []*agentmem.Entity
		ranks = map[*agentmem.Entity]int{}
	)
	err = s.read(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, q, args...)
		if err != nil {
			return fmt.Errorf("find entities: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var rank int
			e, err := scanEntity(rows, &rank)
			if err != nil {
				return fmt.Errorf("find entities: %w", err)
			}
			es, ranks[e] = append(es, e), rank
		}
		return rows.Err()
	})
	if err != nil {
		return nil, "", err
	}
	es, next := agentmem.CutPage(es, limit, agentmem.EntityList(userID, f), func(e *agentmem.Entity) any {
		return agentmem.EntityCursor{Rank: ranks[e], UpdatedAt: e.UpdatedAt.UnixMicro(), ID: e.ID}
	})
	return es, next, nil
}

// UpdateEntity implements agentmem.EntityStore.
func (s *Store) UpdateEntity(ctx context.Context, userID, id string, upd agentmem.EntityUpdate) (*agentmem.Entity, error) {
	if err := upd.Validate(); err != nil {
		return nil, err
	}
	var e *agentmem.Entity
	err := s.write(ctx, func(tx *sql.Tx) (err error) {
		if e, err = findEntity(ctx, tx, userID, id); err != nil {
			return err
		}
		e.ApplyUpdate(upd, s.now())
		return writeEntity(ctx, tx, e, true)
	})
	if err != nil {
		return nil, err
	}
	return e, nil
}

// DeleteEntity implements agentmem.EntityStore.
func (s *Store) DeleteEntity(ctx context.Context, userID, id string) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM entities WHERE user_id = ? AND id = ?`, userID, id)
		if err != nil {
			return fmt.Errorf("delete entity: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return notFoundEntity(id)
		}
		for _, table := range []string{"entity_names", "entity_refs"} {
			if _, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE user_id = ? AND entity_id = ?`, userID, id); err != nil {
				return fmt.Errorf("delete %s: %w", table, err)
			}
		}
		return nil
	})
}

// PutEntityRefs implements agentmem.EntityStore.
func (s *Store) PutEntityRefs(ctx context.Context, userID string, refs []*agentmem.EntityRef) error {
	now := s.now()
	for _, r := range refs {
		if err := r.Validate(now); err != nil {
			return err
		}
	}
	return s.write(ctx, func(tx *sql.Tx) error {
		checked := map[string]bool{}
		for _, r := range refs {
			if !checked["t"+r.ThreadID] {
				if _, err := findLiveThread(ctx, tx, userID, r.ThreadID); err != nil {
					return err
				}
				checked["t"+r.ThreadID] = true
			}
			if !checked["e"+r.EntityID] {
				var one int
				err := tx.QueryRowContext(ctx, `SELECT 1 FROM entities WHERE user_id = ? AND id = ?`, userID, r.EntityID).Scan(&one)
				if errors.Is(err, sql.ErrNoRows) {
					return notFoundEntity(r.EntityID)
				} else if err != nil {
					return fmt.Errorf("find entity: %w", err)
				}
				checked["e"+r.EntityID] = true
			}
			// A reference moves to a later message, never back.
			_, err := tx.ExecContext(ctx, `INSERT INTO entity_refs (user_id, entity_id, thread_id, action, seq, at) VALUES (?, ?, ?, ?, ?, ?)
				ON CONFLICT (user_id, entity_id, thread_id, action) DO UPDATE SET seq = MAX(seq, excluded.seq), at = MAX(at, excluded.at)`,
				userID, r.EntityID, r.ThreadID, r.Action, r.Seq, micros(r.At))
			if err != nil {
				return fmt.Errorf("put entity ref: %w", err)
			}
		}
		return nil
	})
}

// FindEntityRefs implements agentmem.EntityStore. An entity's references
// walk entity_refs_entity_at, a thread's entity_refs_thread_at, from the
// cursor:
//
//	SELECT … FROM entity_refs r JOIN threads t (live) | JOIN entities e WHERE r.user_id = ? AND r.entity_id | r.thread_id = ?
//	  [AND r.action = ?] [AND (r.at, other id, r.action) < (cursor)] ORDER BY r.at DESC, other id DESC, r.action DESC LIMIT n+1
func (s *Store) FindEntityRefs(ctx context.Context, userID string, f agentmem.EntityRefFilter) ([]*agentmem.EntityRef, string, error) {
	limit, err := agentmem.PageSize(f.Limit)
	if err != nil {
		return nil, "", err
	}
	if err := f.Validate(); err != nil {
		return nil, "", err
	}
	byEntity := f.EntityID != ""
	var q string
	args := []any{userID}
	other := "r.entity_id"
	if byEntity {
		other = "r.thread_id"
		q = `SELECT r.entity_id, r.thread_id, r.action, r.seq, r.at FROM entity_refs r
			JOIN threads t ON t.user_id = r.user_id AND t.id = r.thread_id AND (t.deleted_at IS NULL OR ?)
			WHERE r.user_id = ? AND r.entity_id = ?`
		args = []any{f.IncludeDeleted, userID, f.EntityID}
	} else {
		q = `SELECT r.entity_id, r.thread_id, r.action, r.seq, r.at, ` + prefixed("e.", entityColumns) + ` FROM entity_refs r
			JOIN entities e ON e.user_id = r.user_id AND e.id = r.entity_id
			WHERE r.user_id = ? AND r.thread_id = ?`
		args = append(args, f.ThreadID)
	}
	if f.Action != nil {
		q, args = q+" AND r.action = ?", append(args, *f.Action)
	}
	if f.Cursor != "" {
		var c agentmem.EntityRefCursor
		if err := agentmem.DecodeCursor(f.Cursor, agentmem.EntityRefList(userID, f), &c); err != nil {
			return nil, "", err
		}
		q, args = q+" AND (r.at, "+other+", r.action) < (?, ?, ?)", append(args, c.At, c.ID, c.Action)
	}
	q, args = q+" ORDER BY r.at DESC, "+other+" DESC, r.action DESC LIMIT ?", append(args, limit+1)
	var refs []*agentmem.EntityRef
	err = s.read(ctx, func(tx *sql.Tx) error {
		if byEntity {
			var one int
			err := tx.QueryRowContext(ctx, `SELECT 1 FROM entities WHERE user_id = ? AND id = ?`, userID, f.EntityID).Scan(&one)
			if errors.Is(err, sql.ErrNoRows) {
				return notFoundEntity(f.EntityID)
			} else if err != nil {
				return fmt.Errorf("find entity: %w", err)
			}
		} else if _, err := findLiveThread(ctx, tx, userID, f.ThreadID); err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, q, args...)
		if err != nil {
			return fmt.Errorf("find entity refs: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var (
				r  agentmem.EntityRef
				at int64
			)
			dest := []any{&r.EntityID, &r.ThreadID, &r.Action, &r.Seq, &at}
			if byEntity {
				err = rows.Scan(dest...)
			} else {
				r.Entity, err = scanEntity(scanPrefix{rows, dest})
			}
			if err != nil {
				return fmt.Errorf("find entity refs: %w", err)
			}
			r.At = fromMicros(at)
			refs = append(refs, &r)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, "", err
	}
	refs, next := agentmem.CutPage(refs, limit, agentmem.EntityRefList(userID, f), func(r *agentmem.EntityRef) any {
		id := r.EntityID
		if byEntity {
			id = r.ThreadID
		}
		return agentmem.EntityRefCursor{At: r.At.UnixMicro(), ID: id, Action: r.Action}
	})
	return refs, next, nil
}

// scanPrefix scans a row into prefix, then into the destinations Scan is
// given: a row of a join, read by another table's scanner.
type scanPrefix struct {
	row    interface{ Scan(...any) error }
	prefix []any
}

func (p scanPrefix) Scan(dest ...any) error {
	return p.row.Scan(append(slices.Clone(p.prefix), dest...)...)
}

// prefixed qualifies each column of a column list with prefix.
func prefixed(prefix, columns string) string {
	cols := strings.Split(columns, ",")
	for i, c := range cols {
		cols[i] = prefix + strings.TrimSpace(c)
	}
	return strings.Join(cols, ", ")
}
