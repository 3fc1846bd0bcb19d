package retrieve

import (
	"cmp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agentmem/agentmem"
)

// DefaultExpandWeight is the ExpandWeight serve gives the built-in
// model's words (minilm.NearWords). On questions asked in other words
// than their answers (docs/benchmarks.md) Recall@5 over messages went
// from 0.265 to 0.304 at 0.6 (0.296 at 0.3), and on a second such set,
// written after the choice, from 0.269 to 0.350; on LoCoMo's dev file
// from 0.681 to 0.689 (0.686 at 0.3).
const DefaultExpandWeight = 0.6

// nearWords returns the near words (see Options.Expand) of the query's
// words that the best full-text hits lack (all of them when full-text
// missed the question; see missedOwnWords), crudely stemmed.
func nearWords(expand func(string) ([]string, error), query string, hits []agentmem.TextHit) ([]string, error) {
	found := bestWords(hits)
	return expansion(func(w string) ([]string, error) {
		if found[crudeStem(w)] {
			return nil, nil
		}
		return expand(w)
	}, query)
}

// expansion returns the words near in meaning to the query's own (see
// Options.Expand), crudely stemmed: those of the query's search terms but
// the ones written with a capital (names, which would bring other names)
// and "user", each expanded, without the words the query has already
// (compared by a crude stem) or twice.
func expansion(expand func(string) ([]string, error), query string) ([]string, error) {
	proper := map[string]bool{"user": true}
	for _, w := range strings.FieldsFunc(query, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) }) {
		if r, _ := utf8.DecodeRuneInString(w); unicode.IsUpper(r) {
			proper[strings.ToLower(w)] = true
		}
	}
	terms := agentmem.SearchTerms(query)
	seen := map[string]bool{}
	for _, t := range terms {
		seen[crudeStem(t)] = true
	}
	var out []string
	for _, t := range terms {
		if proper[t] {
			continue
		}
		near, err := expand(t)
		if err != nil {
			return nil, err
		}
		for _, w := range near {
			if s := crudeStem(w); !seen[s] && !sharePrefix(w, t) {
				seen[s] = true
				out = append(out, s)
			}
		}
	}
	return out, nil
}

// sharePrefix reports whether a and b are likely forms of one word:
// the same letters but for their last two, four at least ("countries",
// "country").
func sharePrefix(a, b string) bool {
	n := min(len(a), len(b)) - 2
	return n >= 4 && a[:n] == b[:n]
}

// withNearWords returns the full-text list of a search whose query has
// near words (near, crudely stemmed): each candidate of either signal
// (items) scored by its full-text score, if full-text found it, plus w
// times a query term's share of the best hit's score for each near word
// its text holds — as if the near words were terms of the query that
// weigh w (BM25 sums over a query's terms) — best first, at most n.
// Scoring the candidates found, not the store's every text that holds a
// near word, keeps its cost to reading their words (a second full-text
// query over near words as common as the question's cost as much as the
// first: docs/benchmarks.md).
func withNearWords(hits []agentmem.TextHit, items map[itemKey]agentmem.TextHit, terms int, near []string, w float64, n int) []candidate {
	isNear := map[string]bool{}
	for _, s := range near {
		isNear[s] = true
	}
	unit := 1.0 // with no full-text hit, the near words alone rank
	if len(hits) > 0 {
		unit = hits[0].Score / float64(max(terms, 1))
	}
	score := map[itemKey]float64{}
	for _, h := range hits {
		score[itemKey{h.Scope, h.ID}] = h.Score
	}
	var list []candidate
	for k, h := range items {
		held := map[string]bool{}
		for _, word := range wordsOf(h.Text) {
			if s := crudeStem(word); isNear[s] {
				held[s] = true
			}
		}
		if sc := score[k] + w*unit*float64(len(held)); sc > 0 {
			list = append(list, candidate{k, sc})
		}
	}
	// Best first; equal scores in a stable order (items is a map).
	slices.SortFunc(list, func(a, b candidate) int {
		return cmp.Or(cmp.Compare(b.score, a.score), strings.Compare(a.key.scope, b.key.scope), strings.Compare(a.key.id, b.key.id))
	})
	return list[:min(len(list), n)]
}
