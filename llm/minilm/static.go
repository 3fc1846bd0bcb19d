package minilm

import (
	"context"
	_ "embed"
	"fmt"
	"math"
	"sync"

	"github.com/agentmem/agentmem"
)

//go:embed data/static.bin
var staticFile string

// StaticDim is the dimension of Static's vectors.
const StaticDim = 256

// staticVersion names Static's table in its Space: bump it when the table
// changes.
const staticVersion = "minilm-l6-v2-static-v1"

// Static embeds texts with a table distilled from all-MiniLM-L6-v2 (the
// way of Minish Lab's model2vec): each vocabulary entry's vector is the
// model's output for that entry alone, reduced by PCA to 256 dimensions
// and weighted down the more frequent the entry (SIF with Zipf's law over
// the vocabulary's order); a text's vector is the mean of its word pieces'
// vectors, L2-normalised. It takes microseconds a text, and no context
// counts: "dog bites man" is "man bites dog", and a word has the same
// vector in every sentence. Its quality is between the lexical embedder's
// and the model's (see TestStatic_Retrieval). Texts are not cut at
// MaxTokens.
//
// The zero value is ready to use; it is safe for concurrent use. Its table
// (8 MB, int8, in the binary) is read on first use.
type Static struct{}

var _ agentmem.Embedder = (*Static)(nil)

// NewStatic returns a Static.
func NewStatic() *Static { return &Static{} }

// Space names the embedder's vector space for agentmem.Vector:
// "minilm-l6-v2-static-v1/256".
func (s *Static) Space() string { return fmt.Sprintf("%s/%d", staticVersion, StaticDim) }

type staticTable struct {
	tok   *tokenizer
	q     []int8    // [vocab][StaticDim]
	scale []float32 // [vocab]
}

var (
	staticOnce  sync.Once
	theStatic   *staticTable
	staticError error
)

func loadStatic() (*staticTable, error) {
	staticOnce.Do(func() {
		theStatic, staticError = decodeStatic(staticFile)
		if staticError != nil {
			staticError = fmt.Errorf("minilm: decode the embedded static table: %w", staticError)
		}
	})
	return theStatic, staticError
}

func decodeStatic(data string) (*staticTable, error) {
	cfg, ts, err := readWeights(data)
	if err != nil {
		return nil, err
	}
	t := ts["static.weight"]
	if t == nil || t.q == nil || len(t.Shape) != 2 || t.Shape[1] != StaticDim || t.Layout != "" {
		return nil, fmt.Errorf("no int8 static.weight of %d columns", StaticDim)
	}
	tok := loadTokenizer()
	if tok.VocabSize() != t.Shape[0] || cfg.VocabSize != t.Shape[0] {
		return nil, fmt.Errorf("vocab.txt has %d entries, the table %d", tok.VocabSize(), t.Shape[0])
	}
	return &staticTable{tok: tok, q: t.q, scale: t.rowScale}, nil
}

// Embed returns one L2-normalised vector of StaticDim dimensions per text,
// in the order of texts. A text without word pieces (empty, or only
// characters the tokenizer drops) gets the zero vector. Embed does no I/O
// and never fails but for a done ctx (checked every 256 texts; its error is
// returned as is) or a broken build.
func (s *Static) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	vecs, err := s.Sums(ctx, texts)
	if err != nil {
		return nil, err
	}
	for _, v := range vecs {
		agentmem.Unit(v)
	}
	return vecs, nil
}

// Sums returns, per text, the sum of its word pieces' vectors: Embed's
// vector before it is normalised. Pieces never span lines, so the sum of
// lines joined is the sum of the lines' sums, and the vector of a text
// made of lines (a message's window: agentmem.WindowText) can be had from
// its lines' sums without reading a line twice.
func (s *Static) Sums(ctx context.Context, texts []string) ([][]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	st, err := loadStatic()
	if err != nil {
		return nil, err
	}
	all := make([]float32, len(texts)*StaticDim)
	vecs := make([][]float32, len(texts))
	var ids []int32
	// Background work sums in units of 64 texts (see
	// agentmem.BackgroundCPU).
	done := func() {}
	defer func() { done() }()
	for i, text := range texts {
		if i%64 == 0 {
			done()
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			done = agentmem.BackgroundCPU(ctx)
		}
		ids = st.tok.Encode(ids[:0], text, math.MaxInt32)
		acc := all[i*StaticDim : (i+1)*StaticDim : (i+1)*StaticDim]
		for _, id := range ids[1 : len(ids)-1] { // not [CLS] and [SEP]
			row := st.q[int(id)*StaticDim : (int(id)+1)*StaticDim]
			sc := st.scale[id]
			for j, q := range row {
				acc[j] += float32(q) * sc
			}
		}
		vecs[i] = acc
	}
	return vecs, nil
}
