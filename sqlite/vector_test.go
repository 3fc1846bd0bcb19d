package sqlite

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"math"
	"testing"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/internal/vecenc"
	"github.com/google/go-cmp/cmp"
)

// TestVectors_Float32: vectors stored as float32s, before quantisation,
// are still read, and fix the dimension of their space for new ones.
func TestVectors_Float32(t *testing.T) {
	ctx := context.Background()
	s := mustOpen(t, Options{})
	var err error
	old := []float32{0.6, 0, 0, 0.8}
	b := make([]byte, 16)
	for i, x := range old {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	err = s.write(ctx, func(tx *sql.Tx) error {
		var space int64
		if err := tx.QueryRowContext(ctx, `INSERT INTO vector_spaces (name) VALUES ('test/4') RETURNING id`).Scan(&space); err != nil {
			return err
		}
		scope, _ := vecenc.ScopeCode(agentmem.ScopeMemories)
		_, err := tx.ExecContext(ctx, `INSERT INTO vectors (user_id, space_id, seq, scope, id, vec) VALUES ('alice', ?, 0, ?, ?, ?)`,
			space, scope, vecenc.EncodeID("old"), b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PutVectors(ctx, "alice", []agentmem.Vector{{Scope: agentmem.ScopeMemories, ID: "new", Space: "test/4", Vec: []float32{0, 1, 0, 0}}}); err != nil {
		t.Fatal(err)
	}
	err = s.PutVectors(ctx, "alice", []agentmem.Vector{{Scope: agentmem.ScopeMemories, ID: "bad", Space: "test/4", Vec: []float32{1, 0, 0}}})
	if agentmem.ErrorCode(err) != agentmem.EINVALID {
		t.Fatalf("3 dimensions in a space of 4: %v, want EINVALID", err)
	}
	vs, err := s.FindVectors(ctx, "alice", "test/4", nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]float32{}
	for _, v := range vs {
		got[v.ID] = v.Vec
	}
	if diff := cmp.Diff(map[string][]float32{"old": old, "new": {0, 1, 0, 0}}, got); diff != "" {
		t.Fatalf("vectors (-want +got):\n%s", diff)
	}
}

// TestCountVectors: the count the search's cache reserves room by is the
// user's vectors of the space, replaced ones once.
func TestCountVectors(t *testing.T) {
	ctx := context.Background()
	s := mustOpen(t, Options{})
	put := func(user, space, id string) {
		t.Helper()
		if err := s.PutVectors(ctx, user, []agentmem.Vector{{Scope: agentmem.ScopeMemories, ID: id, Space: space, Vec: []float32{1, 0}}}); err != nil {
			t.Fatal(err)
		}
	}
	put("alice", "a/2", "m1")
	put("alice", "a/2", "m2")
	put("alice", "a/2", "m2") // replaced
	put("alice", "b/2", "m1")
	put("bob", "a/2", "m1")
	for _, c := range []struct {
		user, space string
		want        int
	}{{"alice", "a/2", 2}, {"alice", "b/2", 1}, {"bob", "a/2", 1}, {"carol", "a/2", 0}} {
		if n, err := s.CountVectors(ctx, c.user, c.space); err != nil || n != c.want {
			t.Errorf("CountVectors(%s, %s) = %d, %v; want %d", c.user, c.space, n, err, c.want)
		}
	}
}

// TestScanVectorsBySeq: the vectors put by the writes up to a seq, in the
// order of their writes either way, until fn stops it; a vector put again
// moves to its new write.
func TestScanVectorsBySeq(t *testing.T) {
	ctx := context.Background()
	s := mustOpen(t, Options{})
	for _, ids := range [][]string{{"a", "b"}, {"c"}, {"a", "d"}} {
		var vs []agentmem.Vector
		for _, id := range ids {
			vs = append(vs, agentmem.Vector{Scope: agentmem.ScopeMemories, ID: id, Space: "test/2", Vec: []float32{1, 0}})
		}
		if err := s.PutVectors(ctx, "alice", vs); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.PutVectors(ctx, "bob", []agentmem.Vector{{Scope: agentmem.ScopeMemories, ID: "x", Space: "test/2", Vec: []float32{1, 0}}}); err != nil {
		t.Fatal(err)
	}
	scan := func(maxSeq int64, desc bool, stopAfter int) []string {
		t.Helper()
		var got []string
		errStop := errors.New("stop")
		err := s.ScanVectorsBySeq(ctx, "alice", "test/2", maxSeq, desc, func(scope, id string, b []byte) error {
			if len(got) == stopAfter {
				return errStop
			}
			got = append(got, id)
			return nil
		})
		if err != nil && !errors.Is(err, errStop) {
			t.Fatal(err)
		}
		return got
	}
	for _, tc := range []struct {
		maxSeq    int64
		desc      bool
		stopAfter int
		want      []string
	}{
		{3, false, 9, []string{"b", "c", "a", "d"}},
		{3, true, 9, []string{"d", "a", "c", "b"}},
		{2, false, 9, []string{"b", "c"}},
		{2, true, 9, []string{"c", "b"}},
		{3, true, 1, []string{"d"}},
		{0, false, 9, nil},
	} {
		if diff := cmp.Diff(tc.want, scan(tc.maxSeq, tc.desc, tc.stopAfter)); diff != "" {
			t.Errorf("up to %d, desc %v, %d at most: (-want +got):\n%s", tc.maxSeq, tc.desc, tc.stopAfter, diff)
		}
	}
}
