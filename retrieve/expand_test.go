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
	// nor a word twice ("pie").
	if want := "pudding cakes pie make baked"; got != want {
		t.Errorf("expansion = %q, want %q", got, want)
	}
	if want := []string{"desserts", "made"}; !cmp.Equal(asked, want) {
		t.Errorf("expanded %v, want %v", asked, want)
	}
	if got, _ := expansion(expand, "Maria?"); got != "" {
		t.Errorf("a name alone: %q, want nothing", got)
	}
}

func TestExpanded(t *testing.T) {
	hit := func(id string, score float64) agentmem.TextHit {
		return agentmem.TextHit{Scope: agentmem.ScopeMessages, ID: id, Score: score}
	}
	items := map[itemKey]agentmem.TextHit{}
	// a has the query's words, b a little less and a near word, c only
	// near words.
	list := expanded([]agentmem.TextHit{hit("a", 2), hit("b", 1.8)}, []agentmem.TextHit{hit("c", 4), hit("b", 1)}, 0.5, 10, items)
	var ids []string
	var scores []float64
	for _, c := range list {
		ids, scores = append(ids, c.key.id), append(scores, c.score)
	}
	if want := []string{"b", "a", "c"}; !cmp.Equal(ids, want) || !cmp.Equal(scores, []float64{2.3, 2, 2}) {
		t.Errorf("expanded: %v %v, want %v scored 2.3, 2, 2", ids, scores, want)
	}
	if len(items) != 3 {
		t.Errorf("items %v, want the three hits", items)
	}
	if list := expanded([]agentmem.TextHit{hit("a", 2)}, []agentmem.TextHit{hit("c", 1), hit("d", 0.5)}, 0.3, 2, items); len(list) != 2 {
		t.Errorf("at most 2: %v", list)
	}
}
