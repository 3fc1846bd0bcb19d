// Package minilm is a built-in sentence embedder: the all-MiniLM-L6-v2
// model of sentence-transformers, run in pure Go, with no cgo, no network
// and no files at run time. Its vectors reflect meaning: "I moved to
// Lisbon" and "my new home is in Portugal" are close.
//
// The model (Apache-2.0, by the sentence-transformers team) is a 6-layer
// BERT with 384 dimensions that maps a text of up to 256 word pieces to a
// 384-dimensional vector: tokens → embeddings → 6 transformer layers →
// the mean of the token vectors → L2 normalisation. Its weights are
// compiled into the binary (about 23 MB, int8; see generate/README.md for
// their provenance and format) and decoded on first use, so a program that
// never embeds pays no memory for them; decoded, they take about 11 MB.
// Texts longer than 256 word pieces are cut: the rest does not count.
//
// Embedder's vectors are within a cosine of 0.99 of the reference
// implementation's (sentence-transformers, float32), and its tokens are the
// same. On amd64 with AVX2 and FMA, the matrix products run in assembly;
// elsewhere in portable Go, several times slower.
//
// Static is a second, much cheaper embedder distilled from the model: a
// vector per vocabulary entry, a text's vector the weighted mean of its
// tokens'. It loses the model's sense of context and word order for a
// thousandfold speed.
package minilm

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/agentmem/agentmem"
)

// Dim is the dimension of Embedder's vectors.
const Dim = 384

// MaxTokens is the length of the longest text in word pieces, [CLS] and
// [SEP] included; Embed ignores the rest of a longer text.
const MaxTokens = 256

// version names Embedder's computation in Space: bump it when the vectors
// change (new weights or quantisation), so that stored vectors are never
// compared with vectors of another scheme.
const version = "minilm-l6-v2-v1"

// Embedder embeds texts with all-MiniLM-L6-v2. The zero value is ready to
// use; it is safe for concurrent use. All Embedders share one copy of the
// model.
type Embedder struct{}

var _ agentmem.Embedder = (*Embedder)(nil)

// New returns an Embedder.
func New() *Embedder { return &Embedder{} }

// Space names the embedder's vector space for agentmem.Vector:
// "minilm-l6-v2-v1/384".
func (e *Embedder) Space() string { return fmt.Sprintf("%s/%d", version, Dim) }

// batchRows caps the word pieces embedded together in one pass through the
// model: more share the reading of the weights, but their activations
// (21 KB a piece) must stay in the cache.
const batchRows = 128

// Embed returns one L2-normalised vector of Dim dimensions per text, in the
// order of texts. It runs up to GOMAXPROCS batches of texts in parallel,
// and returns ctx's error as is when ctx ends before it is done. It does
// no I/O; its only other error is a model that fails to decode, which
// means a broken build.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m, err := load()
	if err != nil {
		return nil, err
	}
	all := make([]float32, len(texts)*Dim)
	vecs := make([][]float32, len(texts))
	for i := range vecs {
		vecs[i] = all[i*Dim : (i+1)*Dim : (i+1)*Dim]
	}
	if len(texts) == 0 {
		return vecs, nil
	}
	seqs := make([][]int32, len(texts))
	total := 0
	for i, t := range texts {
		seqs[i] = m.tok.Encode(nil, t, MaxTokens)
		total += len(seqs[i])
	}

	// Consecutive texts in batches of about equal numbers of pieces, at most
	// batchRows unless a single text has more, at least as many batches as
	// workers when there are texts enough.
	workers := min(runtime.GOMAXPROCS(0), len(texts))
	nb := max((total+batchRows-1)/batchRows, workers)
	nb = min((nb+workers-1)/workers*workers, len(texts))
	target := (total + nb - 1) / nb
	type batch struct{ from, to int }
	var batches []batch
	for from := 0; from < len(texts); {
		to, n := from+1, len(seqs[from])
		for to < len(texts) && n+len(seqs[to]) <= target {
			n += len(seqs[to])
			to++
		}
		batches = append(batches, batch{from, to})
		from = to
	}

	var next atomic.Int64
	var stopped atomic.Bool
	var wg sync.WaitGroup
	for range min(workers, len(batches)) {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= len(batches) {
					return
				}
				if ctx.Err() != nil {
					stopped.Store(true)
					return
				}
				b := batches[i]
				m.forward(seqs[b.from:b.to], vecs[b.from:b.to])
			}
		})
	}
	wg.Wait()
	if stopped.Load() {
		return nil, ctx.Err()
	}
	return vecs, nil
}
