// The extractor that needs no model, in stages, a file each. Heuristic
// (below) runs them in this order over each of the user's messages; each
// stage's entry calls the next.
//
//	stage       file           entry              takes → gives
//	1 segment   segment.go     segment, words     a message → its sentences (quotations dropped, a
//	                                              question's premise kept); a sentence → its words
//	2 sentence  sentence.go    extractSentence    a sentence → its kind (question, request,
//	                                              hypothetical, correction, form…) and its words
//	3 clause    clause.go      extractClauses     words → clauses, cut at conjunctions and at
//	                                              commas before a new subject
//	4 subject   subject.go     extractClause      a clause → who it is about (the user, "we", "my
//	                                              son Theo", "he"/"she" of the clause before) and
//	                                              its predicate
//	            pronoun.go     discourse          "she", "his", "they" that start a sentence → the
//	                                              one person or pet of the user's named before, in
//	                                              the message or the user's previous turn
//	            addressed.go   addressedNames     the assistant's "Enjoy the trip, Sophie!" → the
//	                                              name the user is called by
//	            fragment.go    withSubject        chat without "I" ("broke my wrist skiing",
//	                                              "divorced, two kids") → the user's clause
//	5 said      said.go        extractPredicate,  a predicate → a statement per verb phrase and
//	                           interpret          coordinated object: verb, polarity, tense,
//	                                              an ending; small talk, requests, quotes dropped
//	6 slot      slot.go        classify           a statement → its category, slot and object, and
//	                                              whether it ends a fact
//	            slot_other.go  classifyOther      … said of others ("my sister Ana", "my dog Rex")
//	            slot_values.go phrase, objectOf…  the values a slot or an object takes
//	7 normalise normalise.go   memoryText,        → "User's sister Ana lives in Porto.": third
//	                           spelledOut, dedupe person; names, places, dates and quantities
//	                                              kept; repeats dropped
//	            lexicon.go                        the words every stage shares
//
// HeuristicExtractor then weighs the candidates with the classifiers
// learned from a labelled corpus (weigh.go, extract/learned), which also
// tell a figure that updates an older one and the end of something said
// before (quantity.go); the index job consolidates each candidate against
// the memories stored (consolidate.go).

package extract

import (
	"context"
	"slices"

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
// It needs no model: in the stages listed at the top of this file, each
// message is split into sentences and clauses (coordination, relative and
// subordinate clauses), each clause whose subject is the user ("I", "we",
// "my sister Ana") is checked against what is not a memory (questions,
// hypotheticals, requests, quotes, small talk) and rewritten in the third
// person ("User's sister Ana lives in Porto."), keeping its names, places,
// dates and quantities. Slot, Object, Negated and Retract say how the fact
// relates to earlier ones.
func Heuristic(msgs []*agentmem.Message) []Candidate {
	var out []Candidate
	var d discourse // who "she" at a sentence's start stands for (4)
	for _, m := range msgs {
		if m != nil && m.Role == agentmem.RoleAssistant {
			d.assistant(m.Content) // not the user's facts, but it may name someone
		}
		if m == nil || m.Role != agentmem.RoleUser {
			continue // the assistant's words are not the user's facts
		}
		d.user()
		start := len(out)
		segment(m.Content, func(raw, s string, named bool) { // 1
			if s, named = d.sentence(raw, s, named); s != "" { // 4, across sentences
				out = extractSentence(out, s, named) // 2 to 6, worded by 7
			}
		})
		for i := start; i < len(out); i++ {
			out[i].SeqFrom, out[i].SeqTo = m.Seq, m.Seq
			out[i].Text = spelledOut(out[i].Text) // 7
		}
	}
	out = append(out, addressedNames(msgs)...) // 4: the name the assistant calls the user by
	// 7: no statement cut short ("User's mother lives."), nor twice.
	return dedupe(slices.DeleteFunc(out, func(c Candidate) bool { return !c.Retract && c.Corrects == "" && unfinished(c.Text) }))
}
