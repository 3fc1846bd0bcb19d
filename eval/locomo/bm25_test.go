package locomo_test

import (
	"context"
	"testing"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/eval/locomo"
	"github.com/agentmem/agentmem/internal/testutil"
	"github.com/google/go-cmp/cmp"
)

func TestBM25Searcher(t *testing.T) {
	ctx := context.Background()
	store := testutil.MustOpenSQLite(t)
	c, err := locomo.Ingest(ctx, store, mustReadFixture(t))
	if err != nil {
		t.Fatal(err)
	}
	s := locomo.NewBM25Searcher(store)
	// search returns the dia_ids of the hits, checking their shape.
	search := func(user, query string, topK int) []string {
		t.Helper()
		hits, err := s.Search(ctx, user, query, topK)
		if err != nil {
			t.Fatal(err)
		}
		out := []string{}
		for i, h := range hits {
			if h.Scope != agentmem.ScopeMessages || h.SeqFrom != h.SeqTo || h.Text == "" || h.Score <= 0 {
				t.Errorf("%q: hit %d = %+v", query, i, h)
			}
			if i > 0 && h.Score > hits[i-1].Score {
				t.Errorf("%q: hit %d scores %v, more than the hit before it", query, i, h.Score)
			}
			dia, ok := c.DiaIDs[locomo.TurnKey{ThreadID: h.ThreadID, Seq: h.SeqFrom}]
			if !ok {
				dia = h.ThreadID + "/new"
			}
			out = append(out, dia)
		}
		return out
	}

	for _, tc := range []struct {
		query string
		topK  int
		want  []string
	}{
		{"greyhound", 10, []string{"D2:1"}}, // not "Greyhounds": no stemming
		// Both words beat either; the shorter turn of one word wins a tie of tf.
		{"PETREL lighthouse?", 10, []string{"D1:4", "D3:1", "D3:2"}},
		{"the shared image of a dog on a couch", 1, []string{"D2:3"}}, // the caption is searchable
		{"cello", 2, []string{"D3:4", "D2:2"}},                        // the shortest turns first: D1:1 is longer
		{"unicorn", 10, []string{}},
		{"", 10, []string{}},
		{"cello", 0, []string{}},
	} {
		if got := search(c.UserID, tc.query, tc.topK); !cmp.Equal(got, tc.want) {
			t.Errorf("Search(%q, %d) = %q, want %q", tc.query, tc.topK, got, tc.want)
		}
	}
	if got := search("locomo-nobody", "cello", 10); len(got) != 0 {
		t.Errorf("another user's search = %q, want nothing", got)
	}

	// The index is read once; Index reads the messages again.
	_, err = store.AppendMessages(ctx, c.UserID, "session-3", []*agentmem.Message{{Role: "user", Content: "A unicorn!"}}, agentmem.AppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := search(c.UserID, "unicorn", 10); len(got) != 0 {
		t.Errorf("before Index: %q, want nothing", got)
	}
	if err := s.Index(ctx, c.UserID); err != nil {
		t.Fatal(err)
	}
	if got := search(c.UserID, "unicorn", 10); !cmp.Equal(got, []string{"session-3/new"}) {
		t.Errorf("after Index: %q, want the new message", got)
	}
}
