package minilm_test

import (
	"bufio"
	"context"
	"encoding/json"
	"math"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/llm/lexical"
	"github.com/agentmem/agentmem/llm/minilm"
)

func TestStatic_Space(t *testing.T) {
	if got, want := minilm.NewStatic().Space(), "minilm-l6-v2-static-v1/256"; got != want {
		t.Fatalf("Space()=%q, want %q", got, want)
	}
}

func TestStatic_Embed(t *testing.T) {
	e := minilm.NewStatic()
	long := strings.Repeat("a long text beyond the model's limit ", 100)
	vs := MustEmbed(t, e, "My sister Anna is getting married in Porto.", "", "\u200b", "hi", long, long+" zebra")
	for i, v := range vs {
		if len(v) != minilm.StaticDim {
			t.Fatalf("len=%d, want %d", len(v), minilm.StaticDim)
		}
		var n float64
		for _, f := range v {
			n += float64(f) * float64(f)
		}
		want := 1.0
		if i == 1 || i == 2 {
			want = 0 // no word pieces
		}
		if math.Abs(n-want) > 1e-5 {
			t.Errorf("text %d: |v|²=%v, want %v", i, n, want)
		}
	}
	if slices.Equal(vs[4], vs[5]) {
		t.Error("a word after the model's 256 pieces did not count")
	}
	again := MustEmbed(t, e, "hi")[0]
	if !slices.Equal(again, vs[3]) {
		t.Error("the same text gave different vectors")
	}
	if near, far := cosine(MustEmbed(t, e, "I moved to Lisbon")[0], MustEmbed(t, e, "She lives in Portugal now")[0]),
		cosine(MustEmbed(t, e, "I moved to Lisbon")[0], MustEmbed(t, e, "SELECT * FROM users;")[0]); near < far+0.1 {
		t.Errorf("cosine of related texts %.3f, of unrelated ones %.3f: want a margin of 0.1", near, far)
	}
}

type pair struct {
	Query  string `json:"query"`
	Target string `json:"target"`
}

func MustReadPairs(tb testing.TB) []pair {
	tb.Helper()
	f, err := os.Open("testdata/paraphrases.jsonl")
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var ps []pair
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var p pair
		if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
			tb.Fatal(err)
		}
		ps = append(ps, p)
	}
	if len(ps) < 100 {
		tb.Fatalf("%d pairs, want 100", len(ps))
	}
	return ps
}

// ranking returns, for each query vector, the indices of docs by
// decreasing cosine.
func ranking(queries, docs [][]float32) [][]int {
	out := make([][]int, len(queries))
	for i, q := range queries {
		idx := make([]int, len(docs))
		sim := make([]float64, len(docs))
		for j, d := range docs {
			idx[j], sim[j] = j, cosine(q, d)
		}
		sort.SliceStable(idx, func(a, b int) bool { return sim[idx[a]] > sim[idx[b]] })
		out[i] = idx
	}
	return out
}

// TestStatic_Retrieval measures the embedders on a retrieval task: each
// query of testdata/paraphrases.jsonl (written for this test, in other
// words than its target) must find its target among the 100 targets. (A
// first run also had the 290 reference texts as distractors; several turned
// out to say what a target says, written from the same facts, which made
// the right answer ambiguous, so they were dropped. The pairs themselves
// were not changed after scoring, and are not blind: their author wrote
// the code.) It reports recall@1 and @5 for the model, the
// static table and, as a baseline, the lexical embedder, and how often
// the static table's results agree with the model's.
func TestStatic_Retrieval(t *testing.T) {
	pairs := MustReadPairs(t)
	var queries, docs []string
	for _, p := range pairs {
		queries = append(queries, p.Query)
		docs = append(docs, p.Target) // doc i is query i's target
	}
	type result struct {
		name   string
		rank   [][]int
		r1, r5 float64
	}
	var results []*result
	for _, e := range []struct {
		name string
		emb  interface {
			Embed(ctx context.Context, texts []string) ([][]float32, error)
		}
	}{{"model", minilm.New()}, {"static", minilm.NewStatic()}, {"lexical", lexical.New(0)}} {
		r := &result{name: e.name, rank: ranking(MustEmbed(t, e.emb, queries...), MustEmbed(t, e.emb, docs...))}
		for i, rk := range r.rank {
			if rk[0] == i {
				r.r1++
			}
			if slices.Contains(rk[:5], i) {
				r.r5++
			}
		}
		r.r1 /= float64(len(pairs))
		r.r5 /= float64(len(pairs))
		t.Logf("%-7s recall@1 %.2f  recall@5 %.2f", r.name, r.r1, r.r5)
		for i, rk := range r.rank {
			if rk[0] != i && testing.Verbose() && os.Getenv("SHOWMISS") != "" {
				t.Logf("  %s: %q → %q", r.name, queries[i], docs[rk[0]])
			}
		}
		results = append(results, r)
	}
	model, static := results[0], results[1]
	var agree1, overlap5 float64
	for i := range pairs {
		if model.rank[i][0] == static.rank[i][0] {
			agree1++
		}
		for _, d := range static.rank[i][:5] {
			if slices.Contains(model.rank[i][:5], d) {
				overlap5 += 0.2
			}
		}
	}
	t.Logf("static vs model: same top result for %.2f of the queries, top-5 overlap %.2f", agree1/float64(len(pairs)), overlap5/float64(len(pairs)))

	// Floors a little under the measured figures (see the log), so that a
	// regression fails.
	for _, want := range []struct {
		name   string
		r1, r5 float64
	}{{"model", 0.70, 0.92}, {"static", 0.45, 0.70}} {
		for _, r := range results {
			if r.name == want.name && (r.r1 < want.r1 || r.r5 < want.r5) {
				t.Errorf("%s: recall@1 %.2f, @5 %.2f, want ≥ %.2f and %.2f", r.name, r.r1, r.r5, want.r1, want.r5)
			}
		}
	}
}

func BenchmarkStatic(b *testing.B) {
	e := minilm.NewStatic()
	text := "My sister Anna is getting married in Porto in September; she's 34."
	MustEmbed(b, e, text)
	for b.Loop() {
		MustEmbed(b, e, text)
	}
}

// TestStatic_Agreement compares the static table's similarities with the
// model's over the pairs of the reference texts that both embed: the
// Spearman correlation of the cosines, and how many of each text's five
// nearest neighbours are the same.
func TestStatic_Agreement(t *testing.T) {
	ref := MustReadReference(t)
	var texts []string
	for _, s := range ref.Sentences {
		texts = append(texts, s.Text)
	}
	model, static := MustEmbed(t, minilm.New(), texts...), MustEmbed(t, minilm.NewStatic(), texts...)
	var keep []int
	for i, v := range static {
		if slices.ContainsFunc(v, func(f float32) bool { return f != 0 }) {
			keep = append(keep, i)
		}
	}
	var a, b []float64
	for x, i := range keep {
		for _, j := range keep[x+1:] {
			a = append(a, cosine(model[i], model[j]))
			b = append(b, cosine(static[i], static[j]))
		}
	}
	rho := spearman(a, b)
	var mv, sv [][]float32
	for _, i := range keep {
		mv, sv = append(mv, model[i]), append(sv, static[i])
	}
	mr, sr := ranking(mv, mv), ranking(sv, sv)
	var overlap float64
	for i := range mr {
		m5, s5 := slices.DeleteFunc(slices.Clone(mr[i][:6]), func(j int) bool { return j == i })[:5], slices.DeleteFunc(slices.Clone(sr[i][:6]), func(j int) bool { return j == i })[:5]
		for _, j := range s5 {
			if slices.Contains(m5, j) {
				overlap += 0.2
			}
		}
	}
	overlap /= float64(len(mr))
	t.Logf("over %d reference texts: Spearman of the pairwise cosines %.3f, top-5 neighbour overlap %.3f", len(keep), rho, overlap)
	if rho < 0.1 || overlap < 0.2 {
		t.Errorf("Spearman %.3f, overlap %.3f: want ≥ 0.1 and 0.2", rho, overlap)
	}
}

// spearman returns the Spearman rank correlation of a and b (no ties
// expected).
func spearman(a, b []float64) float64 {
	ranks := func(x []float64) []float64 {
		idx := make([]int, len(x))
		for i := range idx {
			idx[i] = i
		}
		sort.Slice(idx, func(i, j int) bool { return x[idx[i]] < x[idx[j]] })
		r := make([]float64, len(x))
		for k, i := range idx {
			r[i] = float64(k)
		}
		return r
	}
	ra, rb := ranks(a), ranks(b)
	n := float64(len(a))
	var d2 float64
	for i := range ra {
		d := ra[i] - rb[i]
		d2 += d * d
	}
	return 1 - 6*d2/(n*(n*n-1))
}

// TestStatic_Sums: a text's vector is its sum normalised, and the sum of
// lines joined is the sum of the lines' sums (a window's vector from its
// turns': agentmem.WindowText).
func TestStatic_Sums(t *testing.T) {
	ctx := context.Background()
	s := minilm.NewStatic()
	lines := []string{"Caroline: I painted a sunset last week!", "Wow, can I see it?", "", "It's hanging in the hall — ÉTÉ 2023, 40×60 cm.", "Mel: lovely"}
	joined := strings.Join(lines, "\n")
	sums, err := s.Sums(ctx, append(slices.Clone(lines), joined))
	if err != nil {
		t.Fatal(err)
	}
	whole := sums[len(lines)]
	parts := make([]float32, minilm.StaticDim)
	for _, v := range sums[:len(lines)] {
		for j, f := range v {
			parts[j] += f
		}
	}
	for j := range whole {
		if math.Abs(float64(whole[j]-parts[j])) > 1e-4*(1+math.Abs(float64(whole[j]))) {
			t.Fatalf("dimension %d: the sum of the lines joined %v, the sum of their sums %v", j, whole[j], parts[j])
		}
	}
	vecs, err := s.Embed(ctx, []string{joined, ""})
	if err != nil {
		t.Fatal(err)
	}
	agentmem.Unit(whole)
	for j := range whole {
		if math.Abs(float64(whole[j]-vecs[0][j])) > 1e-6 {
			t.Fatalf("dimension %d: Embed %v, Unit(Sums) %v", j, vecs[0][j], whole[j])
		}
	}
	if slices.ContainsFunc(vecs[1], func(f float32) bool { return f != 0 }) || slices.ContainsFunc(sums[2], func(f float32) bool { return f != 0 }) {
		t.Fatalf("an empty text: vector %v, sum %v; want zeros", vecs[1][:4], sums[2][:4])
	}
}
