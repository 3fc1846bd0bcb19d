package storetest

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/agentmem/agentmem"
	"github.com/google/go-cmp/cmp"
)

func mustPutChunks(tb testing.TB, s agentmem.ChunkStore, user string, cs ...*agentmem.Chunk) {
	tb.Helper()
	if err := s.PutChunks(ctx, user, cs); err != nil {
		tb.Fatalf("PutChunks: %v", err)
	}
	for _, c := range cs {
		if c.ID == "" {
			tb.Fatal("PutChunks left a chunk without an ID")
		}
	}
}

func mustFindChunks(tb testing.TB, s agentmem.ChunkStore, user, thread string) []*agentmem.Chunk {
	tb.Helper()
	cs, err := s.FindChunks(ctx, user, thread)
	if err != nil {
		tb.Fatalf("FindChunks: %v", err)
	}
	if cs == nil {
		tb.Fatal("FindChunks returned nil, want an empty slice")
	}
	return cs
}

func testChunks(t *testing.T, s agentmem.Store) {
	th := MustCreateThread(t, s, &agentmem.Thread{UserID: "alice", AgentID: "coach"})
	MustAppend(t, s, "alice", th.ID, "user", "I ran a marathon in Boston", "assistant", "Impressive!", "user", "Next I want to swim", "assistant", "Good plan")
	at := time.Date(2026, 5, 1, 12, 0, 0, 123456789, time.UTC)

	wantCode(t, s.PutChunks(ctx, "alice", []*agentmem.Chunk{{ThreadID: "nope", SeqFrom: 1, SeqTo: 2, Text: "x", CreatedAt: at}}), agentmem.ENOTFOUND)
	wantCode(t, s.PutChunks(ctx, "bob", []*agentmem.Chunk{{ThreadID: th.ID, SeqFrom: 1, SeqTo: 2, Text: "x", CreatedAt: at}}), agentmem.ENOTFOUND)
	for name, c := range map[string]agentmem.Chunk{
		"range":    {ThreadID: th.ID, SeqFrom: 3, SeqTo: 2, Text: "x", CreatedAt: at},
		"seq 0":    {ThreadID: th.ID, SeqFrom: 0, SeqTo: 2, Text: "x", CreatedAt: at},
		"no turns": {ThreadID: th.ID, SeqFrom: 5, SeqTo: 6, Text: "x", CreatedAt: at},
		"bad id":   {ID: "a/b", ThreadID: th.ID, SeqFrom: 1, SeqTo: 2, Text: "x", CreatedAt: at},
		"labels":   {ThreadID: th.ID, SeqFrom: 1, SeqTo: 2, Text: "x", Topics: make([]string, agentmem.MaxChunkLabels+1), CreatedAt: at},
	} {
		if err := s.PutChunks(ctx, "alice", []*agentmem.Chunk{&c}); agentmem.ErrorCode(err) != agentmem.EINVALID {
			t.Errorf("PutChunks(%s): %v, want EINVALID", name, err)
		}
	}
	if got := mustFindChunks(t, s, "alice", th.ID); len(got) != 0 {
		t.Fatalf("a refused put stored %d chunks", len(got))
	}
	if end, err := s.LastChunkEnd(ctx, "alice", th.ID); err != nil || end != 0 {
		t.Fatalf("LastChunkEnd without chunks: %d, %v", end, err)
	}
	_, err := s.LastChunkEnd(ctx, "bob", th.ID)
	wantCode(t, err, agentmem.ENOTFOUND)

	c1 := &agentmem.Chunk{ThreadID: th.ID, SeqFrom: 1, SeqTo: 2, Turns: 2, Text: "user: I ran a marathon in Boston\nassistant: Impressive!",
		Summary: "Alice ran the Boston marathon.", Topics: []string{"marathon"}, Entities: []string{"Boston"}, CreatedAt: at}
	c2 := &agentmem.Chunk{ThreadID: th.ID, SeqFrom: 3, SeqTo: 4, Turns: 2, Text: "user: Next I want to swim\nassistant: Good plan",
		Summary: "Alice plans to take up swimming.", CreatedAt: at.Add(time.Minute)}
	mustPutChunks(t, s, "alice", c2, c1)
	got := mustFindChunks(t, s, "alice", th.ID)
	want := []*agentmem.Chunk{c1, c2}
	c2.Topics, c2.Entities = []string{}, []string{}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("FindChunks mismatch (-want +got):\n%s", diff)
	}
	if got[0].CreatedAt.Nanosecond()%1000 != 0 {
		t.Fatalf("CreatedAt %v is not in microseconds", got[0].CreatedAt)
	}
	if end, err := s.LastChunkEnd(ctx, "alice", th.ID); err != nil || end != c2.SeqTo {
		t.Fatalf("LastChunkEnd: %d, %v; want %d", end, err, c2.SeqTo)
	}

	// Writing a chunk again (same thread and seq_from) replaces it and
	// keeps its ID; the index follows. Its text is its turns', whatever
	// the put said.
	id := c1.ID
	again := &agentmem.Chunk{ThreadID: th.ID, SeqFrom: 1, SeqTo: 1, Turns: 1, Text: "user: I ran a race in Chicago", Summary: "A race in Chicago.", CreatedAt: at}
	mustPutChunks(t, s, "alice", again)
	if again.ID != id || again.Text != "user: I ran a marathon in Boston" {
		t.Fatalf("rewritten chunk got ID %s, text %q; want %s and its turn's text", again.ID, again.Text, id)
	}
	if got := mustFindChunks(t, s, "alice", th.ID); len(got) != 2 || got[0].Text != again.Text || got[0].Summary != again.Summary {
		t.Fatalf("after rewrite: %+v", got)
	}
	wantHits(t, mustSearch(t, s, "alice", agentmem.TextQuery{Query: "impressive", Scopes: []string{agentmem.ScopeChunks}}))
	wantHits(t, mustSearch(t, s, "alice", agentmem.TextQuery{Query: "chicago", Scopes: []string{agentmem.ScopeChunks}}), key(agentmem.ScopeChunks, id))
	wantHits(t, mustSearch(t, s, "alice", agentmem.TextQuery{Query: "boston", Scopes: []string{agentmem.ScopeChunks}}), key(agentmem.ScopeChunks, id))
	// By the summary, stemmed.
	hits := mustSearch(t, s, "alice", agentmem.TextQuery{Query: "swimming", Scopes: []string{agentmem.ScopeChunks}})
	wantHits(t, hits, key(agentmem.ScopeChunks, c2.ID))
	if h := hits[0]; h.ThreadID != th.ID || h.SeqFrom != 3 || h.SeqTo != 4 || h.AgentID != "coach" || !h.CreatedAt.Equal(agentmem.Timestamp(c2.CreatedAt)) || h.Text != c2.Text {
		t.Fatalf("chunk hit %+v", h)
	}
	// Not another user's, and filtered as the others.
	wantHits(t, mustSearch(t, s, "bob", agentmem.TextQuery{Query: "swimming", Scopes: []string{agentmem.ScopeChunks}}))
	wantHits(t, mustSearch(t, s, "alice", agentmem.TextQuery{Query: "swimming", Scopes: []string{agentmem.ScopeChunks}, Filter: agentmem.SearchFilter{AgentID: ptr("other")}}))
	wantHits(t, mustSearch(t, s, "alice", agentmem.TextQuery{Query: "swimming", Scopes: []string{agentmem.ScopeChunks}, Filter: agentmem.SearchFilter{Until: &at}}))
	items, err := s.FindItems(ctx, "alice", agentmem.ScopeChunks, []string{c2.ID, "nope", id}, agentmem.SearchFilter{})
	if err != nil {
		t.Fatal(err)
	}
	wantHits(t, items, key(agentmem.ScopeChunks, c2.ID), key(agentmem.ScopeChunks, id))

	// Vectors of chunks (content and summary) go with their thread.
	const space = "test/2"
	mustPutVectors(t, s, "alice",
		agentmem.Vector{Scope: agentmem.ScopeChunks, ID: id, Space: space, Vec: []float32{1, 0}},
		agentmem.Vector{Scope: agentmem.ScopeChunks, ID: id + agentmem.SummaryVectorSuffix, Space: space, Vec: []float32{0, 1}})
	other := MustCreateThread(t, s, &agentmem.Thread{UserID: "alice"})
	MustAppend(t, s, "alice", other.ID, "user", "swimming again")
	c3 := &agentmem.Chunk{ThreadID: other.ID, SeqFrom: 1, SeqTo: 1, Turns: 1, Text: "user: swimming again", CreatedAt: at}
	mustPutChunks(t, s, "alice", c3)
	mustPutVectors(t, s, "alice", agentmem.Vector{Scope: agentmem.ScopeChunks, ID: c3.ID, Space: space, Vec: []float32{1, 1}})

	// A soft-deleted thread's chunks are not found; a deleted one's are gone.
	if err := s.DeleteThread(ctx, "alice", th.ID, false); err != nil {
		t.Fatal(err)
	}
	wantHits(t, mustSearch(t, s, "alice", agentmem.TextQuery{Query: "swimming", Scopes: []string{agentmem.ScopeChunks}}), key(agentmem.ScopeChunks, c3.ID))
	if err := s.DeleteThread(ctx, "alice", th.ID, true); err != nil {
		t.Fatal(err)
	}
	wantVectorKeys(t, s, "alice", space, key(agentmem.ScopeChunks, c3.ID))
	wantCode(t, s.PutChunks(ctx, "alice", []*agentmem.Chunk{c1}), agentmem.ENOTFOUND)

	// Erasure.
	if _, err := s.DeleteUser(ctx, "alice"); err != nil {
		t.Fatal(err)
	}
	wantHits(t, mustSearch(t, s, "alice", agentmem.TextQuery{Query: "swimming", Scopes: []string{agentmem.ScopeChunks}}))
}

func testMessageWindows(t *testing.T, s agentmem.Store) {
	th := MustCreateThread(t, s, &agentmem.Thread{UserID: "alice"})
	msgs := MustAppend(t, s, "alice", th.ID,
		"user", "I painted something last week",
		"assistant", "What was it?",
		"user", "A sunset over the lake",
		"system", "painted system prompt")
	only := func(q string) []agentmem.TextHit {
		return mustSearch(t, s, "alice", agentmem.TextQuery{Query: q, Scopes: []string{agentmem.ScopeMessages}})
	}
	// Without windows, a message is found by its own words.
	wantHits(t, only("sunset"), key(agentmem.ScopeMessages, msgs[2].ID))
	wantHits(t, only("painted"), key(agentmem.ScopeMessages, msgs[0].ID))

	wantCode(t, s.PutMessageWindows(ctx, "bob", th.ID, []agentmem.MessageWindow{{Seq: 1, Turns: []int64{1}}}), agentmem.ENOTFOUND)
	for _, bad := range [][]int64{nil, {2, 3}, {1, 2, 3, 4, 5, 6}} {
		wantCode(t, s.PutMessageWindows(ctx, "alice", th.ID, []agentmem.MessageWindow{{Seq: 1, Turns: bad}}), agentmem.EINVALID)
	}
	ws := agentmem.TurnWindows([]int64{1, 2, 3})
	ws = append(ws, agentmem.MessageWindow{Seq: 4, Turns: []int64{3, 4}}, agentmem.MessageWindow{Seq: 99, Turns: []int64{99}})
	if err := s.PutMessageWindows(ctx, "alice", th.ID, ws); err != nil {
		t.Fatal(err)
	}
	// With them, by its neighbours' words too, and once each.
	hits := only("painted sunset")
	wantHits(t, hits, key(agentmem.ScopeMessages, msgs[0].ID), key(agentmem.ScopeMessages, msgs[1].ID), key(agentmem.ScopeMessages, msgs[2].ID))
	if h := hits[0]; h.Text != msgs[0].Content && h.Text != msgs[2].Content {
		t.Fatalf("best hit %+v; want the message that says one of the words itself", h)
	}
	if h := hits[2]; h.ID != msgs[1].ID {
		t.Fatalf("last hit %+v; want the message that says neither word", h)
	}
	for _, h := range hits {
		if h.Text != map[string]string{msgs[0].ID: msgs[0].Content, msgs[1].ID: msgs[1].Content, msgs[2].ID: msgs[2].Content}[h.ID] {
			t.Fatalf("hit %+v carries a text other than its message's content", h)
		}
	}
	wantHits(t, only("sunset"), key(agentmem.ScopeMessages, msgs[0].ID), key(agentmem.ScopeMessages, msgs[1].ID), key(agentmem.ScopeMessages, msgs[2].ID))
	wantHits(t, only("system prompt"))
	// Windows written again replace the old ones.
	if err := s.PutMessageWindows(ctx, "alice", th.ID, []agentmem.MessageWindow{{Seq: 1, Turns: []int64{1}}, {Seq: 2, Turns: []int64{2}}, {Seq: 3, Turns: []int64{3}}}); err != nil {
		t.Fatal(err)
	}
	wantHits(t, only("sunset"), key(agentmem.ScopeMessages, msgs[2].ID))
	if err := s.PutMessageWindows(ctx, "alice", th.ID, agentmem.TurnWindows([]int64{1, 2, 3})); err != nil {
		t.Fatal(err)
	}
	// New messages without a window are found by their content, beside
	// windowed ones.
	late := MustAppend(t, s, "alice", th.ID, "user", "another sunset tomorrow")
	wantHits(t, only("sunset"), key(agentmem.ScopeMessages, msgs[0].ID), key(agentmem.ScopeMessages, msgs[1].ID), key(agentmem.ScopeMessages, msgs[2].ID), key(agentmem.ScopeMessages, late[0].ID))
	// Windows leave with their messages.
	if err := s.DeleteThread(ctx, "alice", th.ID, true); err != nil {
		t.Fatal(err)
	}
	wantHits(t, only("sunset painted"))
}

func testSummarySearch(t *testing.T, s agentmem.Store) {
	th := MustCreateThread(t, s, &agentmem.Thread{UserID: "alice", AgentID: "guide"})
	MustAppend(t, s, "alice", th.ID, "user", "one", "assistant", "two", "user", "three")
	put := func(through int64, text string) {
		t.Helper()
		if _, err := s.PutSummary(ctx, &agentmem.Summary{UserID: "alice", ThreadID: th.ID, ThroughSeq: through, Text: text, Method: agentmem.SummaryExtractive}); err != nil {
			t.Fatal(err)
		}
	}
	only := func(q string) []agentmem.TextHit {
		return mustSearch(t, s, "alice", agentmem.TextQuery{Query: q, Scopes: []string{agentmem.ScopeSummaries}})
	}
	put(2, "Alice went hiking in the Alps.")
	wantHits(t, only("hiking"), key(agentmem.ScopeSummaries, th.ID))
	// The newest version only.
	put(3, "Alice went sailing around Greece.")
	wantHits(t, only("hiking"))
	hits := only("sailed greece")
	wantHits(t, hits, key(agentmem.ScopeSummaries, th.ID))
	if h := hits[0]; h.ThreadID != th.ID || h.SeqFrom != 1 || h.SeqTo != 3 || h.AgentID != "guide" || h.Text != "Alice went sailing around Greece." {
		t.Fatalf("summary hit %+v", h)
	}
	wantHits(t, mustSearch(t, s, "bob", agentmem.TextQuery{Query: "greece", Scopes: []string{agentmem.ScopeSummaries}}))
	wantHits(t, mustSearch(t, s, "alice", agentmem.TextQuery{Query: "greece", Scopes: []string{agentmem.ScopeSummaries}, Filter: agentmem.SearchFilter{AgentID: ptr("other")}}))
	items, err := s.FindItems(ctx, "alice", agentmem.ScopeSummaries, []string{"nope", th.ID}, agentmem.SearchFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 1 || items[0].Text != "Alice went sailing around Greece." || items[0].SeqTo != 3 {
		t.Fatalf("FindItems(summaries) = %+v", items)
	}
	const space = "test/1"
	mustPutVectors(t, s, "alice", agentmem.Vector{Scope: agentmem.ScopeSummaries, ID: th.ID, Space: space, Vec: []float32{1}})
	if err := s.DeleteThread(ctx, "alice", th.ID, false); err != nil {
		t.Fatal(err)
	}
	wantHits(t, only("greece"))
	if err := s.DeleteThread(ctx, "alice", th.ID, true); err != nil {
		t.Fatal(err)
	}
	wantVectorKeys(t, s, "alice", space)
}

func testVectorsState(t *testing.T, s agentmem.Store) {
	const space, other = "test/2", "other/2"
	state := func(user, space string) agentmem.VectorsState {
		t.Helper()
		st, err := s.VectorsState(ctx, user, space)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	since := func(seq int64) map[string][]float32 {
		t.Helper()
		vs, err := s.FindVectorsSince(ctx, "alice", space, seq)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string][]float32{}
		for _, v := range vs {
			if v.Space != space {
				t.Fatalf("FindVectorsSince returned a vector of space %q", v.Space)
			}
			out[v.Scope+"/"+v.ID] = v.Vec
		}
		return out
	}
	empty1, empty2 := state("alice", space), state("alice", space)
	if empty1.Version == empty2.Version || empty1.Epoch == empty2.Epoch || empty1.Seq != 0 || empty1.CanCatchUp(empty2) {
		t.Fatalf("states without vectors %+v, %+v: want new values each time", empty1, empty2)
	}
	_, err := s.FindVectorsSince(ctx, "alice", "", 0)
	wantCode(t, err, agentmem.EINVALID)

	mustPutVectors(t, s, "alice", agentmem.Vector{Scope: agentmem.ScopeMemories, ID: "a", Space: space, Vec: []float32{1, 0}})
	st1 := state("alice", space)
	if st1.Seq != 1 || st1.ResetSeq != 0 || st1.Epoch == "" || st1.Version != mustVectorsVersion(t, s, "alice", space) {
		t.Fatalf("after a put: %+v", st1)
	}
	if got := since(0); len(got) != 1 || got["memories/a"] == nil {
		t.Fatalf("since 0: %v", got)
	}
	if got := since(st1.Seq); len(got) != 0 {
		t.Fatalf("since the state's seq: %v, want nothing", got)
	}
	mustPutVectors(t, s, "alice", agentmem.Vector{Scope: agentmem.ScopeMessages, ID: "b", Space: space, Vec: []float32{0, 1}},
		agentmem.Vector{Scope: agentmem.ScopeMemories, ID: "x", Space: other, Vec: []float32{0, 1}})
	mustPutVectors(t, s, "alice", agentmem.Vector{Scope: agentmem.ScopeMemories, ID: "a", Space: space, Vec: []float32{0.6, 0.8}})
	st2 := state("alice", space)
	if st2.Seq != 3 || st2.Epoch != st1.Epoch || st2.Version == st1.Version || !st1.CanCatchUp(st2) {
		t.Fatalf("after two more puts: %+v (from %+v)", st2, st1)
	}
	// What changed since st1: b, and a replaced; not the other space.
	if got := since(st1.Seq); len(got) != 2 || !quantised(got["memories/a"], []float32{0.6, 0.8}) || got["messages/b"] == nil {
		t.Fatalf("since %d: %v", st1.Seq, got)
	}
	if st := state("alice", other); st.Seq != 1 || st.Epoch == st2.Epoch {
		t.Fatalf("the other space's state %+v", st)
	}

	// A deletion: a cache from before must reload.
	mustPutVectors(t, s, "alice", agentmem.Vector{Scope: agentmem.ScopeMemories, ID: "gone", Space: "gone/1", Vec: []float32{1}})
	if err := s.DeleteVectorSpace(ctx, "alice", "gone/1"); err != nil {
		t.Fatal(err)
	}
	if st := state("alice", "gone/1"); st.ResetSeq != st.Seq || st.Seq != 2 {
		t.Fatalf("after a deletion: %+v", st)
	}
	m := MustCreateMemory(t, s, &agentmem.Memory{UserID: "alice", Text: "to delete"})
	mustPutVectors(t, s, "alice", agentmem.Vector{Scope: agentmem.ScopeMemories, ID: m.ID, Space: space, Vec: []float32{1, 0}})
	st3 := state("alice", space)
	if err := s.DeleteMemory(ctx, "alice", m.ID); err != nil {
		t.Fatal(err)
	}
	st4 := state("alice", space)
	if st4.Seq != st3.Seq+1 || st4.ResetSeq != st4.Seq || st3.CanCatchUp(st4) || !st4.CanCatchUp(st4) {
		t.Fatalf("after deleting a memory: %+v (before %+v)", st4, st3)
	}

	// Erasure restarts the counter under a new epoch.
	if _, err := s.DeleteUser(ctx, "alice"); err != nil {
		t.Fatal(err)
	}
	mustPutVectors(t, s, "alice", agentmem.Vector{Scope: agentmem.ScopeMemories, ID: "a", Space: space, Vec: []float32{1, 0}})
	if st := state("alice", space); st.Epoch == st4.Epoch || st.Seq != 1 || st4.CanCatchUp(st) {
		t.Fatalf("after erasure: %+v (before %+v)", st, st4)
	}
}

// testChunkLabels: full-text search finds a chunk by its topics and
// entities as well as by its text and summary (seed 001's full-text policy
// over content, mentioned_topics and entities), stemmed, and follows them
// when the chunk is written again.
func testChunkLabels(t *testing.T, s agentmem.Store) {
	th := MustCreateThread(t, s, &agentmem.Thread{UserID: "alice"})
	MustAppend(t, s, "alice", th.ID, "user", "We should look at the numbers again", "assistant", "Sure, let us go through them")
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	c := &agentmem.Chunk{ThreadID: th.ID, SeqFrom: 1, SeqTo: 2, Turns: 2,
		Text:    "user: We should look at the numbers again\nassistant: Sure, let us go through them",
		Summary: "They go over the numbers.", Topics: []string{"retirement savings", "budgeting"}, Entities: []string{"Roth IRA", "Vanguard"}, CreatedAt: at}
	mustPutChunks(t, s, "alice", c)
	for _, q := range []string{"retirement", "budget", "roth", "Vanguard", "what about my savings?"} {
		wantHits(t, mustSearch(t, s, "alice", agentmem.TextQuery{Query: q, Scopes: []string{agentmem.ScopeChunks}}), key(agentmem.ScopeChunks, c.ID))
	}
	// Written again with other labels: the old ones are no longer found.
	c.Topics, c.Entities = []string{"mortgage"}, []string{"Barclays"}
	mustPutChunks(t, s, "alice", c)
	wantHits(t, mustSearch(t, s, "alice", agentmem.TextQuery{Query: "vanguard retirement", Scopes: []string{agentmem.ScopeChunks}}))
	wantHits(t, mustSearch(t, s, "alice", agentmem.TextQuery{Query: "mortgages at barclays", Scopes: []string{agentmem.ScopeChunks}}), key(agentmem.ScopeChunks, c.ID))
	// Not another user's.
	wantHits(t, mustSearch(t, s, "bob", agentmem.TextQuery{Query: "mortgage", Scopes: []string{agentmem.ScopeChunks}}))
}

// testChunkText: a store keeps no copy of a chunk's text but reads it from
// the chunk's turns, and every read of a chunk (FindChunks, a search hit,
// FindItems) returns the text the indexer built of them: each turn "name:
// content", its role standing for a missing name, one a line; tool and
// system messages and turns without content (an assistant's tool calls)
// in the range left out; cut to agentmem.MaxChunkBytes. Full-text search
// finds a chunk by that text, not by the messages left out of it.
func testChunkText(t *testing.T, s agentmem.Store) {
	th := MustCreateThread(t, s, &agentmem.Thread{UserID: "alice"})
	call := []agentmem.ToolCall{{ID: "c1", Type: "function", Function: agentmem.FunctionCall{Name: "weather", Arguments: `{"at":"lake"}`}}}
	msgs, err := s.AppendMessages(ctx, "alice", th.ID, []*agentmem.Message{
		{Role: agentmem.RoleSystem, Content: "You are a painting coach."},                       // 1
		{Role: agentmem.RoleUser, Name: "Caroline", Content: "I painted a sunset by the lake."}, // 2
		{Role: agentmem.RoleAssistant, Content: "Lovely! Let me look at the weather."},          // 3
		{Role: agentmem.RoleAssistant, ToolCalls: call},                                         // 4
		{Role: agentmem.RoleTool, ToolCallID: "c1", Content: "drizzle over the lake"},           // 5
		{Role: agentmem.RoleAssistant, Name: "Coach", Content: "It rained:\nmind the damp."},    // 6
		{Role: agentmem.RoleUser, Content: "Été à Montréal, 🎨 again"},                           // 7
	}, agentmem.AppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	// As the indexer makes them: of the turns its read found in the range.
	chunk := func(from, to int64) *agentmem.Chunk {
		var turns []*agentmem.Message
		for _, m := range msgs[from-1 : to] {
			if m.IsTurn() {
				turns = append(turns, m)
			}
		}
		return &agentmem.Chunk{ThreadID: th.ID, SeqFrom: from, SeqTo: to, Turns: len(turns), Text: agentmem.ChunkText(turns),
			Summary: "A painting.", CreatedAt: at}
	}
	c1, c2 := chunk(2, 6), chunk(7, 7)
	want := map[int64]string{}
	for c, text := range map[*agentmem.Chunk]string{
		c1: "Caroline: I painted a sunset by the lake.\nassistant: Lovely! Let me look at the weather.\nCoach: It rained:\nmind the damp.",
		c2: "user: Été à Montréal, 🎨 again",
	} {
		if c.Text != text {
			t.Fatalf("the indexer's text of %d…%d: %q, want %q", c.SeqFrom, c.SeqTo, c.Text, text)
		}
		want[c.SeqFrom] = text
	}
	mustPutChunks(t, s, "alice", c1, c2)
	wantText := func(where, id, got string) {
		t.Helper()
		var c *agentmem.Chunk
		for _, x := range []*agentmem.Chunk{c1, c2} {
			if x.ID == id {
				c = x
			}
		}
		if c == nil {
			t.Errorf("%s: chunk %s is none of those put", where, id)
		} else if got != want[c.SeqFrom] {
			t.Errorf("%s: chunk %s has text %q, want %q", where, id, got, want[c.SeqFrom])
		}
	}
	for _, c := range []*agentmem.Chunk{c1, c2} {
		wantText("PutChunks", c.ID, c.Text)
	}
	for _, c := range mustFindChunks(t, s, "alice", th.ID) {
		wantText("FindChunks", c.ID, c.Text)
	}
	for _, q := range []string{"painted sunset", "caroline", "coach", "damp", "montréal", "weather"} {
		hits := mustSearch(t, s, "alice", agentmem.TextQuery{Query: q, Scopes: []string{agentmem.ScopeChunks}})
		if len(hits) == 0 {
			t.Errorf("search %q found no chunk", q)
		}
		for _, h := range hits {
			wantText("search "+q, h.ID, h.Text)
		}
	}
	// Not by the system or tool messages in the range.
	wantHits(t, mustSearch(t, s, "alice", agentmem.TextQuery{Query: "drizzle", Scopes: []string{agentmem.ScopeChunks}}))
	items, err := s.FindItems(ctx, "alice", agentmem.ScopeChunks, []string{c2.ID, c1.ID}, agentmem.SearchFilter{})
	if err != nil || len(items) != 2 {
		t.Fatalf("FindItems: %d items, %v", len(items), err)
	}
	for _, h := range items {
		wantText("FindItems", h.ID, h.Text)
	}
	// A range of no turn (an assistant's tool calls and their result) makes
	// no chunk.
	wantCode(t, s.PutChunks(ctx, "alice", []*agentmem.Chunk{{ThreadID: th.ID, SeqFrom: 4, SeqTo: 5, Text: "x", CreatedAt: at}}), agentmem.EINVALID)

	// Turns larger together than agentmem.MaxChunkBytes: the text is cut
	// as the indexer cuts it, at the start of a character.
	big := MustCreateThread(t, s, &agentmem.Thread{UserID: "alice"})
	var long []*agentmem.Message
	for i, r := range []string{"é", "€"} {
		m := &agentmem.Message{Role: []string{agentmem.RoleUser, agentmem.RoleAssistant}[i], Content: "giant " + strings.Repeat(r, (agentmem.MaxChunkBytes/2+100)/len(r))}
		out, err := s.AppendMessages(ctx, "alice", big.ID, []*agentmem.Message{m}, agentmem.AppendOptions{})
		if err != nil {
			t.Fatal(err)
		}
		long = append(long, out...)
	}
	c3 := &agentmem.Chunk{ThreadID: big.ID, SeqFrom: 1, SeqTo: 2, Turns: 2, Text: agentmem.ChunkText(long), CreatedAt: at}
	if len(c3.Text) > agentmem.MaxChunkBytes || len(c3.Text) < agentmem.MaxChunkBytes-2 || !utf8.ValidString(c3.Text) {
		t.Fatalf("the indexer's text of the long turns: %d bytes, valid %v; want it cut to %d", len(c3.Text), utf8.ValidString(c3.Text), agentmem.MaxChunkBytes)
	}
	text := c3.Text
	mustPutChunks(t, s, "alice", c3)
	if got := mustFindChunks(t, s, "alice", big.ID); len(got) != 1 || got[0].Text != text {
		t.Fatalf("FindChunks of the long chunk: %d chunks, want its text as the indexer built it", len(got))
	}
	hits := mustSearch(t, s, "alice", agentmem.TextQuery{Query: "giant", Scopes: []string{agentmem.ScopeChunks}})
	if len(hits) != 1 || hits[0].Text != text {
		t.Fatalf("search of the long chunk: %d hits, want it with its text", len(hits))
	}
}

// CheckMigratedChunks checks a store whose chunks a migration test wrote
// in the old form (sqlite and postgres chunk tests: alice's t1 has c1,
// about a sunset Caroline painted, labelled art, and c2, a goodbye; bob's
// c3 is about a sunset too): the chunks' full text finds each by its own
// words and its labels, for its user alone, every hit with the text of
// want (by chunk ID), and FindChunks reads them whole. It returns the
// search it checks with: the IDs of a user's chunks a query finds, each
// hit checked against want.
func CheckMigratedChunks(t *testing.T, s agentmem.Store, want map[string]string) (search func(user, q string) []string) {
	t.Helper()
	ctx := context.Background()
	search = func(user, q string) []string {
		t.Helper()
		hits, err := s.SearchText(ctx, user, agentmem.TextQuery{Query: q, Scopes: []string{agentmem.ScopeChunks}})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, h := range hits {
			if h.Text != want[h.ID] {
				t.Errorf("%q: hit %s has text %q, want %q", q, h.ID, h.Text, want[h.ID])
			}
			got = append(got, h.ID)
		}
		return got
	}
	for _, tt := range []struct {
		user, q string
		want    []string
	}{
		{"alice", "sunset", []string{"c1"}},
		{"alice", "caroline colours", []string{"c1"}},
		{"alice", "art", []string{"c1"}},
		{"alice", "goodbye", []string{"c2"}},
		{"alice", "drizzle", nil},
		{"bob", "sunset", []string{"c3"}},
	} {
		if got := search(tt.user, tt.q); !slices.Equal(got, tt.want) {
			t.Errorf("%s, %q: %v, want %v", tt.user, tt.q, got, tt.want)
		}
	}
	cs, err := s.FindChunks(ctx, "alice", "t1")
	if err != nil || len(cs) != 2 || cs[0].Text != want["c1"] || cs[1].Text != want["c2"] || cs[0].Topics[0] != "art" {
		t.Fatalf("FindChunks: %+v, %v", cs, err)
	}
	return search
}
