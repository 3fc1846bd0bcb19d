package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
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
				ws[i] = agentmem.MessageWindow{Seq: int64(i + 1), Turns: []int64{int64(i + 1)}}
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
			scores, _, err := windowScores(ctx, tx, user, []string{"kiwi"}, -1)
			if err != nil {
				return err
			}
			var pairs [][2]float64
			for _, d := range agentmem.Top(scores, -1) {
				pairs = append(pairs, [2]float64{float64(d.Key), d.Score})
			}
			docs, err := json.Marshal(pairs)
			if err != nil {
				return err
			}
			hits, err = joinMessages(ctx, tx, user, q, docsScores, string(docs))
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
		// Equal scores may come in another order (SortHits orders them by
		// ID, the bound by their rowids): the scores must be the same.
		scores := func(hits []agentmem.TextHit) (s []float64) {
			for _, h := range hits {
				s = append(s, h.Score)
			}
			return s
		}
		if diff := cmp.Diff(scores(all(tc.user, tc.q)), scores(got)); diff != "" {
			t.Fatalf("%s %+v: bounded search differs from the search of all matches (-all +bounded):\n%s", tc.user, tc.q.Filter, diff)
		}
	}
}

// TestSearchMessages_Bounded: when a word of the query is held by more
// than termCandidates of the user's windows, the search ranks the
// windows the words' lists hold, in Go: a rare word's old window still
// comes first, its own turn before its neighbours; a turn without a
// window yet is found by its own words; another user's never; filters
// hold.
func TestSearchMessages_Bounded(t *testing.T) {
	ctx := context.Background()
	s := mustOpen(t, Options{})
	load := func(user, thread string, texts []string, windowed int) {
		t.Helper()
		if err := s.CreateThread(ctx, &agentmem.Thread{UserID: user, ID: thread, AgentID: "a1"}); err != nil {
			t.Fatal(err)
		}
		msgs := make([]*agentmem.Message, len(texts))
		seqs := make([]int64, len(texts))
		for i := range msgs {
			msgs[i] = &agentmem.Message{Role: agentmem.RoleUser, Content: texts[i]}
			seqs[i] = int64(i + 1)
		}
		ws := agentmem.TurnWindows(seqs)[:windowed]
		for i := 0; i < len(msgs); i += agentmem.MaxPageSize {
			if _, err := s.AppendMessages(ctx, user, thread, msgs[i:min(i+agentmem.MaxPageSize, len(msgs))], agentmem.AppendOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		for i := 0; i < len(ws); i += agentmem.MaxPageSize {
			if err := s.PutMessageWindows(ctx, user, thread, ws[i:min(i+agentmem.MaxPageSize, len(ws))]); err != nil {
				t.Fatal(err)
			}
		}
	}
	var texts []string
	for i := range termCandidates + 100 {
		texts = append(texts, fmt.Sprintf("coffee again, day %d", i))
	}
	texts[5] = "coffee in zanzibar"
	texts = append(texts, "a walrus and coffee", "nothing")
	load("big", "t0", []string{"coffee at the old place", "more coffee there", "the last coffee"}, 3) // older than every list
	load("big", "t1", texts, len(texts)-2)                                                            // the last two have no window yet
	load("other", "t1", []string{"coffee in zanzibar with a walrus"}, 1)

	search := func(q agentmem.TextQuery) []agentmem.TextHit {
		t.Helper()
		q.Scopes, q.Limit = []string{agentmem.ScopeMessages}, 10
		hits, err := s.SearchText(ctx, "big", q)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hits {
			if strings.Contains(h.Text, "with a walrus") {
				t.Fatalf("%q: another user's turn %+v", q.Query, h)
			}
		}
		return hits
	}
	hits := search(agentmem.TextQuery{Query: "coffee zanzibar"})
	if len(hits) != 10 || hits[0].Text != "coffee in zanzibar" || hits[1].SeqFrom < 4 || hits[1].SeqFrom > 8 {
		t.Fatalf("coffee zanzibar: %+v, want zanzibar's turn, then its neighbours", hits[:min(3, len(hits))])
	}
	if hits := search(agentmem.TextQuery{Query: "walrus coffee"}); len(hits) == 0 || hits[0].Text != "a walrus and coffee" {
		t.Fatalf("walrus coffee: %+v, want the turn without a window first", hits)
	}
	old := "t0"
	if hits := search(agentmem.TextQuery{Query: "coffee zanzibar", Filter: agentmem.SearchFilter{ThreadID: &old}}); len(hits) != 3 || hits[0].ThreadID != old {
		t.Fatalf("in the old thread: %+v, want its three turns", hits)
	}
	other, agent := "t2", "a2"
	if hits := search(agentmem.TextQuery{Query: "coffee zanzibar", Filter: agentmem.SearchFilter{ThreadID: &other}}); len(hits) != 0 {
		t.Fatalf("in another thread: %+v, want none", hits)
	}
	if hits := search(agentmem.TextQuery{Query: "coffee zanzibar", Filter: agentmem.SearchFilter{AgentID: &agent}}); len(hits) != 0 {
		t.Fatalf("of another agent: %+v, want none", hits)
	}
}

// TestSearchMemories_Bounded: memories are searched as turns are: when a
// word of the query is held by more than termCandidates of the user's
// memories, the lists' memories are ranked in Go; a rare word's old
// memory still comes first, invalidated ones and another user's never,
// and filters hold.
func TestSearchMemories_Bounded(t *testing.T) {
	ctx := context.Background()
	s := mustOpen(t, Options{})
	add := func(user, text, category string) *agentmem.Memory {
		t.Helper()
		m := &agentmem.Memory{UserID: user, Text: text, Category: category, Confidence: 1, Importance: 0.5}
		if err := s.CreateMemory(ctx, m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	add("big", "User drinks coffee in Zanzibar.", "place")
	old := add("big", "User drinks coffee in Zanzibar with a walrus.", "place")
	for i := range termCandidates + 100 {
		add("big", fmt.Sprintf("User had coffee on day %d.", i), "fact")
	}
	repl := add("big", "User had coffee at home.", "fact")
	if _, err := s.InvalidateMemory(ctx, "big", old.ID, repl.ID, "test"); err != nil {
		t.Fatal(err)
	}
	add("other", "User drinks coffee in Zanzibar, another user.", "place")
	search := func(q agentmem.TextQuery) []agentmem.TextHit {
		t.Helper()
		q.Scopes, q.Limit = []string{agentmem.ScopeMemories}, 10
		hits, err := s.SearchText(ctx, "big", q)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hits {
			if strings.Contains(h.Text, "another user") || strings.Contains(h.Text, "walrus") {
				t.Fatalf("%q: hit %q, another user's or invalidated", q.Query, h.Text)
			}
		}
		return hits
	}
	if hits := search(agentmem.TextQuery{Query: "coffee zanzibar walrus"}); len(hits) != 10 || hits[0].Text != "User drinks coffee in Zanzibar." {
		t.Fatalf("coffee zanzibar: %+v, want the Zanzibar memory first", hits[:min(2, len(hits))])
	}
	place := "place"
	if hits := search(agentmem.TextQuery{Query: "coffee", Filter: agentmem.SearchFilter{Category: &place}}); len(hits) != 1 || hits[0].Text != "User drinks coffee in Zanzibar." {
		t.Fatalf("coffee in category place: %+v, want the one valid place memory", hits)
	}
	hits, err := s.SearchText(ctx, "big", agentmem.TextQuery{Query: "coffee walrus", Scopes: []string{agentmem.ScopeMemories}, Limit: 10,
		Filter: agentmem.SearchFilter{IncludeInvalid: true}})
	if err != nil || len(hits) == 0 || !strings.Contains(hits[0].Text, "walrus") {
		t.Fatalf("with the invalidated: %+v, %v; want the walrus first", hits, err)
	}
}

// TestSearchTotals: the user's windows and memories, and their words, as
// search_totals keeps them, agree with a count of the rows after windows
// are put, put again and deleted with their thread, and memories are
// created, rewritten and deleted; another user's are apart.
func TestSearchTotals(t *testing.T) {
	ctx := context.Background()
	s := mustOpen(t, Options{})
	check := func(when string) {
		t.Helper()
		for _, user := range []string{"alice", "bob"} {
			var items, words, wantItems, wantWords float64
			for _, c := range []struct{ scope, count string }{
				{agentmem.ScopeMessages, `SELECT count(*), total(len) FROM message_windows WHERE user_id = ?`},
				{agentmem.ScopeMemories, `SELECT count(*), total(` + sqlWords("text") + `) FROM memories WHERE user_id = ?`},
			} {
				err := s.read(ctx, func(tx *sql.Tx) error {
					var err error
					if items, words, err = searchTotals(ctx, tx, user, c.scope); err != nil {
						return err
					}
					return tx.QueryRowContext(ctx, c.count, user).Scan(&wantItems, &wantWords)
				})
				if err != nil {
					t.Fatal(err)
				}
				if items != wantItems || words != wantWords {
					t.Errorf("%s: %s's %s: %v items, %v words; the rows hold %v, %v", when, user, c.scope, items, words, wantItems, wantWords)
				}
			}
		}
	}
	for _, user := range []string{"alice", "bob"} {
		if err := s.CreateThread(ctx, &agentmem.Thread{UserID: user, ID: "t"}); err != nil {
			t.Fatal(err)
		}
		var msgs []*agentmem.Message
		for i := range 6 {
			msgs = append(msgs, &agentmem.Message{Role: agentmem.RoleUser, Name: "Ann", Content: strings.Repeat("word ", i+1)})
		}
		if _, err := s.AppendMessages(ctx, user, "t", msgs, agentmem.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	check("no windows")
	if err := s.PutMessageWindows(ctx, "alice", "t", agentmem.TurnWindows([]int64{1, 2, 3, 4})); err != nil {
		t.Fatal(err)
	}
	check("windows put")
	if err := s.PutMessageWindows(ctx, "alice", "t", agentmem.TurnWindows([]int64{1, 2, 3, 4, 5, 6})); err != nil {
		t.Fatal(err)
	}
	check("windows put again, and more")
	m := &agentmem.Memory{UserID: "alice", Text: "User likes green tea.", Confidence: 1, Importance: 0.5}
	if err := s.CreateMemory(ctx, m); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateMemory(ctx, &agentmem.Memory{UserID: "bob", Text: "User runs.", Confidence: 1, Importance: 0.5}); err != nil {
		t.Fatal(err)
	}
	check("memories created")
	text := "User likes green tea in the morning, and coffee after lunch."
	if _, err := s.UpdateMemory(ctx, "alice", m.ID, agentmem.MemoryUpdate{Text: &text}); err != nil {
		t.Fatal(err)
	}
	check("memory rewritten")
	if err := s.DeleteMemory(ctx, "alice", m.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteThread(ctx, "alice", "t", true); err != nil {
		t.Fatal(err)
	}
	check("memory and thread deleted")
}
