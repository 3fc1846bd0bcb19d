package extract

import (
	"context"

	"github.com/agentmem/agentmem"
)

// HeuristicExtractor is the Extractor that needs no model: Heuristic's
// clear first-person statements, weighed by the classifiers learned from
// the labelled corpus when Learned is set.
type HeuristicExtractor struct {
	Learned *Learned
}

// Extract implements Extractor.
func (x HeuristicExtractor) Extract(ctx context.Context, _ *agentmem.Thread, msgs []*agentmem.Message) ([]Candidate, error) {
	cands := Heuristic(msgs)
	if x.Learned == nil || x.Learned.Model == nil || x.Learned.Embed == nil {
		return cands, nil
	}
	return x.Learned.weigh(ctx, msgs, cands)
}

// Heuristic extracts the first-person statements of the user's messages
// about themselves and the people, pets, places and things in their life.
// It needs no model: each message is split into sentences and clauses
// (coordination, relative and subordinate clauses), each clause whose
// subject is the user ("I", "we", "my sister Ana") is checked against
// what is not a memory (questions, hypotheticals, requests, quotes, small
// talk) and rewritten in the third person ("User's sister Ana lives in
// Porto."), keeping its names, places, dates and quantities. Slot, Object,
// Negated and Retract say how the fact relates to earlier ones.
func Heuristic(msgs []*agentmem.Message) []Candidate {
	var out []Candidate
	for _, m := range msgs {
		if m == nil || m.Role != agentmem.RoleUser {
			continue
		}
		start := len(out)
		segment(m.Content, func(s string, named bool) {
			out = extractSentence(out, s, named)
		})
		for i := start; i < len(out); i++ {
			out[i].SeqFrom, out[i].SeqTo = m.Seq, m.Seq
			out[i].Text = spelledOut(out[i].Text)
		}
	}
	return dedupe(out)
}
