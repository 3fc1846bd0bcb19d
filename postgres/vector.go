package postgres

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/internal/vecenc"
	"github.com/jackc/pgx/v5"
)

// Lock order of the writers of vectors: a user's vector_versions rows
// first, in space order (PutVectors locks the spaces it writes, the
// deleters all of the user's: see lockVectorVersions), then the vectors.
// DeleteUser, DeleteMemory and permanent thread deletion take the version
// rows before any memory or vector row, so none of them waits for another
// while holding what the other needs.

// lockVectorVersions locks every vector_versions row of the user, in
// space order, until the transaction ends.
func lockVectorVersions(ctx context.Context, tx pgx.Tx, userID string) error {
	if _, err := tx.Exec(ctx, `SELECT 1 FROM vector_versions WHERE user_id = $1 ORDER BY space FOR UPDATE`, userID); err != nil {
		return fmt.Errorf("lock vector versions: %w", err)
	}
	return nil
}

// bumpVectorVersions counts a write of each of the user's spaces
// (sorted), locking its row: a new version and the next seq (and, for a
// deletion, reset_seq with it). It returns the new seq of each. Writes of
// a space take turns on its row, so they commit in seq order.
func bumpVectorVersions(ctx context.Context, tx pgx.Tx, userID string, spaces []string, deletion bool) (map[string]int64, error) {
	reset := 0
	if deletion {
		reset = 1
	}
	seqs := make(map[string]int64, len(spaces))
	for _, space := range spaces {
		var seq int64
		err := tx.QueryRow(ctx, `INSERT INTO vector_versions AS v (user_id, space, version, seq, reset_seq, epoch) VALUES ($1, $2, $3, 1, $4, $5)
			ON CONFLICT (user_id, space) DO UPDATE SET version = excluded.version, seq = v.seq + 1,
				reset_seq = CASE WHEN excluded.reset_seq > 0 THEN v.seq + 1 ELSE v.reset_seq END
			RETURNING seq`, userID, space, agentmem.NewID(), reset, agentmem.NewID()).Scan(&seq)
		if err != nil {
			return nil, fmt.Errorf("bump vector version: %w", err)
		}
		seqs[space] = seq
	}
	return seqs, nil
}

// A vector's row (migration 0023) names its space by vector_spaces.id and
// its scope by a code, and keeps its item's ID short (package
// internal/vecenc).

// spaceOf is the id of the space named by $2: NULL for a space no one has
// had vectors of.
const spaceOf = `(SELECT id FROM vector_spaces WHERE name = $2)`

// vectorSpaceID returns the id of the space named name, kept once read;
// false while no one has had vectors of it. The reads of vectors take the
// id as a parameter rather than spaceOf's subquery: the planner then
// knows from space_id's statistics how many rows a user's space has (a
// memories' space a tenth of the windows', whose rows a load reads
// through the index rather than scanning the table).
func (s *Store) vectorSpaceID(ctx context.Context, name string) (int32, bool, error) {
	if id, ok := s.spaceIDs.Load(name); ok {
		return id.(int32), true, nil
	}
	if err := s.usable(); err != nil {
		return 0, false, err
	}
	var id int64
	err := s.pool.QueryRow(ctx, `SELECT id FROM vector_spaces WHERE name = $1`, name).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, false, nil
	} else if err != nil {
		return 0, false, formatError(fmt.Errorf("find vector space: %w", err))
	} else if id > math.MaxInt32 {
		return 0, false, fmt.Errorf("vector space %q has id %d, beyond vectors.space_id", name, id)
	}
	s.spaceIDs.Store(name, int32(id))
	return int32(id), true, nil
}

// PutVectors implements agentmem.VectorStore. It bumps the versions of the
// batch's spaces first, which locks them: puts of a space take turns, so
// the check of its dimension sees the vectors of the put before.
func (s *Store) PutVectors(ctx context.Context, userID string, vs []agentmem.Vector) error {
	vs, dims, err := agentmem.PrepareVectors(vs)
	if err != nil || len(vs) == 0 {
		return err
	}
	spaces := slices.Sorted(maps.Keys(dims))
	rows := make([]vectorRow, len(vs))
	for i, v := range vs {
		code, ok := vecenc.ScopeCode(v.Scope)
		if !ok {
			return fmt.Errorf("put vectors: scope %q has no stored code", v.Scope)
		}
		rows[i] = vectorRow{space: v.Space, scope: int16(code), id: vecenc.EncodeID(v.ID), vec: vecenc.Encode(v.Vec)}
	}
	return s.writeRetrying(ctx, func(tx pgx.Tx) error {
		seqs, err := bumpVectorVersions(ctx, tx, userID, spaces, false)
		if err != nil {
			return err
		}
		ids, err := s.vectorSpaceIDs(ctx, tx, spaces)
		if err != nil {
			return err
		}
		for _, space := range spaces {
			var b []byte
			err := tx.QueryRow(ctx, `SELECT vec FROM vectors WHERE user_id = $1 AND space_id = $2 LIMIT 1`, userID, ids[space]).Scan(&b)
			if errors.Is(err, pgx.ErrNoRows) {
				continue
			} else if err != nil {
				return fmt.Errorf("find vector dimensions: %w", err)
			}
			if n, err := vecenc.Dims(b); err != nil {
				return fmt.Errorf("find vector dimensions: %w", err)
			} else if n != dims[space] {
				return agentmem.VectorDimensionsError(space, n, dims[space])
			}
		}
		// In key order, in which the rows are locked.
		slices.SortFunc(rows, func(a, b vectorRow) int {
			return cmp.Or(cmp.Compare(ids[a.space], ids[b.space]), cmp.Compare(a.scope, b.scope), bytes.Compare(a.id, b.id))
		})
		spaceIDs, scopes, itemIDs, vecs, vseqs := make([]int32, len(rows)), make([]int16, len(rows)), make([][]byte, len(rows)),
			make([][]byte, len(rows)), make([]int64, len(rows))
		for i, r := range rows {
			spaceIDs[i], scopes[i], itemIDs[i], vecs[i], vseqs[i] = ids[r.space], r.scope, r.id, r.vec, seqs[r.space]
		}
		if _, err := tx.Exec(ctx, `INSERT INTO vectors (user_id, space_id, scope, id, vec, seq)
			SELECT $1, * FROM unnest($2::integer[], $3::smallint[], $4::bytea[], $5::bytea[], $6::bigint[])
			ON CONFLICT (user_id, space_id, scope, id) DO UPDATE SET vec = excluded.vec, seq = excluded.seq`,
			userID, spaceIDs, scopes, itemIDs, vecs, vseqs); err != nil {
			return fmt.Errorf("put vectors: %w", err)
		}
		return nil
	})
}

// vectorRow is a vector as PutVectors writes it.
type vectorRow struct {
	space   string
	scope   int16
	id, vec []byte
}

// vectorSpaceIDs returns the id of each space of names (sorted), made at
// its first vector. An id is kept once read committed, so that a put
// of a known space asks nothing; a space already named is not inserted
// again (an insert draws an id whether it conflicts or not).
func (s *Store) vectorSpaceIDs(ctx context.Context, tx pgx.Tx, names []string) (map[string]int32, error) {
	ids := make(map[string]int32, len(names))
	var unknown []string
	for _, name := range names {
		if id, ok := s.spaceIDs.Load(name); ok {
			ids[name] = id.(int32)
		} else {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) == 0 {
		return ids, nil
	}
	find := func(keep bool) error {
		rows, err := tx.Query(ctx, `SELECT name, id FROM vector_spaces WHERE name = ANY($1)`, unknown)
		if err != nil {
			return err
		}
		var name string
		var id int64
		_, err = pgx.ForEachRow(rows, []any{&name, &id}, func() error {
			if id > math.MaxInt32 {
				return fmt.Errorf("vector space %q has id %d, beyond vectors.space_id", name, id)
			}
			ids[name] = int32(id)
			if keep {
				s.spaceIDs.Store(name, int32(id))
			}
			return nil
		})
		return err
	}
	// This transaction has inserted no space yet: what it reads is
	// committed.
	if err := find(true); err != nil {
		return nil, fmt.Errorf("find vector spaces: %w", err)
	}
	var missing []string
	for _, name := range unknown {
		if _, ok := ids[name]; !ok {
			missing = append(missing, name)
		}
	}
	if len(missing) == 0 {
		return ids, nil
	}
	// A concurrent insert of the same name commits first: ours does
	// nothing, and the second look finds it. What this one inserts is not
	// kept: the transaction may yet roll back.
	if _, err := tx.Exec(ctx, `INSERT INTO vector_spaces (name) SELECT unnest($1::text[]) ON CONFLICT (name) DO NOTHING`, missing); err != nil {
		return nil, fmt.Errorf("put vector spaces: %w", err)
	}
	if err := find(false); err != nil {
		return nil, fmt.Errorf("find vector spaces: %w", err)
	}
	for _, name := range missing {
		if _, ok := ids[name]; !ok {
			return nil, fmt.Errorf("put vector spaces: %q not found after its insert", name)
		}
	}
	return ids, nil
}

// deleteVectorsOf deletes the user's vectors of scope whose IDs q (a query
// of one column of item IDs, with args) returns, as deleteVectors does.
func deleteVectorsOf(ctx context.Context, tx pgx.Tx, userID, scope, q string, args ...any) error {
	rows, err := tx.Query(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("delete vectors: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("delete vectors: %w", err)
	}
	return deleteVectors(ctx, tx, userID, scope, ids)
}

// deleteVectors deletes the user's vectors of scope and ids, in every
// space, and bumps the version of each space it deleted from. The caller
// has locked the user's vector versions (lockVectorVersions).
//
//	DELETE FROM vectors WHERE user_id = $1 AND space_id IN (every space) AND scope = $2 AND id = ANY($3)
//
// looks each ID up in the primary key once a space (there are few).
func deleteVectors(ctx context.Context, tx pgx.Tx, userID, scope string, ids []string) error {
	code, ok := vecenc.ScopeCode(scope)
	if !ok || len(ids) == 0 {
		return nil // no vector has that scope
	}
	keys := make([][]byte, len(ids))
	for i, id := range ids {
		keys[i] = vecenc.EncodeID(id)
	}
	rows, err := tx.Query(ctx, `DELETE FROM vectors WHERE user_id = $1 AND space_id IN (SELECT id FROM vector_spaces) AND scope = $2 AND id = ANY($3)
		RETURNING (SELECT name FROM vector_spaces WHERE id = space_id)`, userID, int16(code), keys)
	if err != nil {
		return fmt.Errorf("delete vectors: %w", err)
	}
	spaces, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("delete vectors: %w", err)
	}
	slices.Sort(spaces)
	_, err = bumpVectorVersions(ctx, tx, userID, slices.Compact(spaces), true)
	return err
}

// FindVectors implements agentmem.VectorStore.
//
//	SELECT scope, id, vec FROM vectors WHERE user_id = $1 AND space_id = (the space's) [AND scope = ANY($3)]
//
// reads a range of vectors_seq or of the primary key. Each row is decoded
// from the bytes pgx received (RawValues: no copy, no reflection) into
// shared slabs (vecenc.List).
func (s *Store) FindVectors(ctx context.Context, userID, space string, scopes []string) ([]agentmem.Vector, error) {
	if err := agentmem.ValidateSpace(space); err != nil {
		return nil, err
	}
	id, ok, err := s.vectorSpaceID(ctx, space)
	if err != nil || !ok {
		return []agentmem.Vector{}, err
	}
	q, args := `SELECT scope, id, vec FROM vectors WHERE user_id = $1 AND space_id = $2`, []any{userID, id}
	if len(scopes) > 0 {
		codes := []int16{}
		for _, sc := range scopes {
			if code, ok := vecenc.ScopeCode(sc); ok {
				codes = append(codes, int16(code))
			}
		}
		q, args = q+` AND scope = ANY($3)`, append(args, codes)
	}
	return s.readVectors(ctx, space, q, args...)
}

// FindVectorsSince implements agentmem.VectorStore, through the index
// vectors_seq.
func (s *Store) FindVectorsSince(ctx context.Context, userID, space string, seq int64) ([]agentmem.Vector, error) {
	if err := agentmem.ValidateSpace(space); err != nil {
		return nil, err
	}
	id, ok, err := s.vectorSpaceID(ctx, space)
	if err != nil || !ok {
		return []agentmem.Vector{}, err
	}
	return s.readVectors(ctx, space, `SELECT scope, id, vec FROM vectors WHERE user_id = $1 AND space_id = $2 AND seq > $3`, userID, id, seq)
}

// ScanVectors calls fn with the stored bytes (package internal/vecenc) of
// each of the user's vectors of space, as FindVectors reads them; b is
// valid only during the call. It is what a search's vector cache loads,
// without a float32 in between.
func (s *Store) ScanVectors(ctx context.Context, userID, space string, fn func(scope, id string, b []byte) error) error {
	if err := agentmem.ValidateSpace(space); err != nil {
		return err
	}
	id, ok, err := s.vectorSpaceID(ctx, space)
	if err != nil || !ok {
		return err
	}
	return s.scanVectors(ctx, fn, `SELECT scope, id, vec FROM vectors WHERE user_id = $1 AND space_id = $2`, userID, id)
}

// scanVectors runs q, a query of scope, id and vec of vectors, and calls
// fn with each row, its scope and ID decoded.
func (s *Store) scanVectors(ctx context.Context, fn func(scope, id string, b []byte) error, q string, args ...any) error {
	return s.read(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, q, args...)
		if err != nil {
			return fmt.Errorf("find vectors: %w", err)
		}
		defer rows.Close()
		textFormat, first := false, true
		for rows.Next() {
			raw := rows.RawValues()
			if first {
				textFormat, first = rows.FieldDescriptions()[2].Format == pgx.TextFormatCode, false
			}
			code, id, b := raw[0], raw[1], raw[2]
			var scope string
			if textFormat { // as text (e.g. through a pooler in simple protocol): the scope in digits, bytea as \x and hex
				n, err := strconv.ParseInt(string(code), 10, 16)
				if err != nil {
					return fmt.Errorf("decode vector: %w", err)
				}
				scope, _ = vecenc.Scope(n)
				if id, err = hex.DecodeString(string(bytes.TrimPrefix(id, []byte(`\x`)))); err != nil {
					return fmt.Errorf("decode vector: %w", err)
				}
				if b, err = hex.DecodeString(string(bytes.TrimPrefix(b, []byte(`\x`)))); err != nil {
					return fmt.Errorf("decode vector: %w", err)
				}
			} else if len(code) == 2 {
				scope, _ = vecenc.Scope(int64(int16(binary.BigEndian.Uint16(code))))
			}
			if scope == "" {
				return fmt.Errorf("decode vector: unknown scope %q", code)
			}
			if err := fn(scope, vecenc.ID(id), b); err != nil {
				return err
			}
		}
		return rows.Err()
	})
}

// readVectors runs q, a query of scope, id and vec of vectors of space.
func (s *Store) readVectors(ctx context.Context, space, q string, args ...any) ([]agentmem.Vector, error) {
	l := vecenc.List{Space: space, Vectors: []agentmem.Vector{}}
	if err := s.scanVectors(ctx, l.Add, q, args...); err != nil {
		return nil, err
	}
	return l.Vectors, nil
}

// VectorsVersion implements agentmem.VectorStore: one primary-key lookup,
// in one round trip (no transaction around it).
func (s *Store) VectorsVersion(ctx context.Context, userID, space string) (string, error) {
	if err := s.usable(); err != nil {
		return "", err
	}
	var version string
	err := s.pool.QueryRow(ctx, `SELECT version FROM vector_versions WHERE user_id = $1 AND space = $2`, userID, space).Scan(&version)
	if errors.Is(err, pgx.ErrNoRows) {
		return agentmem.NewID(), nil // none yet: a value never seen again
	} else if err != nil {
		return "", formatError(fmt.Errorf("find vectors version: %w", err))
	}
	return version, nil
}

// VectorsState implements agentmem.VectorStore: one primary-key lookup,
// in one round trip.
func (s *Store) VectorsState(ctx context.Context, userID, space string) (agentmem.VectorsState, error) {
	var st agentmem.VectorsState
	if err := s.usable(); err != nil {
		return st, err
	}
	err := s.pool.QueryRow(ctx, `SELECT version, epoch, seq, reset_seq FROM vector_versions WHERE user_id = $1 AND space = $2`,
		userID, space).Scan(&st.Version, &st.Epoch, &st.Seq, &st.ResetSeq)
	if errors.Is(err, pgx.ErrNoRows) {
		return agentmem.VectorsState{Version: agentmem.NewID(), Epoch: agentmem.NewID()}, nil // none yet: values never seen again
	} else if err != nil {
		return st, formatError(fmt.Errorf("find vectors state: %w", err))
	}
	return st, nil
}

// VectorSpaces implements agentmem.VectorStore.
//
//	SELECT space FROM vector_versions v WHERE user_id = $1 AND EXISTS (a vector of v's space)
//
// reads the user's few version rows and probes the primary key of vectors
// once per space, rather than scanning the user's vectors: PutVectors
// writes a version row for every space it writes.
func (s *Store) VectorSpaces(ctx context.Context, userID string) ([]string, error) {
	spaces := []string{}
	err := s.read(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT space FROM vector_versions v WHERE user_id = $1
			AND EXISTS (SELECT 1 FROM vectors x WHERE x.user_id = v.user_id AND x.space_id = (SELECT id FROM vector_spaces WHERE name = v.space))
			ORDER BY space`, userID)
		if err != nil {
			return fmt.Errorf("find vector spaces: %w", err)
		}
		found, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return fmt.Errorf("find vector spaces: %w", err)
		}
		spaces = append(spaces, found...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return spaces, nil
}

// DeleteVectorSpace implements agentmem.VectorStore. It locks the user's
// vector versions first, as every deleter of vectors does. The space gets
// a new version only when vectors were deleted, so that a space the user
// never had keeps answering a new VectorsVersion on each call.
func (s *Store) DeleteVectorSpace(ctx context.Context, userID, space string) error {
	if err := agentmem.ValidateSpace(space); err != nil {
		return err
	}
	return s.writeRetrying(ctx, func(tx pgx.Tx) error {
		if err := lockVectorVersions(ctx, tx, userID); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `DELETE FROM vectors WHERE user_id = $1 AND space_id = `+spaceOf, userID, space)
		if err != nil {
			return fmt.Errorf("delete vector space: %w", err)
		}
		if tag.RowsAffected() == 0 {
			return nil
		}
		_, err = bumpVectorVersions(ctx, tx, userID, []string{space}, true)
		return err
	})
}
