package storetest

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/agentmem/agentmem"
)

// OldVector is a vector as stored before vectors' keys were made short
// (SQLite migration 0022, PostgreSQL 0023): a row of the old vectors
// table, its space and scope by name and its ID as text.
type OldVector struct {
	User, Space, Scope, ID string
	Vec                    []float32
	Seq                    int64
}

// OldVectors are the vectors each backend's migration test writes in its
// own SQL before the migration, with a vector_versions row for each user's
// space at its highest seq (OldVectorSeqs): IDs of every form (UUIDs, a
// chunk summary's UUID and suffix, a thread's ID, an ID of the API's, an
// upper-case UUID), every scope, two spaces, two users.
func OldVectors() []OldVector {
	const uuid = "01900000-0000-7000-8000-00000000000"
	return []OldVector{
		{"alice", "static/2", agentmem.ScopeMessages, uuid + "1", []float32{1, 0}, 1},
		{"alice", "static/2", agentmem.ScopeMessages, uuid + "2", []float32{0, 1}, 2},
		{"alice", "static/2", agentmem.ScopeChunks, uuid + "3", []float32{1, 1}, 2},
		{"alice", "static/2", agentmem.ScopeChunks, uuid + "3" + agentmem.SummaryVectorSuffix, []float32{1, -1}, 2},
		{"alice", "static/2", agentmem.ScopeSummaries, "t1", []float32{-1, 0}, 3},
		{"alice", "model/3", agentmem.ScopeMemories, uuid + "4", []float32{1, 0, 0}, 1},
		{"alice", "model/3", agentmem.ScopeMemories, "my-memory", []float32{0, 1, 0}, 1},
		{"alice", "model/3", agentmem.ScopeMemories, "01900000-0000-7000-8000-00000000000A", []float32{0, 0, 1}, 1},
		{"bob", "static/2", agentmem.ScopeMessages, uuid + "5", []float32{0.6, 0.8}, 1},
	}
}

// OldVectorSeqs returns the seq of each user's space of OldVectors (its
// vector_versions row's): the highest of its vectors'.
func OldVectorSeqs() map[[2]string]int64 {
	seqs := map[[2]string]int64{}
	for _, v := range OldVectors() {
		k := [2]string{v.User, v.Space}
		seqs[k] = max(seqs[k], v.Seq)
	}
	return seqs
}

// CheckMigratedVectors checks a store migrated with OldVectors in it: every
// vector comes back with its scope, ID and values, by scope too; the seqs
// are kept (FindVectorsSince, VectorsState); each user's spaces are
// listed; and a put of each ID again replaces its vector rather than
// adding one, so the migration's keys are those the store writes.
func CheckMigratedVectors(t *testing.T, s agentmem.VectorStore) {
	t.Helper()
	ctx := context.Background()
	find := func(user, space string, scopes ...string) map[string][]float32 {
		t.Helper()
		vs, err := s.FindVectors(ctx, user, space, scopes)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string][]float32{}
		for _, v := range vs {
			got[v.Scope+"/"+v.ID] = v.Vec
		}
		return got
	}
	want := map[[2]string]map[string][]float32{}
	for _, v := range OldVectors() {
		k := [2]string{v.User, v.Space}
		if want[k] == nil {
			want[k] = map[string][]float32{}
		}
		want[k][v.Scope+"/"+v.ID] = v.Vec
	}
	for k, w := range want {
		got := find(k[0], k[1])
		if len(got) != len(w) {
			t.Errorf("%s's vectors of %s after the migration: %v, want %v", k[0], k[1], got, w)
		}
		for key, vec := range w {
			if !quantised(got[key], vec) {
				t.Errorf("%s's vector %s of %s after the migration: %v, want %v", k[0], key, k[1], got[key], vec)
			}
		}
	}
	if got := find("alice", "static/2", agentmem.ScopeChunks); len(got) != 2 {
		t.Errorf("alice's chunks' vectors after the migration: %v, want 2", got)
	}
	st, err := s.VectorsState(ctx, "alice", "static/2")
	if err != nil || st.Seq != 3 {
		t.Fatalf("VectorsState after the migration: %+v, %v; want seq 3", st, err)
	}
	since, err := s.FindVectorsSince(ctx, "alice", "static/2", 1)
	if err != nil || len(since) != 4 {
		t.Fatalf("vectors since seq 1 after the migration: %v, %v; want the 4 of seqs 2 and 3", since, err)
	}
	if spaces, err := s.VectorSpaces(ctx, "alice"); err != nil || !slices.Equal(spaces, []string{"model/3", "static/2"}) {
		t.Fatalf("alice's spaces after the migration: %v, %v", spaces, err)
	}
	for _, v := range OldVectors() {
		again := slices.Clone(v.Vec)
		again[0] += 2
		if err := s.PutVectors(ctx, v.User, []agentmem.Vector{{Scope: v.Scope, ID: v.ID, Space: v.Space, Vec: again}}); err != nil {
			t.Fatal(err)
		}
		got := find(v.User, v.Space)
		if w := want[[2]string{v.User, v.Space}]; len(got) != len(w) || !quantised(got[v.Scope+"/"+v.ID], again) {
			t.Fatalf("put %s/%s again after the migration: %d vectors (want %d), %v", v.Scope, v.ID, len(got), len(w),
				fmt.Sprint(got[v.Scope+"/"+v.ID]))
		}
	}
}
