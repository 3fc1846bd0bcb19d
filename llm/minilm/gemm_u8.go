package minilm

import (
	"math"
	"sync"
)

// The 8-bit path of the linear layers, for CPUs with AVX-512 VNNI: the
// activations are quantized to 8 bits a row, so that VPDPBUSD multiplies
// them with the int8 weights in integers, 64 products an instruction where
// the float kernel does 8 (see gemmI8).
//
// A row x (after the column factors) is stored as
//
//	x[i] ≈ s × (u[i] - 128) for most i, u[i] = round(x[i]/s) + 128 in [1, 255],
//
// with s = max|x[i]|/127 over the row, except for its outliers largest
// |x[i]|, which stay floats (their u[i] is 128, a zero): the hidden states
// of BERT have a few dimensions far larger than the rest, and a row's
// scale set by those would leave the others a handful of levels (measured:
// quantizing every row whole loses a cosine of 0.02 with the reference on
// some texts; without its 2 largest entries, 0.001). Then
//
//	y[j] = bias[j] + scale[j] × (s × (Σ_i u[i] q[i][j] - 128 Σ_i q[i][j]) + Σ_o x[o] q[o][j])
//
// for the weights w[i][j] = q[i][j] × scale[j]: an integer sum, corrected
// for the offset of 128 by the column sums computed at load time, and the
// outliers' products in floats. Each row has its own s and outliers, so
// that a text's vector does not depend on the texts it is batched with.

// vpanel is the width of the panels of the 8-bit weights: the kernel
// computes 8 rows (4 at the end of a block) × 48 columns at a time, 24
// vectors of 16 int32 (12 for 4 rows).
const vpanel = 48

// outliers is the number of entries of each row kept as floats (at least
// 1). 2 is the trade-off measured: min and mean cosines with the reference
// of 0.99738 and 0.99940 (1: 0.99661, 0.99921; 4: 0.99790, 0.99948, and 8%
// slower).
const outliers = 2

// u8Zero is the quantized zero: the offset that makes the activations
// unsigned, as VPDPBUSD wants them.
const u8Zero = 128

// u8Weights is a linear layer's int8 weights repacked for VPDPBUSD, which
// sums 4 consecutive products into each 32-bit lane.
type u8Weights struct {
	k4 int // groups of 4 inputs: in/4 rounded up
	// w is n/vpanel panels of k4 groups of vpanel × 4 bytes:
	// w[p][g][j][t] = q[4g+t][p×vpanel+j], 0 for 4g+t ≥ in. It has 64
	// bytes of slack past its length, which the kernel's outlier loads may
	// read.
	w    []int8
	corr []int32 // u8Zero × Σ_i q[i][j]: what the offset adds to the sums
}

// newU8Weights repacks w, of in inputs and out outputs in panels of panel
// columns (see linear), for the 8-bit kernels.
func newU8Weights(w []int8, in, out int) *u8Weights {
	k4 := (in + 3) / 4
	size := out * k4 * 4
	qw := &u8Weights{k4: k4, w: make([]int8, size, size+64), corr: make([]int32, out)}
	for j := range out {
		src := w[j/panel*panel*in+j%panel:]
		dst := qw.w[j/vpanel*vpanel*k4*4+j%vpanel*4:]
		var sum int32
		for i := range in {
			v := src[i*panel]
			dst[i/4*vpanel*4+i%4] = v
			sum += int32(v)
		}
		qw.corr[j] = u8Zero * sum
	}
	return qw
}

// u8Rows is a block of rows quantized for gemmU8.
type u8Rows struct {
	ld    int       // bytes a row: 4 × k4
	x     []uint8   // the rows' u[i], u8Zero for the outliers and the padding
	scale []float32 // the rows' s
	off   []int32   // outliers a row: the byte offsets of their weights in a panel, (i/4)×vpanel×4 + i%4
	val   []float32 // outliers a row: their x[i]
}

// quantize sets q to the rows of x (rows × k floats), which it modifies
// (the outliers become 0).
func (q *u8Rows) quantize(x []float32, rows, k int) {
	q.ld = (k + 3) &^ 3
	if cap(q.x) < rows*q.ld {
		q.x = make([]uint8, rows*q.ld)
	}
	q.x = q.x[:rows*q.ld]
	q.scale = growF32(q.scale, rows)
	q.val = growF32(q.val, rows*outliers)
	if cap(q.off) < rows*outliers {
		q.off = make([]int32, rows*outliers)
	}
	q.off = q.off[:rows*outliers]
	fast := hasVNNI && !generic && k%16 == 0
	for r := range rows {
		xr, u := x[r*k:(r+1)*k], q.x[r*q.ld:(r+1)*q.ld]
		off, val := q.off[r*outliers:(r+1)*outliers], q.val[r*outliers:(r+1)*outliers]
		q.scale[r] = quantizeRow(fast, u, xr, off, val)
	}
}

// growF32 returns b with length n, not cleared.
func growF32(b []float32, n int) []float32 {
	if cap(b) < n {
		return make([]float32, n)
	}
	return b[:n]
}

// quantizeRow sets u (4-byte groups: len(x) rounded up) to the quantized
// x, off and val to its outliers, and returns its scale. It zeroes the
// outliers in x. The kernels, assembly or not, give the same bytes: the
// maximum is exact, the first of equal entries is the outlier, and the
// rounding is to nearest even.
func quantizeRow(fast bool, u []uint8, x []float32, off []int32, val []float32) float32 {
	for t := range off {
		var i int
		if fast {
			i = absIndexAVX512(&x[0], len(x), absMaxAVX512(&x[0], len(x)))
		} else {
			i = absIndex(x, absMax(x))
		}
		off[t], val[t] = int32(i/4*vpanel*4+i%4), x[i]
		x[i] = 0
	}
	var m float32
	if fast {
		m = absMaxAVX512(&x[0], len(x))
	} else {
		m = absMax(x)
	}
	var s, inv float32
	if m > 0 {
		s, inv = m/127, 127/m
	}
	if fast {
		quantAVX512(&u[0], &x[0], len(x), inv)
	} else {
		for i, f := range x {
			u[i] = uint8(min(max(math.RoundToEven(float64(f*inv))+u8Zero, 0), 255))
		}
	}
	for i := len(x); i < len(u); i++ {
		u[i] = u8Zero
	}
	return s
}

// absMax returns max |x[i]|.
func absMax(x []float32) float32 {
	var m float32
	for _, f := range x {
		m = max(m, float32(math.Abs(float64(f))))
	}
	return m
}

// absIndex returns the first i with |x[i]| = v, or len(x).
func absIndex(x []float32, v float32) int {
	for i, f := range x {
		if float32(math.Abs(float64(f))) == v {
			return i
		}
	}
	return len(x)
}

// gemmU8 sets y[r][j] = bias[j] + scale[j] × Σ_i x[r][i] × q[i][j] for
// r < rows (a multiple of 4) and j < n (a multiple of vpanel), x quantized
// in q and the weights q[i][j] repacked in w. With par > 1, par goroutines
// share the panels.
func gemmU8(par, rows, n int, x *u8Rows, w *u8Weights, scale, bias, y []float32) {
	_ = x.x[rows*x.ld-1]
	_ = y[rows*n-1]
	_ = w.w[n*w.k4*4-1]
	panels := n / vpanel
	if par = min(par, panels/2); par <= 1 {
		gemmU8Panels(0, n, rows, n, x, w, scale, bias, y)
		return
	}
	var wg sync.WaitGroup
	for g := range par {
		from, to := g*panels/par*vpanel, (g+1)*panels/par*vpanel
		wg.Go(func() { gemmU8Panels(from, to, rows, n, x, w, scale, bias, y) })
	}
	wg.Wait()
}

// gemmU8Panels is gemmU8 for the columns from… to-1, whole panels.
func gemmU8Panels(from, to, rows, n int, x *u8Rows, w *u8Weights, scale, bias, y []float32) {
	fast := hasVNNI && !generic
	k4 := w.k4
	// Panel after panel, so that each stays in the L1 cache while all the
	// rows pass (48 × 384 bytes; the 48 × 1536 of the FFN's output layer
	// stream from L2).
	for p := from; p < to; p += vpanel {
		wp := w.w[p*k4*4:]
		for r := 0; r < rows; {
			// Blocks of 8 rows, the last of 4 if need be: 8 keep VPDPBUSD
			// busier (each load of weights serves 8 rows).
			nr := 8
			if r+8 > rows {
				nr = 4
			}
			xr, off, val := x.x[r*x.ld:], x.off[r*outliers:], x.val[r*outliers:]
			if fast {
				kernU8(k4, &xr[0], x.ld, &wp[0], &w.corr[p], &x.scale[r], &off[0], &val[0], outliers,
					&scale[p], &bias[p], &y[r*n+p], n, nr)
			} else {
				kernU8Go(k4, xr, x.ld, wp, w.corr[p:], x.scale[r:], off, val, scale[p:], bias[p:], y[r*n+p:], n, nr)
			}
			r += nr
		}
	}
}

// kernU8Go is the portable kernU8, for rows rows: the same integer sums,
// and the same float operations in the same order, fused multiply-adds
// included.
func kernU8Go(k4 int, x []uint8, ldx int, w []int8, corr []int32, rs []float32, off []int32, val []float32,
	scale, bias, y []float32, ldy, rows int) {
	w = w[:k4*vpanel*4]
	for r := range rows {
		xr := x[r*ldx : r*ldx+k4*4]
		var acc [vpanel]int32
		for g := range k4 {
			x0, x1, x2, x3 := int32(xr[4*g]), int32(xr[4*g+1]), int32(xr[4*g+2]), int32(xr[4*g+3])
			wg := w[g*vpanel*4 : (g+1)*vpanel*4]
			for j := range acc {
				wj := wg[4*j : 4*j+4 : 4*j+4]
				acc[j] += x0*int32(wj[0]) + x1*int32(wj[1]) + x2*int32(wj[2]) + x3*int32(wj[3])
			}
		}
		for j, a := range acc {
			f := float32(a-corr[j]) * rs[r]
			for t := range outliers {
				o := r*outliers + t
				f = fma32(val[o], float32(w[int(off[o])+4*j]), f)
			}
			y[r*ldy+j] = fma32(f, scale[j], bias[j])
		}
	}
}

// fma32 is a × b + c rounded once, as VFMADD does (through float64: the
// product is exact there, and the sum's double rounding is too rare to
// matter for the tests, which allow 1e-6).
func fma32(a, b, c float32) float32 {
	return float32(math.FMA(float64(a), float64(b), float64(c)))
}
