package index_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/index"
	"github.com/agentmem/agentmem/internal/testutil"
	"github.com/agentmem/agentmem/llm/lexical"
	"github.com/google/go-cmp/cmp"
)

// TestIndexer_WindowsAndChunks: indexing writes each turn's window (so a
// turn is found by its neighbours' words, also those appended later),
// vectors of the windows, and a chunk per ten turns, the rest once the
// thread has ended.
func TestIndexer_WindowsAndChunks(t *testing.T) {
	s := testutil.MustOpenSQLite(t)
	emb := lexical.New(0)
	var summarized [][]int64
	ix := &index.Indexer{Store: s, Jobs: s, Emb: emb, Space: emb.Space(),
		Summarize: func(_ context.Context, turns []*agentmem.Message) (string, error) {
			var seqs []int64
			for _, m := range turns {
				seqs = append(seqs, m.Seq)
			}
			summarized = append(summarized, seqs)
			return fmt.Sprintf("Turns %d to %d.", turns[0].Seq, turns[len(turns)-1].Seq), nil
		}}
	if err := s.CreateThread(ctx, &agentmem.Thread{UserID: "alice", ID: "t", AgentID: "coach"}); err != nil {
		t.Fatal(err)
	}
	var msgs []*agentmem.Message
	for i := 1; i <= 24; i++ {
		m := &agentmem.Message{Role: agentmem.RoleUser, Name: "Alice", Content: fmt.Sprintf("turn %d about gardening", i)}
		switch {
		case i%2 == 0:
			m.Role, m.Name = agentmem.RoleAssistant, "Bob"
		case i == 7:
			m.Role, m.Name, m.Content = agentmem.RoleSystem, "", "a system note about zucchini" // not a turn
		case i == 13:
			m.Content = "I painted a sunset in Lisbon"
		}
		msgs = append(msgs, m)
	}
	stored, err := s.AppendMessages(ctx, "alice", "t", msgs[:12], agentmem.AppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := ix.IndexRange(ctx, "alice", "t", 1, 12); err != nil {
		t.Fatal(err)
	}
	search := func(q string) []int64 {
		t.Helper()
		hits, err := s.SearchText(ctx, "alice", agentmem.TextQuery{Query: q, Scopes: []string{agentmem.ScopeMessages}})
		if err != nil {
			t.Fatal(err)
		}
		var seqs []int64
		for _, h := range hits {
			seqs = append(seqs, h.SeqFrom)
		}
		slices.Sort(seqs)
		return seqs
	}
	if got := search("zucchini"); len(got) != 0 {
		t.Fatalf("a system message's words found turns %v", got)
	}
	// Ten turns (seq 7 is no turn): the first chunk covers seqs 1–11.
	chunks, err := s.FindChunks(ctx, "alice", "t")
	if err != nil {
		t.Fatal(err)
	}
	if len(chunks) != 1 || chunks[0].SeqFrom != 1 || chunks[0].SeqTo != 11 || chunks[0].Turns != 10 {
		t.Fatalf("chunks after 12 messages: %+v", chunks)
	}
	c := chunks[0]
	if !strings.HasPrefix(c.Text, "Alice: turn 1 about gardening\nBob: turn 2 about gardening\n") || strings.Contains(c.Text, "zucchini") {
		t.Fatalf("chunk text %q", c.Text)
	}
	if c.Summary != "Turns 1 to 11." || !slices.Contains(c.Topics, "gardening") || !slices.Contains(c.Entities, "Alice") || !slices.Contains(c.Entities, "Bob") {
		t.Fatalf("chunk %+v", c)
	}
	if !c.CreatedAt.Equal(stored[10].CreatedAt) {
		t.Fatalf("chunk created_at %v, want its last turn's %v", c.CreatedAt, stored[10].CreatedAt)
	}

	// The next batch completes the windows of the turns before it.
	if _, err := s.AppendMessages(ctx, "alice", "t", msgs[12:], agentmem.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := ix.IndexRange(ctx, "alice", "t", 13, 24); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int64{11, 12, 13, 14, 15}, search("sunset")); diff != "" {
		t.Fatalf("a turn's window is the two turns on each side (-want +got):\n%s", diff)
	}
	// The turn itself ranks first: its words count twice.
	hits, err := s.SearchText(ctx, "alice", agentmem.TextQuery{Query: "sunset lisbon", Scopes: []string{agentmem.ScopeMessages}})
	if err != nil || len(hits) == 0 || hits[0].SeqFrom != 13 {
		t.Fatalf("best hit for its own words: %+v, %v", hits, err)
	}
	vs, err := s.FindVectors(ctx, "alice", emb.Space(), nil)
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, v := range vs {
		count[v.Scope]++
	}
	// 23 turns; two chunks (1–11, 12–21) of two vectors each.
	if count[agentmem.ScopeMessages] != 23 || count[agentmem.ScopeChunks] != 4 {
		t.Fatalf("vectors per scope %v, want 23 messages and 4 of chunks", count)
	}

	// Indexing again changes nothing; ending the thread flushes the last
	// three turns into a chunk of their own.
	if err := ix.IndexRange(ctx, "alice", "t", 1, 24); err != nil {
		t.Fatal(err)
	}
	if chunks, _ := s.FindChunks(ctx, "alice", "t"); len(chunks) != 2 || chunks[1].SeqFrom != 12 || chunks[1].SeqTo != 21 {
		t.Fatalf("chunks before the end: %+v", chunks)
	}
	if _, err := s.EndThread(ctx, "alice", "t"); err != nil {
		t.Fatal(err)
	}
	if err := ix.IndexRange(ctx, "alice", "t", 24, 24); err != nil {
		t.Fatal(err)
	}
	chunks, err = s.FindChunks(ctx, "alice", "t")
	if err != nil {
		t.Fatal(err)
	}
	var ranges [][2]int64
	for _, c := range chunks {
		ranges = append(ranges, [2]int64{c.SeqFrom, c.SeqTo})
	}
	if diff := cmp.Diff([][2]int64{{1, 11}, {12, 21}, {22, 24}}, ranges); diff != "" {
		t.Fatalf("chunks after the end (-want +got):\n%s", diff)
	}
	if len(summarized) != 3 {
		t.Fatalf("summarized %d chunks, want 3 (each once): %v", len(summarized), summarized)
	}
	hits, err = s.SearchText(ctx, "alice", agentmem.TextQuery{Query: "lisbon", Scopes: []string{agentmem.ScopeChunks}})
	if err != nil || len(hits) != 1 || hits[0].SeqFrom != 12 || hits[0].AgentID != "coach" {
		t.Fatalf("chunk search: %+v, %v", hits, err)
	}
}

func TestTopics(t *testing.T) {
	turns := []*agentmem.Message{
		{Role: agentmem.RoleUser, Content: "My garden needs water. The garden has tomatoes and the tomatoes are red."},
		{Role: agentmem.RoleAssistant, Content: "Really? Watering the garden daily helps tomatoes."},
	}
	got := index.Topics(turns, 2)
	if diff := cmp.Diff([]string{"garden", "tomatoes"}, got); diff != "" {
		t.Errorf("Topics mismatch (-want +got):\n%s", diff)
	}
}
