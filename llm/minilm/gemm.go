package minilm

import (
	"math"
	"sync"
)

// panel is the width of the packed weight panels of gemmI8: the kernel
// computes 4 rows × 24 columns at a time.
const panel = 24

// generic forces the portable kernels, for tests.
var generic = false

// gemmI8 sets y[r][j] = bias[j] + scale[j] × Σ_i x[r][i] × w[i][j] for
// r < rows (a multiple of 4) and j < n (a multiple of panel); x has rows of
// k floats, y of n, and w is packed in panels (see linear). With par > 1,
// par goroutines share the panels.
func gemmI8(par, rows, k, n int, x []float32, w []int8, scale, bias, y []float32) {
	_ = x[rows*k-1]
	_ = y[rows*n-1]
	_ = w[k*n-1]
	panels := n / panel
	if par = min(par, panels/2); par <= 1 {
		gemmI8Panels(0, n, rows, k, n, x, w, scale, bias, y)
		return
	}
	var wg sync.WaitGroup
	for g := range par {
		from, to := g*panels/par*panel, (g+1)*panels/par*panel
		wg.Go(func() { gemmI8Panels(from, to, rows, k, n, x, w, scale, bias, y) })
	}
	wg.Wait()
}

// gemmI8Panels is gemmI8 for the columns from… to-1, whole panels.
func gemmI8Panels(from, to, rows, k, n int, x []float32, w []int8, scale, bias, y []float32) {
	fast := hasSIMD && !generic
	// Panel after panel, so that each stays in the L1 cache while all the
	// rows pass.
	for p := from; p < to; p += panel {
		wp := w[p*k:]
		for r := 0; r < rows; r += 4 {
			if fast {
				kernI8(k, &x[r*k], k, &wp[0], &scale[p], &bias[p], &y[r*n+p], n)
			} else {
				kernI8Go(k, x[r*k:], k, wp, scale[p:], bias[p:], y[r*n+p:], n)
			}
		}
	}
}

// gemmF32x8 sets y[r][j] = Σ_i x[r][i] × w[i][j] for r < rows (a multiple
// of 4) and j < n (a multiple of 8), x and y with row strides ldx and ldy;
// w is packed in panels of 8 columns, k×8 each.
func gemmF32x8(rows, k, n int, x []float32, ldx int, w []float32, y []float32, ldy int) {
	_ = x[(rows-1)*ldx+k-1]
	_ = y[(rows-1)*ldy+n-1]
	_ = w[k*n-1]
	fast := hasSIMD && !generic
	for p := 0; p < n; p += 8 {
		wp := w[p*k:]
		for r := 0; r < rows; r += 4 {
			if fast {
				kernF32x8(k, &x[r*ldx], ldx, &wp[0], &y[r*ldy+p], ldy)
			} else {
				kernF32x8Go(k, x[r*ldx:], ldx, wp, y[r*ldy+p:], ldy)
			}
		}
	}
}

// kernI8Go is the portable kernI8. It computes 4 rows × 2 columns at a
// time in scalar variables, which the compiler keeps in registers, so that
// each int8 conversion serves 4 multiply-adds.
func kernI8Go(k int, x []float32, ldx int, w []int8, scale, bias, y []float32, ldy int) {
	x0, x1, x2, x3 := x[:k], x[ldx:ldx+k], x[2*ldx:2*ldx+k], x[3*ldx:3*ldx+k]
	w = w[:k*panel]
	for j := 0; j < panel; j += 2 {
		var a0, a1, b0, b1, c0, c1, d0, d1 float32
		for i := range x0 {
			wr := w[i*panel+j : i*panel+j+2 : i*panel+j+2]
			w0, w1 := float32(wr[0]), float32(wr[1])
			v0, v1, v2, v3 := x0[i], x1[i], x2[i], x3[i]
			a0 += v0 * w0
			a1 += v0 * w1
			b0 += v1 * w0
			b1 += v1 * w1
			c0 += v2 * w0
			c1 += v2 * w1
			d0 += v3 * w0
			d1 += v3 * w1
		}
		s0, s1, z0, z1 := scale[j], scale[j+1], bias[j], bias[j+1]
		y[j], y[j+1] = a0*s0+z0, a1*s1+z1
		y[ldy+j], y[ldy+j+1] = b0*s0+z0, b1*s1+z1
		y[2*ldy+j], y[2*ldy+j+1] = c0*s0+z0, c1*s1+z1
		y[3*ldy+j], y[3*ldy+j+1] = d0*s0+z0, d1*s1+z1
	}
}

// kernF32x8Go is the portable kernF32x8, with its arithmetic: fused
// multiply-adds in two chains, for even and odd i, added at the end. The
// 8-bit path needs the portable kernels to give the assembly's bits: its
// rounding to 8 bits turns a difference in the last bit into one of a
// level, which grows from layer to layer.
func kernF32x8Go(k int, x []float32, ldx int, w []float32, y []float32, ldy int) {
	var even, odd [4][8]float32
	for i := range k {
		acc := &even
		if i%2 == 1 {
			acc = &odd
		}
		wr := w[i*8 : i*8+8]
		for r := range acc {
			xv := x[r*ldx+i]
			a := &acc[r]
			for j := range wr {
				a[j] = fma32(xv, wr[j], a[j])
			}
		}
	}
	for r := range even {
		for j := range 8 {
			y[r*ldy+j] = even[r][j] + odd[r][j]
		}
	}
}

// gelu sets each x to x Φ(x), Φ the standard normal distribution (Hugging
// Face's "gelu", with the exact erf, not the tanh approximation).
func gelu(x []float32) {
	if hasSIMD && !generic && len(x) >= 8 {
		n := len(x) &^ 7
		geluAVX(&x[0], n)
		x = x[n:]
	}
	for i, v := range x {
		h := 0.5 * v
		x[i] = fma32(h, erff(v*(math.Sqrt2/2)), h) // as geluAVX
	}
}

// erff is erf for float32, a rational approximation (Eigen's
// generic_fast_erf_float) within a few ulp, with geluAVX's operations.
func erff(x float32) float32 {
	x = min(max(x, -4), 4)
	x2 := x * x
	p := fma32(x2, -2.72614225801306e-10, 2.77068142495902e-08)
	p = fma32(x2, p, -2.10102402082508e-06)
	p = fma32(x2, p, -5.69250639462346e-05)
	p = fma32(x2, p, -7.34990630326855e-04)
	p = fma32(x2, p, -2.95459980854025e-03)
	p = fma32(x2, p, -1.60960333262415e-02)
	p = x * p
	q := fma32(x2, -1.45660718464996e-05, -2.13374055278905e-04)
	q = fma32(x2, q, -1.68282697438203e-03)
	q = fma32(x2, q, -7.37332916720468e-03)
	q = fma32(x2, q, -1.42647390514189e-02)
	return p / q
}

// expf is e^x for float32 (Cephes' expf): within 2 ulp, 0 below -87.
func expf(x float32) float32 {
	if x < -87 {
		return 0
	}
	return expClamped(x)
}

// expClamped is expf with the operations of expAVX and softmaxAVX, which
// take x below -87 as -87 (e^-87, about 1.6e-38) and above 88 as 88.
func expClamped(x float32) float32 {
	x = min(max(x, -87), 88)
	n := float32(math.RoundToEven(float64(x * math.Log2E)))
	r := fma32(-n, 0.693359375, x)
	r = fma32(-n, -2.12194440e-4, r)
	p := fma32(r, 1.9875691500e-4, 1.3981999507e-3)
	p = fma32(r, p, 8.3334519073e-3)
	p = fma32(r, p, 4.1665795894e-2)
	p = fma32(r, p, 1.6666665459e-1)
	p = fma32(r, p, 5.0000001201e-1)
	y := fma32(r*r, p, r) + 1
	return y * math.Float32frombits(uint32(int32(n)+127)<<23)
}
