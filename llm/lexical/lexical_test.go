package lexical_test

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"testing"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/llm/lexical"
)

// MustEmbed embeds texts with e and fails tb on an error.
func MustEmbed(tb testing.TB, e *lexical.Embedder, texts ...string) [][]float32 {
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

// cos returns the cosine of the vectors of a and b.
func cos(tb testing.TB, e *lexical.Embedder, a, b string) float32 {
	tb.Helper()
	vs := MustEmbed(tb, e, a, b)
	return lexical.Cosine(vs[0], vs[1])
}

func norm(v []float32) float64 {
	var s float64
	for _, c := range v {
		s += float64(c) * float64(c)
	}
	return math.Sqrt(s)
}

func TestEmbedder_Space(t *testing.T) {
	for _, tt := range []struct {
		dim  int
		want string
	}{
		{0, "lexical-v1/512"},
		{512, "lexical-v1/512"},
		{256, "lexical-v1/256"},
	} {
		if got := lexical.New(tt.dim).Space(); got != tt.want {
			t.Errorf("New(%d).Space()=%q, want %q", tt.dim, got, tt.want)
		}
	}
	if got, want := (&lexical.Embedder{}).Space(), "lexical-v1/512"; got != want {
		t.Errorf("zero Embedder: Space()=%q, want %q", got, want)
	}
}

func TestEmbedder_Embed(t *testing.T) {
	e := lexical.New(0)
	text := "My sister Anna is getting married in Porto in September; she's 34."

	t.Run("Deterministic", func(t *testing.T) {
		a := MustEmbed(t, e, text)[0]
		b := MustEmbed(t, lexical.New(512), "unrelated first", text)[1]
		if !slices.Equal(a, b) {
			t.Fatal("the same text gave different vectors")
		}
	})

	t.Run("Normalised", func(t *testing.T) {
		for _, dim := range []int{1, 7, 64, 512, 1536} {
			for _, v := range MustEmbed(t, lexical.New(dim), text, "x1", "Lisbon", "日本語") {
				if len(v) != dim {
					t.Fatalf("len=%d, want %d", len(v), dim)
				}
				if n := norm(v); math.Abs(n-1) > 1e-5 {
					t.Fatalf("dim %d: norm=%v, want 1", dim, n)
				}
			}
		}
	})

	t.Run("Empty", func(t *testing.T) {
		// No features: nothing, punctuation, stopwords, lone letters.
		vs := MustEmbed(t, e, "", "  ?!… — ", "The and of it, isn't it?", "a b c", text)
		for i, v := range vs[:4] {
			if len(v) != 512 || norm(v) != 0 {
				t.Fatalf("text %d: len=%d norm=%v, want the zero vector of 512", i, len(v), norm(v))
			}
			if c := lexical.Cosine(v, vs[4]); c != 0 {
				t.Fatalf("text %d: Cosine with a text=%v, want 0", i, c)
			}
		}
		if vs, err := e.Embed(context.Background(), nil); err != nil || len(vs) != 0 {
			t.Fatalf("Embed(nil)=%v, %v; want none", vs, err)
		}
	})

	t.Run("Paraphrase", func(t *testing.T) {
		for _, tt := range []struct{ text, paraphrase, unrelated string }{
			{"I moved to Lisbon last year.", "She has been living in Lisbon since last year.", "My dog loves playing fetch in the park."},
			{"Anna's wedding is in Porto in September.", "Her sister gets married in Porto, September 14.", "The quarterly report is due on Friday."},
			{"I'm allergic to peanuts.", "Allergies: peanuts and shellfish", "We watched a movie about peanut farmers' strikes in Brazil."},
		} {
			p, u := cos(t, e, tt.text, tt.paraphrase), cos(t, e, tt.text, tt.unrelated)
			if p <= u || p < 0.2 {
				t.Errorf("%q: paraphrase %.3f, unrelated %.3f; want the paraphrase higher and ≥ 0.2", tt.text, p, u)
			}
		}
	})

	t.Run("Morphology", func(t *testing.T) {
		for _, tt := range []struct{ word, variant, unrelated string }{
			{"running", "runs", "table"},
			{"married", "marriage", "carried"},
			{"Portugal", "Portuguese", "Germany"},
			{"relational", "relations", "rational"},
			{"hiking", "hiked", "biking"},
			{"children's", "children", "chilled"},
			{"restaurant", "restuarant", "museum"}, // a typo
			{"Café", "cafe", "cave"},               // an accent
		} {
			v, u := cos(t, e, tt.word, tt.variant), cos(t, e, tt.word, tt.unrelated)
			if v <= u || v < 0.1 {
				t.Errorf("%s: %s %.3f, %s %.3f; want the variant higher and ≥ 0.1", tt.word, tt.variant, v, tt.unrelated, u)
			}
		}
	})

	t.Run("Unicode", func(t *testing.T) {
		for _, tt := range []struct {
			a, b string
			min  float32
		}{
			{"José's café in São Paulo", "Jose's cafe in Sao Paulo", 0.999},
			{"Café", "Cafe\u0301", 0.999}, // decomposed accent
			{"Straße", "STRASSE", 0.999},
			{"Łódź", "Lodz", 0.999},
			{"I ❤️ Kraków!!!", "krakow", 0.999},
			{"東京に住んでいます", "東京は大きい", 0.1}, // shares 東京
			{"Привет, как дела в Москве?", "Москве", 0.3},
			{"Ελληνικά κείμενα", "κείμενα", 0.3},
			{"नमस्ते दुनिया", "दुनिया", 0.3}, // vowel signs are marks
		} {
			if c := cos(t, e, tt.a, tt.b); c < tt.min {
				t.Errorf("%q, %q: cosine %.3f, want ≥ %v", tt.a, tt.b, c, tt.min)
			}
		}
		// Nothing breaks on what is not text.
		for _, s := range []string{"\xff\xfe\x00bad utf-8\xc3", "🙂🙃🙂", "\u0301\u0301", "'''", "a'", "'s", "x’y’z", "٣٤ مرحبا", "ไม่มีช่องว่างในภาษาไทย"} {
			for _, v := range MustEmbed(t, e, s) {
				if n := norm(v); n != 0 && math.Abs(n-1) > 1e-5 {
					t.Errorf("%q: norm %v", s, n)
				}
			}
		}
	})

	t.Run("LargeBatch", func(t *testing.T) {
		texts := make([]string, 5000)
		for i := range texts {
			texts[i] = fmt.Sprintf("turn %d: we talked about item %d and the weather in city %d", i, i*7, i%50)
		}
		vs := MustEmbed(t, e, texts...)
		for _, i := range []int{0, 1, 255, 256, 4999} {
			if one := MustEmbed(t, e, texts[i])[0]; !slices.Equal(vs[i], one) {
				t.Errorf("text %d: batch and single vectors differ", i)
			}
			if cap(vs[i]) != 512 {
				t.Errorf("text %d: cap=%d, want 512 (an append must not overwrite the next vector)", i, cap(vs[i]))
			}
		}
	})

	t.Run("Concurrent", func(t *testing.T) {
		texts := []string{text, "I run five kilometres every morning.", "東京に住んでいます", "Ça va très bien, merci."}
		want := MustEmbed(t, e, texts...)
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Go(func() {
				for i := range 50 {
					k := (g + i) % len(texts)
					vs, err := e.Embed(context.Background(), texts[k:])
					if err != nil {
						t.Error(err)
						return
					}
					if !slices.Equal(vs[0], want[k]) {
						t.Errorf("goroutine %d: text %d differs", g, k)
						return
					}
				}
			})
		}
		wg.Wait()
	})

	t.Run("ErrBadDim", func(t *testing.T) {
		_, err := lexical.New(-1).Embed(context.Background(), []string{text})
		if got := agentmem.ErrorCode(err); got != agentmem.EINVALID {
			t.Fatalf("code=%q, want %q (err %v)", got, agentmem.EINVALID, err)
		}
	})

	t.Run("ErrCanceled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := e.Embed(ctx, []string{text}); err != context.Canceled {
			t.Fatalf("err=%v, want %v", err, context.Canceled)
		}
	})
}

// FuzzEmbed checks that any text embeds to a unit or zero vector.
func FuzzEmbed(f *testing.F) {
	for _, s := range append(chatTurns, "", "don't", "ies", "Ĳssel ĳs", "東京'大", "a\u0301\ufe0f", "\xff's") {
		f.Add(s)
	}
	e := lexical.New(32)
	f.Fuzz(func(t *testing.T, s string) {
		v := MustEmbed(t, e, s)[0]
		if n := norm(v); n != 0 && math.Abs(n-1) > 1e-5 {
			t.Fatalf("norm=%v, want 0 or 1", n)
		}
	})
}

// TestEmbedder_Golden pins the feature scheme: if it fails, the vectors
// changed, and so must the version in Space (lexical-v1), or stored
// vectors of the old scheme would be compared with new ones.
func TestEmbedder_Golden(t *testing.T) {
	v := MustEmbed(t, lexical.New(16), "The quick brown foxes were running to Lisbon in 2023!")[0]
	want := []float32{-0.3565, -0.5027, -0.1972, 0.0150, -0.3528, -0.0814, -0.1546, 0.0773, -0.2170, -0.1092, 0.4260, 0.2674, 0.2835, -0.0319, 0.1587, -0.0387}
	for i := range want {
		if math.Abs(float64(v[i]-want[i])) > 1e-4 {
			t.Fatalf("vector=%.4f,\nwant %.4f: the feature scheme changed; bump its version", v, want)
		}
	}
}

func TestStem(t *testing.T) {
	// Examples from Porter's paper, and departures of his C version.
	for _, tt := range []struct{ word, want string }{
		{"caresses", "caress"}, {"ponies", "poni"}, {"ties", "ti"}, {"caress", "caress"}, {"cats", "cat"},
		{"feed", "feed"}, {"agreed", "agre"}, {"plastered", "plaster"}, {"bled", "bled"}, {"motoring", "motor"},
		{"sing", "sing"}, {"conflated", "conflat"}, {"troubled", "troubl"}, {"sized", "size"}, {"hopping", "hop"},
		{"tanned", "tan"}, {"falling", "fall"}, {"hissing", "hiss"}, {"fizzed", "fizz"}, {"failing", "fail"},
		{"filing", "file"}, {"happy", "happi"}, {"sky", "sky"}, {"relational", "relat"}, {"conditional", "condit"},
		{"rational", "ration"}, {"digitizer", "digit"}, {"vietnamization", "vietnam"}, {"predication", "predic"},
		{"operator", "oper"}, {"feudalism", "feudal"}, {"decisiveness", "decis"}, {"hopefulness", "hope"},
		{"callousness", "callous"}, {"formaliti", "formal"}, {"sensibiliti", "sensibl"}, {"triplicate", "triplic"},
		{"formative", "form"}, {"electrical", "electr"}, {"goodness", "good"}, {"revival", "reviv"},
		{"allowance", "allow"}, {"inference", "infer"}, {"airliner", "airlin"}, {"adjustable", "adjust"},
		{"defensible", "defens"}, {"irritant", "irrit"}, {"replacement", "replac"}, {"dependent", "depend"},
		{"adoption", "adopt"}, {"communism", "commun"}, {"activate", "activ"}, {"effective", "effect"},
		{"bowdlerize", "bowdler"}, {"probate", "probat"}, {"rate", "rate"}, {"cease", "ceas"},
		{"controlling", "control"}, {"roll", "roll"}, {"generalizations", "gener"}, {"oscillators", "oscil"},
		{"running", "run"}, {"runs", "run"}, {"ran", "ran"},
		{"is", "is"}, {"ies", "i"}, {"ing", "ing"}, {"eed", "eed"},
		{"audibly", "audibl"}, {"astrology", "astrolog"}, // bli→ble, logi→log
	} {
		if got := lexical.Stem(tt.word); got != tt.want {
			t.Errorf("Stem(%q)=%q, want %q", tt.word, got, tt.want)
		}
	}
}

func TestCosine(t *testing.T) {
	for n := range 11 {
		a, b := make([]float32, n), make([]float32, n)
		var want float32
		for i := range n {
			a[i], b[i] = float32(i+1)/8, float32(n-i)/4
			want += a[i] * b[i]
		}
		if got := lexical.Cosine(a, b); math.Abs(float64(got-want)) > 1e-5 {
			t.Errorf("len %d: Cosine=%v, want %v", n, got, want)
		}
	}
	if got := lexical.Cosine([]float32{1, 0}, []float32{1, 0, 0}); got != 0 {
		t.Errorf("different lengths: Cosine=%v, want 0", got)
	}
	a, b := make([]float32, 512), make([]float32, 512)
	if n := testing.AllocsPerRun(100, func() { lexical.Cosine(a, b) }); n != 0 {
		t.Errorf("Cosine allocates %v times, want 0", n)
	}
}

// TestRetrieval is a sanity check that the vectors retrieve: each query
// must find its memory among the top 3 of 20 by cosine. The queries share
// words with their memory, inflected or misspelt, as a lexical embedder
// needs; none shares only meaning.
func TestRetrieval(t *testing.T) {
	memories := []string{
		"I adopted a golden retriever puppy named Max last spring.",
		"My sister Anna is getting married in Porto in September.",
		"I've been learning to play the violin for about two years.",
		"I work as a nurse in the cardiology ward at St. Mary's hospital.",
		"We're planning a road trip through the Scottish Highlands.",
		"I'm allergic to peanuts and shellfish.",
		"My favourite book is One Hundred Years of Solitude.",
		"I run five kilometres every morning before work.",
		"Our kitchen renovation should be finished by March.",
		"I switched from coffee to green tea to sleep better.",
		"My son started kindergarten this week and loves his teacher.",
		"I'm saving up to buy an electric car, probably a used one.",
		"I volunteer at the animal shelter on Saturdays.",
		"My grandmother taught me to bake sourdough bread.",
		"I failed my driving test twice before passing.",
		"We moved into a flat near the river in 2021.",
		"I'm trying to cut down on sugar after my doctor's advice.",
		"The project deadline at my job got pushed to next Friday.",
		"I collect vintage vinyl records, mostly jazz from the sixties.",
		"My partner and I went hiking in the Alps for our anniversary.",
	}
	queries := []struct {
		q    string
		want int
	}{
		{"Where is the user's sister's marriage taking place?", 1},
		{"How many kilometers does the user go running in the mornings?", 7},
		{"Is the kitchen renovated yet?", 8},
		{"baking bread with grandma", 13},
		{"when did they move into the flatt by the river", 15}, // a typo
		{"What music instrument is the user learning, violin lessons?", 2},
		{"which animals does the user volunteer with", 12},
	}
	e := lexical.New(0)
	mv := MustEmbed(t, e, memories...)
	top1 := 0
	for _, q := range queries {
		qv := MustEmbed(t, e, q.q)[0]
		rank := 0 // memories scoring higher than the right one
		for i, v := range mv {
			if i != q.want && lexical.Cosine(qv, v) >= lexical.Cosine(qv, mv[q.want]) {
				rank++
			}
		}
		if rank >= 3 {
			t.Errorf("%q: %q ranks %d, want top 3", q.q, memories[q.want], rank+1)
		}
		if rank == 0 {
			top1++
		}
	}
	t.Logf("top 1: %d of %d queries", top1, len(queries))
}

// chatTurns are ~30-word chat turns for the benchmarks.
var chatTurns = []string{
	"Honestly I've been so tired lately, work has been crazy since the merger and I keep waking up at 4am thinking about the quarterly numbers we have to present.",
	"We finally booked the trip to Portugal! Two weeks in October, starting in Lisbon, then driving down to the Algarve. Do you know any good seafood places near Lagos?",
	"My daughter started violin lessons last month and she practises every evening, which is lovely, though the neighbours might disagree about the squeaky notes at the moment.",
	"Can you remind me what I told you about my knee? The physio said no running for six weeks but I want to sign up for the half marathon in May.",
}

func BenchmarkEmbed(b *testing.B) {
	e := lexical.New(0)
	ctx := context.Background()
	batch := make([]string, 100)
	for i := range batch {
		batch[i] = chatTurns[i%len(chatTurns)]
	}
	for b.Loop() {
		if _, err := e.Embed(ctx, batch); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*len(batch))/b.Elapsed().Seconds(), "texts/s")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(batch)), "ns/text")
}

func BenchmarkCosine(b *testing.B) {
	vs := MustEmbed(b, lexical.New(512), chatTurns[0], chatTurns[1])
	var sink float32
	for b.Loop() {
		sink += lexical.Cosine(vs[0], vs[1])
	}
	_ = sink
}
