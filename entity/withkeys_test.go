package entity_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/entity"
	"github.com/agentmem/agentmem/internal/testutil"
	"github.com/google/go-cmp/cmp"
)

// TestWithKeys: a user's entities matched by keys in Go (a user with
// fewer entities than a page) are those FindEntities finds by the same
// keys, in its order: those named so first, then those with an alias, the
// most recently updated first.
func TestWithKeys(t *testing.T) {
	s := testutil.MustOpenSQLite(t)
	base := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	var es []*agentmem.Entity
	for i, e := range []struct {
		name    string
		aliases []string
	}{
		{"Ana", nil}, {"Ana Lopez", []string{"Ana"}}, {"Lisbon", []string{"Lisboa"}}, {"Pixel", []string{"the dog"}},
		{"Task Workflow", []string{"workflow"}}, {"Bruno", []string{"Pixel"}}, {"Porto", nil}, {"Mia", []string{"ana"}},
	} {
		es = append(es, &agentmem.Entity{Name: e.name, Aliases: e.aliases, Type: "other", CreatedAt: base, UpdatedAt: base.Add(time.Duration(i%3) * time.Hour)})
	}
	if err := s.PutEntities(ctx, "alice", es); err != nil {
		t.Fatal(err)
	}
	all, next, err := s.FindEntities(ctx, "alice", agentmem.EntityFilter{Limit: agentmem.MaxPageSize})
	if err != nil || next != "" || len(all) != len(es) {
		t.Fatalf("all: %d, %q, %v; want %d on one page", len(all), next, err, len(es))
	}
	for _, keys := range [][]string{
		{"ana"}, {"pixel"}, {"lisboa", "porto"}, {"workflow", "task workflow", "nobody"}, {"the dog", "ana", "bruno"}, {"nobody"},
		agentmem.MentionKeys("Ana and Mia walked Pixel to Porto, then the task workflow."),
	} {
		want, _, err := s.FindEntities(ctx, "alice", agentmem.EntityFilter{Keys: keys, Limit: agentmem.MaxPageSize})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(names(want), names(entity.WithKeys(all, keys))); diff != "" {
			t.Errorf("keys %q: (-FindEntities +WithKeys)\n%s", keys, diff)
		}
	}
}

func names(es []*agentmem.Entity) []string {
	out := []string{}
	for _, e := range es {
		out = append(out, fmt.Sprint(e.Name))
	}
	return out
}
