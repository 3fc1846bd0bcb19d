package retrieve

import (
	"strings"

	"github.com/agentmem/agentmem"
)

// DefaultOwnWordsWeight is the OwnWordsWeight serve gives a model's
// vectors (the built-in model's, or a model server's): when full-text
// matched none of the question's own words, its hits are about a name or
// nothing at all, and the meaning decides. On a set of 199 questions asked
// in other words than the turns that answer them (docs/benchmarks.md),
// Recall@5 over messages rose from 0.197 to 0.265 at 5 (0.269 at 10); on
// LoCoMo's dev file, whose questions mostly share the answer's words, it
// moved from 0.683 to 0.681. Weighing the vectors up in proportion to the
// words unmatched instead found more in the first (0.36 at weights of 5)
// but cost LoCoMo 0.1.
const DefaultOwnWordsWeight = 5

// ownWordsTop is how many of the best full-text hits must hold none of
// the question's own words for full-text to count as having missed them.
const ownWordsTop = 3

// missedOwnWords reports whether full-text missed the question's own
// words: none of its search terms (agentmem.SearchTerms) but "user" and
// the names of the candidates' authors (found by either signal: items) is
// a word of the best ownWordsTop hits, compared by a crude stem ("pets"
// and "pet"), and there is such a term. A question whose only match is a
// name ("What does Maria like to bake?" finds Maria's turns, and the
// turns that greet her) is asked in other words than its answer.
func missedOwnWords(query string, hits []agentmem.TextHit, items map[itemKey]agentmem.TextHit) bool {
	names := map[string]bool{"user": true}
	for _, h := range items {
		for _, w := range wordsOf(h.Name) {
			names[w] = true
		}
	}
	var own []string
	for _, t := range agentmem.SearchTerms(query) {
		if !names[t] {
			own = append(own, crudeStem(t))
		}
	}
	if len(own) == 0 {
		return false
	}
	found := bestWords(hits)
	for _, t := range own {
		if found[t] {
			return false
		}
	}
	return true
}

// bestWords returns the words of the best ownWordsTop hits, crudely
// stemmed: what full-text matched of a question.
func bestWords(hits []agentmem.TextHit) map[string]bool {
	found := map[string]bool{}
	for _, h := range hits[:min(len(hits), ownWordsTop)] {
		for _, w := range wordsOf(h.Text) {
			found[crudeStem(w)] = true
		}
	}
	return found
}

// crudeStem strips the commonest English inflections, and then a final
// "e", enough to compare a query's word with a text's: "pets" and "pet",
// "bake", "baked" and "baking", "countries" and "country".
func crudeStem(w string) string {
	for _, suf := range []string{"ings", "ing", "ies", "ied", "ed", "es", "s", "ly"} {
		if strings.HasSuffix(w, suf) && len(w)-len(suf) >= 3 {
			w = w[:len(w)-len(suf)]
			switch {
			case suf == "ies" || suf == "ied":
				w += "y"
			case suf == "es" && !strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "x") && !strings.HasSuffix(w, "z") &&
				!strings.HasSuffix(w, "ch") && !strings.HasSuffix(w, "sh"):
				w += "e" // "cakes": cake
			}
			break
		}
	}
	if len(w) > 3 && strings.HasSuffix(w, "e") {
		w = w[:len(w)-1]
	}
	return w
}
