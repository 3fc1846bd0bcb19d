package retrieve

import (
	"testing"

	"github.com/agentmem/agentmem"
)

func TestMissedOwnWords(t *testing.T) {
	hits := func(texts ...string) []agentmem.TextHit {
		var hs []agentmem.TextHit
		for _, s := range texts {
			hs = append(hs, agentmem.TextHit{Scope: agentmem.ScopeMessages, Text: s, Name: "Maria"})
		}
		return append(hs, agentmem.TextHit{Scope: agentmem.ScopeMessages, Text: "Hi Maria!", Name: "John"})
	}
	byKey := func(hs []agentmem.TextHit) map[itemKey]agentmem.TextHit {
		m := map[itemKey]agentmem.TextHit{{agentmem.ScopeMessages, "other"}: {Name: "Maria"}}
		for i, h := range hs {
			m[itemKey{h.Scope, string(rune('a' + i))}] = h
		}
		return m
	}
	for _, tc := range []struct {
		query string
		hits  []agentmem.TextHit
		want  bool
	}{
		{"Which desserts does Maria make?", hits("John! Good to hear from you.", "So good to see you, John."), true},
		{"Which desserts does Maria make?", hits("John! Good to hear from you.", "I love desserts."), false},
		{"Which desserts does Maria make?", hits("John!", "No.", "Yes.", "A dessert!"), true}, // beyond the best three
		{"what pets does the user have?", hits("My pet is a cat."), false},                    // "pets" and "pet"
		{"what pets does the user have?", hits("My cat sleeps all day."), true},
		{"What does Maria do?", hits("Hello."), false}, // only a name and stop words: nothing to miss
		{"Which desserts does Maria make?", nil, true}, // nothing found at all
	} {
		if got := missedOwnWords(tc.query, tc.hits, byKey(tc.hits)); got != tc.want {
			t.Errorf("missedOwnWords(%q, %d hits) = %v, want %v", tc.query, len(tc.hits), got, tc.want)
		}
	}
}

func TestCrudeStem(t *testing.T) {
	for _, g := range [][]string{{"pets", "pet"}, {"bake", "baked", "baking", "bakes"}, {"countries", "country"}, {"cakes", "cake"},
		{"boxes", "box"}, {"lives", "live", "living", "lived"}, {"desserts", "dessert"}, {"dishes", "dish"}} {
		for _, w := range g[1:] {
			if crudeStem(w) != crudeStem(g[0]) {
				t.Errorf("crudeStem(%q) = %q, crudeStem(%q) = %q: want the same", w, crudeStem(w), g[0], crudeStem(g[0]))
			}
		}
	}
	for _, p := range [][2]string{{"pet", "pen"}, {"live", "love"}, {"bake", "back"}} {
		if crudeStem(p[0]) == crudeStem(p[1]) {
			t.Errorf("%q and %q share a stem", p[0], p[1])
		}
	}
}
