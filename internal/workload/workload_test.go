package workload

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/agentmem/agentmem"
)

func TestWorkload(t *testing.T) {
	seen := map[string]bool{}
	for _, w := range Vocabulary {
		if seen[w] {
			t.Errorf("%q twice in Vocabulary", w)
		}
		seen[w] = true
		if agentmem.IsStopWord(w) {
			t.Errorf("%q is a stop word: search would drop it", w)
		}
	}
	if len(Vocabulary) != 250 {
		t.Errorf("Vocabulary has %d words, want 250", len(Vocabulary))
	}
	rng := rand.New(rand.NewPCG(1, 1))
	if n := len(strings.Fields(Message(rng))); n != 30 {
		t.Errorf("Message has %d words, want 30", n)
	}
	if n := len(agentmem.SearchTerms(Query(rng))); n < 6 {
		t.Errorf("Query has %d search terms, want 8 less repeats", n)
	}
}
