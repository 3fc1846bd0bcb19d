// Package lexical is the embedder agentmem uses when no embedding model is
// configured: no model, no network, deterministic and fast (about 10 µs
// for a 30-word chat turn). Its vectors reflect shared vocabulary, not
// meaning: "I moved to Lisbon" and "she lives in Lisbon now" are close,
// "I moved to Lisbon" and "my new home is in Portugal" are not.
//
// A text's features are, after lower-casing and folding Latin accents
// ("Café" is "cafe"; an apostrophe's "s", "ll", "re", "ve", "d", "m" are
// dropped):
//
//   - each word of letters and digits but lone letters and a compact list
//     of English stopwords, by its Porter stem ("running", "runs" →
//     "run"), weighing 0.75 + 0.05 × its length up to 10 letters, so that
//     long, rarer words count a little more. Numbers weigh 1 and lose
//     their leading zeros;
//   - the character 3-grams and 4-grams of each stem with boundary marks
//     ("^ru", "run", "un$", "^run", "run$"), which match what the stemmer
//     does not conflate ("Portugal" and "Portuguese" are "portug" and
//     "portugues") and typos. A word's n-grams are weighed evenly so that
//     together they count 0.7 × as much as its stem (the root of the sum
//     of their squares), whatever its length. Numbers have none;
//   - each pair of consecutive words by their stems ("bank of America" is
//     "bank america"), weighing 0.5; a pair does not span a sentence end;
//   - in runs of Chinese and Japanese characters, which have no spaces,
//     each pair of characters as a word, and each character weighing 0.4.
//
// A feature found n times weighs its mean weight × (1 + ln n). Each is
// hashed (FNV-1a, then a 64-bit finaliser) to a dimension, from the high
// bits, and a sign, from the lowest bit, so that colliding features cancel
// out on average instead of adding up; the vector is then L2-normalised.
//
// Changing anything above (the stopwords, the stemmer, a weight, the hash)
// changes the vectors: bump the version in Space, so that stored vectors of
// the old scheme are never compared with new ones. TestEmbedder_Golden
// fails when the vectors change.
package lexical

import (
	"cmp"
	"context"
	"strconv"
	"sync"

	"github.com/agentmem/agentmem"
)

// version names the feature scheme in Space.
const version = "lexical-v1"

// DefaultDim is the dimension of an Embedder whose Dim is 0.
const DefaultDim = 512

// Embedder embeds texts by feature hashing. The zero value is ready to use;
// it is safe for concurrent use.
type Embedder struct {
	// Dim is the vector dimension, DefaultDim when 0. Hashing features into
	// Dim dimensions makes unrelated texts collide: the cosine of two texts
	// that share nothing is not 0 but noise of about 1/√Dim (±0.04 at
	// 512, ±0.06 at 256, ±0.03 at 1024), which blurs the ranking of weak
	// matches. A larger Dim costs memory (4 bytes a dimension a vector) and
	// search time (Cosine is linear in Dim). Dim must match the stored
	// vectors: it is part of Space, and changing it means re-embedding.
	Dim int
}

var _ agentmem.Embedder = (*Embedder)(nil)

// New returns an Embedder of dimension dim (DefaultDim when 0).
func New(dim int) *Embedder { return &Embedder{Dim: dim} }

func (e *Embedder) dim() int { return cmp.Or(e.Dim, DefaultDim) }

// Space names the embedder's vector space for agentmem.Vector, as
// "lexical-v1/512": the feature scheme's version and the dimension.
func (e *Embedder) Space() string { return version + "/" + strconv.Itoa(e.dim()) }

// Embed returns one L2-normalised vector of Dim dimensions per text, in the
// order of texts. A text without features (empty, only punctuation or
// stopwords) gets the zero vector, whose Cosine with any vector is 0.
// Embed does no I/O and never fails but for a bad Dim (EINVALID) or a
// done ctx (checked every 256 texts; its error is returned as is).
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	d := e.dim()
	if d < 0 {
		return nil, agentmem.Errorf(agentmem.EINVALID, "Dimension %d is invalid: it must be positive.", d)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	x := scratchPool.Get().(*scratch)
	defer scratchPool.Put(x)
	// One allocation for all the vectors; each is capped so that an append
	// to one cannot overwrite the next.
	all := make([]float32, len(texts)*d)
	vecs := make([][]float32, len(texts))
	for i, t := range texts {
		if i%256 == 255 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		v := all[i*d : (i+1)*d : (i+1)*d]
		x.embed(t, v)
		vecs[i] = v
	}
	return vecs, nil
}

// scratchPool holds the buffers of Embed, which otherwise would allocate
// for every text.
var scratchPool = sync.Pool{New: func() any { return newScratch() }}
