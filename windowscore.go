package agentmem

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Full-text search over messages finds a message by its window (see
// MessageWindow), but stores index each turn once: a window's score is
// added up at query time from its turns' entries in the index, which is
// what WindowPostings holds and ScoreWindows ranks.

// WindowPostings is what a store read of a user's full-text index of
// turns for a query of Terms words, for ScoreWindows. A turn is named by
// its key in the store (a rowid on SQLite, a seq on PostgreSQL), which
// grows with each turn of a thread.
type WindowPostings struct {
	// Lists are, for each of the query's words, the user's turns that hold
	// it, newest first: all of them, or the newest Bound.
	Lists [][]int64
	// Bound is the most turns a list holds; a list of Bound turns is full
	// (older turns may hold the word too). 0: lists are never full.
	Bound int
	// Spanned is, for each full list, how many of the user's windows are
	// at least as new as the oldest turn it holds (the share of the
	// history the list covers: the word's frequency is estimated from it).
	Spanned []float64
	// Windows is how many windows the user has; AvgLen is their average
	// length in words (0: the average of Turns').
	Windows, AvgLen float64
	// Turns are the windows of the lists' turns that have one, by turn.
	Turns map[int64]TurnWindow
}

// TurnWindow is what a store keeps of a turn's window: its other turns
// (the turns whose windows hold this one: the relation is symmetric) and
// its length in words, its own turn's counted twice.
type TurnWindow struct {
	Near []int64
	Len  float64
}

// BM25's parameters, as SQLite's FTS5 and Lucene set them.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// BM25IDF is the IDF of a word held by df of n rows, as Lucene's BM25
// has it: never zero, so that a word most of a user's items hold still
// counts a little (a name in a conversation between two people: FTS5's
// form, which floors it at a millionth, ranked windows holding the name
// no higher than those that do not, when statistics were a user's alone).
func BM25IDF(n, df float64) float64 {
	return math.Log(1 + (n-df+0.5)/(df+0.5))
}

// BM25TF is BM25's weight of a word held tf times by a row whose length
// is rel times the average.
func BM25TF(tf, rel float64) float64 {
	return tf * (bm25K1 + 1) / (tf + bm25K1*(1-bm25B+bm25B*rel))
}

// ScoreWindows ranks the windows that hold a query's words by BM25 over
// their turns, as an index of each window's text (WindowText: its own
// turn twice) would, save that a turn holding a word counts once however
// often it says it:
//
//   - a word's frequency in a window is the number of its turns that
//     hold it, its own turn's counted twice;
//   - its IDF is over the user's windows: those holding it counted when
//     its list is not full, estimated from their share of the windows its
//     list spans when it is (older windows are then scored without it:
//     over a long history, the newer of windows holding the same words
//     rank first);
//   - a window's length is its own (TurnWindow.Len) when known, the
//     average otherwise; lens is asked for the lengths of the best
//     windows whose turns the lists do not hold (at most refine of
//     them), as their own windows were not read.
//
// A listed turn without a window yet is scored as a window of itself
// alone, its words twice (lens says its length). It returns the scores
// by window (the key of its own turn).
func ScoreWindows(p WindowPostings, refine int, lens func(docs []int64) (map[int64]float64, error)) ([]Scored, error) {
	terms := len(p.Lists)
	// Each window credited gets a number (at), its frequencies of the
	// words a row of tf.
	at := make(map[int64]int32, 4*len(p.Turns)+16)
	var docs []int64
	var tf []float32
	credit := func(doc int64, i int, n float32) {
		k, ok := at[doc]
		if !ok {
			k = int32(len(docs))
			at[doc] = k
			docs = append(docs, doc)
			tf = append(tf, make([]float32, terms)...)
		}
		tf[int(k)*terms+i] += n
	}
	for i, l := range p.Lists {
		for _, d := range l {
			credit(d, i, 2)
			for _, n := range p.Turns[d].Near {
				credit(n, i, 1)
			}
		}
	}
	df := make([]float64, terms)
	for k := range docs {
		for i, n := range tf[k*terms : (k+1)*terms] {
			if n > 0 {
				df[i]++
			}
		}
	}
	idf := make([]float64, terms)
	n := max(p.Windows, float64(len(docs)), 1) // turns without a window yet count too
	for i, l := range p.Lists {
		d := df[i]
		if p.Bound > 0 && len(l) >= p.Bound && i < len(p.Spanned) && p.Spanned[i] > 0 {
			d = min(d/p.Spanned[i]*n, n)
		}
		idf[i] = BM25IDF(max(n, d), d)
	}
	avg := p.AvgLen
	if avg <= 0 && len(p.Turns) > 0 {
		for _, w := range p.Turns {
			avg += w.Len
		}
		avg /= float64(len(p.Turns))
	}
	if avg <= 0 {
		avg = 1
	}
	score := func(k int, length float64) float64 {
		rel := 1.0
		if length > 0 {
			rel = length / avg
		}
		s := 0.0
		for i, n := range tf[k*terms : (k+1)*terms] {
			if n > 0 {
				s += idf[i] * BM25TF(float64(n), rel)
			}
		}
		return s
	}
	scores := make([]Scored, len(docs))
	var unknown []Scored // by their index in scores
	for k, doc := range docs {
		w, ok := p.Turns[doc]
		if ok {
			scores[k] = Scored{doc, score(k, w.Len)}
		} else {
			scores[k] = Scored{doc, score(k, 0)}
			unknown = append(unknown, Scored{int64(k), scores[k].Score})
		}
	}
	if lens == nil || len(unknown) == 0 {
		return scores, nil
	}
	// The best of the windows whose length is a guess, read.
	unknown = Top(unknown, refine)
	ask := make([]int64, len(unknown))
	for j, u := range unknown {
		ask[j] = docs[u.Key]
	}
	known, err := lens(ask)
	if err != nil {
		return nil, err
	}
	for _, u := range unknown {
		if l, ok := known[docs[u.Key]]; ok {
			scores[u.Key].Score = score(int(u.Key), l)
		}
	}
	return scores, nil
}

// Words is the length of a turn's text in a window, in words (runs of
// characters between spaces).
func Words(text string) float64 { return float64(len(strings.Fields(text))) }

// Scored is an item's key and its score.
type Scored struct {
	Key   int64
	Score float64
}

// better orders scored items best first, the greater key first among
// equals.
func better(a, b Scored) int {
	if c := cmp.Compare(b.Score, a.Score); c != 0 {
		return c
	}
	return cmp.Compare(b.Key, a.Key)
}

// Top returns the n best of scored (all when n < 0), best first (the
// greater key first among equals): the first n of scored, which it
// reorders.
func Top(scored []Scored, n int) []Scored {
	if n < 0 || n >= len(scored) {
		slices.SortFunc(scored, better)
		return scored
	}
	if n == 0 {
		return scored[:0]
	}
	// A heap of the best n so far, its worst first.
	h := scored[:n]
	worse := func(i, j int) bool { return better(h[i], h[j]) > 0 }
	down := func(i int) {
		for {
			c := 2*i + 1
			if c >= n {
				return
			}
			if c+1 < n && worse(c+1, c) {
				c++
			}
			if !worse(c, i) {
				return
			}
			h[i], h[c] = h[c], h[i]
			i = c
		}
	}
	for i := n/2 - 1; i >= 0; i-- {
		down(i)
	}
	for j, x := range scored[n:] {
		if better(x, h[0]) < 0 {
			h[0], scored[n+j] = x, h[0] // swapped: scored keeps every item
			down(0)
		}
	}
	slices.SortFunc(h, better)
	return h
}

// Ranked returns scores as Scored items, in no order.
func Ranked(scores map[int64]float64) []Scored {
	out := make([]Scored, 0, len(scores))
	for k, s := range scores {
		out = append(out, Scored{k, s})
	}
	return out
}

// StoredTurn is what a store reads of a turn to keep a window it is part
// of: its key in the store (TurnWindow.Near's) and its words (Words of
// TurnText).
type StoredTurn struct {
	Key   int64
	Words float64
}

// WindowRow returns what a store keeps of window w, given its turns by
// seq (turns missing from them, not turns of the thread, left out): its
// other turns' keys as the store writes them (each less its own, in
// decimal, separated by commas: "-2,-1,1,2", read by ParseNear) and its
// length in words, its own turn's twice. ok is false when its own turn is
// not among turns.
func WindowRow(w MessageWindow, turns map[int64]StoredTurn) (near string, length float64, ok bool) {
	own, ok := turns[w.Seq]
	if !ok {
		return "", 0, false
	}
	var b []byte
	length = own.Words
	for _, seq := range w.Turns {
		t, ok := turns[seq]
		if !ok {
			continue
		}
		length += t.Words
		if seq == w.Seq {
			continue
		}
		if len(b) > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, t.Key-own.Key, 10)
	}
	return string(b), length, true
}

// ParseNear reads the other turns of the window of the turn of key own as
// WindowRow writes them, as keys.
func ParseNear(own int64, near string) ([]int64, error) {
	if near == "" {
		return nil, nil
	}
	out := make([]int64, 0, 2*Window)
	for f := range strings.SplitSeq(near, ",") {
		d, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("window of %d: its turns %q: %w", own, near, err)
		}
		out = append(out, own+d)
	}
	return out, nil
}

// LoneWindowLength is the length in words of the window of a turn that
// has none yet: itself alone, its words twice (see ScoreWindows).
func LoneWindowLength(name, content string) float64 { return 2 * Words(TurnText(name, content)) }

// TurnText is a turn's text as its window and chunk hold it: its name,
// if any, then its content ("Name: content").
func TurnText(name, content string) string {
	if name != "" {
		return name + ": " + content
	}
	return content
}
