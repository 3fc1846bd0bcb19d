// Package minilm holds built-in sentence embedders: the all-MiniLM-L6-v2
// model of sentence-transformers, run in pure Go (no cgo, no network, no
// files at run time), and a static table distilled from it. Their vectors
// reflect meaning: "I moved to Lisbon" and "my new home is in Portugal" are
// close, which they are not for the lexical embedder.
//
// The model (Apache-2.0, by the sentence-transformers team) is a 6-layer
// BERT of 384 dimensions: word pieces → embeddings → 6 transformer layers
// (12 heads, feed-forward of 1536, exact GELU) → the mean of the token
// vectors → L2 normalisation. Texts longer than MaxTokens word pieces are
// cut: the rest does not count. Its weights are compiled into the binary
// (24 MB, int8 with float32 scales; generate/README.md gives their
// provenance and format) and used in place: the operating system pages
// them in as they are read, and the first Embed decodes the rest (about
// 4 MB, a few milliseconds), so that a program that never embeds pays for
// none of it. On CPUs with AVX-512 VNNI, the first Embed also repacks the
// matrices for the 8-bit kernels (22 MB on the heap, about 20 ms), and the
// binary's copy is not read.
//
// Embedder's tokens are those of the model's own tokenizer, and its
// vectors are within a cosine of 0.998 of the reference implementation's
// (sentence-transformers, float32) on the texts of testdata. A text costs
// about 21 million floating-point operations a word piece: on amd64 with AVX2 and FMA,
// whose kernels are in assembly, about 0.25 ms a piece on one core (a
// 16-piece text in 4–5 ms), several texts sharing a pass through the
// weights; elsewhere the portable kernels are about 20 times slower. With
// AVX-512 VNNI, the matrix products quantize the activations to 8 bits
// (see gemm_u8.go), about 3 times as fast again in batches (0.09 ms a
// piece on one core); its vectors have a cosine of 0.9997 on average with
// those of the float kernels (0.9986 at worst on the texts of testdata).
//
// Static is the cheap alternative (about 6 µs a text): a vector per
// vocabulary entry, a text's vector the weighted mean of its pieces'. It
// has no sense of context or word order, and finds paraphrases about two
// thirds as well as the model.
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
// order of texts. It runs up to GOMAXPROCS batches of texts in parallel
// (and splits the matrix products of fewer batches than that),
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
	done := agentmem.BackgroundCPU(ctx)
	for i, t := range texts {
		seqs[i] = m.tok.Encode(nil, t, MaxTokens)
		total += len(seqs[i])
	}
	done()

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

	// Fewer batches than workers (one short text, say): the matrix
	// products of each batch share the workers left.
	par := max(1, runtime.GOMAXPROCS(0)/len(batches))
	if agentmem.IsBackground(ctx) {
		par = 1 // a unit of background work holds one core (agentmem.BackgroundCPU)
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
				m.forward(ctx, par, seqs[b.from:b.to], vecs[b.from:b.to])
			}
		})
	}
	wg.Wait()
	if stopped.Load() {
		return nil, ctx.Err()
	}
	return vecs, nil
}
