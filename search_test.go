package agentmem_test

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestSearchTerms(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"What did I say about my sister's wedding?", []string{"say", "sister", "wedding"}},
		{"Running, RUNNING and running!", []string{"running"}},
		{`"quotes" (parens) NEAR(a b) run* -not col:umn ^start`, []string{"quotes", "parens", "near", "run", "col", "umn", "start"}},
		{"don't won't can't", []string{"won"}},
		{"gpt4 in 2024, version 3.5", []string{"gpt4", "2024", "version", "3", "5"}},
		{"Café Zürich 東京", []string{"café", "zürich", "東京"}},
		{"bad \xff utf8\x00nul", []string{"bad", "utf8", "nul"}},
		{"the a an of and or", nil},
		{strings.Repeat("x", 201) + " ok", []string{"ok"}},
	} {
		if got := agentmem.SearchTerms(tt.in); !cmp.Equal(got, tt.want, cmpopts.EquateEmpty()) {
			t.Errorf("SearchTerms(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	var many []string
	for i := range 100 {
		many = append(many, "word"+strings.Repeat("x", i))
	}
	if got := agentmem.SearchTerms(strings.Join(many, " ")); len(got) != agentmem.MaxSearchTerms || got[0] != "word" {
		t.Errorf("SearchTerms of 100 words kept %d, want the first %d", len(got), agentmem.MaxSearchTerms)
	}
}

func TestPrepareVectors(t *testing.T) {
	vs := []agentmem.Vector{
		{Scope: agentmem.ScopeMessages, ID: "b", Space: "s/2", Vec: []float32{1, 0}},
		{Scope: agentmem.ScopeMemories, ID: "a", Space: "s/2", Vec: []float32{0, 1}},
		{Scope: agentmem.ScopeMessages, ID: "b", Space: "s/2", Vec: []float32{0.6, 0.8}},
		{Scope: agentmem.ScopeMemories, ID: "a", Space: "r/1", Vec: []float32{1}},
	}
	got, dims, err := agentmem.PrepareVectors(vs)
	if err != nil {
		t.Fatal(err)
	}
	want := []agentmem.Vector{vs[3], vs[1], vs[2]} // sorted; the last "b" wins
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("PrepareVectors mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]int{"s/2": 2, "r/1": 1}, dims); diff != "" {
		t.Fatalf("dims mismatch (-want +got):\n%s", diff)
	}
	for _, bad := range []agentmem.Vector{
		{Scope: agentmem.ScopeMemories, ID: "a", Space: "s/2", Vec: []float32{float32(math.NaN()), 0}},
		{Scope: agentmem.ScopeMemories, ID: "a", Space: "s/2", Vec: []float32{1, 0, 0}},
		{Scope: "notes", ID: "a", Space: "s/2", Vec: []float32{1, 0}},
		{Scope: agentmem.ScopeMemories, ID: "a", Space: "bad\nspace", Vec: []float32{1, 0}},
	} {
		if _, _, err := agentmem.PrepareVectors(append(vs[:1:1], bad)); agentmem.ErrorCode(err) != agentmem.EINVALID {
			t.Errorf("PrepareVectors with %+v: %v, want invalid", bad, err)
		}
	}
}

func TestSearchFilter_Match(t *testing.T) {
	at := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	invalid := at
	mem := agentmem.TextHit{Scope: agentmem.ScopeMemories, ID: "m", ThreadID: "t", AgentID: "a", Category: "c", CreatedAt: at}
	msg := agentmem.TextHit{Scope: agentmem.ScopeMessages, ID: "x", ThreadID: "t", AgentID: "a", CreatedAt: at}
	gone := mem
	gone.InvalidAt = &invalid
	p := func(s string) *string { return &s }
	before, after := at.Add(-time.Second), at.Add(time.Second)
	for _, tt := range []struct {
		name          string
		f             agentmem.SearchFilter
		mem, msg, old bool
	}{
		{"None", agentmem.SearchFilter{}, true, true, false},
		{"IncludeInvalid", agentmem.SearchFilter{IncludeInvalid: true}, true, true, true},
		{"Agent", agentmem.SearchFilter{AgentID: p("a")}, true, true, false},
		{"OtherAgent", agentmem.SearchFilter{AgentID: p("b"), IncludeInvalid: true}, false, false, false},
		{"Thread", agentmem.SearchFilter{ThreadID: p("t")}, true, true, false},
		{"Category", agentmem.SearchFilter{Category: p("c"), IncludeInvalid: true}, true, false, true},
		{"SinceInclusive", agentmem.SearchFilter{Since: &at}, true, true, false},
		{"UntilExclusive", agentmem.SearchFilter{Until: &at}, false, false, false},
		{"Range", agentmem.SearchFilter{Since: &before, Until: &after}, true, true, false},
	} {
		if got := [3]bool{tt.f.Match(mem), tt.f.Match(msg), tt.f.Match(gone)}; got != [3]bool{tt.mem, tt.msg, tt.old} {
			t.Errorf("%s: Match(memory, message, invalidated) = %v, want %v", tt.name, got, [3]bool{tt.mem, tt.msg, tt.old})
		}
	}
}

func TestMemory_Changes(t *testing.T) {
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	m := &agentmem.Memory{UserID: "alice", Text: "Alice lives in Lyon.", ThreadID: "t1", SeqFrom: 1, SeqTo: 2}
	if err := m.Prepare(now); err != nil {
		t.Fatal(err)
	}
	if m.ID == "" || m.Version != 1 || !m.ValidFrom.Equal(now) || m.Kind != agentmem.MemoryFact || string(m.Metadata) != "{}" {
		t.Fatalf("prepared memory = %+v", m)
	}
	text := "Alice lives in Paris."
	if err := m.ApplyUpdate(agentmem.MemoryUpdate{Text: &text, ThreadID: "t2", SeqFrom: 5, SeqTo: 5}, now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	c := m.Change(agentmem.OpUpdate, "moved")
	if m.Version != 2 || m.ThreadID != "t2" || c.Version != 2 || c.Text != text || c.ThreadID != "t2" || !c.At.Equal(now.Add(time.Hour)) {
		t.Fatalf("after update: memory %+v, change %+v", m, c)
	}
	if !m.Invalidate("m2", now.Add(2*time.Hour)) || m.Version != 3 || m.Valid() || m.Invalidate("m3", now.Add(3*time.Hour)) || m.SupersededBy != "m2" {
		t.Fatalf("after invalidation: %+v", m)
	}
	if err := m.ApplyUpdate(agentmem.MemoryUpdate{Text: &text}, now); agentmem.ErrorCode(err) != agentmem.ECONFLICT {
		t.Fatalf("update of an invalidated memory: %v, want conflict", err)
	}
}

// TestSearchScopes: each scope is searched (memories alone when the query
// filters by category), the hits merged best first and cut to the limit;
// a scope's error is the search's.
func TestSearchScopes(t *testing.T) {
	scores := map[string][]float64{agentmem.ScopeMemories: {0.9, 0.2}, agentmem.ScopeMessages: {0.5, 0.4}, agentmem.ScopeChunks: {0.95}}
	search := func(scope string) ([]agentmem.TextHit, error) {
		if scope == "broken" {
			return nil, errors.New("broken")
		}
		var hits []agentmem.TextHit
		for i, s := range scores[scope] {
			hits = append(hits, agentmem.TextHit{Scope: scope, ID: fmt.Sprint(scope, i), Score: s})
		}
		return hits, nil
	}
	q := agentmem.TextQuery{Scopes: []string{agentmem.ScopeMemories, agentmem.ScopeMessages, agentmem.ScopeChunks}, Limit: 3}
	hits, err := agentmem.SearchScopes(q, search)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, h := range hits {
		got = append(got, h.ID)
	}
	if want := []string{"chunks0", "memories0", "messages0"}; !slices.Equal(got, want) {
		t.Errorf("hits %v, want %v", got, want)
	}
	cat := "health"
	q.Filter.Category, q.Limit = &cat, 10
	if hits, err := agentmem.SearchScopes(q, search); err != nil || len(hits) != 2 || hits[0].Scope != agentmem.ScopeMemories || hits[1].Scope != agentmem.ScopeMemories {
		t.Errorf("with a category: %+v, %v; want the two memories", hits, err)
	}
	q.Scopes = append(q.Scopes, "broken")
	q.Filter.Category = nil
	if _, err := agentmem.SearchScopes(q, search); err == nil || err.Error() != "broken" {
		t.Errorf("with a broken scope: %v, want its error", err)
	}
}
