package retrieve

import (
	"math"
	"math/rand/v2"
	"testing"
)

// dotLoop is dot without the kernel.
func dotLoop(a []float32, b []int8) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

// TestDot: dot, through the AVX2 kernel where the CPU has it, agrees with
// a plain loop at every length, the kernel's multiples of 32 and the rest.
func TestDot(t *testing.T) {
	if !hasDotAVX {
		t.Log("no AVX2/FMA here: dot is the loop alone")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 7, 31, 32, 33, 64, 100, 256, 384, 512, 1536} {
		a, b := make([]float32, n), make([]int8, n)
		for i := range a {
			a[i] = float32(rng.NormFloat64())
			b[i] = int8(rng.IntN(255) - 127)
		}
		got, want := float64(dot(a, b)), dotLoop(a, b)
		if math.Abs(got-want) > 1e-4*(1+math.Abs(want)) {
			t.Errorf("n=%d: dot %v, want %v", n, got, want)
		}
	}
}

func BenchmarkDot(b *testing.B) {
	a, v := make([]float32, 384), make([]int8, 384)
	for i := range a {
		a[i], v[i] = float32(i%13)/13, int8(i%200-100)
	}
	var s float32
	for b.Loop() {
		s += dot(a, v)
	}
	_ = s
}
