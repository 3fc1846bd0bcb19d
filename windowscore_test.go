package agentmem_test

import (
	"math"
	"slices"
	"testing"

	"github.com/agentmem/agentmem"
)

// TestScoreWindows: a window is scored as BM25 of its turns' words, its
// own twice: the turn that says the word first, its neighbours after,
// windows out of reach never; a window holding two words above one
// holding one; a shorter window above a longer one; a turn without a
// window by itself; the lengths asked of the best windows not listed.
func TestScoreWindows(t *testing.T) {
	// Turns 1..6 of one thread, each window two turns each side; 9 has no
	// window yet.
	near := func(d int64) []int64 {
		var n []int64
		for o := d - 2; o <= d+2; o++ {
			if o != d && o >= 1 && o <= 6 {
				n = append(n, o)
			}
		}
		return n
	}
	turns := map[int64]agentmem.TurnWindow{}
	for d := int64(1); d <= 6; d++ {
		turns[d] = agentmem.TurnWindow{Near: near(d), Len: 60}
	}
	turns[2] = agentmem.TurnWindow{Near: near(2), Len: 30} // shorter
	var asked []int64
	lens := func(docs []int64) (map[int64]float64, error) {
		asked = append(asked, docs...)
		out := map[int64]float64{}
		for _, d := range docs {
			if d == 9 {
				out[d] = 10 // its words twice
			} else {
				out[d] = 60
			}
		}
		return out, nil
	}
	p := agentmem.WindowPostings{
		Lists:   [][]int64{{9, 5}, {5}}, // word a: turns 9 and 5; word b: turn 5
		Windows: 100, AvgLen: 60, Turns: map[int64]agentmem.TurnWindow{5: turns[5]},
	}
	scored, err := agentmem.ScoreWindows(p, 10, lens)
	if err != nil {
		t.Fatal(err)
	}
	scores := byKey(scored)
	idfA, idfB := agentmem.BM25IDF(100, 5), agentmem.BM25IDF(100, 4)
	want := map[int64]float64{
		5: idfA*agentmem.BM25TF(2, 1) + idfB*agentmem.BM25TF(2, 1),
		3: idfA*agentmem.BM25TF(1, 1) + idfB*agentmem.BM25TF(1, 1),
		4: idfA*agentmem.BM25TF(1, 1) + idfB*agentmem.BM25TF(1, 1),
		6: idfA*agentmem.BM25TF(1, 1) + idfB*agentmem.BM25TF(1, 1),
		9: idfA * agentmem.BM25TF(2, 10.0/60),
	}
	if len(scores) != len(want) {
		t.Fatalf("scores %v, want windows %v", scores, want)
	}
	for d, w := range want {
		if math.Abs(scores[d]-w) > 1e-12 {
			t.Errorf("window %d: %v, want %v", d, scores[d], w)
		}
	}
	if best := agentmem.Top(scored, -1); best[0].Key != 9 && best[0].Key != 5 || best[len(best)-1].Key == 5 {
		t.Errorf("best %v: want a turn that says a word first", best)
	}
	if len(asked) != 4 {
		t.Errorf("lengths asked of %v, want the four windows not listed", asked)
	}

	// A shorter window outranks a longer one holding the same words.
	p = agentmem.WindowPostings{Lists: [][]int64{{1, 2}}, Windows: 100, AvgLen: 60, Turns: map[int64]agentmem.TurnWindow{1: turns[1], 2: turns[2]}}
	if scored, err = agentmem.ScoreWindows(p, 0, nil); err != nil {
		t.Fatal(err)
	}
	scores = byKey(scored)
	if scores[2] <= scores[1] {
		t.Errorf("shorter window 2 %v, longer 1 %v", scores[2], scores[1])
	}
	// A full list's word is as rare as its share of the windows it spans.
	full := agentmem.WindowPostings{Lists: [][]int64{{6, 5}}, Bound: 2, Spanned: []float64{4}, Windows: 100, AvgLen: 60,
		Turns: map[int64]agentmem.TurnWindow{5: {Len: 60}, 6: {Len: 60}}}
	if scored, err = agentmem.ScoreWindows(full, 0, nil); err != nil {
		t.Fatal(err)
	}
	scores = byKey(scored)
	if w := agentmem.BM25IDF(100, 50) * agentmem.BM25TF(2, 1); math.Abs(scores[6]-w) > 1e-12 {
		t.Errorf("full list: %v, want %v (2 of 4 windows: half of 100)", scores[6], w)
	}
}

func byKey(scored []agentmem.Scored) map[int64]float64 {
	m := map[int64]float64{}
	for _, s := range scored {
		m[s.Key] = s.Score
	}
	return m
}

// TestTop: the n best, best first, the greater key first among equals,
// as a full sort gives them.
func TestTop(t *testing.T) {
	var all []agentmem.Scored
	for k := range int64(500) {
		all = append(all, agentmem.Scored{Key: k, Score: float64((k * 7919) % 97)})
	}
	want := agentmem.Top(slices.Clone(all), -1)
	for _, n := range []int{0, 1, 5, 200, 499, 500, 600} {
		s := slices.Clone(all)
		got := agentmem.Top(s, n)
		if !slices.Equal(got, want[:min(n, len(want))]) {
			t.Errorf("Top %d: %v…, want %v…", n, got[:min(3, len(got))], want[:min(3, n)])
		}
		// The items are all still there: Top of them all again.
		if again := agentmem.Top(s, -1); !slices.Equal(again, want) {
			t.Errorf("after Top %d, the items are not all there", n)
		}
	}
	for i := 1; i < len(want); i++ {
		if want[i].Score > want[i-1].Score || want[i].Score == want[i-1].Score && want[i].Key > want[i-1].Key {
			t.Fatalf("Top -1 out of order at %d: %v then %v", i, want[i-1], want[i])
		}
	}
}
