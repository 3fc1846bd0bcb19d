package minilm_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/agentmem/agentmem/llm/minilm"
)

func maxRelErr(tb testing.TB, got, want []float32) float64 {
	tb.Helper()
	var worst, scale float64
	for _, w := range want {
		scale = max(scale, math.Abs(float64(w)))
	}
	for i := range want {
		worst = max(worst, math.Abs(float64(got[i]-want[i]))/scale)
	}
	return worst
}

// TestGemm compares the assembly kernels with the portable ones, and both
// with a plain triple loop.
func TestGemm(t *testing.T) {
	if !minilm.HasSIMD {
		t.Log("no AVX2+FMA (or not amd64): both runs use the portable kernels")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	P := minilm.Panel
	for _, s := range []struct{ rows, k, n int }{{4, 1, P}, {4, 384, 384}, {8, 384, 1536}, {12, 1536, 384}, {4, 7, 2 * P}, {4, 384, 7 * P}} {
		x := make([]float32, s.rows*s.k)
		for i := range x {
			x[i] = rng.Float32()*2 - 1
		}
		w := make([]int8, s.k*s.n) // packed: w[p][i][j]
		for i := range w {
			w[i] = int8(rng.IntN(255) - 127)
		}
		scale, bias := make([]float32, s.n), make([]float32, s.n)
		for j := range scale {
			scale[j], bias[j] = rng.Float32()/64, rng.Float32()-0.5
		}
		want := make([]float32, s.rows*s.n)
		for r := range s.rows {
			for j := range s.n {
				p, jj := j/P, j%P
				var acc float64
				for i := range s.k {
					acc += float64(x[r*s.k+i]) * float64(w[p*s.k*P+i*P+jj])
				}
				want[r*s.n+j] = float32(acc*float64(scale[j]) + float64(bias[j]))
			}
		}
		for _, gen := range []bool{false, true} {
			for _, par := range []int{1, 3} {
				restore := minilm.SetGeneric(gen)
				got := make([]float32, s.rows*s.n)
				minilm.GemmI8(par, s.rows, s.k, s.n, x, w, scale, bias, got)
				restore()
				if e := maxRelErr(t, got, want); e > 1e-5 {
					t.Errorf("GemmI8 %+v generic=%v par=%d: relative error %.2g, want ≤ 1e-5", s, gen, par, e)
				}
			}
		}
	}

	for _, s := range []struct{ rows, k, n, ldx, ldy int }{{4, 32, 8, 384, 8}, {8, 32, 40, 384, 40}, {8, 37, 8, 40, 384}, {4, 1, 8, 1, 8}, {12, 256, 32, 256, 384}} {
		x := make([]float32, (s.rows-1)*s.ldx+s.k)
		for i := range x {
			x[i] = rng.Float32()*2 - 1
		}
		w := make([]float32, s.k*s.n)
		for i := range w {
			w[i] = rng.Float32()*2 - 1
		}
		want := make([]float32, (s.rows-1)*s.ldy+s.n)
		for r := range s.rows {
			for j := range s.n {
				var acc float64
				for i := range s.k {
					acc += float64(x[r*s.ldx+i]) * float64(w[(j/8)*s.k*8+i*8+j%8])
				}
				want[r*s.ldy+j] = float32(acc)
			}
		}
		for _, gen := range []bool{false, true} {
			restore := minilm.SetGeneric(gen)
			got := make([]float32, len(want))
			minilm.GemmF32x8(s.rows, s.k, s.n, x, s.ldx, w, got, s.ldy)
			restore()
			if e := maxRelErr(t, got, want); e > 1e-5 {
				t.Errorf("GemmF32x8 %+v generic=%v: relative error %.2g, want ≤ 1e-5", s, gen, e)
			}
		}
	}
}

func TestErff(t *testing.T) {
	var worst float64
	for x := -6.0; x <= 6; x += 1.0 / 1024 {
		worst = max(worst, math.Abs(float64(minilm.Erff(float32(x)))-math.Erf(x)))
	}
	if worst > 5e-7 { // 4 ulp near 1
		t.Fatalf("max |erff - erf| = %.3g, want ≤ 5e-7", worst)
	}
}

func TestExpf(t *testing.T) {
	var worst float64
	for x := -80.0; x <= 80; x += 1.0 / 512 {
		want := math.Exp(x)
		worst = max(worst, math.Abs(float64(minilm.Expf(float32(x)))-want)/want)
	}
	if worst > 3e-7 {
		t.Fatalf("max relative error of expf %.3g, want ≤ 3e-7", worst)
	}
	if got := minilm.Expf(-100); got != 0 {
		t.Fatalf("expf(-100)=%v, want 0", got)
	}
}

// TestActivations compares the assembly GELU and softmax with the portable
// ones, and GELU with math.Erf.
func TestActivations(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	x := make([]float32, 8*100+5)
	for i := range x {
		x[i] = float32(rng.NormFloat64() * 3)
	}
	x[0], x[1], x[2] = 0, 9, -9
	fast, slow := append([]float32(nil), x...), append([]float32(nil), x...)
	minilm.Gelu(fast)
	restore := minilm.SetGeneric(true)
	minilm.Gelu(slow)
	restore()
	for i, v := range x {
		want := 0.5 * float64(v) * (1 + math.Erf(float64(v)/math.Sqrt2))
		for _, got := range []float32{fast[i], slow[i]} {
			if math.Abs(float64(got)-want) > 1e-6*max(1, math.Abs(want)) {
				t.Fatalf("gelu(%v)=%v, want %v", v, got, want)
			}
		}
	}

	for _, n := range []int{1, 7, 8, 13, 64, 256} {
		fast, slow := append([]float32(nil), x[:n]...), append([]float32(nil), x[:n]...)
		minilm.Softmax(fast, 0.17)
		restore := minilm.SetGeneric(true)
		minilm.Softmax(slow, 0.17)
		restore()
		if e := maxRelErr(t, fast, slow); e > 1e-6 {
			t.Errorf("softmax of %d: relative error between the kernels %.2g, want ≤ 1e-6", n, e)
		}
		var sum float64
		for _, v := range fast {
			sum += float64(v)
		}
		if math.Abs(sum-1) > 1e-5 {
			t.Errorf("softmax of %d: sum %v, want 1", n, sum)
		}
	}
}

// TestGemmU8 compares the 8-bit kernels (with VNNI) with the portable
// ones, and both with the computation they stand for, done in float64:
// each row's outliers largest entries as they are, the others rounded to
// 8 bits of the row's scale.
func TestGemmU8(t *testing.T) {
	if !minilm.HasVNNI {
		t.Log("no AVX-512 VNNI (or not amd64): both runs use the portable kernels")
	}
	rng := rand.New(rand.NewPCG(5, 6))
	P, V := minilm.Panel, minilm.VPanel
	for _, s := range []struct{ rows, k, n int }{{4, 1, V}, {4, 384, 384}, {8, 384, 1536}, {12, 1536, 384}, {4, 7, 2 * V}, {4, 20, V}, {8, 64, 4 * V}} {
		x := make([]float32, s.rows*s.k)
		for i := range x {
			x[i] = float32(rng.NormFloat64())
		}
		if s.k > 8 {
			for r := range s.rows {
				x[r*s.k+rng.IntN(s.k)] *= 30 // an outlier
			}
			x[s.k-1] = 50 // in the last group
			for i := range s.k {
				x[(s.rows-1)*s.k+i] = 0 // a row of zeros
			}
		}
		w := make([]int8, s.k*s.n) // packed: w[p][i][j]
		for i := range w {
			w[i] = int8(rng.IntN(255) - 127)
		}
		scale, bias := make([]float32, s.n), make([]float32, s.n)
		for j := range scale {
			scale[j], bias[j] = rng.Float32()/64, rng.Float32()-0.5
		}
		want, exact := make([]float32, s.rows*s.n), make([]float32, s.rows*s.n)
		for r := range s.rows {
			xq := quantizeRowU8(x[r*s.k : (r+1)*s.k])
			for j := range s.n {
				p, jj := j/P, j%P
				var acc, ex float64
				for i := range s.k {
					q := float64(w[p*s.k*P+i*P+jj])
					acc += xq[i] * q
					ex += float64(x[r*s.k+i]) * q
				}
				want[r*s.n+j] = float32(acc*float64(scale[j]) + float64(bias[j]))
				exact[r*s.n+j] = float32(ex*float64(scale[j]) + float64(bias[j]))
			}
		}
		var got [2][]float32
		for gi, gen := range []bool{false, true} {
			for _, par := range []int{1, 3} {
				restore := minilm.SetGeneric(gen)
				got[gi] = make([]float32, s.rows*s.n)
				minilm.GemmU8(par, s.rows, s.k, s.n, x, w, scale, bias, got[gi])
				restore()
				if e := maxRelErr(t, got[gi], want); e > 1e-5 {
					t.Errorf("GemmU8 %+v generic=%v par=%d: relative error %.2g, want ≤ 1e-5", s, gen, par, e)
				}
				if e := maxRelErr(t, got[gi], exact); e > 0.02 {
					t.Errorf("GemmU8 %+v generic=%v par=%d: relative error %.2g to the unquantized product, want ≤ 0.02", s, gen, par, e)
				}
			}
		}
		if e := maxRelErr(t, got[0], got[1]); e > 1e-6 {
			t.Errorf("GemmU8 %+v: relative error between the kernels %.2g, want ≤ 1e-6", s, e)
		}
	}
}

// quantizeRowU8 returns x as gemmU8 sees it: its Outliers largest |x[i]|
// (the first of equal ones) as they are, the others rounded to multiples
// of the largest of the others / 127.
func quantizeRowU8(x []float32) []float64 {
	out := make([]bool, len(x))
	for range minilm.Outliers {
		best := -1
		for i, f := range x {
			if !out[i] && (best < 0 || math.Abs(float64(f)) > math.Abs(float64(x[best]))) {
				best = i
			}
		}
		if best < 0 {
			break // fewer entries than outliers
		}
		out[best] = true
	}
	var m float64
	for i, f := range x {
		if !out[i] {
			m = max(m, math.Abs(float64(f)))
		}
	}
	q := make([]float64, len(x))
	for i, f := range x {
		switch {
		case out[i]:
			q[i] = float64(f)
		case m > 0:
			q[i] = math.RoundToEven(float64(f)*127/m) * m / 127
		}
	}
	return q
}

// BenchmarkGemm measures the linear layers' products, float (GemmI8) and
// 8-bit (GemmU8, quantization included), on one goroutine: 32 rows by the
// shapes of the model's matrices.
func BenchmarkGemm(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 8))
	const rows = 32
	for _, s := range []struct{ k, n int }{{384, 384}, {384, 1536}, {1536, 384}} {
		x := make([]float32, rows*s.k)
		for i := range x {
			x[i] = float32(rng.NormFloat64())
		}
		w := make([]int8, s.k*s.n)
		for i := range w {
			w[i] = int8(rng.IntN(255) - 127)
		}
		scale, bias, y := make([]float32, s.n), make([]float32, s.n), make([]float32, rows*s.n)
		for j := range scale {
			scale[j] = 1.0 / 64
		}
		report := func(b *testing.B) {
			b.ReportMetric(2*rows*float64(s.k*s.n)*float64(b.N)/float64(b.Elapsed().Nanoseconds()), "GFLOP/s")
		}
		b.Run(fmt.Sprintf("I8/k=%d/n=%d", s.k, s.n), func(b *testing.B) {
			for b.Loop() {
				minilm.GemmI8(1, rows, s.k, s.n, x, w, scale, bias, y)
			}
			report(b)
		})
		gemm := minilm.PrepareGemmU8(s.k, s.n, w)
		b.Run(fmt.Sprintf("U8/k=%d/n=%d", s.k, s.n), func(b *testing.B) {
			for b.Loop() {
				gemm(1, rows, x, scale, bias, y)
			}
			report(b)
		})
	}
}
