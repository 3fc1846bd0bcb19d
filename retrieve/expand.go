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
// from 0.265 to 0.312 at 0.3, and on a second such set, written after the
// choice, from 0.269 to 0.381; on LoCoMo's dev file from 0.681 to 0.682
// (Recall@10 0.754 to 0.759). Weights of 0.15 and 0.5 gave LoCoMo 0.685
// and 0.678 when every word was expanded.
const DefaultExpandWeight = 0.3

// expansion returns the full-text query of the words near in meaning to
// the query's own (see Options.Expand): the query's search terms but
// those written with a capital (names, which would bring other names)
// and "user", each expanded, without the words the query has already
// (compared by a crude stem) or twice. "" when there are none.
func expansion(expand func(string) ([]string, error), query string) (string, error) {
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
			return "", err
		}
		for _, w := range near {
			if s := crudeStem(w); !seen[s] && !sharePrefix(w, t) {
				seen[s] = true
				out = append(out, w)
			}
		}
	}
	return strings.Join(out, " "), nil
}

// sharePrefix reports whether a and b are likely forms of one word:
// the same letters but for their last two, four at least ("countries",
// "country").
func sharePrefix(a, b string) bool {
	n := min(len(a), len(b)) - 2
	return n >= 4 && a[:n] == b[:n]
}

// expanded returns the full-text list of a search whose query was
// expanded: each hit scored by the sum of its scores in the query's
// hits and, weighed by w, in the expansion's (BM25 sums over a query's
// terms, so this is the score of one query whose expansion's terms weigh
// w), best first, at most n; the expansion's hits are added to items.
func expanded(hits, more []agentmem.TextHit, w float64, n int, items map[itemKey]agentmem.TextHit) []candidate {
	score := map[itemKey]float64{}
	var keys []itemKey
	for i, hs := range [][]agentmem.TextHit{hits, more} {
		for _, h := range hs {
			k := itemKey{h.Scope, h.ID}
			if _, ok := score[k]; !ok {
				keys = append(keys, k)
			}
			if _, ok := items[k]; !ok {
				items[k] = h
			}
			if i == 0 {
				score[k] += h.Score
			} else {
				score[k] += w * h.Score
			}
		}
	}
	list := make([]candidate, len(keys))
	for i, k := range keys {
		list[i] = candidate{k, score[k]}
	}
	slices.SortStableFunc(list, func(a, b candidate) int { return cmp.Compare(b.score, a.score) })
	return list[:min(len(list), n)]
}
