package learned_test

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/agentmem/agentmem/extract/learned"
)

// TestDefault: the committed model loads, reads the built-in model's
// space, and its heads have the shape of Slots.
func TestDefault(t *testing.T) {
	m, err := learned.Default()
	if err != nil {
		t.Fatal(err)
	}
	if m.Space != learned.Space {
		t.Errorf("space %q, want %q", m.Space, learned.Space)
	}
	if !reflect.DeepEqual(m.Slots, learned.Slots) {
		t.Errorf("slots %v, want %v", m.Slots, learned.Slots)
	}
	for name, h := range map[string]*learned.Head{"fact": &m.Fact, "keep": &m.Keep, "slot": &m.Slot, "change": &m.Change} {
		for _, w := range h.W {
			if len(w) < 256 {
				t.Fatalf("%s: a row of %d weights, want 256 or more", name, len(w))
			}
		}
	}
}

// TestParse_Errors: a model of the wrong shape is refused with what is
// wrong.
func TestParse_Errors(t *testing.T) {
	const ok = `"fact":{"w":[[1]],"b":[0]},"keep":{"w":[[1]],"b":[0]},"change":{"w":[[1],[1],[1],[1]],"b":[0,0,0,0]}`
	for _, tc := range []struct{ in, want string }{
		{`nope`, "learned model"},
		{`{` + ok + `,"slot":{"w":[],"b":[]}}`, "head slot"},
		{`{"fact":{"w":[[1]],"b":[0,1]},"keep":{"w":[[1]],"b":[0]},"slot":{"w":[[1]],"b":[0]},"change":{"w":[[1],[1],[1],[1]],"b":[0,0,0,0]}}`, "head fact"},
		{`{"slots":["none","job"],` + ok + `,"slot":{"w":[[1]],"b":[0]}}`, "2 slots but 1"},
		{`{"slots":["none"],"fact":{"w":[[1]],"b":[0]},"keep":{"w":[[1]],"b":[0]},"slot":{"w":[[1]],"b":[0]},"change":{"w":[[1]],"b":[0]}}`, "1 change classes, want 4"},
	} {
		_, err := learned.Parse([]byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one naming %q", tc.in, err, tc.want)
		}
	}
}

// TestFit: training separates two classes of points, gives the same head
// twice, and its probabilities sum to one.
func TestFit(t *testing.T) {
	var ex []learned.Example
	for i := range 40 {
		a := float32(i%7) / 7
		ex = append(ex, learned.Example{X: []float32{1, a, 0}, Class: 0, Weight: 1},
			learned.Example{X: []float32{0, a, 1}, Class: 1, Weight: 1})
	}
	h := learned.Fit(ex, 2, 200, 1e-4)
	if !reflect.DeepEqual(h, learned.Fit(ex, 2, 200, 1e-4)) {
		t.Fatal("two fits of the same examples differ")
	}
	for _, e := range ex {
		p := h.Probs(e.X)
		if math.Abs(p[0]+p[1]-1) > 1e-9 {
			t.Fatalf("probabilities %v do not sum to 1", p)
		}
		if p[e.Class] < 0.9 {
			t.Fatalf("%v: p(class %d) = %.3f, want ≥ 0.9", e.X, e.Class, p[e.Class])
		}
	}
}

// TestBalanced: each class present weighs the same in all.
func TestBalanced(t *testing.T) {
	w := learned.Balanced([]int{0, 0, 0, 1}, 3)
	if got := 3 * w[0]; math.Abs(got-w[1]) > 1e-12 || w[2] != 0 {
		t.Errorf("weights %v: want class 1 to weigh 3 × class 0, class 2 (absent) 0", w)
	}
}
