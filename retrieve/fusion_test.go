package retrieve

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/agentmem/agentmem"
)

func TestFuse(t *testing.T) {
	a, b, c, d := itemKey{"m", "a"}, itemKey{"m", "b"}, itemKey{"m", "c"}, itemKey{"m", "d"}
	got := fuse([]string{"fulltext", "vector"}, nil, [][]candidate{
		{{a, 9}, {b, 5}, {c, 1}},
		{{c, 0.9}, {a, 0.8}, {d, 0.1}, {a, 0.05}}, // a listed twice: its best rank counts
	})
	want := []struct {
		key itemKey
		rrf float64
	}{
		{a, 1.0/61 + 1.0/62}, // 1st and 2nd
		{c, 1.0/63 + 1.0/61}, // 3rd and 1st
		{b, 1.0 / 62},
		{d, 1.0 / 63},
	}
	if len(got) != len(want) {
		t.Fatalf("%d fused items, want %d", len(got), len(want))
	}
	for i, w := range want {
		if got[i].key != w.key || math.Abs(got[i].rrf-w.rrf) > 1e-12 {
			t.Fatalf("item %d: %v rrf %.6f, want %v %.6f", i, got[i].key, got[i].rrf, w.key, w.rrf)
		}
	}
	if got[0].ranks["vector"] != 2 || got[0].scores["vector"] != 0.8 || got[0].scores["fulltext"] != 9 {
		t.Fatalf("a's signals %+v %+v", got[0].ranks, got[0].scores)
	}
	if s := got[0].rrf / maxRRF([]string{"fulltext", "vector"}, []float64{1, 1}); s <= 0 || s > 1 {
		t.Fatalf("normalised score %v out of (0, 1]", s)
	}
	if one := fuse([]string{"fulltext"}, nil, [][]candidate{{{a, 1}}}); one[0].rrf/maxRRF([]string{"fulltext"}, []float64{1}) != 1 {
		t.Fatalf("the first of the only list scores %v, want 1", one[0].rrf/maxRRF([]string{"fulltext"}, []float64{1}))
	}
}

func TestNearest(t *testing.T) {
	u := &userVectors{}
	for i, v := range [][]float32{{1, 0}, {0, 1}, {0.6, 0.8}, {0.8, 0.6}} {
		u.add([]agentmem.Vector{{Scope: "m", ID: string(rune('a' + i)), Vec: v}})
	}
	got := u.nearest([]float32{1, 0}, 3, map[string]bool{"m": true})
	if len(got) != 3 || got[0].key.id != "a" || got[1].key.id != "d" || got[2].key.id != "c" {
		t.Fatalf("nearest: %+v", got)
	}
	if got := u.nearest([]float32{1, 0}, 3, map[string]bool{"other": true}); len(got) != 0 {
		t.Fatalf("scope filter: %+v", got)
	}
}

// TestFuse_Weights: each list adds its weight over RRFK + rank, and the
// scale of a perfect item is the sum of the weights.
func TestFuse_Weights(t *testing.T) {
	a, b := itemKey{"memories", "a"}, itemKey{"memories", "b"}
	weights := []float64{1, 0.1}
	got := fuse([]string{"fulltext", "vector"}, weights, [][]candidate{{{a, 9}, {b, 8}}, {{b, 0.9}}})
	if len(got) != 2 {
		t.Fatalf("fused %d items", len(got))
	}
	wantA, wantB := 1.0/(RRFK+1), 1.0/(RRFK+2)+0.1/(RRFK+1)
	if got[0].key != b || math.Abs(got[0].rrf-wantB) > 1e-12 || math.Abs(got[1].rrf-wantA) > 1e-12 {
		t.Fatalf("fused %+v %+v; want b %v, a %v", got[0], got[1], wantB, wantA)
	}
	if s := maxRRF([]string{"fulltext", "vector"}, weights); math.Abs(s-1.1/(RRFK+1)) > 1e-12 {
		t.Fatalf("maxRRF = %v", s)
	}
	// Two lists of one signal (the vectors of two spaces) share no item:
	// the best of their weights counts.
	if s := maxRRF([]string{"fulltext", "vector", "vector"}, []float64{1, 1, 0.1}); math.Abs(s-2.0/(RRFK+1)) > 1e-12 {
		t.Fatalf("maxRRF of two vector lists = %v, want %v", s, 2.0/(RRFK+1))
	}
	// At a tenth of the weight, the vector's first moves an item up
	// about six places of full-text near the top, not ten.
	var ft []candidate
	for i := range 12 {
		ft = append(ft, candidate{itemKey{"m", string(rune('a' + i))}, float64(12 - i)})
	}
	for place, wantFirst := range map[int]bool{6: true, 8: false} {
		got = fuse([]string{"fulltext", "vector"}, weights, [][]candidate{ft, {ft[place]}})
		if (got[0].key == ft[place].key) != wantFirst {
			t.Errorf("vector's first at full-text place %d: fused first %v", place+1, got[0].key)
		}
	}
}

// TestNearest_SparseQuery: a query with few dimensions that are not zero
// (the lexical embedder's) is scanned over those dimensions only, and
// ranks and scores as a full dot product with the stored rows does.
func TestNearest_SparseQuery(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	u := &userVectors{}
	var vecs [][]float32
	for i := range 300 {
		v := make([]float32, 64)
		for j := range v {
			if rng.IntN(4) == 0 {
				v[j] = float32(rng.NormFloat64())
			}
		}
		vecs = append(vecs, v)
		u.add([]agentmem.Vector{{Scope: []string{"a", "b"}[i%2], ID: fmt.Sprint(i), Vec: v}})
	}
	for range 20 {
		q := make([]float32, 64)
		for range 1 + rng.IntN(8) {
			q[rng.IntN(64)] = float32(rng.NormFloat64())
		}
		if newQueryVector(q).dense != nil {
			t.Fatalf("query %v scanned dense", q)
		}
		got := u.nearest(q, 5, map[string]bool{"b": true})
		// What the stored (quantised) rows give, each dimension multiplied.
		var want []candidate
		for i := range vecs {
			if i%2 == 0 {
				continue
			}
			row := u.data[i*64 : (i+1)*64]
			var s float64
			for j := range q {
				s += float64(q[j]) * float64(row[j]) * float64(u.scale[i])
			}
			want = append(want, candidate{itemKey{"b", fmt.Sprint(i)}, s})
		}
		slices.SortFunc(want, func(x, y candidate) int { return cmp.Compare(y.score, x.score) })
		for i := range got {
			if got[i].key != want[i].key && math.Abs(got[i].score-want[i].score) > 1e-4 {
				t.Fatalf("query %v: rank %d is %v, want %v", q, i, got[i], want[i])
			}
			if math.Abs(got[i].score-want[i].score) > 1e-4 {
				t.Fatalf("query %v: %v scores %g, want %g", q, got[i].key, got[i].score, want[i].score)
			}
		}
	}
}
