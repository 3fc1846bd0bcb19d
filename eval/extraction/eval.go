package extraction

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/extract"
)

// Extractor turns messages into candidate memories, as extract.Heuristic.
type Extractor func(msgs []*agentmem.Message) []extract.Candidate

// Options are what Run evaluates with.
type Options struct {
	Extract Extractor // required
	// Store, Emb and Space make the consolidator of the change cases;
	// each case writes the memories of its own user, named after the
	// case's ID, so the store should be empty and thrown away afterwards.
	Store extract.Store
	Emb   agentmem.Embedder
	Space string
	Name  string // what is evaluated, for the report
}

// Report is the result of Run. Precision is over the memories extracted
// from every statement (distractors included, acceptable ones left out),
// Recall over the expected memories.
type Report struct {
	Extractor   string `json:"extractor"`
	Statements  int    `json:"statements"`  // that expect memories
	Distractors int    `json:"distractors"` // that expect none

	Expected  int     `json:"expected"`  // memories
	Extracted int     `json:"extracted"` // memories, less those that match an acceptable one
	Matched   int     `json:"matched"`
	Precision float64 `json:"precision"`
	Recall    float64 `json:"recall"`
	F1        float64 `json:"f1"`

	Categories []*CategoryReport `json:"categories"`

	// DistractorMemories is the number of memories extracted from
	// distractors (all of them false positives); DistractorsWithMemory
	// the number of distractors that yielded any.
	DistractorMemories    int `json:"distractor_memories"`
	DistractorsWithMemory int `json:"distractors_with_memory"`

	Changes        int     `json:"changes"`
	ChangesCorrect int     `json:"changes_correct"`
	ChangeAccuracy float64 `json:"change_accuracy"`

	StatementResults []*StatementResult `json:"statement_results,omitempty"`
	ChangeResults    []*ChangeResult    `json:"change_results,omitempty"`
}

// CategoryReport gives the figures of one category. An expected memory
// counts in its own category; an extracted memory in the category of the
// expected memory it matches, else in its statement's.
type CategoryReport struct {
	Category  string  `json:"category"`
	Expected  int     `json:"expected"`
	Extracted int     `json:"extracted"`
	Matched   int     `json:"matched"`
	Precision float64 `json:"precision"`
	Recall    float64 `json:"recall"`
	F1        float64 `json:"f1"`
}

// StatementResult is what the extractor made of one statement.
type StatementResult struct {
	ID        string   `json:"id"`
	Category  string   `json:"category"`
	Text      string   `json:"text"`
	Extracted []string `json:"extracted"`
	Matched   []Pair   `json:"matched"`          // indices into the statement's Expected and Extracted
	Missed    []string `json:"missed,omitempty"` // expected memories nothing matched
	Wrong     []string `json:"wrong,omitempty"`  // extracted memories that match nothing expected or acceptable
}

// ChangeResult is how one change case ended.
type ChangeResult struct {
	ID          string   `json:"id"`
	Category    string   `json:"category"`
	Name        string   `json:"name"`
	Correct     bool     `json:"correct"`
	Valid       []string `json:"valid"`                     // the user's valid memories at the end
	Invalidated []string `json:"invalidated"`               // and invalidated ones
	Missing     []string `json:"missing,omitempty"`         // expected valid memories not among the valid
	Extra       []string `json:"extra,omitempty"`           // valid memories not expected
	NotInvalid  []string `json:"not_invalidated,omitempty"` // expected invalidated memories not among the invalidated
	Updated     []string `json:"updated,omitempty"`         // valid memories with a new version where none was allowed
}

// Run evaluates the extractor on the corpus: every statement alone, as
// one user message, then every change case turn by turn through
// consolidation.
func Run(ctx context.Context, c *Corpus, opt Options) (*Report, error) {
	if opt.Extract == nil {
		return nil, fmt.Errorf("extraction: no extractor")
	}
	rep := &Report{Extractor: opt.Name}
	cats := map[string]*CategoryReport{}
	cat := func(name string) *CategoryReport {
		if cats[name] == nil {
			cats[name] = &CategoryReport{Category: name}
		}
		return cats[name]
	}
	for _, s := range c.Statements {
		res := &StatementResult{ID: s.ID, Category: s.Category, Text: s.Text, Extracted: []string{}, Matched: []Pair{}}
		for _, cd := range opt.Extract([]*agentmem.Message{{Role: agentmem.RoleUser, Content: s.Text, Seq: 1}}) {
			// One text is one memory: a retraction told with the event
			// that it ends a fact by ("User quit smoking.") is not two.
			if slices.ContainsFunc(res.Extracted, func(x string) bool { return strings.EqualFold(x, cd.Text) }) {
				continue
			}
			res.Extracted = append(res.Extracted, cd.Text)
		}
		expected := make([]string, len(s.Expected))
		for i, e := range s.Expected {
			expected[i] = e.Text
			cat(e.Category).Expected++
		}
		res.Matched = append(res.Matched, Match(expected, res.Extracted)...)
		matchedE, matchedX := map[int]bool{}, map[int]bool{}
		for _, p := range res.Matched {
			matchedE[p.Expected], matchedX[p.Extracted] = true, true
			cr := cat(s.Expected[p.Expected].Category)
			cr.Matched++
			cr.Extracted++
		}
		for i, e := range expected {
			if !matchedE[i] {
				res.Missed = append(res.Missed, e)
			}
		}
		var rest []string
		for j, x := range res.Extracted {
			if !matchedX[j] {
				rest = append(rest, x)
			}
		}
		acceptable := map[int]bool{}
		for _, p := range Match(s.Acceptable, rest) {
			acceptable[p.Extracted] = true
		}
		for j, x := range rest {
			if !acceptable[j] {
				res.Wrong = append(res.Wrong, x)
				cat(s.Category).Extracted++
			}
		}
		if s.Category == Distractor {
			rep.Distractors++
			rep.DistractorMemories += len(res.Wrong)
			if len(res.Wrong) > 0 {
				rep.DistractorsWithMemory++
			}
		} else {
			rep.Statements++
		}
		rep.Expected += len(expected)
		rep.Matched += len(res.Matched)
		rep.Extracted += len(res.Matched) + len(res.Wrong)
		rep.StatementResults = append(rep.StatementResults, res)
	}
	rep.Precision, rep.Recall, rep.F1 = prf(rep.Matched, rep.Extracted, rep.Expected)
	for _, cr := range cats {
		cr.Precision, cr.Recall, cr.F1 = prf(cr.Matched, cr.Extracted, cr.Expected)
		rep.Categories = append(rep.Categories, cr)
	}
	sort.Slice(rep.Categories, func(a, b int) bool { return categoryLess(rep.Categories[a].Category, rep.Categories[b].Category) })

	if len(c.Changes) > 0 {
		if opt.Store == nil || opt.Emb == nil {
			return nil, fmt.Errorf("extraction: the change cases need a store and an embedder")
		}
		cons := &extract.Consolidator{Store: opt.Store, Emb: opt.Emb, Space: opt.Space}
		for _, ch := range c.Changes {
			res, err := runChange(ctx, cons, opt, ch)
			if err != nil {
				return nil, fmt.Errorf("change %s: %w", ch.ID, err)
			}
			rep.Changes++
			if res.Correct {
				rep.ChangesCorrect++
			}
			rep.ChangeResults = append(rep.ChangeResults, res)
		}
		rep.ChangeAccuracy = float64(rep.ChangesCorrect) / float64(rep.Changes)
	}
	return rep, nil
}

// runChange plays a change case as the index job would: each turn is a
// new user message whose candidates are consolidated before the next.
func runChange(ctx context.Context, cons *extract.Consolidator, opt Options, ch *Change) (*ChangeResult, error) {
	userID := "eval-" + ch.ID
	for i, turn := range ch.Turns {
		msg := &agentmem.Message{ThreadID: "eval", Role: agentmem.RoleUser, Content: turn, Seq: int64(i + 1)}
		cands := opt.Extract([]*agentmem.Message{msg})
		if _, err := cons.Apply(ctx, userID, "", "", cands); err != nil {
			return nil, err
		}
	}
	res := &ChangeResult{ID: ch.ID, Category: ch.Category, Name: ch.Name, Valid: []string{}, Invalidated: []string{}}
	var valid []*agentmem.Memory
	for f := (agentmem.MemoryFilter{IncludeInvalid: true, Limit: agentmem.MaxPageSize}); ; {
		page, next, err := opt.Store.FindMemories(ctx, userID, f)
		if err != nil {
			return nil, err
		}
		for _, m := range page {
			if m.Valid() {
				valid = append(valid, m)
				res.Valid = append(res.Valid, m.Text)
			} else {
				res.Invalidated = append(res.Invalidated, m.Text)
			}
		}
		if f.Cursor = next; next == "" {
			break
		}
	}
	matchedE, matchedX := map[int]bool{}, map[int]bool{}
	for _, p := range Match(ch.Valid, res.Valid) {
		matchedE[p.Expected], matchedX[p.Extracted] = true, true
	}
	for i, e := range ch.Valid {
		if !matchedE[i] {
			res.Missing = append(res.Missing, e)
		}
	}
	for j, m := range res.Valid {
		if !matchedX[j] {
			res.Extra = append(res.Extra, m)
		}
	}
	inv := map[int]bool{}
	for _, p := range Match(ch.Invalidated, res.Invalidated) {
		inv[p.Expected] = true
	}
	for i, e := range ch.Invalidated {
		if !inv[i] {
			res.NotInvalid = append(res.NotInvalid, e)
		}
	}
	if ch.Unchanged {
		for _, m := range valid {
			if m.Version > 1 {
				res.Updated = append(res.Updated, m.Text)
			}
		}
	}
	res.Correct = len(res.Missing) == 0 && len(res.Extra) == 0 && len(res.NotInvalid) == 0 && len(res.Updated) == 0
	return res, nil
}

func prf(matched, extracted, expected int) (p, r, f float64) {
	if extracted > 0 {
		p = float64(matched) / float64(extracted)
	}
	if expected > 0 {
		r = float64(matched) / float64(expected)
	}
	if p+r > 0 {
		f = 2 * p * r / (p + r)
	}
	return p, r, f
}

// categoryLess orders the categories of the corpus as it is written, then
// any other by name, the distractors last.
func categoryLess(a, b string) bool {
	order := map[string]int{"identity": 1, "family": 2, "place": 3, "work": 4, "preference": 5, "health": 6,
		"plan": 7, "activity": 8, "possession": 9, "event": 10, Distractor: 100}
	oa, ob := order[a], order[b]
	if oa == 0 {
		oa = 50
	}
	if ob == 0 {
		ob = 50
	}
	if oa != ob {
		return oa < ob
	}
	return a < b
}
