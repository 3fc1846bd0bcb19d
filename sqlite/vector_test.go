package sqlite

import (
	"context"
	"database/sql"
	"encoding/binary"
	"math"
	"testing"

	"github.com/agentmem/agentmem"
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
		_, err := tx.ExecContext(ctx, `INSERT INTO vectors (user_id, space, scope, id, vec, seq) VALUES ('alice', 'test/4', 'memories', 'old', ?, 0)`, b)
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
