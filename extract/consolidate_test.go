package extract_test

import (
	"context"
	"testing"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/extract"
	"github.com/agentmem/agentmem/internal/testutil"
	"github.com/agentmem/agentmem/llm/lexical"
	"github.com/agentmem/agentmem/sqlite"
)

var ctx = context.Background()

func mustConsolidator(t *testing.T) (*extract.Consolidator, *sqlite.Store) {
	t.Helper()
	s := testutil.MustOpenSQLite(t)
	emb := lexical.New(0)
	return &extract.Consolidator{Store: s, Emb: emb, Space: emb.Space()}, s
}

// say consolidates what the user said in one message.
func say(t *testing.T, c *extract.Consolidator, seq int64, text string) []extract.Decision {
	t.Helper()
	cands := extract.Heuristic([]*agentmem.Message{{Seq: seq, Role: agentmem.RoleUser, Content: text}})
	if len(cands) == 0 {
		t.Fatalf("%q: nothing extracted", text)
	}
	ds, err := c.Apply(ctx, "alice", "", "t1", cands)
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

func valid(t *testing.T, s *sqlite.Store) []*agentmem.Memory {
	t.Helper()
	ms, _, err := s.FindMemories(ctx, "alice", agentmem.MemoryFilter{})
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

// TestConsolidate: a repeated statement is a NOOP, a contradicted one is
// invalidated (kept, with its history and the memory that superseded
// it), so that no duplicate and no contradiction ever stand side by side.
func TestConsolidate(t *testing.T) {
	c, s := mustConsolidator(t)
	if d := say(t, c, 1, "I live in Lisbon."); d[0].Op != extract.OpAdd {
		t.Fatalf("first statement: %+v", d)
	}
	if d := say(t, c, 2, "I live in Lisbon!"); d[0].Op != extract.OpNoop {
		t.Fatalf("repeated statement: %s, want noop", d[0].Op)
	}
	lisbon := valid(t, s)[0]
	d := say(t, c, 3, "I moved to Berlin last month.")
	if d[0].Op != extract.OpInvalidate || d[0].Old.ID != lisbon.ID {
		t.Fatalf("contradiction: %+v, want the Lisbon memory invalidated", d[0])
	}
	ms := valid(t, s)
	if len(ms) != 1 || ms[0].Text != "User moved to Berlin last month." || ms[0].SeqFrom != 3 || ms[0].ThreadID != "t1" {
		t.Fatalf("valid memories after the move: %+v", ms)
	}
	old, err := s.FindMemoryByID(ctx, "alice", lisbon.ID)
	if err != nil || old.Valid() || old.SupersededBy != ms[0].ID {
		t.Fatalf("the Lisbon memory: %+v, %v; want invalidated, superseded by %s", old, err, ms[0].ID)
	}
	h, err := s.FindMemoryHistory(ctx, "alice", lisbon.ID)
	if err != nil || len(h) != 2 || h[0].Op != agentmem.OpAdd || h[1].Op != agentmem.OpInvalidate {
		t.Fatalf("history %+v, %v; want add then invalidate", h, err)
	}

	// Preferences: a negation contradicts.
	say(t, c, 4, "I love sushi.")
	if d := say(t, c, 5, "I don't like sushi anymore."); d[0].Op != extract.OpInvalidate {
		t.Fatalf("changed preference: %+v, want invalidate", d[0])
	}
	texts := map[string]bool{}
	for _, m := range valid(t, s) {
		if texts[m.Text] {
			t.Fatalf("duplicate memory %q", m.Text)
		}
		texts[m.Text] = true
	}
	if texts["User likes sushi."] || !texts["User does not like sushi anymore."] {
		t.Fatalf("valid memories %v: the old preference must be gone", texts)
	}
}
