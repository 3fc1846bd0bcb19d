package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/internal/vecenc"
)

// A vector's row (migration 0022) names its space by vector_spaces.id and
// its scope by a code, and keeps its item's ID short (package
// internal/vecenc); a user's rows of a space are in the order of the
// space's writes (seq). vectors_key finds an item's.

// spaceOf is the id of the space named by its argument: NULL for a space
// no one has had vectors of.
const spaceOf = `(SELECT id FROM vector_spaces WHERE name = ?)`

// PutVectors implements agentmem.VectorStore.
func (s *Store) PutVectors(ctx context.Context, userID string, vs []agentmem.Vector) error {
	vs, dims, err := agentmem.PrepareVectors(vs)
	if err != nil || len(vs) == 0 {
		return err
	}
	scopes := make([]int, len(vs))
	for i, v := range vs {
		var ok bool
		if scopes[i], ok = vecenc.ScopeCode(v.Scope); !ok {
			return fmt.Errorf("put vectors: scope %q has no stored code", v.Scope)
		}
	}
	// A vector's bytes: its 8-bit values and its row's keys.
	size := func(i int) int { return len(vs[i].Vec) + len(vs[i].ID) + len(vs[i].Space) + len(userID) }
	return s.writeSlices(ctx, len(vs), size, func(tx *sql.Tx, from, to int) error {
		spaces := make([]string, 0, len(dims))
		ids := make(map[string]int64, len(dims))
		for space, d := range dims {
			spaces = append(spaces, space)
			id, err := putVectorSpace(ctx, tx, space)
			if err != nil {
				return err
			}
			ids[space] = id
			var b []byte
			err = tx.QueryRowContext(ctx, `SELECT vec FROM vectors WHERE user_id = ? AND space_id = ? LIMIT 1`, userID, id).Scan(&b)
			if errors.Is(err, sql.ErrNoRows) {
				continue
			} else if err != nil {
				return fmt.Errorf("find vector dimensions: %w", err)
			}
			if n, err := vecenc.Dims(b); err != nil {
				return fmt.Errorf("find vector dimensions: %w", err)
			} else if n != d {
				return agentmem.VectorDimensionsError(space, n, d)
			}
		}
		seqs, err := bumpVectorVersions(ctx, tx, userID, spaces, false)
		if err != nil {
			return err
		}
		// A vector put again moves to its new seq.
		stmt, err := tx.PrepareContext(ctx, `INSERT INTO vectors (user_id, space_id, seq, scope, id, vec) VALUES (?, ?, ?, ?, ?, ?)
			ON CONFLICT (user_id, space_id, scope, id) DO UPDATE SET seq = excluded.seq, vec = excluded.vec`)
		if err != nil {
			return fmt.Errorf("prepare put vector: %w", err)
		}
		defer stmt.Close()
		var id []byte
		for i := from; i < to; i++ {
			v := vs[i]
			id = vecenc.AppendID(id[:0], v.ID)
			if _, err := stmt.ExecContext(ctx, userID, ids[v.Space], seqs[v.Space], scopes[i], id, vecenc.Encode(v.Vec)); err != nil {
				return fmt.Errorf("put vector: %w", err)
			}
		}
		return nil
	})
}

// putVectorSpace returns the id of the space named space, made at its
// first vector.
func putVectorSpace(ctx context.Context, tx *sql.Tx, space string) (int64, error) {
	var id int64
	err := tx.QueryRowContext(ctx, `SELECT id FROM vector_spaces WHERE name = ?`, space).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		err = tx.QueryRowContext(ctx, `INSERT INTO vector_spaces (name) VALUES (?) RETURNING id`, space).Scan(&id)
	}
	if err != nil {
		return 0, fmt.Errorf("put vector space: %w", err)
	}
	return id, nil
}

// bumpVectorVersions counts a write of each of the user's spaces: a new
// version and the next seq (and, for a deletion, reset_seq with it), and
// returns the new seq of each.
func bumpVectorVersions(ctx context.Context, tx *sql.Tx, userID string, spaces []string, deletion bool) (map[string]int64, error) {
	seqs := make(map[string]int64, len(spaces))
	for _, space := range spaces {
		var seq int64
		err := tx.QueryRowContext(ctx, `INSERT INTO vector_versions (user_id, space, version, seq, reset_seq, epoch) VALUES (?, ?, ?, 1, ?, ?)
			ON CONFLICT (user_id, space) DO UPDATE SET version = excluded.version, seq = seq + 1,
				reset_seq = CASE WHEN excluded.reset_seq > 0 THEN seq + 1 ELSE reset_seq END
			RETURNING seq`, userID, space, agentmem.NewID(), map[bool]int{true: 1}[deletion], agentmem.NewID()).Scan(&seq)
		if err != nil {
			return nil, fmt.Errorf("bump vector version: %w", err)
		}
		seqs[space] = seq
	}
	return seqs, nil
}

// deleteVectorsOf deletes the user's vectors of scope whose IDs q (a query
// of one column of item IDs, with args) returns, as deleteVectors does.
func deleteVectorsOf(ctx context.Context, tx *sql.Tx, userID, scope, q string, args ...any) error {
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("delete vectors: %w", err)
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return fmt.Errorf("delete vectors: %w", err)
		}
		ids = append(ids, id)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return fmt.Errorf("delete vectors: %w", err)
	}
	return deleteVectors(ctx, tx, userID, scope, ids)
}

// deleteVectorsBatch bounds the IDs of one statement of deleteVectors.
const deleteVectorsBatch = 500

// deleteVectors deletes the user's vectors of scope and ids, in every
// space, and bumps the version of each space it deleted from.
//
//	DELETE FROM vectors WHERE user_id = ? AND space_id IN (every space) AND scope = ? AND id IN (…)
//
// looks each ID up in vectors_key once a space (there are few).
func deleteVectors(ctx context.Context, tx *sql.Tx, userID, scope string, ids []string) error {
	code, ok := vecenc.ScopeCode(scope)
	if !ok || len(ids) == 0 {
		return nil // no vector has that scope
	}
	var spaces []string
	for len(ids) > 0 {
		batch := ids[:min(len(ids), deleteVectorsBatch)]
		ids = ids[len(batch):]
		args := make([]any, 0, 2+len(batch))
		args = append(args, userID, code)
		for _, id := range batch {
			args = append(args, vecenc.EncodeID(id))
		}
		rows, err := tx.QueryContext(ctx, `DELETE FROM vectors INDEXED BY vectors_key WHERE user_id = ? AND space_id IN (SELECT id FROM vector_spaces) AND scope = ?
			AND id IN (?`+strings.Repeat(", ?", len(batch)-1)+`) RETURNING (SELECT name FROM vector_spaces WHERE id = space_id)`, args...)
		if err != nil {
			return fmt.Errorf("delete vectors: %w", err)
		}
		for rows.Next() {
			var space string
			if err := rows.Scan(&space); err != nil {
				rows.Close()
				return fmt.Errorf("delete vectors: %w", err)
			}
			if !slices.Contains(spaces, space) {
				spaces = append(spaces, space)
			}
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return fmt.Errorf("delete vectors: %w", err)
		}
	}
	_, err := bumpVectorVersions(ctx, tx, userID, spaces, true)
	return err
}

// FindVectors implements agentmem.VectorStore.
//
//	SELECT scope, id, vec FROM vectors WHERE user_id = ? AND space_id = (the space's) [AND scope IN (…)]
//
// is a range scan of the primary key. The vectors are decoded into shared
// slabs (vecenc.List).
func (s *Store) FindVectors(ctx context.Context, userID, space string, scopes []string) ([]agentmem.Vector, error) {
	if err := agentmem.ValidateSpace(space); err != nil {
		return nil, err
	}
	q, args := `SELECT scope, id, vec FROM vectors WHERE user_id = ? AND space_id = `+spaceOf, []any{userID, space}
	if len(scopes) > 0 {
		var codes []any
		for _, sc := range scopes {
			if code, ok := vecenc.ScopeCode(sc); ok {
				codes = append(codes, code)
			}
		}
		if len(codes) == 0 {
			return []agentmem.Vector{}, nil
		}
		q += ` AND scope IN (?` + strings.Repeat(", ?", len(codes)-1) + `)`
		args = append(args, codes...)
	}
	return s.readVectors(ctx, space, q, args...)
}

// FindVectorsSince implements agentmem.VectorStore: the end of the user's
// range of the space in the primary key.
func (s *Store) FindVectorsSince(ctx context.Context, userID, space string, seq int64) ([]agentmem.Vector, error) {
	if err := agentmem.ValidateSpace(space); err != nil {
		return nil, err
	}
	return s.readVectors(ctx, space, `SELECT scope, id, vec FROM vectors WHERE user_id = ? AND space_id = `+spaceOf+` AND seq > ?`,
		userID, space, seq)
}

// ScanVectors calls fn with the stored bytes (package internal/vecenc) of
// each of the user's vectors of space, as FindVectors reads them; b is
// valid only during the call. It is what a search's vector cache loads,
// without a float32 in between.
func (s *Store) ScanVectors(ctx context.Context, userID, space string, fn func(scope, id string, b []byte) error) error {
	if err := agentmem.ValidateSpace(space); err != nil {
		return err
	}
	return s.scanVectors(ctx, fn, `SELECT scope, id, vec FROM vectors WHERE user_id = ? AND space_id = `+spaceOf, userID, space)
}

// ScanVectorsBySeq is ScanVectors of the vectors put by the space's
// writes up to maxSeq, in the order of their writes, or the reverse when
// desc, until fn returns an error, which it returns: a load can read a
// user's vectors from both ends side by side. Either way it is a range
// scan of the primary key.
func (s *Store) ScanVectorsBySeq(ctx context.Context, userID, space string, maxSeq int64, desc bool, fn func(scope, id string, b []byte) error) error {
	if err := agentmem.ValidateSpace(space); err != nil {
		return err
	}
	order := "ASC"
	if desc {
		order = "DESC"
	}
	return s.scanVectors(ctx, fn, `SELECT scope, id, vec FROM vectors WHERE user_id = ? AND space_id = `+spaceOf+` AND seq <= ?
		ORDER BY seq `+order, userID, space, maxSeq)
}

// CountVectors returns how many vectors of a space the user has (the
// search's cache reserves room for them before it loads them), from the
// narrow index vectors_key.
func (s *Store) CountVectors(ctx context.Context, userID, space string) (int, error) {
	var n int
	err := s.read(ctx, func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, `SELECT count(*) FROM vectors INDEXED BY vectors_key WHERE user_id = ? AND space_id = `+spaceOf,
			userID, space).Scan(&n)
	})
	if err != nil {
		return 0, fmt.Errorf("count vectors: %w", err)
	}
	return n, nil
}

// scanVectors runs q, a query of scope, id and vec of vectors, and calls
// fn with each row, its scope and ID decoded.
func (s *Store) scanVectors(ctx context.Context, fn func(scope, id string, b []byte) error, q string, args ...any) error {
	return s.read(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, q, args...)
		if err != nil {
			return fmt.Errorf("find vectors: %w", err)
		}
		defer rows.Close()
		var (
			code    int64
			id, vec sql.RawBytes
		)
		for rows.Next() {
			if err := rows.Scan(&code, &id, &vec); err != nil {
				return fmt.Errorf("scan vector: %w", err)
			}
			scope, ok := vecenc.Scope(code)
			if !ok {
				return fmt.Errorf("scan vector: unknown scope %d", code)
			}
			if err := fn(scope, vecenc.ID(id), vec); err != nil {
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

// VectorsVersion implements agentmem.VectorStore: one primary-key lookup.
func (s *Store) VectorsVersion(ctx context.Context, userID, space string) (string, error) {
	var version string
	err := s.read(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `SELECT version FROM vector_versions WHERE user_id = ? AND space = ?`, userID, space).Scan(&version)
		if errors.Is(err, sql.ErrNoRows) {
			version = agentmem.NewID() // none yet: a value never seen again
			return nil
		}
		return err
	})
	if err != nil {
		return "", fmt.Errorf("find vectors version: %w", err)
	}
	return version, nil
}

// VectorsState implements agentmem.VectorStore: one primary-key lookup.
func (s *Store) VectorsState(ctx context.Context, userID, space string) (agentmem.VectorsState, error) {
	var st agentmem.VectorsState
	err := s.read(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `SELECT version, epoch, seq, reset_seq FROM vector_versions WHERE user_id = ? AND space = ?`,
			userID, space).Scan(&st.Version, &st.Epoch, &st.Seq, &st.ResetSeq)
		if errors.Is(err, sql.ErrNoRows) {
			st = agentmem.VectorsState{Version: agentmem.NewID(), Epoch: agentmem.NewID()} // none yet: values never seen again
			return nil
		}
		return err
	})
	if err != nil {
		return st, fmt.Errorf("find vectors state: %w", err)
	}
	return st, nil
}

// VectorSpaces implements agentmem.VectorStore.
//
//	SELECT space FROM vector_versions v WHERE user_id = ? AND EXISTS (a vector of v's space)
//
// reads the user's few version rows and probes the primary key of vectors
// once per space, rather than scanning the user's vectors: PutVectors
// writes a version row for every space it writes.
func (s *Store) VectorSpaces(ctx context.Context, userID string) ([]string, error) {
	spaces := []string{}
	err := s.read(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT space FROM vector_versions v WHERE user_id = ?
			AND EXISTS (SELECT 1 FROM vectors x WHERE x.user_id = v.user_id AND x.space_id = (SELECT id FROM vector_spaces WHERE name = v.space))
			ORDER BY space`, userID)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var space string
			if err := rows.Scan(&space); err != nil {
				return err
			}
			spaces = append(spaces, space)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("find vector spaces: %w", err)
	}
	return spaces, nil
}

// DeleteVectorSpace implements agentmem.VectorStore. The space gets a new
// version only when vectors were deleted, so that a space the user never
// had keeps answering a new VectorsVersion on each call.
func (s *Store) DeleteVectorSpace(ctx context.Context, userID, space string) error {
	if err := agentmem.ValidateSpace(space); err != nil {
		return err
	}
	return s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM vectors WHERE user_id = ? AND space_id = `+spaceOf, userID, space)
		if err != nil {
			return fmt.Errorf("delete vector space: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return fmt.Errorf("delete vector space: %w", err)
		} else if n == 0 {
			return nil
		}
		_, err = bumpVectorVersions(ctx, tx, userID, []string{space}, true)
		return err
	})
}
