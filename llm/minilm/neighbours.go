package minilm

import (
	"math"
	"slices"
	"strings"
	"sync"
	"unicode"
)

// Neighbour is a word of the model's vocabulary near another, with the
// cosine of their vectors.
type Neighbour struct {
	Word   string
	Cosine float32
}

// wordTable is the static table's whole English words, their rows
// normalised to unit length, for Neighbours.
type wordTable struct {
	words []string
	ids   map[string]int // index in words
	vecs  []float32      // [len(words)][StaticDim]
}

var (
	wordsOnce sync.Once
	theWords  *wordTable
)

// loadWords builds the word table from the static table on first use:
// the vocabulary entries that start a word, are made of three or more
// lower-case ASCII letters (no pieces, names in capitals, digits or marks:
// about 19,000 words, 19 MB of float32).
func loadWords(st *staticTable) *wordTable {
	wordsOnce.Do(func() {
		t := &wordTable{ids: map[string]int{}}
		var ids []int32
		for w, id := range st.tok.words {
			if len(w) >= 3 && isLowerASCII(w) {
				t.words = append(t.words, w)
				ids = append(ids, id)
			}
		}
		// A stable order, so that equal cosines rank the same every run.
		order := make([]int, len(t.words))
		for i := range order {
			order[i] = i
		}
		slices.SortFunc(order, func(a, b int) int { return int(ids[a]) - int(ids[b]) })
		words := make([]string, len(order))
		t.vecs = make([]float32, len(order)*StaticDim)
		for i, j := range order {
			words[i] = t.words[j]
			t.ids[words[i]] = i
			row := st.q[int(ids[j])*StaticDim : (int(ids[j])+1)*StaticDim]
			var ss float64
			for _, q := range row {
				ss += float64(q) * float64(q)
			}
			if ss == 0 {
				continue
			}
			inv := float32(1 / math.Sqrt(ss))
			v := t.vecs[i*StaticDim : (i+1)*StaticDim]
			for k, q := range row {
				v[k] = float32(q) * inv
			}
		}
		t.words = words
		theWords = t
	})
	return theWords
}

func isLowerASCII(w string) bool {
	for _, r := range w {
		if r > unicode.MaxASCII || !unicode.IsLower(r) {
			return false
		}
	}
	return true
}

// Neighbours returns at most n whole words of the model's vocabulary
// nearest to word (lower-case, itself a whole word of the vocabulary, or
// once its plural's "s" or "es" is cut) by
// the cosine of their static vectors, at least min, nearest first, word
// itself left out: "desserts" → dessert, pastries, cakes…. A word that is
// not in the vocabulary as a whole (a rare word the tokenizer splits into
// pieces, a name) has none: its pieces' mean would find noise. The first
// call builds the table of words (about 20 ms); a call scans it (about
// 19,000 dot products of 256 dimensions).
func (s *Static) Neighbours(word string, n int, min float32) ([]Neighbour, error) {
	st, err := loadStatic()
	if err != nil {
		return nil, err
	}
	t := loadWords(st)
	i, ok := t.ids[word]
	for _, suf := range []string{"s", "es"} { // "desserts": dessert ##s
		if w, cut := strings.CutSuffix(word, suf); !ok && cut {
			i, ok = t.ids[w]
		}
	}
	if !ok || n <= 0 {
		return nil, nil
	}
	q := t.vecs[i*StaticDim : (i+1)*StaticDim]
	var out []Neighbour
	for j := range t.words {
		if j == i {
			continue
		}
		c := dotF32(q, t.vecs[j*StaticDim:(j+1)*StaticDim])
		if c < min {
			continue
		}
		if len(out) == n && c <= out[n-1].Cosine {
			continue
		}
		k, _ := slices.BinarySearchFunc(out, c, func(a Neighbour, c float32) int {
			if a.Cosine >= c {
				return -1
			}
			return 1
		})
		out = slices.Insert(out, k, Neighbour{t.words[j], c})
		if len(out) > n {
			out = out[:n]
		}
	}
	return out, nil
}

// dotF32 is the dot product of two vectors of StaticDim.
func dotF32(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	for i := 0; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	return s0 + s1 + s2 + s3
}

// Near words: how many, and how near, NearWords returns.
const (
	NearWordsMax    = 5
	NearWordsCosine = 0.5
)

// NearWords returns the NearWordsMax words of the vocabulary nearest to
// word at a cosine of NearWordsCosine at least (see Static.Neighbours):
// the words a search for word also looks for (retrieve.Options.Expand).
// "pets": pet, animals, dogs, cats, animal.
// A word's are kept (nearCacheSize words at most; about 2 ms a word
// otherwise).
func NearWords(word string) ([]string, error) {
	nearMu.Lock()
	words, ok := nearCache[word]
	nearMu.Unlock()
	if ok {
		return words, nil
	}
	nb, err := (&Static{}).Neighbours(word, NearWordsMax, NearWordsCosine)
	if err != nil {
		return nil, err
	}
	words = make([]string, len(nb))
	for i, n := range nb {
		words[i] = n.Word
	}
	nearMu.Lock()
	if len(nearCache) >= nearCacheSize {
		clear(nearCache) // rarely: a query's words are a few thousand
	}
	nearCache[word] = words
	nearMu.Unlock()
	return words, nil
}

// nearCacheSize bounds the words NearWords keeps (a few hundred KB).
const nearCacheSize = 8192

var (
	nearMu    sync.Mutex
	nearCache = map[string][]string{}
)
