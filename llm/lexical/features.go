package lexical

import (
	"math"
	"unicode"
	"unicode/utf8"

	"github.com/agentmem/agentmem"
)

// The weights of the features; see the package doc. Changing one changes
// the vectors: bump version.
const (
	bigramWeight  = 0.5
	gramMass      = 0.7 // the n-grams of a word weigh 0.49 of it, in squares
	cjkCharWeight = 0.4
)

// Feature kinds, hashed first so that equal bytes of different kinds are
// different features.
const (
	kindWord   = 'w' // a stem, a number, a pair of CJK characters
	kindBigram = 'b'
	kindGram   = 'g'
	kindChar   = 'c'
)

// wordWeight is the weight of a word of n letters.
func wordWeight(n int) float64 { return 0.75 + 0.05*float64(min(n, 10)) }

// scratch holds the state and buffers of embedding one text at a time.
type scratch struct {
	word    []byte // the word being read, lower-cased and folded
	apos    int    // where an apostrophe was in word ("john|s"), or -1
	stem    []byte
	prev    []byte // the stem of the previous word of the sentence
	hasPrev bool
	cjk     []rune // the run of CJK characters being read
	gram    []byte // "^word$"
	offs    []int  // rune offsets in gram

	// feats are the text's distinct features in order of appearance;
	// table is an open-addressing index of them by hash (index+1, 0 for
	// an empty slot), len a power of two at most half full.
	feats []feature
	table []int32
}

type feature struct {
	h    uint64  // hash, never 0
	w    float64 // sum of the weights of its occurrences
	n    int32   // occurrences
	slot int32   // its slot in table
}

func newScratch() *scratch { return &scratch{apos: -1, table: make([]int32, 1024)} }

// embed writes the normalised vector of text to v, which is zero.
func (x *scratch) embed(text string, v []float32) {
	x.features(text)
	d := uint64(len(v))
	for i := range x.feats {
		f := &x.feats[i]
		w := f.w
		if f.n > 1 {
			w = w / float64(f.n) * (1 + math.Log(float64(f.n)))
		}
		if f.h&1 != 0 {
			w = -w
		}
		v[(f.h>>32)*d>>32] += float32(w) // high 32 bits scaled to [0, d)
		x.table[f.slot] = 0
	}
	x.feats = x.feats[:0]
	agentmem.Unit(v)
}

// features collects the features of text into x.feats.
func (x *scratch) features(text string) {
	x.word, x.apos, x.hasPrev, x.cjk = x.word[:0], -1, false, x.cjk[:0]
	for i := 0; i < len(text); {
		r, size := rune(text[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(text[i:])
		}
		i += size
		switch {
		case 'a' <= r && r <= 'z' || '0' <= r && r <= '9':
			x.endCJK()
			x.word = append(x.word, byte(r))
		case 'A' <= r && r <= 'Z':
			x.endCJK()
			x.word = append(x.word, byte(r)+'a'-'A')
		case r == '\'' || r == '’':
			// Inside a word ("don't", "John's", "O'Brien") an apostrophe
			// is dropped and its place noted; elsewhere it is a space.
			if next, _ := utf8.DecodeRuneInString(text[i:]); len(x.word) > 0 && unicode.IsLetter(next) {
				x.apos = len(x.word)
			} else {
				x.endWord()
			}
		case r < utf8.RuneSelf:
			x.endWord()
			x.endCJK()
			switch r {
			case '.', '!', '?', ';', ':', '\n':
				x.hasPrev = false
			}
		case isCJK(r):
			x.endWord()
			x.cjk = append(x.cjk, r)
		case 0x300 <= r && r < 0x370:
			// A combining accent: dropped, so that a decomposed "é"
			// folds like a composed one.
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			x.endCJK()
			x.word = appendFolded(x.word, unicode.ToLower(r))
		case unicode.IsMark(r):
			// Other marks are parts of the letter before them, as the
			// vowel signs of Devanagari or Thai; one after no letter (an
			// emoji's variation selector) is dropped.
			if len(x.word) > 0 {
				x.word = utf8.AppendRune(x.word, r)
			}
		default:
			x.endWord()
			x.endCJK()
		}
	}
	x.endWord()
	x.endCJK()
}

// endWord adds the features of the word read, if any.
func (x *scratch) endWord() {
	w := x.word
	if x.apos >= 0 {
		// Drop the clitics of "John's", "it's", "I'll", "we're", "I've",
		// "she'd", "I'm"; keep "dont" (a stopword), "obrien".
		switch string(w[x.apos:]) {
		case "s", "ll", "re", "ve", "d", "m":
			w = w[:x.apos]
		}
		x.apos = -1
	}
	x.word = x.word[:0]
	if len(w) == 0 || isStopword(w) {
		return
	}
	letters, digits := true, true // lower-case ASCII letters, ASCII digits
	for _, c := range w {
		letters = letters && 'a' <= c && c <= 'z'
		digits = digits && '0' <= c && c <= '9'
	}
	if digits {
		for len(w) > 1 && w[0] == '0' {
			w = w[1:]
		}
		x.addWord(w, 1)
		return
	}
	n := utf8.RuneCount(w)
	if letters {
		if n == 1 {
			return // a lone letter: an initial, a list item, a stray "t"
		}
		// The n-grams are of the stem: those of the endings it removes
		// ("ed$", "ing$") would make every "-ing" word alike.
		x.stem = stem(append(x.stem[:0], w...))
		x.addWord(x.stem, wordWeight(n))
		x.addGrams(x.stem, len(x.stem), wordWeight(n))
		return
	}
	weight := wordWeight(n)
	x.addWord(w, weight)
	x.addGrams(w, n, weight)
}

// addWord adds a word's feature and its pair with the previous word.
func (x *scratch) addWord(s []byte, weight float64) {
	x.add(hashBytes(hashByte(offset64, kindWord), s), weight)
	if x.hasPrev {
		h := hashBytes(hashByte(offset64, kindBigram), x.prev)
		h = hashBytes(hashByte(h, ' '), s)
		x.add(h, bigramWeight)
	}
	x.prev, x.hasPrev = append(x.prev[:0], s...), true
}

// addGrams adds the 3-grams and 4-grams of "^w$", w being n runes long.
func (x *scratch) addGrams(w []byte, n int, weight float64) {
	x.gram = append(append(append(x.gram[:0], '^'), w...), '$')
	// n+2 runes have n 3-grams and n-1 4-grams.
	g := gramMass * weight / math.Sqrt(float64(2*n-1))
	if len(w) == n { // ASCII: a byte is a rune
		for size := 3; size <= 4; size++ {
			for i := 0; i+size <= len(x.gram); i++ {
				x.add(hashBytes(hashByte(offset64, kindGram), x.gram[i:i+size]), g)
			}
		}
		return
	}
	x.offs = x.offs[:0]
	for i := range string(x.gram) {
		x.offs = append(x.offs, i)
	}
	x.offs = append(x.offs, len(x.gram))
	for size := 3; size <= 4; size++ {
		for i := 0; i+size < len(x.offs); i++ {
			x.add(hashBytes(hashByte(offset64, kindGram), x.gram[x.offs[i]:x.offs[i+size]]), g)
		}
	}
}

// endCJK adds the features of the run of CJK characters read, if any, and
// ends the sentence: a word pair does not span a change of script.
func (x *scratch) endCJK() {
	rs := x.cjk
	if len(rs) == 0 {
		return
	}
	x.cjk, x.hasPrev = x.cjk[:0], false
	var buf [2 * utf8.UTFMax]byte
	if len(rs) == 1 {
		x.add(hashBytes(hashByte(offset64, kindWord), utf8.AppendRune(buf[:0], rs[0])), 1)
		return
	}
	for i, r := range rs {
		b := utf8.AppendRune(buf[:0], r)
		x.add(hashBytes(hashByte(offset64, kindChar), b), cjkCharWeight)
		if i+1 < len(rs) {
			x.add(hashBytes(hashByte(offset64, kindWord), utf8.AppendRune(b, rs[i+1])), 1)
		}
	}
}

// isCJK reports whether r is a Chinese or Japanese character, which are
// written without spaces.
func isCJK(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana)
}

// add adds an occurrence of the feature of hash h (before mixing).
func (x *scratch) add(h uint64, w float64) {
	h = mix(h)
	if h == 0 {
		h = 1
	}
	mask := len(x.table) - 1
	for i := int(h) & mask; ; i = (i + 1) & mask {
		j := x.table[i]
		if j == 0 {
			x.feats = append(x.feats, feature{h: h, w: w, n: 1, slot: int32(i)})
			x.table[i] = int32(len(x.feats))
			if 2*len(x.feats) > len(x.table) {
				x.grow()
			}
			return
		}
		if f := &x.feats[j-1]; f.h == h {
			f.w += w
			f.n++
			return
		}
	}
}

// grow doubles the table.
func (x *scratch) grow() {
	x.table = make([]int32, 2*len(x.table))
	mask := len(x.table) - 1
	for k := range x.feats {
		f := &x.feats[k]
		i := int(f.h) & mask
		for x.table[i] != 0 {
			i = (i + 1) & mask
		}
		x.table[i], f.slot = int32(k+1), int32(i)
	}
}

// FNV-1a, 64 bits.
const (
	offset64 = 14695981039346656037
	prime64  = 1099511628211
)

func hashByte(h uint64, c byte) uint64 { return (h ^ uint64(c)) * prime64 }

func hashBytes(h uint64, b []byte) uint64 {
	for _, c := range b {
		h = (h ^ uint64(c)) * prime64
	}
	return h
}

// mix is MurmurHash3's 64-bit finaliser. FNV-1a alone would make a poor
// sign and dimension: its lowest bit is the parity of the keys' lowest
// bits, and its high bits are weakly mixed for short keys.
func mix(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}
