package retrieve

import (
	"testing"

	"github.com/agentmem/agentmem"
	"github.com/google/go-cmp/cmp"
)

func TestExpansion(t *testing.T) {
	near := map[string][]string{
		"desserts": {"dessert", "pudding", "cakes", "pie"},
		"maria":    {"anna", "sofia"},
		"made":     {"make", "baked", "pie"},
		"user":     {"users", "customer"},
	}
	var asked []string
	expand := func(w string) ([]string, error) {
		asked = append(asked, w)
		return near[w], nil
	}
	got, err := expansion(expand, "What desserts has Maria made for the user?")
	if err != nil {
		t.Fatal(err)
	}
	// Not the name, nor "user"; not a form of a query's word ("dessert"),
	// nor a word twice ("pie"); stemmed as texts' words are.
	if want := []string{crudeStem("pudding"), crudeStem("cakes"), crudeStem("pie"), crudeStem("make"), crudeStem("baked")}; !cmp.Equal(got, want) {
		t.Errorf("expansion = %q, want %q", got, want)
	}
	if want := []string{"desserts", "made"}; !cmp.Equal(asked, want) {
		t.Errorf("expanded %v, want %v", asked, want)
	}
	if got, _ := expansion(expand, "Maria?"); len(got) != 0 {
		t.Errorf("a name alone: %q, want nothing", got)
	}
	// Only the words the best hits lack.
	asked = nil
	hits := []agentmem.TextHit{{Text: "I love desserts."}}
	if _, err := nearWords(expand, "What desserts has Maria made?", hits); err != nil || !cmp.Equal(asked, []string{"made"}) {
		t.Errorf("near words of %v, %v; want those of made alone", asked, err)
	}
}

func TestWithNearWords(t *testing.T) {
	hit := func(id, text string, score float64) agentmem.TextHit {
		return agentmem.TextHit{Scope: agentmem.ScopeMessages, ID: id, Text: text, Score: score}
	}
	// a has the query's two words, b one of them and a near word, c only
	// near words (a vector's candidate), d nothing.
	hits := []agentmem.TextHit{hit("a", "desserts galore", 4), hit("b", "desserts: a pudding", 3.5)}
	items := map[itemKey]agentmem.TextHit{}
	for _, h := range append(hits, hit("c", "Puddings and cakes!", 0), hit("d", "The weather.", 0)) {
		items[itemKey{h.Scope, h.ID}] = h
	}
	near := []string{crudeStem("pudding"), crudeStem("cake")}
	list := withNearWords(hits, items, 2, near, 0.5, 10) // a term's share of the best: 2
	var ids []string
	var scores []float64
	for _, c := range list {
		ids, scores = append(ids, c.key.id), append(scores, c.score)
	}
	if want := []string{"b", "a", "c"}; !cmp.Equal(ids, want) || !cmp.Equal(scores, []float64{4.5, 4, 2}) {
		t.Errorf("withNearWords: %v %v, want %v scored 4.5, 4, 2", ids, scores, want)
	}
	if list := withNearWords(hits, items, 2, near, 0.5, 2); len(list) != 2 {
		t.Errorf("at most 2: %v", list)
	}
}
