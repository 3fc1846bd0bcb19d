package sqlite

import (
	"context"
	"database/sql"
	"encoding/binary"
	"math"
	"path/filepath"
	"testing"

	"github.com/agentmem/agentmem"
	"github.com/google/go-cmp/cmp"
)

// TestVectors_Float32: vectors stored as float32s, before quantisation,
// are still read, and fix the dimension of their space for new ones.
func TestVectors_Float32(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "agentmem.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
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
