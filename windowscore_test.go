package agentmem_test

import (
	"math"
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
	scores, err := agentmem.ScoreWindows(p, 10, lens)
	if err != nil {
		t.Fatal(err)
	}
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
	if best := agentmem.Best(scores); best[0] != 9 && best[0] != 5 || best[len(best)-1] == 5 {
		t.Errorf("best %v: want a turn that says a word first", best)
	}
	if len(asked) != 4 {
		t.Errorf("lengths asked of %v, want the four windows not listed", asked)
	}

	// A shorter window outranks a longer one holding the same words.
	p = agentmem.WindowPostings{Lists: [][]int64{{1, 2}}, Windows: 100, AvgLen: 60, Turns: map[int64]agentmem.TurnWindow{1: turns[1], 2: turns[2]}}
	if scores, err = agentmem.ScoreWindows(p, 0, nil); err != nil {
		t.Fatal(err)
	}
	if scores[2] <= scores[1] {
		t.Errorf("shorter window 2 %v, longer 1 %v", scores[2], scores[1])
	}
	// A full list's word is as rare as its share of the windows it spans.
	full := agentmem.WindowPostings{Lists: [][]int64{{6, 5}}, Bound: 2, Spanned: []float64{4}, Windows: 100, AvgLen: 60,
		Turns: map[int64]agentmem.TurnWindow{5: {Len: 60}, 6: {Len: 60}}}
	if scores, err = agentmem.ScoreWindows(full, 0, nil); err != nil {
		t.Fatal(err)
	}
	if w := agentmem.BM25IDF(100, 50) * agentmem.BM25TF(2, 1); math.Abs(scores[6]-w) > 1e-12 {
		t.Errorf("full list: %v, want %v (2 of 4 windows: half of 100)", scores[6], w)
	}
}
