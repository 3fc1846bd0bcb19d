// Package prompt holds what the model calls of the memory pipeline
// (extraction, consolidation, chunk descriptions, entities, reflection,
// profiles) share: the turns as a prompt shows them, and the checks of a
// model's answer, which is validated as user input: one JSON object, or a
// malformed answer (an EUNAVAILABLE error, so that the job is retried).
package prompt

import (
	"encoding/json"
	"errors"
	"io"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/agentmem/agentmem"
)

// Bounds of what a prompt holds.
const (
	// MaxTurnChars bounds a turn; a longer turn is cut: facts about the
	// user are rarely deep in one.
	MaxTurnChars = 4000
	// DefaultMaxChars bounds the turns of one model call (about 6,000
	// tokens) unless configured otherwise.
	DefaultMaxChars = 24000
)

// Turn is a message as a prompt shows it.
type Turn struct {
	Seq     int64
	Role    string
	Name    string
	Content string
}

// Cut shortens s to at most n bytes, at a rune boundary, marking the cut.
func Cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + " …"
}

// Truncate cuts s to at most n bytes, at a character boundary, without a
// mark.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// Malformed is the error of an answer that is not what the prompt asked
// for: EUNAVAILABLE, as the model is not usable for now, and the job is
// retried.
func Malformed(format string, args ...any) error {
	return agentmem.Errorf(agentmem.EUNAVAILABLE, "The extraction model's answer is malformed: "+format+".", args...)
}

// DecodeJSON decodes content, one JSON object and nothing after it
// (inside a Markdown code fence, which models without a JSON mode add),
// into v: a field of the wrong type is malformed, as is trailing data.
func DecodeJSON(content string, v any) error {
	s := strings.TrimSpace(content)
	if rest, ok := strings.CutPrefix(s, "```"); ok {
		if nl := strings.IndexByte(rest, '\n'); nl >= 0 {
			rest = rest[nl+1:] // past ```json
		}
		s = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "```"))
	}
	if !strings.HasPrefix(s, "{") {
		return Malformed("not a JSON object")
	}
	dec := json.NewDecoder(strings.NewReader(s))
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return Malformed("%s is not a %s", te.Field, te.Type)
		}
		return Malformed("invalid JSON")
	}
	if _, err := dec.Token(); err != io.EOF {
		return Malformed("data after the JSON object")
	}
	return nil
}

// Clamp bounds a model's score to [0, 1] (NaN is 0).
func Clamp(v float64) float64 {
	if math.IsNaN(v) {
		return 0
	}
	return math.Min(1, math.Max(0, v))
}
