package minilm

import (
	"context"
	"fmt"
	"math"
	"sync"

	"github.com/agentmem/agentmem"
)

// model is the decoded transformer. Its int8 tables (the word embeddings,
// the matrices) are views of the binary's data: the operating system pages
// them in as they are read; the rest, decoded, takes about 4 MB, and the
// matrices repacked for the 8-bit path (with AVX-512 VNNI) 22 MB more.
type model struct {
	tok *tokenizer

	words      []int8    // [vocab][hidden]
	wordScale  []float32 // [vocab]
	positions  []float32 // [maxSeq][hidden]: position + token type 0 embeddings
	embNorm    layerNorm
	layers     []layer
	hidden     int
	heads      int
	headDim    int
	ffn        int
	attnFactor float32 // 1/√headDim
}

type layer struct {
	q, k, v, o linear
	attnNorm   layerNorm
	up, down   linear
	ffnNorm    layerNorm
}

type layerNorm struct {
	g, b []float32
	eps  float64
}

// linear is y = x Wᵀ + b for W of out×in, stored as q[o][i] × scale[o] ×
// col[i]: the col factors multiply x, the scale factors the sums.
type linear struct {
	in, out int
	w       []int8 // out/panel panels of in×panel: w[p][i][j] = q[p×panel+j][i]
	scale   []float32
	col     []float32 // nil: all 1
	bias    []float32
	// u8 is w repacked for the 8-bit path, on CPUs with AVX-512 VNNI
	// (hasVNNI), nil elsewhere. Then w is not read: it stays in the
	// binary's data, never paged in.
	u8 *u8Weights
}

var (
	loadOnce  sync.Once
	theModel  *model
	loadError error
)

// load decodes the embedded weights on first use. A failure means a broken
// build (the data is part of the binary) and is returned by every call.
func load() (*model, error) {
	loadOnce.Do(func() {
		theModel, loadError = decode(weightsFile)
		if loadError != nil {
			loadError = fmt.Errorf("minilm: decode the embedded model: %w", loadError)
		}
	})
	return theModel, loadError
}

func decode(weights string) (*model, error) {
	cfg, ts, err := readWeights(weights)
	if err != nil {
		return nil, err
	}
	m := &model{hidden: cfg.HiddenSize, heads: cfg.Heads, ffn: cfg.IntermediateSize}
	if m.heads <= 0 || m.hidden%m.heads != 0 || m.hidden%panel != 0 || m.ffn%panel != 0 ||
		cfg.MaxSeqLength > cfg.MaxPositions || cfg.MaxSeqLength != MaxTokens || cfg.HiddenSize != Dim {
		return nil, fmt.Errorf("unsupported configuration %+v", cfg)
	}
	m.headDim = m.hidden / m.heads
	m.attnFactor = float32(1 / math.Sqrt(float64(m.headDim)))
	m.tok = loadTokenizer()
	if m.tok.VocabSize() != cfg.VocabSize {
		return nil, fmt.Errorf("vocab.txt has %d entries, want %d", m.tok.VocabSize(), cfg.VocabSize)
	}

	get := func(name string, shape ...int) (*tensor, error) {
		t := ts[name]
		if t == nil {
			return nil, fmt.Errorf("no tensor %s", name)
		}
		if fmt.Sprint(t.Shape) != fmt.Sprint(shape) {
			return nil, fmt.Errorf("%s: shape %v, want %v", name, t.Shape, shape)
		}
		return t, nil
	}
	var errs []error
	must := func(name string, shape ...int) *tensor {
		t, err := get(name, shape...)
		if err != nil {
			errs = append(errs, err)
			return &tensor{Shape: shape, f32: make([]float32, (&tensor{Shape: shape}).size())}
		}
		return t
	}
	norm := func(prefix string) layerNorm {
		g, b := must(prefix+".weight", m.hidden), must(prefix+".bias", m.hidden)
		if g.f32 == nil || b.f32 == nil {
			errs = append(errs, fmt.Errorf("%s: want float32", prefix))
		}
		return layerNorm{g: g.f32, b: b.f32, eps: cfg.LayerNormEps}
	}
	lin := func(prefix string, out, in int) linear {
		w, b := must(prefix+".weight", out, in), must(prefix+".bias", out)
		if w.q == nil || w.Layout != fmt.Sprintf("panels%d", panel) || b.f32 == nil {
			errs = append(errs, fmt.Errorf("%s: want int8 weights in panels of %d and a float32 bias", prefix, panel))
			return linear{}
		}
		l := linear{in: in, out: out, w: w.q, scale: w.rowScale, col: w.colScale, bias: b.f32}
		if hasVNNI && out%vpanel == 0 {
			l.u8 = newU8Weights(l.w, in, out)
		}
		return l
	}

	h := m.hidden
	we := must("embeddings.word_embeddings.weight", cfg.VocabSize, h)
	m.words, m.wordScale = we.q, we.rowScale
	if m.words == nil {
		errs = append(errs, fmt.Errorf("word embeddings: want int8"))
	}
	pos := must("embeddings.position_embeddings.weight", cfg.MaxPositions, h)
	typ := must("embeddings.token_type_embeddings.weight", 2, h)
	if pos.f32 == nil || typ.f32 == nil {
		errs = append(errs, fmt.Errorf("position and token type embeddings: want float32"))
	} else {
		m.positions = make([]float32, cfg.MaxSeqLength*h)
		for i := range m.positions {
			m.positions[i] = pos.f32[i] + typ.f32[i%h] // every token is of type 0
		}
	}
	m.embNorm = norm("embeddings.LayerNorm")
	for i := range cfg.Layers {
		p := fmt.Sprintf("encoder.layer.%d.", i)
		m.layers = append(m.layers, layer{
			q:        lin(p+"attention.self.query", h, h),
			k:        lin(p+"attention.self.key", h, h),
			v:        lin(p+"attention.self.value", h, h),
			o:        lin(p+"attention.output.dense", h, h),
			attnNorm: norm(p + "attention.output.LayerNorm"),
			up:       lin(p+"intermediate.dense", m.ffn, h),
			down:     lin(p+"output.dense", h, m.ffn),
			ffnNorm:  norm(p + "output.LayerNorm"),
		})
	}
	if len(errs) > 0 {
		return nil, errs[0]
	}
	return m, nil
}

// apply sets y[r] = x[r] Wᵀ + b for rows r < rows (a multiple of 4), with
// par goroutines; xs is scratch of rows×in floats, and q scratch for the
// 8-bit path.
func (l *linear) apply(par int, y, x, xs []float32, q *u8Rows, rows int) {
	if l.col != nil {
		l.scaleColumns(xs, x, rows)
		x = xs
	}
	if l.u8 == nil {
		gemmI8(par, rows, l.in, l.out, x, l.w, l.scale, l.bias, y)
		return
	}
	if l.col == nil { // quantizing changes its input: a copy
		copy(xs[:rows*l.in], x[:rows*l.in])
		x = xs
	}
	q.quantize(x[:rows*l.in], rows, l.in)
	gemmU8(par, rows, l.out, q, l.u8, l.scale, l.bias, y)
}

// scaleColumns sets the rows of xs to those of x times the column factors.
func (l *linear) scaleColumns(xs, x []float32, rows int) {
	for r := range rows {
		xr, sr := x[r*l.in:(r+1)*l.in], xs[r*l.in:(r+1)*l.in]
		if hasSIMD && !generic && l.in%8 == 0 {
			mulAVX(&sr[0], &xr[0], &l.col[0], l.in)
			continue
		}
		for i, c := range l.col {
			sr[i] = xr[i] * c
		}
	}
}

// apply sets each row of x (width floats) to its LayerNorm, with float64
// sums.
func (n *layerNorm) apply(x []float32, width int) {
	for r := 0; r+width <= len(x); r += width {
		v := x[r : r+width]
		var s float64
		for _, f := range v {
			s += float64(f)
		}
		mean := s / float64(width)
		var ss float64
		for _, f := range v {
			d := float64(f) - mean
			ss += d * d
		}
		inv := 1 / math.Sqrt(ss/float64(width)+n.eps)
		for i, f := range v {
			v[i] = float32((float64(f)-mean)*inv)*n.g[i] + n.b[i]
		}
	}
}

// scratch is the memory of one forward pass, reused through a pool.
type scratch struct {
	h, xs, q, k, v, ctx, a, u []float32
	s, seg, kt, vp            []float32
	xq                        u8Rows
}

var scratchPool sync.Pool

// grow returns b with length n, zeroed.
func grow(b []float32, n int) []float32 {
	if cap(b) < n {
		return make([]float32, n)
	}
	b = b[:n]
	clear(b)
	return b
}

// forward embeds the token sequences seqs (each [CLS] … [SEP], at most
// MaxSeqLength) into out, one L2-normalised vector of hidden floats each.
// The sequences go through the matrices together, as one block of rows,
// which reads the weights once for all; attention stays within each. The
// matrix products use par goroutines.
func (m *model) forward(ctx context.Context, par int, seqs [][]int32, out [][]float32) {
	sc, _ := scratchPool.Get().(*scratch)
	if sc == nil {
		sc = new(scratch)
	}
	defer scratchPool.Put(sc)

	n := 0
	for _, s := range seqs {
		n += len(s)
	}
	rows := (n + 3) &^ 3
	H, F := m.hidden, m.ffn
	alloc := (rows + 4) // slack: attention's last row tile may read past a sequence
	sc.h = grow(sc.h, alloc*H)
	sc.xs = grow(sc.xs, alloc*F)
	sc.q = grow(sc.q, alloc*H)
	sc.k = grow(sc.k, alloc*H)
	sc.v = grow(sc.v, alloc*H)
	sc.ctx = grow(sc.ctx, alloc*H)
	sc.a = grow(sc.a, alloc*H)
	sc.u = grow(sc.u, alloc*F)

	// Background work runs the pass in units of a layer (a millisecond or
	// two), so that a request waits for at most one (see
	// agentmem.BackgroundCPU).
	unit := func(f func()) {
		done := agentmem.BackgroundCPU(ctx)
		defer done()
		f()
	}

	// Embeddings: word + position + token type, normalised.
	unit(func() {
		r := 0
		for _, s := range seqs {
			for t, id := range s {
				row := sc.h[r*H : (r+1)*H]
				w, ws := m.words[int(id)*H:(int(id)+1)*H], m.wordScale[id]
				p := m.positions[t*H : (t+1)*H]
				for i := range row {
					row[i] = float32(w[i])*ws + p[i]
				}
				r++
			}
		}
		m.embNorm.apply(sc.h[:n*H], H)
	})

	for li := range m.layers {
		l := &m.layers[li]
		unit(func() { m.layer(l, sc, par, rows, n, seqs) })
	}

	// Mean pooling over each sequence's tokens, then L2 normalisation.
	unit(func() { m.pool(sc, seqs, out) })
}

// pool sets out[i] to the mean of sequence i's rows of sc.h, L2
// normalised.
func (m *model) pool(sc *scratch, seqs [][]int32, out [][]float32) {
	H := m.hidden
	off := 0
	for si, s := range seqs {
		acc := make([]float64, H)
		for t := range s {
			for i, f := range sc.h[(off+t)*H : (off+t+1)*H] {
				acc[i] += float64(f)
			}
		}
		off += len(s)
		var ss float64
		for i := range acc {
			acc[i] /= float64(len(s))
			ss += acc[i] * acc[i]
		}
		inv := 1 / math.Sqrt(ss)
		v := out[si][:H]
		for i := range v {
			v[i] = float32(acc[i] * inv)
		}
	}
}

// layer runs layer l over the n rows (rows rounded up to tiles) of sc.h,
// the tokens of seqs, in place.
func (m *model) layer(l *layer, sc *scratch, par, rows, n int, seqs [][]int32) {
	H, F := m.hidden, m.ffn
	apply := func(l *linear, y, x []float32) { l.apply(par, y, x, sc.xs, &sc.xq, rows) }
	apply(&l.q, sc.q, sc.h)
	apply(&l.k, sc.k, sc.h)
	apply(&l.v, sc.v, sc.h)
	off := 0
	for _, s := range seqs {
		m.attention(sc, off, len(s))
		off += len(s)
	}
	apply(&l.o, sc.a, sc.ctx)
	for i := range sc.h[:n*H] {
		sc.h[i] += sc.a[i]
	}
	l.attnNorm.apply(sc.h[:n*H], H)

	apply(&l.up, sc.u, sc.h)
	gelu(sc.u[:n*F])
	apply(&l.down, sc.a, sc.u)
	for i := range sc.h[:n*H] {
		sc.h[i] += sc.a[i]
	}
	l.ffnNorm.apply(sc.h[:n*H], H)
}

// attention sets ctx's rows off… off+T-1 to the multi-head self-attention
// of the T tokens of one sequence there (q, k, v already projected).
func (m *model) attention(sc *scratch, off, T int) {
	H, D := m.hidden, m.headDim
	tr := (T + 3) &^ 3 // rows, in tiles of 4
	tc := (T + 7) &^ 7 // key columns, in panels of 8
	sc.s = grow(sc.s, tr*tc)
	sc.kt = grow(sc.kt, D*tc)
	sc.vp = grow(sc.vp, T*D)
	sc.seg = grow(sc.seg, tr*H)
	q := sc.q[off*H:]
	for h := range m.heads {
		// Kᵀ in panels of 8 keys: kt[p][d][j] = k[p×8+j][d].
		for t := range T {
			kr := sc.k[(off+t)*H+h*D : (off+t)*H+h*D+D]
			p, j := t/8, t%8
			dst := sc.kt[p*D*8:]
			for d, f := range kr {
				dst[d*8+j] = f
			}
		}
		// V in panels of 8 dimensions: vp[p][t][j] = v[t][p×8+j].
		for t := range T {
			vr := sc.v[(off+t)*H+h*D : (off+t)*H+h*D+D]
			for p := range D / 8 {
				copy(sc.vp[p*T*8+t*8:p*T*8+t*8+8], vr[p*8:p*8+8])
			}
		}
		// Scores, then a softmax over each row's T keys.
		gemmF32x8(tr, D, tc, q[h*D:], H, sc.kt, sc.s, tc)
		for i := range tr {
			// The padding keys get a score that makes their weight 0 (or
			// about 1e-38, which P × V does not read anyway), so that the
			// softmax runs over whole vectors of 8.
			row := sc.s[i*tc : (i+1)*tc]
			for j := T; j < tc; j++ {
				row[j] = -1e30
			}
			softmax(row, m.attnFactor)
		}
		// Context: the rows of P times V.
		for p := range D / 8 {
			gemmF32x8(tr, T, 8, sc.s, tc, sc.vp[p*T*8:], sc.seg[h*D+p*8:], H)
		}
	}
	copy(sc.ctx[off*H:(off+T)*H], sc.seg[:T*H])
}

// softmax sets x to softmax(x × f). The portable code has softmaxAVX's
// operations, its sum in 8 lanes included (see kernF32x8Go for why).
func softmax(x []float32, f float32) {
	if hasSIMD && !generic && len(x) >= 8 && len(x)%8 == 0 {
		softmaxAVX(&x[0], len(x), f)
		return
	}
	mx := x[0]
	for _, v := range x[1:] {
		mx = max(mx, v)
	}
	var lanes [8]float32
	for i := range x {
		x[i] = expClamped((x[i] - mx) * f)
		lanes[i%8] += x[i]
	}
	s := ((lanes[0] + lanes[4]) + (lanes[1] + lanes[5])) + ((lanes[2] + lanes[6]) + (lanes[3] + lanes[7]))
	inv := 1 / s
	for i := range x {
		x[i] *= inv
	}
}
