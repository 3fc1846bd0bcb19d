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

// PutVectors implements agentmem.VectorStore.
func (s *Store) PutVectors(ctx context.Context, userID string, vs []agentmem.Vector) error {
	vs, dims, err := agentmem.PrepareVectors(vs)
	if err != nil || len(vs) == 0 {
		return err
	}
	// A vector's bytes: its 8-bit values and its row's keys.
	size := func(i int) int { return len(vs[i].Vec) + len(vs[i].ID) + len(vs[i].Space) + len(userID) }
	return s.writeSlices(ctx, len(vs), size, func(tx *sql.Tx, from, to int) error {
		vs := vs[from:to]
		for space, d := range dims {
			var b []byte
			err := tx.QueryRowContext(ctx, `SELECT vec FROM vectors WHERE user_id = ? AND space = ? LIMIT 1`, userID, space).Scan(&b)
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
		spaces := make([]string, 0, len(dims))
		for space := range dims {
			spaces = append(spaces, space)
		}
		seqs, err := bumpVectorVersions(ctx, tx, userID, spaces, false)
		if err != nil {
			return err
		}
		stmt, err := tx.PrepareContext(ctx, `INSERT INTO vectors (user_id, space, scope, id, vec, seq) VALUES (?, ?, ?, ?, ?, ?)
			ON CONFLICT (user_id, space, scope, id) DO UPDATE SET vec = excluded.vec, seq = excluded.seq`)
		if err != nil {
			return fmt.Errorf("prepare put vector: %w", err)
		}
		defer stmt.Close()
		for _, v := range vs {
			if _, err := stmt.ExecContext(ctx, userID, v.Space, v.Scope, v.ID, vecenc.Encode(v.Vec), seqs[v.Space]); err != nil {
				return fmt.Errorf("put vector: %w", err)
			}
		}
		return nil
	})
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

// deleteVectors deletes the user's vectors of scope whose id satisfies
// cond (what follows "id" in the condition, with args), in every space,
// and bumps the version of each space it deleted from.
func deleteVectors(ctx context.Context, tx *sql.Tx, userID, scope, cond string, args ...any) error {
	rows, err := tx.QueryContext(ctx, `DELETE FROM vectors WHERE user_id = ? AND scope = ? AND id `+cond+` RETURNING space`,
		append([]any{userID, scope}, args...)...)
	if err != nil {
		return fmt.Errorf("delete vectors: %w", err)
	}
	var spaces []string
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
	_, err = bumpVectorVersions(ctx, tx, userID, spaces, true)
	return err
}

// FindVectors implements agentmem.VectorStore.
//
//	SELECT scope, id, vec FROM vectors WHERE user_id = ? AND space = ? [AND scope IN (…)]
//
// is a range scan of the primary key. The vectors are decoded into shared
// slabs (vecenc.List).
func (s *Store) FindVectors(ctx context.Context, userID, space string, scopes []string) ([]agentmem.Vector, error) {
	if err := agentmem.ValidateSpace(space); err != nil {
		return nil, err
	}
	q, args := `SELECT scope, id, vec FROM vectors WHERE user_id = ? AND space = ?`, []any{userID, space}
	if len(scopes) > 0 {
		q += ` AND scope IN (?` + strings.Repeat(", ?", len(scopes)-1) + `)`
		for _, sc := range scopes {
			args = append(args, sc)
		}
	}
	return s.readVectors(ctx, space, q, args...)
}

// FindVectorsSince implements agentmem.VectorStore, through the index
// vectors_seq.
func (s *Store) FindVectorsSince(ctx context.Context, userID, space string, seq int64) ([]agentmem.Vector, error) {
	if err := agentmem.ValidateSpace(space); err != nil {
		return nil, err
	}
	return s.readVectors(ctx, space, `SELECT scope, id, vec FROM vectors WHERE user_id = ? AND space = ? AND seq > ?`, userID, space, seq)
}

// ScanVectors calls fn with the stored bytes (package internal/vecenc) of
// each of the user's vectors of space, as FindVectors reads them; b is
// valid only during the call. It is what a search's vector cache loads,
// without a float32 in between.
func (s *Store) ScanVectors(ctx context.Context, userID, space string, fn func(scope, id string, b []byte) error) error {
	if err := agentmem.ValidateSpace(space); err != nil {
		return err
	}
	return s.scanVectors(ctx, fn, `SELECT scope, id, vec FROM vectors WHERE user_id = ? AND space = ?`, userID, space)
}

// SplitVectors returns the key (scope and ID) that splits the user's
// vectors of space in halves of equal count, read from the narrow index
// of keys rather than the vectors: a load can then read the halves side
// by side (ScanVectorsHalf). ok is false when there are fewer than two.
func (s *Store) SplitVectors(ctx context.Context, userID, space string, n int) (scope, id string, ok bool, err error) {
	if n < 2 {
		return "", "", false, nil
	}
	err = s.read(ctx, func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, `SELECT scope, id FROM vectors INDEXED BY vectors_item WHERE user_id = ? AND space = ?
			ORDER BY scope, id LIMIT 1 OFFSET ?`, userID, space, n/2).Scan(&scope, &id)
	})
	if errors.Is(err, sql.ErrNoRows) {
		return "", "", false, nil
	} else if err != nil {
		return "", "", false, fmt.Errorf("split vectors: %w", err)
	}
	return scope, id, true, nil
}

// ScanVectorsHalf is ScanVectors over the vectors whose key (scope, ID)
// comes before the key given (first), or the others (not first).
func (s *Store) ScanVectorsHalf(ctx context.Context, userID, space, scope, id string, first bool, fn func(scope, id string, b []byte) error) error {
	if err := agentmem.ValidateSpace(space); err != nil {
		return err
	}
	cmp := ">="
	if first {
		cmp = "<"
	}
	return s.scanVectors(ctx, fn, `SELECT scope, id, vec FROM vectors WHERE user_id = ? AND space = ? AND (scope, id) `+cmp+` (?, ?)`, userID, space, scope, id)
}

// CountVectors returns how many vectors of a space the user has (the
// search's cache reserves room for them before it loads them).
func (s *Store) CountVectors(ctx context.Context, userID, space string) (int, error) {
	var n int
	err := s.read(ctx, func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, `SELECT count(*) FROM vectors WHERE user_id = ? AND space = ?`, userID, space).Scan(&n)
	})
	if err != nil {
		return 0, fmt.Errorf("count vectors: %w", err)
	}
	return n, nil
}

// scanVectors runs q, a query of scope, id and vec of vectors, and calls
// fn with each row.
func (s *Store) scanVectors(ctx context.Context, fn func(scope, id string, b []byte) error, q string, args ...any) error {
	return s.read(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, q, args...)
		if err != nil {
			return fmt.Errorf("find vectors: %w", err)
		}
		defer rows.Close()
		var (
			scope, id string
			vec       sql.RawBytes
		)
		for rows.Next() {
			if err := rows.Scan(&scope, &id, &vec); err != nil {
				return fmt.Errorf("scan vector: %w", err)
			}
			if err := fn(scope, id, vec); err != nil {
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
			AND EXISTS (SELECT 1 FROM vectors x WHERE x.user_id = v.user_id AND x.space = v.space) ORDER BY space`, userID)
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
		res, err := tx.ExecContext(ctx, `DELETE FROM vectors WHERE user_id = ? AND space = ?`, userID, space)
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
