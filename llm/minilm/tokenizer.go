package minilm

import (
	"bufio"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// The ids of the special tokens in vocab.txt.
const (
	idPAD  = 0
	idUNK  = 100
	idCLS  = 101
	idSEP  = 102
	idMASK = 103
)

// maxWordChars is the length in characters above which a word is [UNK]
// rather than split into pieces (max_input_chars_per_word).
const maxWordChars = 100

// tokenizer splits texts into the word pieces of the model's vocabulary,
// as the model's own tokenizer does (Hugging Face tokenizers' BertNormalizer,
// BertPreTokenizer and WordPiece, configured as in the model's
// tokenizer.json):
//
//  1. The special tokens [PAD], [UNK], [CLS], [SEP] and [MASK] written
//     literally in a text are those tokens (case-sensitively).
//  2. Between them, the text is cleaned: NUL, U+FFFD and control, format
//     and private-use characters are dropped, whitespace becomes a space; Chinese,
//     Japanese and Korean ideographs get a space on each side; the text is
//     decomposed (NFD) and its non-spacing marks dropped, which strips
//     accents ("Café" is "cafe", "İ" is "i"); and it is lower-cased.
//  3. It is split at whitespace, and each punctuation character (ASCII
//     punctuation and Unicode's P* categories) is a word of its own.
//  4. Each word is the longest vocabulary entry that starts it, followed by
//     the longest "##" entry that continues it, and so on; a word that
//     cannot be split so, or that is longer than 100 characters, is one
//     [UNK].
//
// The result is [CLS], the pieces, [SEP], cut to a number of pieces in all.
// A tokenizer is safe for concurrent use.
type tokenizer struct {
	words map[string]int32 // vocabulary entries that start a word
	conts map[string]int32 // "##" entries, without the "##"
}

var (
	tokOnce sync.Once
	theTok  *tokenizer
)

// loadTokenizer returns the tokenizer of the embedded vocabulary, read on
// first use.
func loadTokenizer() *tokenizer {
	tokOnce.Do(func() { theTok = newTokenizer(vocabFile) })
	return theTok
}

// newTokenizer reads vocab, one entry a line, an entry's id its line number
// from 0.
func newTokenizer(vocab string) *tokenizer {
	t := &tokenizer{words: make(map[string]int32, 24000), conts: make(map[string]int32, 6000)}
	sc := bufio.NewScanner(strings.NewReader(vocab))
	for id := int32(0); sc.Scan(); id++ {
		w := sc.Text()
		if c, ok := strings.CutPrefix(w, "##"); ok && c != "" {
			t.conts[c] = id
		} else {
			t.words[w] = id
		}
	}
	return t
}

// VocabSize returns the number of entries of the vocabulary.
func (t *tokenizer) VocabSize() int { return len(t.words) + len(t.conts) }

// Encode appends to ids the token ids of text: [CLS], its pieces, [SEP],
// at most max (≥ 2) in all (the pieces beyond are dropped), and returns the
// extended slice.
func (t *tokenizer) Encode(ids []int32, text string, max int) []int32 {
	start := len(ids)
	ids = append(ids, idCLS)
	limit := start + max - 1 // room for [SEP]
	var buf []byte
	for text != "" && len(ids) < limit {
		seg, special, rest := cutSpecial(text)
		buf = normalize(buf[:0], seg)
		ids = t.pieces(ids, buf, limit)
		if special >= 0 && len(ids) < limit {
			ids = append(ids, special)
		}
		text = rest
	}
	return append(ids, idSEP)
}

// specials are the special tokens as written in a text. Their
// tokenizer.json entries are not normalized, so they match before the text
// is cleaned and lower-cased.
var specials = [...]struct {
	s  string
	id int32
}{{"[PAD]", idPAD}, {"[UNK]", idUNK}, {"[CLS]", idCLS}, {"[SEP]", idSEP}, {"[MASK]", idMASK}}

// cutSpecial returns the text before the first special token of s, the
// token's id (-1 if there is none) and the text after it.
func cutSpecial(s string) (before string, id int32, after string) {
	for i := 0; ; {
		j := strings.IndexByte(s[i:], '[')
		if j < 0 {
			return s, -1, ""
		}
		i += j
		for _, sp := range specials {
			if strings.HasPrefix(s[i:], sp.s) {
				return s[:i], sp.id, s[i+len(sp.s):]
			}
		}
		i++
	}
}

// normalize appends to dst the cleaned, accent-stripped, lower-cased form
// of s (step 2 of tokenizer), with any whitespace as a single byte ' '.
func normalize(dst []byte, s string) []byte {
	if isASCII(s) { // the common case: nothing to decompose
		for i := 0; i < len(s); i++ {
			c := s[i]
			switch {
			case c == '\t' || c == '\n' || c == '\r' || c == ' ':
				dst = append(dst, ' ')
			case c < 0x20 || c == 0x7f:
				// control: dropped
			case 'A' <= c && c <= 'Z':
				dst = append(dst, c+'a'-'A')
			default:
				dst = append(dst, c)
			}
		}
		return dst
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for _, r := range s {
		switch {
		case r == 0 || r == utf8.RuneError || isControl(r):
		case isWhitespace(r):
			b.WriteByte(' ')
		case isCJK(r):
			b.WriteByte(' ')
			b.WriteRune(r)
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	var it norm.Iter
	it.InitString(norm.NFD, b.String())
	for !it.Done() {
		seg := it.Next()
		for len(seg) > 0 {
			r, n := utf8.DecodeRune(seg)
			seg = seg[n:]
			if isNonspacingMark(r) {
				continue
			}
			if l := unicode.ToLower(r); l != r {
				r = l
			} else if r >= 0x1c89 {
				r = lowerExtra(r)
			}
			dst = utf8.AppendRune(dst, r)
		}
	}
	return dst
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// pieces appends the word pieces of normalized text s (steps 3 and 4 of
// tokenizer) to ids while len(ids) < limit.
func (t *tokenizer) pieces(ids []int32, s []byte, limit int) []int32 {
	for i := 0; i < len(s) && len(ids) < limit; {
		r, n := rune(s[i]), 1
		if r >= utf8.RuneSelf {
			r, n = utf8.DecodeRune(s[i:])
		}
		switch {
		case r == ' ':
			i++
		case isPunct(r):
			ids = t.word(ids, s[i:i+n])
			i += n
		default:
			j := i + n
			for j < len(s) {
				r, n := rune(s[j]), 1
				if r >= utf8.RuneSelf {
					r, n = utf8.DecodeRune(s[j:])
				}
				if r == ' ' || isPunct(r) {
					break
				}
				j += n
			}
			ids = t.word(ids, s[i:j])
			i = j
		}
	}
	if len(ids) > limit {
		ids = ids[:limit]
	}
	return ids
}

// word appends the pieces of one word, greedily longest first, or [UNK].
func (t *tokenizer) word(ids []int32, w []byte) []int32 {
	if utf8.RuneCount(w) > maxWordChars {
		return append(ids, idUNK)
	}
	n := len(ids)
	for start := 0; start < len(w); {
		end, id := len(w), int32(-1)
		for ; end > start; end-- {
			if end < len(w) && !utf8.RuneStart(w[end]) {
				continue
			}
			var ok bool
			if start == 0 {
				id, ok = t.words[string(w[start:end])]
			} else {
				id, ok = t.conts[string(w[start:end])]
			}
			if ok {
				break
			}
		}
		if end == start {
			return append(ids[:n], idUNK)
		}
		ids = append(ids, id)
		start = end
	}
	return ids
}

// isControl reports whether r is dropped as a control character: Unicode's
// Cc, Cf and Co, but tab, newline and carriage return, which are
// whitespace.
func isControl(r rune) bool {
	if r == '\t' || r == '\n' || r == '\r' {
		return false
	}
	return unicode.In(r, unicode.Cc, unicode.Cf, unicode.Co) && !unicode.Is(newCf, r)
}

// isWhitespace reports whether r becomes a space: Unicode's White_Space
// property, which includes tab, newline and carriage return.
func isWhitespace(r rune) bool {
	return unicode.Is(unicode.White_Space, r)
}

// isCJK reports whether r is in one of the CJK ideograph blocks that the
// tokenizer surrounds with spaces (the list of BertNormalizer).
func isCJK(r rune) bool {
	return 0x4E00 <= r && r <= 0x9FFF ||
		0x3400 <= r && r <= 0x4DBF ||
		0x20000 <= r && r <= 0x2A6DF ||
		0x2A700 <= r && r <= 0x2B73F ||
		0x2B740 <= r && r <= 0x2B81F ||
		0x2B920 <= r && r <= 0x2CEAF ||
		0xF900 <= r && r <= 0xFAFF ||
		0x2F800 <= r && r <= 0x2FA1F
}

// isNonspacingMark reports whether r is a mark that stripping accents drops.
func isNonspacingMark(r rune) bool {
	return unicode.Is(unicode.Mn, r) && !unicode.Is(newMn, r) || r == oldMn1
}

// isPunct reports whether r is a word of its own: ASCII punctuation
// (which includes $ + < = > ^ ` | ~) or Unicode punctuation.
func isPunct(r rune) bool {
	if r < utf8.RuneSelf {
		return '!' <= r && r <= '/' || ':' <= r && r <= '@' || '[' <= r && r <= '`' || '{' <= r && r <= '~'
	}
	return unicode.IsPunct(r) && !unicode.Is(newP, r) || r == oldP1 || r == oldP2
}
