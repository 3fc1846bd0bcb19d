// Package extract turns conversation turns into long-term memories and
// keeps them consistent: extraction proposes candidate memories (a model's
// JSON, or without a model the first-person statements found by
// Heuristic), and a Consolidator decides for each whether it is new (ADD),
// refines a memory (UPDATE), contradicts one (INVALIDATE the old, ADD the
// new) or repeats one (NOOP). The index job (package index) runs both on
// new messages.
package extract

import "time"

// Candidate is a proposed memory.
type Candidate struct {
	Text       string  `json:"text"`
	Category   string  `json:"category"`
	Confidence float64 `json:"confidence"`
	Importance float64 `json:"importance"`
	// Slot names a single-valued attribute of the user ("residence",
	// "employer", "job", "diet", "age", "name-of:wife"): a new value
	// replaces the old. "" when facts of the kind accumulate
	// (relationships, languages, allergies, likes, plans); Object then
	// identifies the fact.
	Slot string `json:"slot,omitempty"`
	// Negated statements ("I don't like X") contradict their positive
	// twin.
	Negated bool `json:"negated,omitempty"`
	// Retract statements end a fact without a replacement ("I'm not
	// vegetarian anymore", "I quit my job", "I left Google"): Slot or
	// Object say which; consolidation invalidates the matching memory and
	// stores no new one.
	Retract bool `json:"retract,omitempty"`
	// Object is the normalised, lower-case identity of what the fact is
	// about ("daughter mia", "peanuts", "portuguese").
	Object string `json:"object,omitempty"`
	// Corrects is the value a correction takes back ("sorry, I meant
	// Braga, not Porto": "Porto"); Object is then the value meant
	// ("braga"). A correction stores no memory of its own: consolidation
	// rewrites the newest valid memory that names the old value with the
	// new one, and the rewrite supersedes it.
	Corrects string `json:"corrects,omitempty"`
	// Kind is the slot of the user's life the learned classifier files the
	// fact under ("medication", "count", "residence": learned.Slots), ""
	// when it was not asked or not sure: a figure of a kind that updates
	// replaces the older figure of the same thing (see quantity.go).
	Kind string `json:"kind,omitempty"`
	// Ends, said of a statement the learned classifier takes for the end
	// of something said before ("we lost Bruno in May", "kayla and i
	// split", "off the statins now"): consolidation invalidates the valid
	// memories of its kind that name what it names, superseded by it (see
	// endedBy). Unlike Retract, the statement is stored: the end is a fact
	// of the user's life too.
	Ends bool `json:"ends,omitempty"`
	// Provenance.
	SeqFrom int64 `json:"seq_from"`
	SeqTo   int64 `json:"seq_to"`
	// At is when it was said (its newest turn's time; zero when unknown):
	// the memory holds from then (Memory.ValidFrom), not from when it was
	// extracted, so that an imported history's facts hold from when they
	// were told.
	At time.Time `json:"at,omitzero"`
}
