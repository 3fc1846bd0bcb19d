package postgres

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/jackc/pgx/v5"
)

const entityColumns = `user_id, id, name, name_key, type, aliases, created_at, updated_at`

func scanEntity(row interface{ Scan(...any) error }, extra ...any) (*agentmem.Entity, error) {
	var (
		e   agentmem.Entity
		key string
	)
	if err := row.Scan(append([]any{&e.UserID, &e.ID, &e.Name, &key, &e.Type, &e.Aliases, &e.CreatedAt, &e.UpdatedAt}, extra...)...); err != nil {
		return nil, err
	}
	if e.Aliases == nil {
		e.Aliases = []string{}
	}
	e.CreatedAt, e.UpdatedAt = e.CreatedAt.UTC(), e.UpdatedAt.UTC()
	return &e, nil
}

func notFoundEntity(id string) error {
	return agentmem.Errorf(agentmem.ENOTFOUND, "Entity %q not found.", id)
}

// findEntity returns an entity of the user; lock is noLock, forShare or
// forUpdate.
func findEntity(ctx context.Context, tx pgx.Tx, userID, id, lock string) (*agentmem.Entity, error) {
	e, err := scanEntity(tx.QueryRow(ctx, `SELECT `+entityColumns+` FROM entities WHERE user_id = $1 AND id = $2`+lock, userID, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFoundEntity(id)
	} else if err != nil {
		return nil, fmt.Errorf("find entity: %w", err)
	}
	return e, nil
}

// writeEntityNames rewrites the keys that find e.
func writeEntityNames(ctx context.Context, tx pgx.Tx, e *agentmem.Entity) error {
	nameKey, aliasKeys := e.Keys()
	if _, err := tx.Exec(ctx, `DELETE FROM entity_names WHERE user_id = $1 AND entity_id = $2`, e.UserID, e.ID); err != nil {
		return fmt.Errorf("delete entity names: %w", err)
	}
	_, err := tx.Exec(ctx, `INSERT INTO entity_names (user_id, key, entity_id, is_name)
		SELECT $1, k, $2, CASE WHEN n = 1 THEN 1 ELSE 0 END FROM unnest($3::text[]) WITH ORDINALITY AS a(k, n)`,
		e.UserID, e.ID, append([]string{nameKey}, aliasKeys...))
	if err != nil {
		return fmt.Errorf("insert entity names: %w", err)
	}
	return nil
}

// updateEntity writes every mutable field of e and its keys. Returns
// ECONFLICT if its name is another entity's.
func updateEntity(ctx context.Context, tx pgx.Tx, e *agentmem.Entity) error {
	_, err := tx.Exec(ctx, `UPDATE entities SET name = $1, name_key = $2, type = $3, aliases = $4, updated_at = $5 WHERE user_id = $6 AND id = $7`,
		e.Name, agentmem.EntityKey(e.Name), e.Type, e.Aliases, e.UpdatedAt, e.UserID, e.ID)
	if isUniqueViolation(err) {
		return agentmem.Errorf(agentmem.ECONFLICT, "Another entity is named %q.", e.Name)
	} else if err != nil {
		return fmt.Errorf("update entity: %w", err)
	}
	return writeEntityNames(ctx, tx, e)
}

// PutEntities implements agentmem.EntityStore. It records the user as
// CreateMemory does, and writes the entities in name-key order, so that
// concurrent puts of the same names lock them in the same order. An
// entity of a name that a concurrent put creates is merged into it: the
// insert waits for that put and does nothing, and the row is then read
// FOR UPDATE.
func (s *Store) PutEntities(ctx context.Context, userID string, es []*agentmem.Entity) error {
	for _, e := range es {
		e.UserID = userID
		if err := e.Validate(); err != nil {
			return err
		}
	}
	order := make([]int, len(es))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(agentmem.EntityKey(es[a].Name), agentmem.EntityKey(es[b].Name)) })
	out := make([]*agentmem.Entity, len(es))
	err := s.write(ctx, func(tx pgx.Tx) error {
		now := s.now()
		if _, err := tx.Exec(ctx, `INSERT INTO users (user_id, created_at) VALUES ($1, $2)
			ON CONFLICT (user_id) DO UPDATE SET created_at = users.created_at WHERE false`, userID, now); err != nil {
			return fmt.Errorf("insert user: %w", err)
		}
		for _, i := range order {
			in := es[i]
			e := &agentmem.Entity{UserID: userID, ID: in.ID, Name: in.Name, Type: in.Type, Aliases: in.Aliases}
			if err := e.Prepare(now); err != nil {
				return err
			}
			tag, err := tx.Exec(ctx, `INSERT INTO entities (`+entityColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT DO NOTHING`,
				userID, e.ID, e.Name, agentmem.EntityKey(e.Name), e.Type, e.Aliases, e.CreatedAt, e.UpdatedAt)
			if err != nil {
				return fmt.Errorf("insert entity: %w", err)
			}
			if tag.RowsAffected() == 1 {
				if err := writeEntityNames(ctx, tx, e); err != nil {
					return err
				}
				out[i] = e
				continue
			}
			e, err = scanEntity(tx.QueryRow(ctx, `SELECT `+entityColumns+` FROM entities WHERE user_id = $1 AND name_key = $2`+forUpdate,
				userID, agentmem.EntityKey(in.Name)))
			switch {
			case errors.Is(err, pgx.ErrNoRows): // the conflict was on the ID
				return agentmem.Errorf(agentmem.ECONFLICT, "Entity %q already exists.", in.ID)
			case err != nil:
				return fmt.Errorf("find entity: %w", err)
			case in.ID != "" && in.ID != e.ID:
				return agentmem.Errorf(agentmem.ECONFLICT, "Entity %q is named %q already; put it with that id or none.", e.ID, e.Name)
			}
			if e.Merge(in, now) {
				if err := updateEntity(ctx, tx, e); err != nil {
					return err
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
	err := s.read(ctx, func(tx pgx.Tx) (err error) {
		e, err = findEntity(ctx, tx, userID, id, noLock)
		return err
	})
	if err != nil {
		return nil, err
	}
	return e, nil
}

// FindEntities implements agentmem.EntityStore, as the SQLite store does:
// without keys it walks entities_user_updated from the cursor; with keys
// it looks each up in entity_names and ranks an entity 1 when one of them
// is its name:
//
//	SELECT …, m.rank FROM (SELECT n.entity_id, MAX(n.is_name) AS rank FROM unnest(keys) k
//	  CROSS JOIN LATERAL (… entity_names WHERE (user_id, key) = ($1, k.key)) n GROUP BY n.entity_id) m
//	  CROSS JOIN LATERAL (… entities WHERE (user_id, id) = ($1, m.entity_id)) e
//	[WHERE e.type = $n] [AND (m.rank, e.updated_at, e.id) < (cursor)]
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
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	var q string
	where := []string{}
	if f.Keys == nil {
		q = `SELECT ` + entityColumns + `, 0 FROM entities e WHERE user_id = ` + arg(userID)
		if f.Cursor != "" {
			where = append(where, "(e.updated_at, e.id) < ("+arg(time.UnixMicro(c.UpdatedAt).UTC())+", "+arg(c.ID)+")")
		}
	} else {
		// The LATERAL subqueries, fenced by OFFSET 0 so that the planner
		// does not flatten them, keep the join order whatever the
		// statistics say: each key looked up by entity_names' primary key,
		// then each entity by its own. Left to choose on a young table, the
		// planner walked all of the user's names and entities (5 ms at
		// 1,000 entities, 0.4 ms so).
		u := arg(userID)
		q = `SELECT e.user_id, e.id, e.name, e.name_key, e.type, e.aliases, e.created_at, e.updated_at, m.rank FROM
			(SELECT n.entity_id, MAX(n.is_name) AS rank FROM unnest(` + arg(f.Keys) + `::text[]) AS k(key)
				CROSS JOIN LATERAL (SELECT entity_id, is_name FROM entity_names WHERE user_id = ` + u + ` AND key = k.key OFFSET 0) AS n
				GROUP BY n.entity_id) AS m
			CROSS JOIN LATERAL (SELECT * FROM entities WHERE user_id = ` + u + ` AND id = m.entity_id OFFSET 0) AS e WHERE true`
		if f.Cursor != "" {
			where = append(where, "(m.rank, e.updated_at, e.id) < ("+arg(c.Rank)+"::smallint, "+arg(time.UnixMicro(c.UpdatedAt).UTC())+", "+arg(c.ID)+")")
		}
	}
	if f.Type != nil {
		where = append(where, "e.type = "+arg(*f.Type))
	}
	for _, w := range where {
		q += " AND " + w
	}
	if f.Keys == nil {
		q += ` ORDER BY e.updated_at DESC, e.id DESC LIMIT ` + arg(limit+1)
	} else {
		q += ` ORDER BY m.rank DESC, e.updated_at DESC, e.id DESC LIMIT ` + arg(limit+1)
	}
	var (
		es    []*agentmem.Entity
		ranks = map[*agentmem.Entity]int{}
	)
	err = s.read(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, q, args...)
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
	err := s.write(ctx, func(tx pgx.Tx) (err error) {
		if e, err = findEntity(ctx, tx, userID, id, forUpdate); err != nil {
			return err
		}
		e.ApplyUpdate(upd, s.now())
		return updateEntity(ctx, tx, e)
	})
	if err != nil {
		return nil, err
	}
	return e, nil
}

// DeleteEntity implements agentmem.EntityStore. Deleting the row first
// waits for the references being put to it (which lock it FOR SHARE).
func (s *Store) DeleteEntity(ctx context.Context, userID, id string) error {
	return s.write(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM entities WHERE user_id = $1 AND id = $2`, userID, id)
		if err != nil {
			return fmt.Errorf("delete entity: %w", err)
		}
		if tag.RowsAffected() == 0 {
			return notFoundEntity(id)
		}
		for _, table := range []string{"entity_names", "entity_refs"} {
			if _, err := tx.Exec(ctx, `DELETE FROM `+table+` WHERE user_id = $1 AND entity_id = $2`, userID, id); err != nil {
				return fmt.Errorf("delete %s: %w", table, err)
			}
		}
		return nil
	})
}

// PutEntityRefs implements agentmem.EntityStore. Each reference's thread
// (FOR KEY SHARE, see indexLock) and entity (FOR SHARE) are locked, so
// that neither is deleted before the put commits; threads first, then
// entities, each in ID order.
func (s *Store) PutEntityRefs(ctx context.Context, userID string, refs []*agentmem.EntityRef) error {
	now := s.now()
	var threads, entities []string
	for _, r := range refs {
		if err := r.Validate(now); err != nil {
			return err
		}
		threads, entities = append(threads, r.ThreadID), append(entities, r.EntityID)
	}
	slices.Sort(threads)
	slices.Sort(entities)
	return s.write(ctx, func(tx pgx.Tx) error {
		for _, id := range slices.Compact(threads) {
			if _, err := findLiveThread(ctx, tx, userID, id, indexLock); err != nil {
				return err
			}
		}
		for _, id := range slices.Compact(entities) {
			var one int
			err := tx.QueryRow(ctx, `SELECT 1 FROM entities WHERE user_id = $1 AND id = $2`+forShare, userID, id).Scan(&one)
			if errors.Is(err, pgx.ErrNoRows) {
				return notFoundEntity(id)
			} else if err != nil {
				return fmt.Errorf("find entity: %w", err)
			}
		}
		sorted := slices.Clone(refs)
		slices.SortFunc(sorted, func(a, b *agentmem.EntityRef) int {
			return cmp.Or(strings.Compare(a.EntityID, b.EntityID), strings.Compare(a.ThreadID, b.ThreadID), strings.Compare(a.Action, b.Action))
		})
		// A reference moves to a later message, never back.
		for _, r := range sorted {
			_, err := tx.Exec(ctx, `INSERT INTO entity_refs (user_id, entity_id, thread_id, action, seq, at) VALUES ($1, $2, $3, $4, $5, $6)
				ON CONFLICT (user_id, entity_id, thread_id, action) DO UPDATE
				SET seq = GREATEST(entity_refs.seq, excluded.seq), at = GREATEST(entity_refs.at, excluded.at)`,
				userID, r.EntityID, r.ThreadID, r.Action, r.Seq, r.At)
			if err != nil {
				return fmt.Errorf("put entity ref: %w", err)
			}
		}
		return nil
	})
}

// FindEntityRefs implements agentmem.EntityStore, as the SQLite store
// does: an entity's references walk entity_refs_entity_at (joined to its
// live threads), a thread's entity_refs_thread_at (joined to the
// entities), newest first from the cursor.
func (s *Store) FindEntityRefs(ctx context.Context, userID string, f agentmem.EntityRefFilter) ([]*agentmem.EntityRef, string, error) {
	limit, err := agentmem.PageSize(f.Limit)
	if err != nil {
		return nil, "", err
	}
	if err := f.Validate(); err != nil {
		return nil, "", err
	}
	byEntity := f.EntityID != ""
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	var q string
	other := "r.entity_id"
	if byEntity {
		other = "r.thread_id"
		q = `SELECT r.entity_id, r.thread_id, r.action, r.seq, r.at FROM entity_refs r
			JOIN threads t ON t.user_id = r.user_id AND t.id = r.thread_id AND (t.deleted_at IS NULL OR ` + arg(f.IncludeDeleted) + `)
			WHERE r.user_id = ` + arg(userID) + ` AND r.entity_id = ` + arg(f.EntityID)
	} else {
		q = `SELECT r.entity_id, r.thread_id, r.action, r.seq, r.at, e.user_id, e.id, e.name, e.name_key, e.type, e.aliases, e.created_at, e.updated_at
			FROM entity_refs r JOIN entities e ON e.user_id = r.user_id AND e.id = r.entity_id
			WHERE r.user_id = ` + arg(userID) + ` AND r.thread_id = ` + arg(f.ThreadID)
	}
	if f.Action != nil {
		q += " AND r.action = " + arg(*f.Action)
	}
	if f.Cursor != "" {
		var c agentmem.EntityRefCursor
		if err := agentmem.DecodeCursor(f.Cursor, agentmem.EntityRefList(userID, f), &c); err != nil {
			return nil, "", err
		}
		q += " AND (r.at, " + other + ", r.action) < (" + arg(time.UnixMicro(c.At).UTC()) + ", " + arg(c.ID) + ", " + arg(c.Action) + ")"
	}
	q += " ORDER BY r.at DESC, " + other + " DESC, r.action DESC LIMIT " + arg(limit+1)
	var refs []*agentmem.EntityRef
	err = s.read(ctx, func(tx pgx.Tx) error {
		if byEntity {
			if _, err := findEntity(ctx, tx, userID, f.EntityID, noLock); err != nil {
				return err
			}
		} else if _, err := findLiveThread(ctx, tx, userID, f.ThreadID, noLock); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, q, args...)
		if err != nil {
			return fmt.Errorf("find entity refs: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var r agentmem.EntityRef
			dest := []any{&r.EntityID, &r.ThreadID, &r.Action, &r.Seq, &r.At}
			if byEntity {
				err = rows.Scan(dest...)
			} else {
				r.Entity, err = scanEntity(scanPrefix{rows, dest})
			}
			if err != nil {
				return fmt.Errorf("find entity refs: %w", err)
			}
			r.At = r.At.UTC()
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
