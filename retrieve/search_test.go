package retrieve_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/index"
	"github.com/agentmem/agentmem/internal/testutil"
	"github.com/agentmem/agentmem/llm/lexical"
	"github.com/agentmem/agentmem/llm/minilm"
	"github.com/agentmem/agentmem/retrieve"
)

// failing is an embedder that is down.
type failing struct{}

func (failing) Embed(context.Context, []string) ([][]float32, error) {
	return nil, agentmem.Errorf(agentmem.EUNAVAILABLE, "down")
}

// TestSearch_Scopes: chunks (each once, though it has two vectors) and
// thread summaries are found in their scopes, beside messages, with
// their provenance; without an embedder, full-text alone answers and says
// so.
func TestSearch_Scopes(t *testing.T) {
	ctx := context.Background()
	s := testutil.MustOpenSQLite(t)
	emb := lexical.New(0)
	ix := &index.Indexer{Store: s, Emb: emb, Space: emb.Space(),
		Summarize: func(context.Context, []*agentmem.Message) (string, error) {
			return "Alice talks about her kayak trip.", nil
		}}
	mustIndexKayak(t, s, ix)

	search := retrieve.New(s, emb, emb.Space(), retrieve.Options{})
	resp, err := search.Search(ctx, "alice", retrieve.Request{Query: "kayak trip", Scopes: []string{"chunks", "summaries", "messages"}, TopK: 10})
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, r := range resp.Results {
		kinds[r.Kind]++
		if r.ThreadID != "t" || r.SeqFrom < 1 || r.SeqTo < r.SeqFrom || r.SeqTo > 2 || r.Kind != "message" && r.SeqTo != 2 || r.Scores["vector"] == 0 {
			t.Errorf("result %+v", r)
		}
	}
	if kinds["chunk"] != 1 || kinds["summary"] != 1 || kinds["message"] != 2 || len(resp.Warnings) != 0 {
		t.Fatalf("results by kind %v (want 1 chunk, 1 summary, 2 messages): %+v", kinds, resp)
	}

	down := retrieve.New(s, failing{}, emb.Space(), retrieve.Options{})
	resp, err = down.Search(ctx, "alice", retrieve.Request{Query: "kayak", Scopes: []string{"summaries"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Results) != 1 || len(resp.Warnings) != 1 || len(resp.Signals) != 1 || resp.Signals[0] != "fulltext" {
		t.Fatalf("embedder down: %+v", resp)
	}
	if _, err := search.Search(ctx, "alice", retrieve.Request{Query: "x", Scopes: []string{"everything"}}); agentmem.ErrorCode(err) != agentmem.EINVALID {
		t.Fatalf("unknown scope: %v", err)
	}
	if _, err := search.Search(ctx, "alice", retrieve.Request{Query: "x", TopK: retrieve.MaxTopK + 1}); agentmem.ErrorCode(err) != agentmem.EINVALID {
		t.Fatalf("top_k too large: %v", err)
	}
	var ae *agentmem.Error
	if _, err := search.Search(ctx, "alice", retrieve.Request{Query: " "}); !errors.As(err, &ae) || ae.Code != agentmem.EINVALID {
		t.Fatalf("empty query: %v", err)
	}
}

// mustIndexKayak stores alice's ended thread "t" of two turns about a
// kayak, indexes it with ix (windows, vectors, a chunk) and stores and
// embeds its summary.
func mustIndexKayak(t *testing.T, s agentmem.Store, ix *index.Indexer) {
	t.Helper()
	ctx := context.Background()
	if err := s.CreateThread(ctx, &agentmem.Thread{UserID: "alice", ID: "t", Status: agentmem.ThreadEnded}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendMessages(ctx, "alice", "t", []*agentmem.Message{
		{Role: agentmem.RoleUser, Content: "I took my kayak down the river"},
		{Role: agentmem.RoleAssistant, Content: "Which river?"},
	}, agentmem.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.EndThread(ctx, "alice", "t"); err != nil {
		t.Fatal(err)
	}
	if err := ix.IndexRange(ctx, "alice", "t", 1, 2); err != nil {
		t.Fatal(err)
	}
	sum, err := s.PutSummary(ctx, &agentmem.Summary{UserID: "alice", ThreadID: "t", ThroughSeq: 2, Text: "Alice kayaked down a river.", Method: agentmem.SummaryExtractive})
	if err != nil {
		t.Fatal(err)
	}
	if err := ix.EmbedSummary(ctx, sum); err != nil {
		t.Fatal(err)
	}
}

// TestSearch_Importance: with importance_weight, an important memory
// outranks an equally relevant one that matters less.
func TestSearch_Importance(t *testing.T) {
	ctx := context.Background()
	s := testutil.MustOpenSQLite(t)
	emb := lexical.New(0)
	ix := &index.Indexer{Store: s, Emb: emb, Space: emb.Space()}
	ids := map[float64]string{}
	for _, imp := range []float64{0.1, 0.9} {
		m := &agentmem.Memory{UserID: "alice", Text: "User plays the cello.", Importance: imp}
		if err := s.CreateMemory(ctx, m); err != nil {
			t.Fatal(err)
		}
		if err := ix.EmbedMemory(ctx, m); err != nil {
			t.Fatal(err)
		}
		ids[imp] = m.ID
	}
	search := retrieve.New(s, emb, emb.Space(), retrieve.Options{})
	for _, w := range []float64{1, 0.5} {
		resp, err := search.Search(ctx, "alice", retrieve.Request{Query: "cello", ImportanceWeight: w})
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Results) != 2 || resp.Results[0].ID != ids[0.9] {
			t.Fatalf("weight %v: %+v; want the important memory first", w, resp.Results)
		}
		if f := resp.Results[1].Scores["importance"]; f != 1-w+w*0.1 {
			t.Fatalf("weight %v: factor %v", w, f)
		}
	}
	if _, err := search.Search(ctx, "alice", retrieve.Request{Query: "cello", ImportanceWeight: 2}); agentmem.ErrorCode(err) != agentmem.EINVALID {
		t.Fatalf("importance_weight 2: %v", err)
	}
}

// TestSearch_Speaker: a message whose author the query names outranks
// an equally relevant one of someone else's, and so does the user's own
// when the query says "user"; with SpeakerWeight 1 they keep the
// full-text order.
func TestSearch_Speaker(t *testing.T) {
	ctx := context.Background()
	s := testutil.MustOpenSQLite(t)
	post := func(thread string, m *agentmem.Message) string {
		t.Helper()
		if err := s.CreateThread(ctx, &agentmem.Thread{UserID: "alice", ID: thread}); err != nil {
			t.Fatal(err)
		}
		got, err := s.AppendMessages(ctx, "alice", thread, []*agentmem.Message{m}, agentmem.AppendOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return got[0].ID
	}
	// Full-text ranks John's first: it holds two of the query's words.
	john := post("t1", &agentmem.Message{Role: agentmem.RoleAssistant, Name: "John", Content: "Peach cobbler is my favourite dessert, Maria."})
	maria := post("t2", &agentmem.Message{Role: agentmem.RoleUser, Name: "Maria", Content: "Last week I made a peach cobbler with my mom."})
	assistant := post("t3", &agentmem.Message{Role: agentmem.RoleAssistant, Content: "Fish: eat fish, fish is good."})
	user := post("t4", &agentmem.Message{Role: agentmem.RoleUser, Content: "I eat fish most days of the week, at home or out."})

	for _, tt := range []struct {
		query       string
		weight      float64
		first, then string
	}{
		{"What dessert has Maria made?", 0, maria, john},
		{"What dessert has Maria made?", 1, john, maria},
		{"What fish does the user eat?", 0, user, assistant},
		{"What fish does the user eat?", 1, assistant, user},
	} {
		search := retrieve.New(s, nil, "", retrieve.Options{SpeakerWeight: tt.weight})
		resp, err := search.Search(ctx, "alice", retrieve.Request{Query: tt.query, Scopes: []string{agentmem.ScopeMessages}})
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Results) != 2 || resp.Results[0].ID != tt.first || resp.Results[1].ID != tt.then {
			t.Fatalf("%q, speaker weight %v: %+v; want %s then %s", tt.query, tt.weight, resp.Results, tt.first, tt.then)
		}
		if w := resp.Results[0].Scores["speaker"]; tt.weight == 0 && w != retrieve.DefaultSpeakerWeight || tt.weight == 1 && w != 0 {
			t.Fatalf("%q, speaker weight %v: scores %v", tt.query, tt.weight, resp.Results[0].Scores)
		}
	}
}

// TestSearch_Question: a message that asks about the query's words ranks
// below one that says something about them.
func TestSearch_Question(t *testing.T) {
	ctx := context.Background()
	s := testutil.MustOpenSQLite(t)
	if err := s.CreateThread(ctx, &agentmem.Thread{UserID: "alice", ID: "t"}); err != nil {
		t.Fatal(err)
	}
	// Full-text ranks the question first: it is shorter.
	msgs, err := s.AppendMessages(ctx, "alice", "t", []*agentmem.Message{
		{Role: agentmem.RoleAssistant, Content: "Which yoga?"},
		{Role: agentmem.RoleUser, Content: "I practise aerial yoga on Mondays."},
	}, agentmem.AppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []float64{0, 1} {
		resp, err := retrieve.New(s, nil, "", retrieve.Options{QuestionWeight: w}).
			Search(ctx, "alice", retrieve.Request{Query: "yoga", Scopes: []string{agentmem.ScopeMessages}})
		if err != nil {
			t.Fatal(err)
		}
		want := []string{msgs[1].ID, msgs[0].ID}
		if w == 1 {
			want = []string{msgs[0].ID, msgs[1].ID}
		}
		if len(resp.Results) != 2 || resp.Results[0].ID != want[0] || resp.Results[1].ID != want[1] {
			t.Fatalf("question weight %v: %+v; want %v", w, resp.Results, want)
		}
	}
}

// TestSearch_Bulk: with a bulk embedding, the indexer embeds messages and
// chunks in its space and memories and summaries in the main one, and a
// search by vector alone finds all four kinds, its query embedded in
// each space.
func TestSearch_Bulk(t *testing.T) {
	ctx := context.Background()
	s := testutil.MustOpenSQLite(t)
	emb, bulk := lexical.New(256), lexical.New(128)
	bulkEmb := &agentmem.Embedding{Embedder: bulk, Space: bulk.Space()}
	ix := &index.Indexer{Store: s, Emb: emb, Space: emb.Space(), Bulk: bulkEmb,
		Summarize: func(context.Context, []*agentmem.Message) (string, error) {
			return "Alice talks about her kayak trip.", nil
		}}
	mustIndexKayak(t, s, ix)
	m := &agentmem.Memory{UserID: "alice", Text: "User owns a kayak."}
	if err := s.CreateMemory(ctx, m); err != nil {
		t.Fatal(err)
	}
	if err := ix.EmbedMemory(ctx, m); err != nil {
		t.Fatal(err)
	}
	for space, want := range map[string][]string{emb.Space(): {"memories", "summaries"}, bulk.Space(): {"chunks", "messages"}} {
		vs, err := s.FindVectors(ctx, "alice", space, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range vs {
			if v.Scope != want[0] && v.Scope != want[1] {
				t.Errorf("a vector of %s in space %s", v.Scope, space)
			}
		}
	}
	search := retrieve.New(s, emb, emb.Space(), retrieve.Options{Bulk: bulkEmb})
	resp, err := search.Search(ctx, "alice", retrieve.Request{Query: "kayak trip", Signals: []string{"vector"},
		Scopes: []string{"chunks", "summaries", "messages", "memories"}, TopK: 10})
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, r := range resp.Results {
		if r.Scores["vector"] > 0 {
			kinds[r.Kind]++
		}
	}
	// The memories: the one created, and the one the indexer learned.
	if kinds["chunk"] != 1 || kinds["summary"] != 1 || kinds["message"] != 2 || kinds["memory"] != 2 {
		t.Fatalf("results by kind %v (want 1 chunk, 1 summary, 2 messages, 2 memories): %+v", kinds, resp)
	}
}

// TestSearch_OwnWords: a question asked in other words than its answer,
// whose only full-text matches are turns that name the speaker, is
// answered by the meaning: with OwnWordsWeight the vectors (serve's
// built-in model and static table) decide, without it the name's matches
// come first.
func TestSearch_OwnWords(t *testing.T) {
	ctx := context.Background()
	s := testutil.MustOpenSQLite(t)
	emb, static := minilm.New(), minilm.NewStatic()
	bulk := &agentmem.Embedding{Embedder: static, Space: static.Space()}
	ix := &index.Indexer{Store: s, Emb: emb, Space: emb.Space(), Bulk: bulk}
	if err := s.CreateThread(ctx, &agentmem.Thread{UserID: "alice", ID: "t"}); err != nil {
		t.Fatal(err)
	}
	msgs, err := s.AppendMessages(ctx, "alice", "t", []*agentmem.Message{
		{Role: agentmem.RoleAssistant, Name: "John", Content: "Maria, did you catch the football game last night? The referee was terrible."},
		{Role: agentmem.RoleUser, Name: "Maria", Content: "No, I was busy all evening."},
		{Role: agentmem.RoleAssistant, Name: "John", Content: "Nice one, Maria! How is the new job at the bank going?"},
		{Role: agentmem.RoleUser, Name: "Maria", Content: "Work has been hectic this month, lots of overtime."},
		{Role: agentmem.RoleAssistant, Name: "John", Content: "Hang in there, Maria, the quarter ends soon and then you can take a holiday."},
		{Role: agentmem.RoleUser, Name: "Maria", Content: "I can't wait. I've booked a week on the coast in May."},
		{Role: agentmem.RoleAssistant, Name: "John", Content: "Lovely. Anything fun planned for the weekend?"},
		{Role: agentmem.RoleUser, Name: "Maria", Content: "My niece turns six on Saturday, so I'm baking a peach cobbler and a lemon tart for her party."},
		{Role: agentmem.RoleAssistant, Name: "John", Content: "That sounds delicious, enjoy the party!"},
	}, agentmem.AppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := ix.IndexUser(ctx, "alice"); err != nil {
		t.Fatal(err)
	}
	cobbler := msgs[7].ID
	for _, w := range []float64{0, retrieve.DefaultOwnWordsWeight} {
		search := retrieve.New(s, emb, emb.Space(), retrieve.Options{VectorWeight: retrieve.VectorWeightModel, Bulk: bulk,
			BulkVectorWeight: retrieve.VectorWeightStatic, OwnWordsWeight: w})
		resp, err := search.Search(ctx, "alice", retrieve.Request{Query: "Which desserts does Maria make?", Scopes: []string{agentmem.ScopeMessages}})
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Results) == 0 {
			t.Fatalf("own-words weight %v: no results", w)
		}
		if first := resp.Results[0].ID == cobbler; first != (w > 0) {
			t.Fatalf("own-words weight %v: the cobbler first: %v, want %v: %+v", w, first, w > 0, resp.Results)
		}
	}
}

// TestSearch_Expand: with Expand, the candidates that hold words near
// those of the query's that its best full-text hits lack ("sweets":
// pudding…) score in full-text's list as if they were terms weighing
// ExpandWeight: a turn with the query's word and a near one ranks above
// one with the query's word alone, and a turn with near words only,
// found by its vector, joins full-text's list; without Expand it does
// not. A word the best hits have ("desserts") is not expanded.
func TestSearch_Expand(t *testing.T) {
	ctx := context.Background()
	s := testutil.MustOpenSQLite(t)
	emb := lexical.New(0)
	if err := s.CreateThread(ctx, &agentmem.Thread{UserID: "alice", ID: "t"}); err != nil {
		t.Fatal(err)
	}
	msgs, err := s.AppendMessages(ctx, "alice", "t", []*agentmem.Message{
		{Role: agentmem.RoleUser, Content: "I never order desserts when we eat out."},
		{Role: agentmem.RoleUser, Content: "For desserts I made a bread pudding."},
		{Role: agentmem.RoleUser, Content: "The pudding came out of the oven golden."},
		{Role: agentmem.RoleUser, Content: "The weather was lovely all week."},
	}, agentmem.AppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var vs []agentmem.Vector
	for _, m := range msgs {
		v, err := emb.Embed(ctx, []string{m.Content})
		if err != nil {
			t.Fatal(err)
		}
		vs = append(vs, agentmem.Vector{Scope: agentmem.ScopeMessages, ID: m.ID, Space: emb.Space(), Vec: v[0]})
	}
	if err := s.PutVectors(ctx, "alice", vs); err != nil {
		t.Fatal(err)
	}
	var expandedWords []string
	expand := func(w string) ([]string, error) {
		expandedWords = append(expandedWords, w)
		if w == "sweets" {
			return []string{"pudding", "cake"}, nil
		}
		return []string{"cream"}, nil
	}
	req := retrieve.Request{Query: "Which desserts or sweets?", Scopes: []string{agentmem.ScopeMessages}, TopK: 3}
	// The vectors weigh little: the order is full-text's.
	opt := retrieve.Options{VectorWeight: 0.01, Expand: expand, ExpandWeight: retrieve.DefaultExpandWeight}
	resp, err := retrieve.New(s, emb, emb.Space(), opt).Search(ctx, "alice", req)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range resp.Results {
		got = append(got, r.ID)
	}
	if want := []string{msgs[1].ID, msgs[0].ID, msgs[2].ID}; !slices.Equal(got, want) || resp.Results[2].Scores["fulltext"] == 0 {
		t.Fatalf("expanded: %+v; want the pudding for desserts, desserts, then the pudding, in full-text's list", resp.Results)
	}
	if !slices.Equal(expandedWords, []string{"sweets"}) {
		t.Fatalf("expanded %v, want only the word the best hits lack", expandedWords)
	}
	opt.Expand = nil
	resp, err = retrieve.New(s, emb, emb.Space(), opt).Search(ctx, "alice", req)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range resp.Results {
		if r.ID == msgs[2].ID && r.Scores["fulltext"] != 0 {
			t.Fatalf("not expanded: %+v; want the pudding alone out of full-text's list", resp.Results)
		}
	}
}
