// Package learned holds the classifiers that the memory pipeline learns,
// without a model at run time, from a labelled corpus of chat messages
// (corpus/*.jsonl): over the built-in model's sentence embeddings
// (llm/minilm), whether a message states a durable fact about the user's
// life, whether a memory proposed by the rules is one, and which slot of
// the user's life (residence, job, medication, …) a text is about.
//
// The weights (model.json) are trained by `go run ./extract/learned/train`,
// reproducibly: the same corpus and embedder give the same weights.
package learned

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"sync"
)

// Space is the vector space the classifiers read: the built-in model's
// static table (minilm.Static), which embeds a text in microseconds, so
// that weighing every message and every proposal costs the index job
// next to nothing.
const Space = "minilm-l6-v2-static-v1/256"

// Slots are the slots of a user's life a fact is filed under, as the
// corpus labels them; None is a text that states no fact.
var Slots = []string{"none", "residence", "job", "education", "partner", "family", "pet", "medication", "health",
	"diet", "allergy", "age", "body", "hobby", "preference", "possession", "finance", "count", "project",
	"language", "origin", "name", "plan", "event"}

// None is the slot of a text that states no fact.
const None = "none"

// Changes are how a message's facts relate to what was said before, as
// the corpus labels them: a first statement, a new value of something
// ("moved", "new dose"), its end ("quit", "died", "broke up", "stopped
// taking", "outgrew"), or a correction.
var Changes = []string{"new", "update", "end", "correction"}

// Singular reports whether a slot holds one value at a time, so that a
// newer statement of it replaces the older (where one lives, works,
// studies; one's partner, diet, age, weight, origin and name); the other
// slots accumulate facts (pets, medications, hobbies).
func Singular(slot string) bool { return singular[slot] }

var singular = map[string]bool{"residence": true, "job": true, "education": true, "partner": true, "diet": true,
	"age": true, "body": true, "origin": true, "name": true}

// Head is a linear classifier with a softmax: W[k]·x + B[k] for class k.
type Head struct {
	W [][]float32 `json:"w"`
	B []float32   `json:"b"`
}

// Probs returns the class probabilities of x.
func (h *Head) Probs(x []float32) []float64 {
	p := make([]float64, len(h.W))
	for k, w := range h.W {
		s := float64(h.B[k])
		for i, v := range w {
			if i < len(x) {
				s += float64(v) * float64(x[i])
			}
		}
		p[k] = s
	}
	softmax(p)
	return p
}

// softmax turns scores into probabilities, in place.
func softmax(p []float64) {
	max := math.Inf(-1)
	for _, s := range p {
		max = math.Max(max, s)
	}
	var sum float64
	for k := range p {
		p[k] = math.Exp(p[k] - max)
		sum += p[k]
	}
	for k := range p {
		p[k] /= sum
	}
}

// Model is the trained classifiers.
type Model struct {
	Space string   `json:"space"`
	Slots []string `json:"slots"`
	// Fact: a user's message states a durable fact about their life
	// (class 1) or not (class 0).
	Fact Head `json:"fact"`
	// Keep: a memory the rules proposed ("User is swelling a bit.") is a
	// durable fact (class 1) or not (class 0).
	Keep Head `json:"keep"`
	// Slot: the slot a message or memory is about (classes as Slots).
	Slot Head `json:"slot"`
	// Change: how a message that states facts relates to what was said
	// before (classes as Changes).
	Change Head `json:"change"`
}

// ChangeOf returns how a message that states facts most probably relates
// to what was said before (one of Changes), and the probability; x is its
// Input.
func (m *Model) ChangeOf(x []float32) (string, float64) {
	p := m.Change.Probs(x)
	best := 0
	for k := range p {
		if p[k] > p[best] {
			best = k
		}
	}
	return Changes[best], p[best]
}

// FactP is the probability that a user's message states a durable fact;
// x is its Input.
func (m *Model) FactP(x []float32) float64 { return m.Fact.Probs(x)[1] }

// KeepP is the probability that a proposed memory is a durable fact; x
// is its Input.
func (m *Model) KeepP(x []float32) float64 { return m.Keep.Probs(x)[1] }

// SlotOf returns the most probable slot of a text that states a fact,
// and its probability given that it states one (None's left out); x is
// its Input.
func (m *Model) SlotOf(x []float32) (string, float64) {
	p := m.Slot.Probs(x)
	best, rest := -1, 1.0
	for k := range p {
		if m.Slots[k] == None {
			rest -= p[k]
			continue
		}
		if best < 0 || p[k] > p[best] {
			best = k
		}
	}
	if best < 0 || rest <= 0 {
		return None, 0
	}
	return m.Slots[best], p[best] / rest
}

//go:embed model.json
var modelJSON []byte

var (
	loadOnce sync.Once
	loaded   *Model
	loadErr  error
)

// Default returns the committed model (model.json).
func Default() (*Model, error) {
	loadOnce.Do(func() { loaded, loadErr = Parse(modelJSON) })
	return loaded, loadErr
}

// Parse reads a model and checks its shape.
func Parse(b []byte) (*Model, error) {
	var m Model
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("learned model: %w", err)
	}
	for name, h := range map[string]*Head{"fact": &m.Fact, "keep": &m.Keep, "slot": &m.Slot, "change": &m.Change} {
		if len(h.W) == 0 || len(h.W) != len(h.B) {
			return nil, fmt.Errorf("learned model: head %s has %d rows and %d biases", name, len(h.W), len(h.B))
		}
	}
	if len(m.Slot.W) != len(m.Slots) {
		return nil, fmt.Errorf("learned model: %d slots but %d slot classes", len(m.Slots), len(m.Slot.W))
	}
	if len(m.Change.W) != len(Changes) {
		return nil, fmt.Errorf("learned model: %d change classes, want %d", len(m.Change.W), len(Changes))
	}
	return &m, nil
}

// Input is what the heads read of a text: its embedding, then a few
// features of its words that an embedding of the topic blurs (whether
// the user speaks of themselves, asks, supposes, names a figure).
func Input(vec []float32, text string) []float32 {
	x := make([]float32, 0, len(vec)+len(featureWords)+2)
	x = append(x, vec...)
	words := map[string]bool{}
	n := 0
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '\'' || r == '’' || r > 127)
	}) {
		words[strings.ReplaceAll(w, "’", "'")] = true
		n++
	}
	for _, set := range featureWords {
		var f float32
		for _, w := range set {
			if words[w] {
				f = 0.5
				break
			}
		}
		x = append(x, f)
	}
	var digit float32
	if strings.ContainsAny(text, "0123456789") {
		digit = 0.5
	}
	return append(x, digit, float32(math.Log1p(float64(n)))/8)
}

// featureWords are the word sets of Input's features, one each.
var featureWords = [][]string{
	{"i", "i'm", "im", "me", "my", "mine", "myself", "i've", "ive", "i'd", "i'll", "ill"},
	{"we", "we're", "were", "our", "us", "ours", "we've"},
	{"you", "your", "you're", "youre", "u", "ur"},
	{"he", "she", "his", "her", "him", "he's", "she's", "they", "their", "them"},
	{"if", "would", "could", "might", "maybe", "thinking", "considering", "wonder", "imagine", "suppose"},
	{"not", "no", "never", "don't", "dont", "didn't", "isn't", "anymore", "longer", "off", "quit", "stopped"},
	{"now", "since", "new", "finally", "just", "recently", "moved", "started", "switched", "changed"},
	{"lost", "died", "passed", "split", "broke", "quit", "stopped", "left", "outgrew", "ended", "divorced", "sold",
		"gave", "rehomed", "dumped", "dropped", "finished", "retired", "off", "anymore", "ex", "gone", "over"},
	{"up", "down", "doubled", "halved", "increased", "reduced", "upped", "lowered", "raised", "promoted", "from", "went", "now", "at"},
	{"sorry", "meant", "mean", "actually", "correction", "typo", "wrong", "not"},
	{"please", "can", "write", "make", "give", "help", "tell", "explain", "show", "suggest"},
	{"thanks", "thank", "ok", "okay", "lol", "haha", "cool", "nice", "great", "sure", "yes", "yeah", "k"},
	{"colleague", "coworker", "friend", "neighbour", "neighbor", "boss", "client", "someone", "guy", "woman", "man"},
}
