package retrieve

import (
	"math"

	"github.com/agentmem/agentmem"
)

// A result's Relevance is the chance that it bears on the query, from
// 0 to 1: what min_score compares with, and what the context's memories
// must reach (DefaultMinRelevance). Its rank score (Score) orders the
// results but says nothing of relevance: the first of a list of
// strangers ranks first. Relevance is estimated from evidence that does
// not depend on the other results (Evidence) by a logistic model whose
// coefficients depend on the space of the result's vectors (a cosine of
// 0.3 means more for one embedder than for another): Calibrations holds
// the built-in embedders', learned by retrieve/calibrate from a labelled
// corpus of users' memories and the inputs they bear on.

// Evidence is what a result's relevance is estimated from.
type Evidence struct {
	// Cosine is the cosine similarity of the query's and the item's
	// vectors, in the space of the item's vectors (NaN when unknown).
	Cosine float64
	// Gap is how much less Cosine is than the best cosine of the user's
	// items in the space (0 for the nearest).
	Gap float64
	// Coverage is the share of the query's words that the item holds
	// (see Coverage).
	Coverage float64
	// Personal says whether the query speaks of its asker or the user
	// (see Personal): a question of general knowledge needs no memory.
	Personal bool
	// Need is the log-odds that the query needs any memory at all, from
	// its vector (see Calibration.Need; 0 when unknown): "where should I
	// eat tonight?" does, "how do I reverse a list in python?" does not,
	// though their words and cosines with a user's memories are alike.
	Need float64
}

// Features returns the evidence as the logistic model reads it; without
// a cosine, its terms are 0.
func (e Evidence) Features() []float64 {
	personal := 0.0
	if e.Personal {
		personal = 1
	}
	if math.IsNaN(e.Cosine) {
		return []float64{1, e.Coverage, personal, 0, 0, 0, 0}
	}
	return []float64{1, e.Coverage, personal, e.Cosine, e.Gap, e.Cosine * e.Coverage, e.Need}
}

// Calibration is how relevance is estimated in one vector space.
type Calibration struct {
	// Relevance weighs the evidence of a result.
	Relevance Coefficients
	// Need is a linear model of the query's vector in the space: its
	// first coefficient the bias, then one per dimension; the log-odds
	// that the query needs some memory (Evidence.Need). None when empty.
	Need []float64
}

// NeedLogit returns the log-odds that a query of vector q needs some
// memory; 0 without a model for q's dimension.
func (c Calibration) NeedLogit(q []float32) float64 {
	if len(c.Need) != len(q)+1 {
		return 0
	}
	z := c.Need[0]
	for i, x := range q {
		z += c.Need[i+1] * float64(x)
	}
	return z
}

// Coefficients of the logistic model of relevance, one per feature of
// Evidence.Features: relevance = σ(Σ cᵢ·xᵢ).
type Coefficients []float64

// Relevance returns the relevance of a result with evidence e.
func (c Coefficients) Relevance(e Evidence) float64 {
	z := 0.0
	for i, x := range e.Features() {
		if i < len(c) {
			z += c[i] * x
		}
	}
	return 1 / (1 + math.Exp(-z))
}

// DefaultMinRelevance is the relevance the context's memories must reach
// (MemoryProvider.MinScore) and a facts question's when it gives no
// min_score: chosen on the calibration corpus (docs/benchmarks.md), an input
// unrelated to every memory draws none of them nearly always, while most
// memories that an input needs are drawn.
const DefaultMinRelevance = 0.15

// Coverage returns the share of query's words (agentmem.SearchTerms,
// without "user" and small talk: what a query asks about) that text
// holds, compared by their crude stems ("pets" and "pet"); 0 when the
// query has no such word.
func Coverage(query, text string) float64 { return coverage(queryStems(query), text) }

// queryStems returns the crude stems of the query's words that Coverage
// counts.
func queryStems(query string) []string {
	var stems []string
	for _, t := range agentmem.SearchTerms(query) {
		if t != "user" && !smallTalk[t] {
			stems = append(stems, crudeStem(t))
		}
	}
	return stems
}

// coverage returns the share of stems that text holds.
func coverage(stems []string, text string) float64 {
	if len(stems) == 0 {
		return 0
	}
	in := map[string]bool{}
	for _, w := range wordsOf(text) {
		in[crudeStem(w)] = true
	}
	n := 0
	for _, t := range stems {
		if in[t] {
			n++
		}
	}
	return float64(n) / float64(len(stems))
}

// calibration returns the calibration of results whose vectors lie in
// space ("" for none): Options.Calibrations', else the built-in one,
// else the lexical one (Calibrations[""]).
func (s *Searcher) calibration(space string) Calibration {
	for _, m := range []map[string]Calibration{s.opt.Calibrations, Calibrations} {
		if c, ok := m[space]; ok && space != "" {
			return c
		}
	}
	if c, ok := s.opt.Calibrations[""]; ok {
		return c
	}
	return Calibrations[""]
}

// relevance estimates the relevance of a search's results (see
// Calibration) from what it read once of the query: the stems Coverage
// counts, whether it speaks of the user, and, in each vector list's
// space (lists: the vector signal's), the log-odds that it needs memory.
type relevance struct {
	s        *Searcher
	stems    []string
	personal bool
	lists    []weightedList
	need     []float64
}

func (s *Searcher) relevanceOf(query string, lists []weightedList) *relevance {
	rv := &relevance{s: s, stems: queryStems(query), personal: Personal(query), lists: lists, need: make([]float64, len(lists))}
	for i, l := range lists {
		rv.need[i] = s.calibration(l.space).NeedLogit(l.query)
	}
	return rv
}

// set sets each result's Relevance (and Scores["coverage"]) from its
// evidence: its words, and its vector's cosine with the query's in the
// space of the vector list whose scopes hold it (keys are the results'
// items).
func (rv *relevance) set(results []Result, keys []itemKey) {
	for i := range results {
		r, k := &results[i], keys[i]
		ev := Evidence{Cosine: math.NaN(), Coverage: coverage(rv.stems, r.Text), Personal: rv.personal}
		space := ""
		for li, l := range rv.lists {
			if !l.scopes[k.scope] || l.vectors == nil {
				continue
			}
			if cos, ok := l.vectors.cosine(l.query, k); ok {
				ev.Cosine, ev.Need, space = cos, rv.need[li], l.space
				if len(l.list) > 0 {
					ev.Gap = max(l.list[0].score-cos, 0)
				}
			}
		}
		r.Scores["coverage"] = ev.Coverage
		r.Relevance = rv.s.calibration(space).Relevance.Relevance(ev)
	}
}

// cosine returns the cosine of q and the vector of k in u (a chunk's
// nearer of its text's and its summary's); false when u holds none.
func (u *userVectors) cosine(q []float32, k itemKey) (float64, bool) {
	u.mu.RLock()
	defer u.mu.RUnlock()
	if u.dim == 0 || len(q) != u.dim {
		return 0, false
	}
	keys := []itemKey{k}
	if k.scope == agentmem.ScopeChunks {
		keys = append(keys, itemKey{k.scope, k.id + agentmem.SummaryVectorSuffix})
	}
	best, ok := math.Inf(-1), false
	for _, k := range keys {
		if row, found := u.rows[k]; found {
			best, ok = max(best, float64(dot(q, u.data[row*u.dim:(row+1)*u.dim])*u.scale[row])), true
		}
	}
	return best, ok
}

// Personal reports whether a query speaks of its asker or the user: it
// says "I", "me", "my", "we", "our", "us" or "user" (or the user's name,
// which search reads as "user"), or "he", "she", "his", "her" (an app
// asking about its user: "is she still vegetarian?").
func Personal(query string) bool {
	for _, w := range wordsOf(query) {
		switch w {
		case "i", "im", "ive", "id", "ill", "me", "my", "mine", "myself", "we", "our", "ours", "us", "user", "users",
			"he", "she", "him", "her", "his", "hers", "himself", "herself":
			return true
		}
	}
	return false
}
