package storetest

import (
	"context"
	"slices"
	"testing"

	"github.com/agentmem/agentmem"
)

// CheckBackfilledSources checks what migration 0017 made of alice's
// memories stored before it (each backend's migration test writes them
// in its own SQL): "hull" (invalidated) and "leeds" keep their turn of
// thread t1 as their one source, "gone" (its thread deleted) and "api"
// (stored through the API) have none, and a search of t1's turns finds
// the invalidated Hull memory alone.
func CheckBackfilledSources(t *testing.T, s agentmem.MemoryStore) {
	t.Helper()
	ctx := context.Background()
	for id, want := range map[string][]agentmem.ThreadRange{
		"hull":  {{ThreadID: "t1", SeqFrom: 1, SeqTo: 1}},
		"leeds": {{ThreadID: "t1", SeqFrom: 2, SeqTo: 2}},
		"gone":  nil,
		"api":   nil,
	} {
		m, err := s.FindMemoryByID(ctx, "alice", id)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(m.Sources, want) {
			t.Errorf("%s: sources %v, want %v", id, m.Sources, want)
		}
	}
	srcs, err := s.FindMemorySources(ctx, "alice", []agentmem.ThreadRange{{ThreadID: "t1", SeqFrom: 1, SeqTo: 1}, {ThreadID: "t1", SeqFrom: 2, SeqTo: 2}})
	if err != nil || len(srcs) != 1 || srcs[0].ID != "hull" || srcs[0].InvalidAt == nil {
		t.Fatalf("FindMemorySources after the migration: %+v, %v; want the invalidated Hull memory alone", srcs, err)
	}
}
