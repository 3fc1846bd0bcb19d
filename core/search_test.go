package core_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/core"
	"github.com/agentmem/agentmem/extract"
	"github.com/agentmem/agentmem/index"
	"github.com/agentmem/agentmem/internal/testutil"
	"github.com/agentmem/agentmem/llm/lexical"
	"github.com/agentmem/agentmem/retrieve"
)

// noExtractor proposes no memory: the test writes the memories itself, so
// that it does not depend on what the extractor makes of the turns.
type noExtractor struct{}

func (noExtractor) Extract(context.Context, *agentmem.Thread, []*agentmem.Message) ([]extract.Candidate, error) {
	return nil, nil
}

// TestService_SearchPresentOverPast (issue 12, item 3): the user said "I
// live in Porto." in one thread and "I moved to Lisbon." in a later one;
// the memory drawn from the first was superseded by the memory drawn from
// the second. Asked where the user lives now, search (and facts) answer
// with the valid memory first, the Porto message below it, marked as
// superseded by the Lisbon memory; with include_invalid, the old memory
// is marked too and ranks below the new one.
func TestService_SearchPresentOverPast(t *testing.T) {
	testutil.Backends(t, func(t *testing.T, store agentmem.Store) {
		emb := lexical.New(0)
		ix := &index.Indexer{Store: store, Jobs: store, Emb: emb, Space: emb.Space(), Extractor: noExtractor{}}
		searcher := retrieve.New(store, emb, emb.Space(), retrieve.Options{VectorWeight: retrieve.VectorWeightLexical})
		svc := core.New(store, core.Options{Indexer: ix, Searcher: searcher})
		for _, c := range []struct{ thread, text string }{
			{"t1", "I live in Porto."},
			{"t2", "I moved to Lisbon."},
			{"t3", "I walk my dog Rex by the sea."},
		} {
			sayIn(t, svc, ix, c.thread, c.text)
		}
		porto, err := svc.CreateMemory(ctx, "alice", agentmem.MemoryInput{Text: "User lives in Porto.", ThreadID: "t1", SeqFrom: 1, SeqTo: 1})
		if err != nil {
			t.Fatal(err)
		}
		lisbon, err := svc.CreateMemory(ctx, "alice", agentmem.MemoryInput{Text: "User lives in Lisbon.", ThreadID: "t2", SeqFrom: 1, SeqTo: 1})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := store.InvalidateMemory(ctx, "alice", porto.ID, lisbon.ID, "moved"); err != nil {
			t.Fatal(err)
		}
		// A message from which a memory that holds was drawn holds, though
		// another of its memories does not.
		sea, err := svc.CreateMemory(ctx, "alice", agentmem.MemoryInput{Text: "User lives by the sea.", ThreadID: "t3", SeqFrom: 1, SeqTo: 1})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := svc.CreateMemory(ctx, "alice", agentmem.MemoryInput{Text: "User has a dog named Rex.", ThreadID: "t3", SeqFrom: 1, SeqTo: 1}); err != nil {
			t.Fatal(err)
		}
		if _, err := store.InvalidateMemory(ctx, "alice", sea.ID, lisbon.ID, "moved"); err != nil {
			t.Fatal(err)
		}

		// The user's words ("where do I live") favour the old message
		// before the rule; the brief's words, the memory.
		const query = "where does the user live now"
		for _, q := range []string{query, "Where do I live now?"} {
			resp, err := svc.Search(ctx, "alice", agentmem.SearchRequest{Query: q})
			if err != nil {
				t.Fatal(err)
			}
			rank := map[string]int{}
			for i, r := range resp.Results {
				rank[r.Kind+":"+r.Text] = i + 1
			}
			old, now := rank["message:I live in Porto."], rank["memory:User lives in Lisbon."]
			if now != 1 || old == 0 || old < now {
				t.Fatalf("%q: ranks: Lisbon memory %d, Porto message %d (want 1, and below it): %+v", q, now, old, resp.Results)
			}
			if r := resp.Results[old-1]; r.SupersededBy != lisbon.ID || r.SupersededText != lisbon.Text {
				t.Errorf("%q: Porto message: superseded_by %q (%q), want %q (%q)", q, r.SupersededBy, r.SupersededText, lisbon.ID, lisbon.Text)
			}
			for _, r := range resp.Results {
				if r.Text != "I live in Porto." && (r.SupersededBy != "" || r.SupersededText != "" || r.InvalidAt != nil) {
					t.Errorf("%q: %s %q marked superseded by %q", q, r.Kind, r.Text, r.SupersededBy)
				}
			}
		}

		resp, err := svc.Search(ctx, "alice", agentmem.SearchRequest{Query: "walking the dog by the sea", Scopes: []string{agentmem.ScopeMessages}})
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Results) == 0 || resp.Results[0].Text != "I walk my dog Rex by the sea." || resp.Results[0].InvalidAt != nil || resp.Results[0].SupersededBy != "" {
			t.Fatalf("a message with a memory that holds: %+v", resp.Results)
		}

		// With the invalidated memories: the old memory below the new one, marked.
		resp, err = svc.Search(ctx, "alice", agentmem.SearchRequest{Query: query, Scopes: []string{agentmem.ScopeMemories},
			Filters: agentmem.SearchFilters{IncludeInvalid: true}})
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Results) < 3 || resp.Results[0].ID != lisbon.ID || resp.Results[0].InvalidAt != nil {
			t.Fatalf("include_invalid: %+v", resp.Results)
		}
		for _, r := range resp.Results {
			if (r.ID == porto.ID || r.ID == sea.ID) && (r.SupersededBy != lisbon.ID || r.SupersededText != lisbon.Text || r.InvalidAt == nil) {
				t.Errorf("include_invalid: %q: superseded_by %q (%q), invalid_at %v", r.Text, r.SupersededBy, r.SupersededText, r.InvalidAt)
			}
		}

		// The context builder's memories hold.
		mems, err := (&retrieve.MemoryProvider{Searcher: searcher}).Memories(ctx, "alice", "t2", query)
		if err != nil {
			t.Fatal(err)
		}
		if len(mems) == 0 || mems[0] != lisbon.Text || slices.Contains(mems, porto.Text) || slices.Contains(mems, sea.Text) {
			t.Fatalf("context memories: %q", mems)
		}

		// Facts list the valid memory first and say what replaced the old message.
		facts, err := svc.Facts(ctx, "alice", agentmem.SearchRequest{Query: query})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(facts.Answer, "[1] User lives in Lisbon.") || !strings.Contains(facts.Answer, "superseded by: User lives in Lisbon.") {
			t.Fatalf("facts: %s", facts.Answer)
		}
	})
}

// TestService_SearchDemotesRepeatedPast (issue 30, item 2): the user said
// "I live in Hull." in one session and again in the next, then "we moved
// to Leeds"; the built-in pipeline (heuristic extraction and
// consolidation) keeps the second Hull turn as a source of the Hull
// memory, which the move supersedes. Asked where the user lives, search
// ranks both Hull turns below the Leeds turn and memory, each marked as
// superseded by the Leeds memory, on both backends; a turn that said a
// fact that still holds is not demoted.
func TestService_SearchDemotesRepeatedPast(t *testing.T) {
	testutil.Backends(t, func(t *testing.T, store agentmem.Store) {
		emb := lexical.New(0)
		ix := &index.Indexer{Store: store, Jobs: store, Emb: emb, Space: emb.Space()}
		searcher := retrieve.New(store, emb, emb.Space(), retrieve.Options{VectorWeight: retrieve.VectorWeightLexical})
		svc := core.New(store, core.Options{Indexer: ix, Searcher: searcher})
		for _, c := range []struct{ thread, text string }{
			{"s1", "I live in Hull."},
			{"s2", "I live in Hull, I said."},
			{"s3", "We moved to Leeds last month."},
			{"s4", "I have a cat called Miso."},
		} {
			sayIn(t, svc, ix, c.thread, c.text)
		}
		mems, _, err := store.FindMemories(ctx, "alice", agentmem.MemoryFilter{IncludeInvalid: true})
		if err != nil {
			t.Fatal(err)
		}
		var hull, leeds *agentmem.Memory
		for _, m := range mems {
			switch {
			case strings.Contains(m.Text, "Hull"):
				hull = m
			case strings.Contains(m.Text, "Leeds"):
				leeds = m
			}
		}
		if hull == nil || leeds == nil || hull.Valid() || hull.SupersededBy != leeds.ID || !leeds.Valid() {
			t.Fatalf("memories %+v: want Hull superseded by Leeds", mems)
		}
		if want := []agentmem.ThreadRange{{ThreadID: "s1", SeqFrom: 1, SeqTo: 1}, {ThreadID: "s2", SeqFrom: 1, SeqTo: 1}}; !slices.Equal(hull.Sources, want) {
			t.Fatalf("sources of %q: %v, want %v", hull.Text, hull.Sources, want)
		}

		// (In the user's own words, "where do I live?", the Hull turns
		// share "live" with the question and the Leeds turn nothing: the
		// demotion halves their scores, yet they stay above.)
		for _, q := range []string{"where does the user live", "where does the user live now"} {
			resp, err := svc.Search(ctx, "alice", agentmem.SearchRequest{Query: q, TopK: 10})
			if err != nil {
				t.Fatal(err)
			}
			rank := map[string]int{}
			for i, r := range resp.Results {
				rank[r.Kind+":"+r.ThreadID] = i + 1
				if r.Kind == "message" && (r.ThreadID == "s1" || r.ThreadID == "s2") {
					if r.SupersededBy != leeds.ID || r.InvalidAt == nil || r.Scores["superseded"] == 0 {
						t.Errorf("%q: the Hull turn of %s not marked superseded by Leeds: %+v", q, r.ThreadID, r)
					}
				} else if r.InvalidAt != nil || r.SupersededBy != "" {
					t.Errorf("%q: %s %q marked superseded", q, r.Kind, r.Text)
				}
			}
			now := rank["message:s3"]
			if m := rank["memory:s3"]; m != 0 && (now == 0 || m < now) {
				now = m
			}
			for _, old := range []string{"message:s1", "message:s2"} {
				if now == 0 || rank[old] != 0 && rank[old] < now {
					t.Errorf("%q: %s ranks %d, the Leeds turn or memory %d: want it below (%v)", q, old, rank[old], now, rank)
				}
			}
		}

		// The thread of the Hull memory's provenance deleted for good, the
		// memory still says what superseded it.
		if err := svc.DeleteThread(ctx, "alice", "s1", true); err != nil {
			t.Fatal(err)
		}
		resp, err := svc.Search(ctx, "alice", agentmem.SearchRequest{Query: "Hull", Scopes: []string{agentmem.ScopeMemories},
			Filters: agentmem.SearchFilters{IncludeInvalid: true}})
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Results) == 0 || resp.Results[0].ID != hull.ID || resp.Results[0].SupersededBy != leeds.ID || resp.Results[0].SupersededText != leeds.Text {
			t.Fatalf("the Hull memory without its first thread: %+v", resp.Results)
		}
	})
}

// sayIn stores what alice said in a thread of its own, and indexes it.
func sayIn(t *testing.T, svc *core.Service, ix *index.Indexer, thread, text string) {
	t.Helper()
	if err := svc.CreateThread(ctx, "alice", &agentmem.Thread{ID: thread}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.AppendMessages(ctx, "alice", thread, []*agentmem.Message{{Role: agentmem.RoleUser, Content: text}}, ""); err != nil {
		t.Fatal(err)
	}
	if err := ix.IndexRange(ctx, "alice", thread, 1, 1); err != nil {
		t.Fatal(err)
	}
}
