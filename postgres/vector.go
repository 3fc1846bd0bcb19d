package postgres

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"

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

// PutVectors implements agentmem.VectorStore. It bumps the versions of the
// batch's spaces first, which locks them: puts of a space take turns, so
// the check of its dimension sees the vectors of the put before.
func (s *Store) PutVectors(ctx context.Context, userID string, vs []agentmem.Vector) error {
	vs, dims, err := agentmem.PrepareVectors(vs)
	if err != nil || len(vs) == 0 {
		return err
	}
	spaces := slices.Sorted(maps.Keys(dims))
	scopes, ids, vecs := make([]string, len(vs)), make([]string, len(vs)), make([][]byte, len(vs))
	vspaces := make([]string, len(vs))
	for i, v := range vs {
		vspaces[i], scopes[i], ids[i], vecs[i] = v.Space, v.Scope, v.ID, vecenc.Encode(v.Vec)
	}
	return s.writeRetrying(ctx, func(tx pgx.Tx) error {
		seqs, err := bumpVectorVersions(ctx, tx, userID, spaces, false)
		if err != nil {
			return err
		}
		vseqs := make([]int64, len(vs))
		for i, v := range vs {
			vseqs[i] = seqs[v.Space]
		}
		for _, space := range spaces {
			var b []byte
			err := tx.QueryRow(ctx, `SELECT vec FROM vectors WHERE user_id = $1 AND space = $2 LIMIT 1`, userID, space).Scan(&b)
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
		// vs is sorted, so the rows are locked in key order.
		if _, err := tx.Exec(ctx, `INSERT INTO vectors (user_id, space, scope, id, vec, seq)
			SELECT $1, * FROM unnest($2::text[], $3::text[], $4::text[], $5::bytea[], $6::bigint[])
			ON CONFLICT (user_id, space, scope, id) DO UPDATE SET vec = excluded.vec, seq = excluded.seq`, userID, vspaces, scopes, ids, vecs, vseqs); err != nil {
			return fmt.Errorf("put vectors: %w", err)
		}
		return nil
	})
}

// deleteVectors deletes the user's vectors of scope whose id satisfies
// cond (a condition on id, where $1 is the user, $2 the scope and $3 arg),
// in every space, and bumps the version of each space it deleted from.
// The caller has locked the user's vector versions (lockVectorVersions).
func deleteVectors(ctx context.Context, tx pgx.Tx, userID, scope, cond string, arg any) error {
	rows, err := tx.Query(ctx, `DELETE FROM vectors WHERE user_id = $1 AND scope = $2 AND `+cond+` RETURNING space`, userID, scope, arg)
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
//	SELECT scope, id, vec FROM vectors WHERE user_id = $1 AND space = $2 [AND scope = ANY($3)]
//
// is a range scan of the primary key. Each row is decoded from the bytes
// pgx received (RawValues: no copy, no reflection) into shared slabs
// (vecenc.List).
func (s *Store) FindVectors(ctx context.Context, userID, space string, scopes []string) ([]agentmem.Vector, error) {
	if err := agentmem.ValidateSpace(space); err != nil {
		return nil, err
	}
	q, args := `SELECT scope, id, vec FROM vectors WHERE user_id = $1 AND space = $2`, []any{userID, space}
	if len(scopes) > 0 {
		q, args = q+` AND scope = ANY($3)`, append(args, scopes)
	}
	return s.readVectors(ctx, space, q, args...)
}

// FindVectorsSince implements agentmem.VectorStore, through the index
// vectors_seq.
func (s *Store) FindVectorsSince(ctx context.Context, userID, space string, seq int64) ([]agentmem.Vector, error) {
	if err := agentmem.ValidateSpace(space); err != nil {
		return nil, err
	}
	return s.readVectors(ctx, space, `SELECT scope, id, vec FROM vectors WHERE user_id = $1 AND space = $2 AND seq > $3`, userID, space, seq)
}

// ScanVectors calls fn with the stored bytes (package internal/vecenc) of
// each of the user's vectors of space, as FindVectors reads them; b is
// valid only during the call. It is what a search's vector cache loads,
// without a float32 in between.
func (s *Store) ScanVectors(ctx context.Context, userID, space string, fn func(scope, id string, b []byte) error) error {
	if err := agentmem.ValidateSpace(space); err != nil {
		return err
	}
	return s.scanVectors(ctx, fn, `SELECT scope, id, vec FROM vectors WHERE user_id = $1 AND space = $2`, userID, space)
}

// scanVectors runs q, a query of scope, id and vec of vectors, and calls
// fn with each row.
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
			b := raw[2]
			if textFormat { // bytea as text is \x followed by hex (e.g. through a pooler in simple protocol)
				b, err = hex.DecodeString(string(bytes.TrimPrefix(b, []byte(`\x`))))
				if err != nil {
					return fmt.Errorf("decode vector: %w", err)
				}
			}
			if err := fn(string(raw[0]), string(raw[1]), b); err != nil {
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
			AND EXISTS (SELECT 1 FROM vectors x WHERE x.user_id = v.user_id AND x.space = v.space) ORDER BY space`, userID)
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
		tag, err := tx.Exec(ctx, `DELETE FROM vectors WHERE user_id = $1 AND space = $2`, userID, space)
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
