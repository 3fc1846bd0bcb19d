package learned

import "math"

// Example is a training example of a head: an embedded text, its class,
// and how much it weighs.
type Example struct {
	X      []float32
	Class  int
	Weight float64
}

// Fit trains a softmax head of k classes on examples, deterministically:
// full-batch Adam from zero weights for a fixed number of epochs, with an
// L2 penalty. The same examples in the same order give the same head.
func Fit(examples []Example, k, epochs int, l2 float64) Head {
	if len(examples) == 0 {
		return Head{}
	}
	d := len(examples[0].X)
	w := make([][]float64, k)
	mw, vw := make([][]float64, k), make([][]float64, k)
	g := make([][]float64, k)
	for c := range w {
		w[c], mw[c], vw[c], g[c] = make([]float64, d), make([]float64, d), make([]float64, d), make([]float64, d)
	}
	b, mb, vb, gb := make([]float64, k), make([]float64, k), make([]float64, k), make([]float64, k)
	var total float64
	for _, e := range examples {
		total += e.Weight
	}
	const lr, beta1, beta2, eps = 0.05, 0.9, 0.999, 1e-8
	p := make([]float64, k)
	for t := 1; t <= epochs; t++ {
		for c := range g {
			clear(g[c])
		}
		clear(gb)
		for _, e := range examples {
			for c := range k {
				s := b[c]
				for i, v := range e.X {
					s += w[c][i] * float64(v)
				}
				p[c] = s
			}
			softmax(p)
			for c := range k {
				diff := p[c]
				if c == e.Class {
					diff--
				}
				diff *= e.Weight / total
				gb[c] += diff
				for i, v := range e.X {
					g[c][i] += diff * float64(v)
				}
			}
		}
		c1, c2 := 1-math.Pow(beta1, float64(t)), 1-math.Pow(beta2, float64(t))
		for c := range k {
			for i := range d {
				gi := g[c][i] + l2*w[c][i]
				mw[c][i] = beta1*mw[c][i] + (1-beta1)*gi
				vw[c][i] = beta2*vw[c][i] + (1-beta2)*gi*gi
				w[c][i] -= lr * (mw[c][i] / c1) / (math.Sqrt(vw[c][i]/c2) + eps)
			}
			mb[c] = beta1*mb[c] + (1-beta1)*gb[c]
			vb[c] = beta2*vb[c] + (1-beta2)*gb[c]*gb[c]
			b[c] -= lr * (mb[c] / c1) / (math.Sqrt(vb[c]/c2) + eps)
		}
	}
	h := Head{W: make([][]float32, k), B: make([]float32, k)}
	for c := range k {
		h.W[c] = make([]float32, d)
		for i := range d {
			h.W[c][i] = round(w[c][i])
		}
		h.B[c] = round(b[c])
	}
	return h
}

// round keeps 5 significant digits, so that the committed weights are
// short and do not carry the last bits of one machine's arithmetic.
func round(v float64) float32 {
	if v == 0 {
		return 0
	}
	e := math.Floor(math.Log10(math.Abs(v)))
	s := math.Pow(10, 4-e)
	return float32(math.Round(v*s) / s)
}

// Balanced returns weights for the classes of examples that make each
// class present weigh the same in all.
func Balanced(classes []int, k int) []float64 {
	n := make([]float64, k)
	for _, c := range classes {
		n[c]++
	}
	present := 0
	for _, v := range n {
		if v > 0 {
			present++
		}
	}
	w := make([]float64, k)
	for c, v := range n {
		if v > 0 {
			w[c] = float64(len(classes)) / (float64(present) * v)
		}
	}
	return w
}
