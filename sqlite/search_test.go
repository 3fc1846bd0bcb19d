package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"github.com/agentmem/agentmem"
	"github.com/google/go-cmp/cmp"
)

// TestSearchMessages_Bound: searchMessages joins only the best
// windowCandidates windows to their messages, yet finds what a search of
// all the matches finds: a user whose windows rank below another user's
// best hundreds still gets theirs, and so does a filter on a thread.
func TestSearchMessages_Bound(t *testing.T) {
	ctx := context.Background()
	s := mustOpen(t, Options{})
	// big's windows say kiwi in few words (high BM25), small's in many.
	load := func(user string, threads, turns int, text string) {
		t.Helper()
		for th := range threads {
			id := fmt.Sprint("t", th)
			if err := s.CreateThread(ctx, &agentmem.Thread{UserID: user, ID: id}); err != nil {
				t.Fatal(err)
			}
			msgs := make([]*agentmem.Message, turns)
			ws := make([]agentmem.MessageWindow, turns)
			for i := range msgs {
				msgs[i] = &agentmem.Message{Role: agentmem.RoleUser, Content: fmt.Sprintf(text, th, i)}
				ws[i] = agentmem.MessageWindow{Seq: int64(i + 1), Text: msgs[i].Content}
			}
			if _, err := s.AppendMessages(ctx, user, id, msgs, agentmem.AppendOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := s.PutMessageWindows(ctx, user, id, ws); err != nil {
				t.Fatal(err)
			}
		}
	}
	load("big", 5, 100, "kiwi kiwi %d %d")
	load("small", 2, 3, "a long story of the market where I once bought a kiwi and many other fruits %d %d")
	all := func(user string, q agentmem.TextQuery) []agentmem.TextHit {
		t.Helper()
		var hits []agentmem.TextHit
		err := s.read(ctx, func(tx *sql.Tx) error {
			var err error
			hits, err = searchMessagesWithin(ctx, tx, user, ftsQuery([]string{"kiwi"}), q, -1)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return hits
	}
	thread := "t1"
	for _, tc := range []struct {
		user  string
		q     agentmem.TextQuery
		found int
	}{
		{"big", agentmem.TextQuery{Query: "kiwi", Limit: 10}, 10},
		{"small", agentmem.TextQuery{Query: "kiwi", Limit: 10}, 6},
		{"big", agentmem.TextQuery{Query: "kiwi", Limit: 10, Filter: agentmem.SearchFilter{ThreadID: &thread}}, 10},
	} {
		tc.q.Scopes = []string{agentmem.ScopeMessages}
		got, err := s.SearchText(ctx, tc.user, tc.q)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != tc.found {
			t.Fatalf("%s %+v: %d hits, want %d", tc.user, tc.q.Filter, len(got), tc.found)
		}
		for _, h := range got {
			if tc.q.Filter.ThreadID != nil && h.ThreadID != thread || !strings.Contains(h.Text, "kiwi") {
				t.Fatalf("%s: hit %+v", tc.user, h)
			}
		}
		if diff := cmp.Diff(all(tc.user, tc.q), got); diff != "" {
			t.Fatalf("%s %+v: bounded search differs from the search of all matches (-all +bounded):\n%s", tc.user, tc.q.Filter, diff)
		}
	}
}
