package minilm

// Tokenize returns the token ids of text.
func Tokenize(text string) []int32 {
	m, err := load()
	if err != nil {
		panic(err)
	}
	return m.tok.Encode(nil, text, MaxTokens)
}

// Normalize returns the tokenizer's normalized form of s.
func Normalize(s string) string { return string(normalize(nil, s)) }

var (
	IsPunct      = isPunct
	IsWhitespace = isWhitespace
	Erff         = erff
	Expf         = expf
	HasSIMD      = hasSIMD
	GemmI8       = gemmI8
	GemmF32x8    = gemmF32x8
	Panel        = panel
	HasVNNI      = hasVNNI
	VPanel       = vpanel
	Outliers     = outliers
)

// GemmU8 is gemmI8's 8-bit counterpart: it repacks w (panels of Panel
// columns, as GemmI8 takes it), quantizes a copy of x and runs gemmU8.
func GemmU8(par, rows, k, n int, x []float32, w []int8, scale, bias, y []float32) {
	PrepareGemmU8(k, n, w)(par, rows, x, scale, bias, y)
}

// PrepareGemmU8 returns GemmU8 for w, repacked once: what a linear layer
// does on each call (quantize, multiply), for benchmarks.
func PrepareGemmU8(k, n int, w []int8) func(par, rows int, x, scale, bias, y []float32) {
	qw := newU8Weights(w, k, n)
	var q u8Rows
	var xs []float32
	return func(par, rows int, x, scale, bias, y []float32) {
		xs = append(xs[:0], x...)
		q.quantize(xs, rows, k)
		gemmU8(par, rows, n, &q, qw, scale, bias, y)
	}
}

// SetGeneric makes the package use its portable kernels (or not) and
// returns a function that restores the previous setting.
func SetGeneric(on bool) (restore func()) {
	old := generic
	generic = on
	return func() { generic = old }
}

// Gelu and Softmax are the activation and the attention's softmax, with the
// kernels SetGeneric selects.
var (
	Gelu    = gelu
	Softmax = softmax
)

// Loaded reports whether the model and the static table have been decoded.
func Loaded() (model, static bool) { return theModel != nil, theStatic != nil }
