package retrieve_test

import (
	"context"
	"testing"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/index"
	"github.com/agentmem/agentmem/internal/testutil"
	"github.com/agentmem/agentmem/llm/minilm"
	"github.com/agentmem/agentmem/retrieve"
)

// TestMemoryProvider_Contentless: an input that asks nothing of memory
// (greetings, thanks, small talk) draws no memory into the context and
// facts say nothing is known of it; an input about the user draws the
// memories it is about, and one unrelated to them draws none.
func TestMemoryProvider_Contentless(t *testing.T) {
	ctx := context.Background()
	s := testutil.MustOpenSQLite(t)
	emb := minilm.New()
	ix := &index.Indexer{Store: s, Emb: emb, Space: emb.Space()}
	for _, text := range []string{"User is vegetarian.", "User lives in Leeds with her partner Ines.", "User has a grey tabby cat called Mabel."} {
		mustMemory(t, s, ix, &agentmem.Memory{UserID: "alice", Text: text})
	}
	search := retrieve.New(s, emb, emb.Space(), retrieve.Options{})
	p := &retrieve.MemoryProvider{Searcher: search, TopK: 5}
	for _, input := range []string{"hello", "Hi there!", "thanks, that's all for today", "how are you?", "ok cool, cheers", "good morning everyone"} {
		got, err := p.Memories(ctx, "alice", "", input)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 0 {
			t.Errorf("%q: %q, want no memory", input, got)
		}
		facts, err := search.Facts(ctx, nil, "", "alice", retrieve.Request{Query: input, TopK: 5})
		if err != nil {
			t.Fatal(err)
		}
		if len(facts.Facts) != 0 || facts.Facts == nil || facts.Answer != "Nothing is known about that." {
			t.Errorf("facts for %q: %+v", input, facts)
		}
	}
	// An input about the user draws the memories it is about, also one
	// that needs them by inference only ("where should I eat tonight?" and
	// a vegetarian); one that needs none (general knowledge, a task)
	// draws none: their relevance is under DefaultMinRelevance.
	for input, want := range map[string]string{
		"Where should I eat tonight?":        "User is vegetarian.",
		"write me a haiku about my cat":      "User has a grey tabby cat called Mabel.",
		"hello, where do I live again?":      "User lives in Leeds with her partner Ines.",
		"is she still vegetarian?":           "User is vegetarian.",
		"what's the capital of Peru?":        "",
		"how do I reverse a list in python?": "",
		"explain how vaccines work":          "",
	} {
		got, err := p.Memories(ctx, "alice", "", input)
		if err != nil {
			t.Fatal(err)
		}
		if want == "" && len(got) != 0 || want != "" && (len(got) == 0 || got[0] != want) {
			t.Errorf("%q: %q, want %q first (none if empty)", input, got, want)
		}
	}
}
