// Command calibrate learns how search estimates relevance
// (retrieve.Calibration, one per built-in vector space and one without
// vectors) from a labelled corpus of users' memories and the inputs they
// bear on (retrieve/calibrate/corpus/*.jsonl, see SPEC.md), reports how
// well it holds on a file held out (learned on the others), and writes
// it, learned on every file, to retrieve/calibrations.go. It learns in
// two stages: whether an input needs any memory, from its vector
// (Calibration.Need, fitted apart on folds of personas so that the
// second stage sees the log-odds of inputs it was not fitted on), then
// each pair's relevance from its evidence (Calibration.Relevance):
//
//	go run ./retrieve/calibrate          # writes retrieve/calibrations.go
//	go run ./retrieve/calibrate -check   # fails if calibrations.go is not what the corpus gives
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"go/format"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/llm/minilm"
	"github.com/agentmem/agentmem/retrieve"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "calibrate:", err)
		os.Exit(1)
	}
}

// persona is one line of the corpus: a user's memories and inputs, each
// with the indexes of the memories it needs (relevant) and of those that
// help a little (partly).
type persona struct {
	Persona  string   `json:"persona"`
	Memories []string `json:"memories"`
	Inputs   []struct {
		Text     string `json:"text"`
		Relevant []int  `json:"relevant"`
		Partly   []int  `json:"partly"`
	} `json:"inputs"`
}

// example is one (input, memory) pair: its evidence in each space and
// its label (1 relevant, 0.5 partly, 0 not).
type example struct {
	input    int // the input's index in inputs
	ev       map[string]retrieve.Evidence
	label    float64
	unrelate bool // the input needs no memory
}

// input is one input of the corpus: its vector in each space, whether
// it needs some memory, and its persona's number (for the folds).
type input struct {
	vec     map[string][]float32
	needs   bool
	persona int
}

// needL2 is the L2 penalty of the need model.
var needL2 = 3e-4

// inputs are the corpus's inputs, of every file.
var inputs []input

// The spaces calibrated: the built-in model's (memories, summaries), its
// static table's (messages, chunks) and none ("": full-text alone).
var spaces = []agentmem.Embedder{minilm.New(), minilm.NewStatic()}

func run(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("calibrate", flag.ContinueOnError)
	dir := fs.String("dir", "retrieve", "the package directory: calibrate/corpus/*.jsonl in, calibrations.go out")
	fs.Float64Var(&needL2, "need-l2", needL2, "the L2 penalty of the need model")
	check := fs.Bool("check", false, "compare with the committed calibrations.go instead of writing it")
	if err := fs.Parse(args); err != nil {
		return err
	}
	files, err := filepath.Glob(filepath.Join(*dir, "calibrate", "corpus", "*.jsonl"))
	if err != nil || len(files) == 0 {
		return fmt.Errorf("no corpus files in %s/calibrate/corpus", *dir)
	}
	slices.Sort(files)
	sets := make([][]example, len(files))
	for i, f := range files {
		if sets[i], err = load(ctx, f); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
	}
	names := append([]string{""}, spaceNames()...)
	if !*check {
		for i, f := range files {
			var train []example
			for j, s := range sets {
				if j != i {
					train = append(train, s...)
				}
			}
			fmt.Fprintf(stdout, "held out %s (%d pairs), learned on the other files:\n", filepath.Base(f), len(sets[i]))
			for _, sp := range names {
				c := learn(train, sp)
				report(stdout, sp, c, withNeed(sets[i], sp, c))
			}
		}
	}
	all := slices.Concat(sets...)
	coef := map[string]retrieve.Calibration{}
	for _, sp := range names {
		coef[sp] = learn(all, sp)
	}
	src, err := source(coef, names)
	if err != nil {
		return err
	}
	out := filepath.Join(*dir, "calibrations.go")
	if *check {
		old, err := os.ReadFile(out)
		if err != nil {
			return err
		}
		if bytes.Equal(old, src) {
			fmt.Fprintf(stdout, "%s is what the corpus gives\n", out)
			return nil
		}
		// The model's vectors differ a little from one CPU to another
		// (8-bit products with AVX-512 VNNI, float ones elsewhere), and
		// the fit with them: the committed calibrations must predict what
		// the refit ones do.
		for _, sp := range names {
			if d := predictionGap(all, sp, retrieve.Calibrations[sp], coef[sp]); d > checkGap {
				return fmt.Errorf("%s is not what the corpus gives: in space %q its probabilities differ by up to %.3f from the refit's (more than %.2f): run go run ./retrieve/calibrate", out, sp, d, checkGap)
			}
		}
		fmt.Fprintf(stdout, "%s is what the corpus gives (its probabilities within %.2f of the refit's on this CPU)\n", out, checkGap)
		return nil
	}
	return os.WriteFile(out, src, 0o644)
}

// checkGap is how far -check lets the committed calibrations' relevance
// and need probabilities be from the refit's, on the corpus.
const checkGap = 0.02

// predictionGap returns the largest difference between a's and b's
// relevance probabilities of the examples, and their need probabilities
// of the examples' inputs, in space sp.
func predictionGap(ex []example, sp string, a, b retrieve.Calibration) float64 {
	var gap float64
	for _, e := range ex {
		gap = max(gap, math.Abs(a.Relevance.Relevance(e.ev[sp])-b.Relevance.Relevance(e.ev[sp])))
		if v := inputs[e.input].vec[sp]; v != nil {
			gap = max(gap, math.Abs(sigmoid(a.NeedLogit(v))-sigmoid(b.NeedLogit(v))))
		}
	}
	return gap
}

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

func spaceNames() []string {
	var out []string
	for _, e := range spaces {
		out = append(out, e.(interface{ Space() string }).Space())
	}
	return out
}

// load reads a corpus file and measures the evidence of every pair.
func load(ctx context.Context, file string) ([]example, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var out []example
	for n, line := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var p persona
		if err := json.Unmarshal([]byte(line), &p); err != nil {
			return nil, fmt.Errorf("line %d: %w", n+1, err)
		}
		var texts []string
		texts = append(texts, p.Memories...)
		for _, in := range p.Inputs {
			texts = append(texts, in.Text)
		}
		vecs := map[string][][]float32{}
		for i, e := range spaces {
			v, err := e.Embed(ctx, texts)
			if err != nil {
				return nil, err
			}
			vecs[spaceNames()[i]] = v
		}
		persona := len(inputs)
		for ii, in := range p.Inputs {
			iv := input{vec: map[string][]float32{}, needs: len(in.Relevant)+len(in.Partly) > 0, persona: persona}
			for sp, v := range vecs {
				iv.vec[sp] = v[len(p.Memories)+ii]
			}
			inputs = append(inputs, iv)
			label := make([]float64, len(p.Memories))
			for _, m := range in.Partly {
				if m < 0 || m >= len(label) {
					return nil, fmt.Errorf("line %d: %s: memory %d out of range", n+1, p.Persona, m)
				}
				label[m] = 0.5
			}
			for _, m := range in.Relevant {
				if m < 0 || m >= len(label) {
					return nil, fmt.Errorf("line %d: %s: memory %d out of range", n+1, p.Persona, m)
				}
				label[m] = 1
			}
			unrelated := len(in.Relevant)+len(in.Partly) == 0
			best := map[string]float64{}
			for sp, v := range vecs {
				best[sp] = math.Inf(-1)
				for mi := range p.Memories {
					best[sp] = max(best[sp], cosine(v[len(p.Memories)+ii], v[mi]))
				}
			}
			for mi, m := range p.Memories {
				lex := retrieve.Evidence{Cosine: math.NaN(), Coverage: retrieve.Coverage(in.Text, m), Personal: retrieve.Personal(in.Text)}
				ev := map[string]retrieve.Evidence{"": lex}
				for sp, v := range vecs {
					e := lex
					e.Cosine = cosine(v[len(p.Memories)+ii], v[mi])
					e.Gap = best[sp] - e.Cosine
					ev[sp] = e
				}
				out = append(out, example{input: len(inputs) - 1, ev: ev, label: label[mi], unrelate: unrelated})
			}
		}
	}
	return out, nil
}

func cosine(a, b []float32) float64 {
	var d, na, nb float64
	for i := range a {
		d += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return d / math.Sqrt(na*nb)
}

// learn learns the calibration of space sp from the pairs ex: the need
// model on their inputs, then the relevance coefficients with each
// input's need log-odds from a need model fitted without its persona's
// fold.
func learn(ex []example, sp string) retrieve.Calibration {
	if sp == "" {
		xs, ys := make([][]float64, len(ex)), make([]float64, len(ex))
		for i, e := range ex {
			xs[i], ys[i] = e.ev[sp].Features(), e.label
		}
		return retrieve.Calibration{Relevance: logistic(xs, ys, 1e-3)}
	}
	var ins []int
	seen := map[int]bool{}
	for _, e := range ex {
		if !seen[e.input] {
			seen[e.input] = true
			ins = append(ins, e.input)
		}
	}
	const folds = 5
	logit := map[int]float64{}
	for f := range folds {
		var fit []int
		for _, i := range ins {
			if inputs[i].persona%folds != f {
				fit = append(fit, i)
			}
		}
		m := retrieve.Calibration{Need: needModel(fit, sp)}
		for _, i := range ins {
			if inputs[i].persona%folds == f {
				logit[i] = m.NeedLogit(inputs[i].vec[sp])
			}
		}
	}
	xs, ys := make([][]float64, len(ex)), make([]float64, len(ex))
	for i, e := range ex {
		ev := e.ev[sp]
		ev.Need = logit[e.input]
		xs[i], ys[i] = ev.Features(), e.label
	}
	return retrieve.Calibration{Relevance: logistic(xs, ys, 1e-3), Need: needModel(ins, sp)}
}

// needModel fits the need model of space sp on the inputs ins.
func needModel(ins []int, sp string) []float64 {
	xs, ys := make([][]float64, len(ins)), make([]float64, len(ins))
	for k, i := range ins {
		v := inputs[i].vec[sp]
		x := make([]float64, len(v)+1)
		x[0] = 1
		for j, f := range v {
			x[j+1] = float64(f)
		}
		xs[k] = x
		if inputs[i].needs {
			ys[k] = 1
		}
	}
	return logistic(xs, ys, needL2)
}

// withNeed returns ex with the need log-odds of c's need model.
func withNeed(ex []example, sp string, c retrieve.Calibration) []example {
	out := make([]example, len(ex))
	for i, e := range ex {
		ev := maps.Clone(e.ev)
		x := ev[sp]
		x.Need = c.NeedLogit(inputs[e.input].vec[sp])
		ev[sp] = x
		out[i] = e
		out[i].ev = ev
	}
	return out
}

// logistic fits a logistic model of ys (0 to 1) on xs by Newton's method
// on the log loss, with an L2 penalty of l2 per example (the bias, the
// first feature, too), its coefficients rounded to 4 decimals.
func logistic(xs [][]float64, ys []float64, l2 float64) []float64 {
	const rounds = 15
	dim := len(xs[0])
	w := make([]float64, dim)
	for range rounds {
		g := make([]float64, dim)
		h := make([][]float64, dim)
		for i := range h {
			h[i] = make([]float64, dim)
		}
		for k, x := range xs {
			z := 0.0
			for i := range x {
				z += w[i] * x[i]
			}
			p := 1 / (1 + math.Exp(-z))
			for i, xi := range x {
				g[i] += (p - ys[k]) * xi
				if xi == 0 {
					continue
				}
				a := p * (1 - p) * xi
				row := h[i]
				for j := i; j < dim; j++ {
					row[j] += a * x[j]
				}
			}
		}
		for i := range dim {
			for j := 0; j < i; j++ {
				h[i][j] = h[j][i]
			}
			g[i] += l2 * float64(len(xs)) * w[i]
			h[i][i] += l2 * float64(len(xs))
		}
		step := solve(h, g)
		for i := range w {
			w[i] -= step[i]
		}
	}
	for i := range w {
		w[i] = round(w[i])
	}
	return w
}

func round(x float64) float64 { return math.Round(x*1e4) / 1e4 }

// solve solves h·x = g by Gaussian elimination with partial pivoting.
func solve(h [][]float64, g []float64) []float64 {
	n := len(g)
	for c := range n {
		p := c
		for r := c + 1; r < n; r++ {
			if math.Abs(h[r][c]) > math.Abs(h[p][c]) {
				p = r
			}
		}
		h[c], h[p] = h[p], h[c]
		g[c], g[p] = g[p], g[c]
		if h[c][c] == 0 {
			continue
		}
		for r := c + 1; r < n; r++ {
			f := h[r][c] / h[c][c]
			for k := c; k < n; k++ {
				h[r][k] -= f * h[c][k]
			}
			g[r] -= f * g[c]
		}
	}
	x := make([]float64, n)
	for r := n - 1; r >= 0; r-- {
		if h[r][r] == 0 {
			continue
		}
		s := g[r]
		for k := r + 1; k < n; k++ {
			s -= h[r][k] * x[k]
		}
		x[r] = s / h[r][r]
	}
	return x
}

// report writes how the coefficients c of space sp hold on the held-out
// pairs: the log loss against the base rate's, the mean relevance by
// label, and, for thresholds, what the context would draw (the memories
// of at least that relevance, at most five per input).
func report(w io.Writer, sp string, cal retrieve.Calibration, ex []example) {
	c := cal.Relevance
	name := sp
	if name == "" {
		name = "(no vectors)"
	}
	var loss, base, rate float64
	sum, n := map[float64]float64{}, map[float64]int{}
	for _, e := range ex {
		rate += e.label
	}
	rate /= float64(len(ex))
	for _, e := range ex {
		p := c.Relevance(e.ev[sp])
		loss += logLoss(p, e.label)
		base += logLoss(rate, e.label)
		sum[e.label] += p
		n[e.label]++
	}
	if len(cal.Need) > 0 {
		var right, all, needs int
		seen := map[int]bool{}
		for _, e := range ex {
			if seen[e.input] {
				continue
			}
			seen[e.input] = true
			all++
			in := inputs[e.input]
			if in.needs {
				needs++
			}
			if (e.ev[sp].Need > 0) == in.needs {
				right++
			}
		}
		fmt.Fprintf(w, "  %-28s need: %d/%d inputs right (%.2f; %d need memory)\n", name, right, all, float64(right)/float64(all), needs)
	}
	fmt.Fprintf(w, "  %-28s log loss %.3f (base rate %.3f); mean relevance: relevant %.2f, partly %.2f, not %.2f  %+v\n", name,
		loss/float64(len(ex)), base/float64(len(ex)), sum[1]/float64(max(n[1], 1)), sum[0.5]/float64(max(n[0.5], 1)), sum[0]/float64(max(n[0], 1)), c)
	byInput := map[int][]example{}
	for _, e := range ex {
		byInput[e.input] = append(byInput[e.input], e)
	}
	for _, t := range []float64{0, 0.1, 0.15, 0.2, 0.3} {
		var unrelated, quiet, needed, found, drawn, useful int
		for _, es := range byInput {
			slices.SortFunc(es, func(a, b example) int { return -cmpF(c.Relevance(a.ev[sp]), c.Relevance(b.ev[sp])) })
			var got []example
			for _, e := range es[:min(5, len(es))] {
				if c.Relevance(e.ev[sp]) >= t {
					got = append(got, e)
				}
			}
			if es[0].unrelate {
				unrelated++
				if len(got) == 0 {
					quiet++
				}
				continue
			}
			for _, e := range es {
				if e.label == 1 {
					needed++
				}
			}
			for _, e := range got {
				drawn++
				if e.label == 1 {
					found++
				}
				if e.label > 0 {
					useful++
				}
			}
		}
		fmt.Fprintf(w, "    ≥ %.2f: unrelated inputs drawing none %d/%d; needed memories drawn %d/%d (%.2f); drawn that help %d/%d (%.2f)\n",
			t, quiet, unrelated, found, needed, float64(found)/float64(max(needed, 1)), useful, drawn, float64(useful)/float64(max(drawn, 1)))
	}
}

func cmpF(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func logLoss(p, y float64) float64 {
	p = min(max(p, 1e-9), 1-1e-9)
	return -(y*math.Log(p) + (1-y)*math.Log(1-p))
}

// source returns calibrations.go for the calibrations.
func source(cal map[string]retrieve.Calibration, names []string) ([]byte, error) {
	var b strings.Builder
	b.WriteString("// Code generated by go run ./retrieve/calibrate; DO NOT EDIT.\n\npackage retrieve\n\n")
	b.WriteString("// Calibrations estimate relevance (see Calibration) by vector space,\n")
	b.WriteString("// learned by retrieve/calibrate from its corpus: the built-in model's,\n")
	b.WriteString("// its static table's, and \"\" for results without a vector in a\n")
	b.WriteString("// space calibrated here (full-text's evidence alone).\n")
	b.WriteString("var Calibrations = map[string]Calibration{\n")
	list := func(xs []float64) {
		b.WriteString("{")
		for i, x := range xs {
			if i > 0 {
				b.WriteString(", ")
			}
			if i%8 == 0 && len(xs) > 8 {
				b.WriteString("\n")
			}
			fmt.Fprint(&b, x)
		}
		b.WriteString("}")
	}
	for _, sp := range names {
		c := cal[sp]
		fmt.Fprintf(&b, "\t%q: {\nRelevance: Coefficients", sp)
		list(c.Relevance)
		if len(c.Need) > 0 {
			b.WriteString(",\nNeed: []float64")
			list(c.Need)
		}
		b.WriteString(",\n},\n")
	}
	b.WriteString("}\n")
	return format.Source([]byte(b.String()))
}
