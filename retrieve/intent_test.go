package retrieve_test

import (
	"context"
	"errors"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/index"
	"github.com/agentmem/agentmem/internal/testutil"
	"github.com/agentmem/agentmem/llm/lexical"
	"github.com/agentmem/agentmem/retrieve"
	"github.com/agentmem/agentmem/storetest"
)

// TestSearch_Intent: a memory of the category the query asks about
// outranks an equally relevant one of another, with the weight recorded;
// an unsure intent, or none, leaves the order; a failing intent fails the
// search with its error.
func TestSearch_Intent(t *testing.T) {
	ctx := context.Background()
	s := testutil.MustOpenSQLite(t)
	emb := lexical.New(0)
	ix := &index.Indexer{Store: s, Emb: emb, Space: emb.Space()}
	ids := map[string]string{}
	for _, cat := range []string{"preference", "place"} {
		ids[cat] = mustMemory(t, s, ix, &agentmem.Memory{UserID: "alice", Text: "User and Leeds.", Category: cat, Importance: 0.5})
	}
	req := retrieve.Request{Query: "leeds", Scopes: []string{"memories"}}
	plain, err := retrieve.New(s, emb, emb.Space(), retrieve.Options{}).Search(ctx, "alice", req)
	if err != nil {
		t.Fatal(err)
	}
	first := plain.Results[0].ID
	other := map[string]string{ids["place"]: "preference", ids["preference"]: "place"}[first]
	for _, tc := range []struct {
		p     float64
		want  string
		boost bool
	}{{0.9, ids[other], true}, {0.2, first, false}} {
		intent := func(context.Context, string) (string, float64, error) { return other, tc.p, nil }
		resp, err := retrieve.New(s, emb, emb.Space(), retrieve.Options{Intent: intent}).Search(ctx, "alice", req)
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Results) != 2 || resp.Results[0].ID != tc.want {
			t.Fatalf("intent %s at %.1f: %+v, want %s first", other, tc.p, resp.Results, tc.want)
		}
		if got := resp.Results[0].Scores["intent"]; tc.boost && got != retrieve.DefaultIntentWeight || !tc.boost && got != 0 {
			t.Errorf("intent %s at %.1f: weight %v recorded", other, tc.p, got)
		}
	}
	down := func(context.Context, string) (string, float64, error) { return "", 0, errors.New("classifier down") }
	if _, err := retrieve.New(s, emb, emb.Space(), retrieve.Options{Intent: down}).Search(ctx, "alice", req); err == nil {
		t.Fatal("a failing intent: no error")
	}
}

// TestSearch_Said: a memory kept in the user's words is found by a search
// of memories, and left out where its turn is searched (the turn
// answers); the intent weighs in a search of memories only.
func TestSearch_Said(t *testing.T) {
	ctx := context.Background()
	s := testutil.MustOpenSQLite(t)
	emb := lexical.New(0)
	ix := &index.Indexer{Store: s, Emb: emb, Space: emb.Space()}
	if err := s.CreateThread(ctx, &agentmem.Thread{UserID: "alice", ID: "t"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendMessages(ctx, "alice", "t", []*agentmem.Message{{Role: agentmem.RoleUser, Content: "moved. new flat in harrogate, 2 bed"}}, agentmem.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := ix.IndexRange(ctx, "alice", "t", 1, 1); err != nil {
		t.Fatal(err)
	}
	m := &agentmem.Memory{UserID: "alice", Text: agentmem.SaidPrefix + "moved. new flat in harrogate, 2 bed.", Category: "place", ThreadID: "t", SeqFrom: 1, SeqTo: 1}
	mustMemory(t, s, ix, m)
	asked := 0
	intent := func(context.Context, string) (string, float64, error) { asked++; return "place", 1, nil }
	search := retrieve.New(s, emb, emb.Space(), retrieve.Options{Intent: intent})
	resp, err := search.Search(ctx, "alice", retrieve.Request{Query: "harrogate", Scopes: []string{"memories"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Results) != 1 || resp.Results[0].ID != m.ID || resp.Results[0].Scores["intent"] == 0 || asked != 1 {
		t.Fatalf("memories: %+v (intent asked %d times), want the memory in the user's words, weighed by the intent", resp.Results, asked)
	}
	resp, err = search.Search(ctx, "alice", retrieve.Request{Query: "harrogate", Scopes: []string{"memories", "messages"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Results) != 1 || resp.Results[0].Kind != "message" || asked != 1 {
		t.Fatalf("memories and messages: %+v (intent asked %d times), want the turn alone, no intent", resp.Results, asked)
	}
}

// TestSearch_OwnNames: the user's own name in a query means the user: it
// is searched as "they", and the memory that tells the name leaves the
// results, so that it does not answer every question that names them;
// a query without the name still finds it.
func TestSearch_OwnNames(t *testing.T) {
	ctx := context.Background()
	s := testutil.MustOpenSQLite(t)
	emb := lexical.New(0)
	ix := &index.Indexer{Store: s, Emb: emb, Space: emb.Space()}
	ids := map[string]string{}
	for _, text := range []string{"User's name is Chloe.", "User teaches Year 2 at a school in Southville."} {
		ids[text[:10]] = mustMemory(t, s, ix, &agentmem.Memory{UserID: "alice", Text: text, Category: "identity"})
	}
	req := retrieve.Request{Query: "Chloe's school", Scopes: []string{"memories"}}
	plain, err := retrieve.New(s, emb, emb.Space(), retrieve.Options{}).Search(ctx, "alice", req)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range plain.Results {
		found = found || r.ID == ids["User's nam"]
	}
	if !found {
		t.Fatalf("without OwnNames: %+v, want the memory of the name found by it", plain.Results)
	}
	if plain.Results[0].ID != ids["User's nam"] {
		t.Fatalf("without OwnNames: %+v, want the memory of the name first (the premise of the test)", plain.Results)
	}
	names := func(context.Context, string) ([]string, error) { return []string{"Chloe"}, nil }
	resp, err := retrieve.New(s, emb, emb.Space(), retrieve.Options{OwnNames: names}).Search(ctx, "alice", req)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Results) == 0 || resp.Results[0].ID != ids["User teach"] {
		t.Fatalf("with OwnNames: %+v, want the school first", resp.Results)
	}
	for _, r := range resp.Results {
		if r.ID == ids["User's nam"] {
			t.Errorf("the memory of the name is a result (score %v) of a question that names the user", r.Score)
		}
	}
	resp, err = retrieve.New(s, emb, emb.Space(), retrieve.Options{OwnNames: names}).Search(ctx, "alice", retrieve.Request{Query: "what is my name", Scopes: []string{"memories"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Results) == 0 || resp.Results[0].ID != ids["User's nam"] {
		t.Errorf("what is my name: %+v, want the memory of the name first", resp.Results)
	}
}

// TestSearch_OwnNamesSpeaker: a query that names the user still weighs
// the turns they wrote under that name (a message's Name, as LoCoMo's
// speakers have), though the name is searched as "they".
func TestSearch_OwnNamesSpeaker(t *testing.T) {
	ctx := context.Background()
	s := testutil.MustOpenSQLite(t)
	th := storetest.MustCreateThread(t, s, &agentmem.Thread{UserID: "alice"})
	if _, err := s.AppendMessages(ctx, "alice", th.ID, []*agentmem.Message{
		{Role: agentmem.RoleUser, Name: "Caroline", Content: "I went to the support group yesterday."},
		{Role: agentmem.RoleAssistant, Name: "Melanie", Content: "I went to the support group last year."},
	}, agentmem.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	names := func(context.Context, string) ([]string, error) { return []string{"Caroline"}, nil }
	resp, err := retrieve.New(s, nil, "", retrieve.Options{OwnNames: names}).Search(ctx, "alice", retrieve.Request{Query: "when did Caroline go to the support group?"})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Results) != 2 || resp.Results[0].Scores["speaker"] == 0 || !strings.Contains(resp.Results[0].Text, "yesterday") {
		t.Errorf("results %+v, want Caroline's turn first, weighed as hers", resp.Results)
	}
}

// mustMemory stores a memory and its vector, and returns its ID.
func mustMemory(t *testing.T, s agentmem.Store, ix *index.Indexer, m *agentmem.Memory) string {
	t.Helper()
	ctx := context.Background()
	if err := s.CreateMemory(ctx, m); err != nil {
		t.Fatal(err)
	}
	if err := ix.EmbedMemory(ctx, m); err != nil {
		t.Fatal(err)
	}
	return m.ID
}

// TestSearch_OwnNamesKept: the searcher asks for a user's names once, not
// at every search, and again once the user is forgotten (erased).
func TestSearch_OwnNamesKept(t *testing.T) {
	ctx := context.Background()
	s := testutil.MustOpenSQLite(t)
	asked := map[string]int{}
	names := func(_ context.Context, userID string) ([]string, error) {
		asked[userID]++
		return []string{"Chloe"}, nil
	}
	search := retrieve.New(s, nil, "", retrieve.Options{OwnNames: names})
	for _, user := range []string{"alice", "alice", "bob", "alice"} {
		if _, err := search.Search(ctx, user, retrieve.Request{Query: "where does Chloe work?"}); err != nil {
			t.Fatal(err)
		}
	}
	search.Forget("alice")
	if _, err := search.Search(ctx, "alice", retrieve.Request{Query: "where does Chloe work?"}); err != nil {
		t.Fatal(err)
	}
	if want := map[string]int{"alice": 2, "bob": 1}; !maps.Equal(asked, want) {
		t.Errorf("names asked %v, want %v", asked, want)
	}
}

// TestSearch_Present: a query about the present ("latest", "now", "at
// the moment") weighs the newer of two turns that answer alike above the
// older; without such a word the order is the text's.
func TestSearch_Present(t *testing.T) {
	ctx := context.Background()
	s := testutil.MustOpenSQLite(t)
	th := storetest.MustCreateThread(t, s, &agentmem.Thread{UserID: "alice"})
	day := time.Date(2024, 2, 1, 9, 0, 0, 0, time.UTC)
	if _, err := s.AppendMessages(ctx, "alice", th.ID, []*agentmem.Message{
		{Role: agentmem.RoleUser, Content: "My A1C came back at 8.4, the A1C result the doctor wanted lower.", CreatedAt: day},
		{Role: agentmem.RoleUser, Content: "Labs again: A1C 6.6.", CreatedAt: day.AddDate(0, 6, 0)},
	}, agentmem.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	search := retrieve.New(s, nil, "", retrieve.Options{})
	for query, want := range map[string]string{"what was the A1C result": "8.4", "what's the latest A1C result?": "6.6"} {
		resp, err := search.Search(ctx, "alice", retrieve.Request{Query: query})
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Results) != 2 || !strings.Contains(resp.Results[0].Text, want) {
			t.Errorf("%q: %+v, want the turn with %s first", query, resp.Results, want)
		}
	}
}
