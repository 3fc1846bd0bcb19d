package minilm_test

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/google/go-cmp/cmp"

	"github.com/agentmem/agentmem/llm/minilm"
)

// knownDifferences are the code points where the tokenizer here and the
// model's differ, and why.
var knownDifferences = map[rune]string{
	0x11938: "DIVES AKURU VOWEL SIGN O: Go's NFD (Unicode 15) decomposes it, the tokenizer's older tables do not",
}

// TestTokenizer_EveryCodePoint compares, for every code point alone, the
// normalized form and the pre-tokenizer's class with the model's tokenizer
// (testdata/chars.txt, written by the generator; its format is in
// generate.py's write_chars).
func TestTokenizer_EveryCodePoint(t *testing.T) {
	f, err := os.Open("testdata/chars.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	bad := map[string][]rune{}
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		lo, hi, _ := strings.Cut(fields[0], "-")
		if hi == "" {
			hi = lo
		}
		a, err1 := strconv.ParseInt(lo, 16, 32)
		b, err2 := strconv.ParseInt(hi, 16, 32)
		if err1 != nil || err2 != nil || len(fields) < 3 {
			t.Fatalf("bad line %q", sc.Text())
		}
		for r := rune(a); r <= rune(b); r++ {
			n++
			if _, ok := knownDifferences[r]; ok {
				continue
			}
			var want string
			switch m := fields[2]; {
			case m == "=":
				want = string(r)
			case m == "-":
				want = ""
			case m == "_":
				want = " "
			case m == "|":
				want = " " + string(r) + " "
			case m[0] == '+':
				d, _ := strconv.ParseInt(m[1:], 16, 32)
				want = string(r + rune(d))
			default:
				for _, h := range fields[2:] {
					c, _ := strconv.ParseInt(h, 16, 32)
					want += string(rune(c))
				}
			}
			if got := minilm.Normalize(string(r)); got != want {
				bad["normalized"] = append(bad["normalized"], r)
			}
			if got := minilm.IsPunct(r); got != (fields[1] == "P") {
				bad[fmt.Sprintf("punctuation=%v", got)] = append(bad[fmt.Sprintf("punctuation=%v", got)], r)
			}
			if got := minilm.IsWhitespace(r); got != (fields[1] == "W") {
				bad[fmt.Sprintf("whitespace=%v", got)] = append(bad[fmt.Sprintf("whitespace=%v", got)], r)
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if want := 0x110000 - 0x800; n != want {
		t.Fatalf("chars.txt has %d code points, want %d", n, want)
	}
	for k, rs := range bad {
		// As ranges, ready for the tables of unicode.go.
		var b strings.Builder
		for i := 0; i < len(rs); {
			j := i
			for j+1 < len(rs) && rs[j+1] == rs[j]+1 {
				j++
			}
			fmt.Fprintf(&b, "{0x%04x, 0x%04x, 1}, ", rs[i], rs[j])
			i = j + 1
		}
		t.Errorf("%s: %d code points differ from the model's tokenizer (Go's Unicode is %s): %s", k, len(rs), unicode.Version, b.String())
	}
}

func TestTokenizer_Encode(t *testing.T) {
	for _, tt := range []struct {
		text string
		want []int32
	}{
		{"", []int32{101, 102}},
		{"hello world", []int32{101, 7592, 2088, 102}},
		{"Hello, WORLD!", []int32{101, 7592, 1010, 2088, 999, 102}},
		{"Café", []int32{101, 7668, 102}}, // accents stripped
		{"unaffable", []int32{101, 14477, 20961, 3468, 102}},
		{"[MASK]", []int32{101, 103, 102}},
		{"[mask]", []int32{101, 1031, 7308, 1033, 102}},
		{strings.Repeat("x", 101), []int32{101, 100, 102}}, // over 100 characters
		{"\u0000\u200b\ufffd", []int32{101, 102}},
	} {
		if diff := cmp.Diff(tt.want, minilm.Tokenize(tt.text)); diff != "" {
			t.Errorf("%q: mismatch (-want +got):\n%s", tt.text, diff)
		}
	}

	t.Run("Truncated", func(t *testing.T) {
		ids := minilm.Tokenize(strings.Repeat("word ", 1000))
		if len(ids) != minilm.MaxTokens || ids[0] != 101 || ids[len(ids)-1] != 102 {
			t.Fatalf("len=%d first=%d last=%d, want %d, 101, 102", len(ids), ids[0], ids[len(ids)-1], minilm.MaxTokens)
		}
		// A word cut in its pieces at the limit.
		ids = minilm.Tokenize(strings.Repeat("a ", 253) + "unaffable")
		if diff := cmp.Diff([]int32{1037, 14477, 102}, ids[len(ids)-3:]); diff != "" {
			t.Fatalf("end mismatch (-want +got):\n%s", diff)
		}
	})
}

func BenchmarkTokenize(b *testing.B) {
	text := "My sister Anna is getting married in Porto in September; she's 34."
	minilm.Tokenize(text)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		minilm.Tokenize(text)
	}
}
