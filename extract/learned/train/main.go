// Command train trains the classifiers of package learned on its labelled
// corpus (extract/learned/corpus/*.jsonl) over the built-in model's
// embeddings, reports their accuracy on a held-out file (trained on the
// others), and writes the model trained on every file:
//
//	go run ./extract/learned/train            # writes extract/learned/model.json
//	go run ./extract/learned/train -check     # fails if model.json is not what the corpus gives (no report)
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/extract"
	"github.com/agentmem/agentmem/extract/learned"
	"github.com/agentmem/agentmem/llm/minilm"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "train:", err)
		os.Exit(1)
	}
}

// Training settings.
var (
	epochs = 300
	l2     = 1e-4
)

func run(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("train", flag.ContinueOnError)
	dir := fs.String("dir", "extract/learned", "the package directory: corpus/*.jsonl in, model.json out")
	holdout := fs.String("holdout", "each", `the corpus file held out for the accuracy report ("each": each in turn)`)
	fs.Float64Var(&l2, "l2", l2, "the L2 penalty")
	fs.IntVar(&epochs, "epochs", epochs, "the epochs of training")
	check := fs.Bool("check", false, "compare with the committed model.json instead of writing it")
	if err := fs.Parse(args); err != nil {
		return err
	}
	files, err := filepath.Glob(filepath.Join(*dir, "corpus", "*.jsonl"))
	if err != nil || len(files) == 0 {
		return fmt.Errorf("no corpus files in %s/corpus", *dir)
	}
	slices.Sort(files)
	var train, test, all []set
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		lines, err := learned.ParseLines(filepath.Base(f), b)
		if err != nil {
			return err
		}
		s, err := build(ctx, lines)
		if err != nil {
			return err
		}
		all = append(all, s)
		if filepath.Base(f) == *holdout {
			test = append(test, s)
		} else {
			train = append(train, s)
		}
	}
	if *check {
		// The committed model only.
	} else if *holdout == "each" {
		// Each file held out in turn, trained on the others: the
		// classifiers' accuracy on messages of writers they did not learn
		// from, pooled.
		var pooled []set
		var models []*learned.Model
		for i := range all {
			models = append(models, fit(merge(slices.Concat(all[:i], all[i+1:]))))
			pooled = append(pooled, all[i])
		}
		reportEach(stdout, fmt.Sprintf("each of the %d files held out in turn, trained on the others", len(all)), models, pooled)
	} else if len(test) > 0 && len(train) > 0 {
		m := fit(merge(train))
		report(stdout, fmt.Sprintf("held out %s, trained on the other %d files", *holdout, len(train)), m, merge(test))
	}
	m := fit(merge(all))
	report(stdout, "trained on every file (the committed model), on itself", m, merge(all))
	out, err := encode(m)
	if err != nil {
		return err
	}
	path := filepath.Join(*dir, "model.json")
	if *check {
		old, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		committed, err := learned.Parse(old)
		if err != nil {
			return err
		}
		if d := maxDiff(committed, m); d > 1e-3 {
			return fmt.Errorf("%s differs from what the corpus trains (largest weight difference %.4g): run go run ./extract/learned/train", path, d)
		}
		fmt.Fprintf(stdout, "%s is what the corpus trains\n", path)
		return nil
	}
	return os.WriteFile(path, out, 0o644)
}

// set is the examples of each head from some corpus lines.
type set struct{ fact, keep, slot, change []learned.Example }

func merge(sets []set) set {
	var m set
	for _, s := range sets {
		m.fact = append(m.fact, s.fact...)
		m.keep = append(m.keep, s.keep...)
		m.slot = append(m.slot, s.slot...)
		m.change = append(m.change, s.change...)
	}
	return m
}

// build embeds the lines' examples: each message for the fact head; each
// message of one slot (or none) and each labelled memory for the slot
// head; and for the keep head, the memories the rules propose from each
// message (extract.Heuristic), kept when they share a distinctive word
// with a labelled memory of the message, not kept otherwise.
func build(ctx context.Context, lines []learned.Line) (set, error) {
	type text struct {
		s     string
		head  int // 0 fact, 1 keep, 2 slot, 3 change
		class int
	}
	var texts []text
	for i, l := range lines {
		fact := 0
		if len(l.Facts) > 0 {
			fact = 1
		}
		said := extract.Statements(l.Text) // as the extractor reads a message
		if said != "" {
			texts = append(texts, text{said, 0, fact})
			if fact == 1 {
				texts = append(texts, text{said, 3, l.Change()})
			}
		}
		slots := map[string]bool{}
		for _, f := range l.Facts {
			slots[f.Slot] = true
			texts = append(texts, text{f.Memory, 2, learned.SlotIndex(f.Slot)})
		}
		switch {
		case said == "":
		case len(slots) == 0:
			texts = append(texts, text{said, 2, 0})
		case len(slots) == 1:
			for s := range slots {
				texts = append(texts, text{said, 2, learned.SlotIndex(s)})
			}
		}
		msg := &agentmem.Message{Role: agentmem.RoleUser, Content: l.Text, Seq: int64(i + 1)}
		for _, c := range extract.Heuristic([]*agentmem.Message{msg}) {
			if c.Retract || c.Corrects != "" {
				continue
			}
			keep := 0
			for _, f := range l.Facts {
				if shareWord(c.Text, f.Memory) {
					keep = 1
				}
			}
			texts = append(texts, text{c.Text, 1, keep})
		}
	}
	strs := make([]string, len(texts))
	for i, t := range texts {
		strs[i] = t.s
	}
	vecs, err := embedder.Embed(ctx, strs)
	if err != nil {
		return set{}, err
	}
	var s set
	for i, t := range texts {
		e := learned.Example{X: learned.Input(vecs[i], t.s), Class: t.class, Weight: 1}
		switch t.head {
		case 0:
			s.fact = append(s.fact, e)
		case 1:
			s.keep = append(s.keep, e)
		case 3:
			s.change = append(s.change, e)
		default:
			s.slot = append(s.slot, e)
		}
	}
	return s, nil
}

// shareWord reports whether a proposed memory and a labelled one share a
// distinctive word (four letters or more, not "user" nor a common word).
func shareWord(a, b string) bool {
	words := func(s string) map[string]bool {
		m := map[string]bool{}
		for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127)
		}) {
			if len(w) >= 4 && !common[w] || len(w) >= 2 && w[0] >= '0' && w[0] <= '9' {
				m[strings.TrimSuffix(w, "s")] = true
			}
		}
		return m
	}
	wb := words(b)
	for w := range words(a) {
		if wb[w] {
			return true
		}
	}
	return false
}

var common = map[string]bool{}

func init() {
	for _, w := range strings.Fields("user user's users with that this have has been from they them their there what when where which will would about just really very some into over also still than then were your after before could should being doing going make made like want need time week weeks year years month months today now back good well much more most only other") {
		common[w] = true
	}
}

// weighted gives each example its class's balanced weight.
func weighted(ex []learned.Example, k int) []learned.Example {
	classes := make([]int, len(ex))
	for i, e := range ex {
		classes[i] = e.Class
	}
	w := learned.Balanced(classes, k)
	out := make([]learned.Example, len(ex))
	for i, e := range ex {
		e.Weight = w[e.Class]
		out[i] = e
	}
	return out
}

func fit(s set) *learned.Model {
	return &learned.Model{
		Space: learned.Space,
		Slots: learned.Slots,
		Fact:  learned.Fit(weighted(s.fact, 2), 2, epochs, l2),
		Keep:  learned.Fit(weighted(s.keep, 2), 2, epochs, l2),
		Slot:  learned.Fit(s.slot, len(learned.Slots), epochs, l2),
		// Ends and corrections are rarer than first statements, and what
		// they are for: balanced.
		Change: learned.Fit(weighted(s.change, len(learned.Changes)), len(learned.Changes), epochs, l2),
	}
}

// report prints each head's accuracy on s; for the binary heads also
// precision and recall of class 1 at 0.5.
func report(w io.Writer, title string, m *learned.Model, s set) {
	reportEach(w, title, []*learned.Model{m}, []set{s})
}

// reportEach prints each head's accuracy, models[i] scored on sets[i].
func reportEach(w io.Writer, title string, models []*learned.Model, sets []set) {
	fmt.Fprintf(w, "%s:\n", title)
	type scored struct {
		h *learned.Head
		e learned.Example
	}
	pick := func(head func(*learned.Model) *learned.Head, ex func(set) []learned.Example) []scored {
		var out []scored
		for i, m := range models {
			for _, e := range ex(sets[i]) {
				out = append(out, scored{head(m), e})
			}
		}
		return out
	}
	binary := func(name string, ex []scored) {
		var tp, fp, fn, ok int
		for _, se := range ex {
			e := se.e
			p := se.h.Probs(e.X)[1] >= 0.5
			switch {
			case p && e.Class == 1:
				tp++
			case p:
				fp++
			case e.Class == 1:
				fn++
			}
			if p == (e.Class == 1) {
				ok++
			}
		}
		fmt.Fprintf(w, "  %-6s %4d examples: accuracy %.3f, precision %.3f, recall %.3f\n", name, len(ex),
			ratio(ok, len(ex)), ratio(tp, tp+fp), ratio(tp, tp+fn))
	}
	binary("fact", pick(func(m *learned.Model) *learned.Head { return &m.Fact }, func(s set) []learned.Example { return s.fact }))
	binary("keep", pick(func(m *learned.Model) *learned.Head { return &m.Keep }, func(s set) []learned.Example { return s.keep }))
	slot := pick(func(m *learned.Model) *learned.Head { return &m.Slot }, func(s set) []learned.Example { return s.slot })
	multi := func(name string, ex []scored, classes []string) {
		var ok int
		tp, fp, fn := make([]int, len(classes)), make([]int, len(classes)), make([]int, len(classes))
		for _, se := range ex {
			p := se.h.Probs(se.e.X)
			got := slices.Index(p, slices.Max(p))
			if got == se.e.Class {
				ok++
				tp[got]++
			} else {
				fp[got]++
				fn[se.e.Class]++
			}
		}
		fmt.Fprintf(w, "  %-6s %4d examples: accuracy %.3f (%d classes)", name, len(ex), ratio(ok, len(ex)), len(classes))
		if len(classes) <= 4 {
			for c, n := range classes {
				fmt.Fprintf(w, "; %s precision %.2f recall %.2f", n, ratio(tp[c], tp[c]+fp[c]), ratio(tp[c], tp[c]+fn[c]))
			}
		}
		fmt.Fprintln(w)
	}
	multi("slot", slot, learned.Slots)
	multi("change", pick(func(m *learned.Model) *learned.Head { return &m.Change }, func(s set) []learned.Example { return s.change }), learned.Changes)
}

func ratio(a, b int) float64 {
	if b == 0 {
		return math.NaN()
	}
	return float64(a) / float64(b)
}

func encode(m *learned.Model) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	if err := enc.Encode(m); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func maxDiff(a, b *learned.Model) float64 {
	var d float64
	heads := [][2]*learned.Head{{&a.Fact, &b.Fact}, {&a.Keep, &b.Keep}, {&a.Slot, &b.Slot}, {&a.Change, &b.Change}}
	for _, h := range heads {
		if len(h[0].W) != len(h[1].W) {
			return math.Inf(1)
		}
		for k := range h[0].W {
			if len(h[0].W[k]) != len(h[1].W[k]) {
				return math.Inf(1)
			}
			for i := range h[0].W[k] {
				d = math.Max(d, math.Abs(float64(h[0].W[k][i]-h[1].W[k][i])))
			}
			d = math.Max(d, math.Abs(float64(h[0].B[k]-h[1].B[k])))
		}
	}
	return d
}

// embedder embeds the corpus: the built-in model's static table
// (learned.Space).
var embedder = minilm.NewStatic()
