package extraction_test

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/eval/extraction"
	"github.com/agentmem/agentmem/extract"
	"github.com/agentmem/agentmem/internal/testutil"
	"github.com/agentmem/agentmem/llm/lexical"
)

// wantSize fails unless corpus c has at least the given statements
// (distractors included), distractors and change cases.
func wantSize(t *testing.T, c *extraction.Corpus, minStatements, minDistractors, minChanges int) {
	t.Helper()
	statements, distractors, expected, changes := c.Counts()
	if statements+distractors < minStatements {
		t.Errorf("statements=%d, want at least %d with the distractors", statements+distractors, minStatements)
	}
	if distractors < minDistractors {
		t.Errorf("distractors=%d, want at least %d", distractors, minDistractors)
	}
	if changes < minChanges {
		t.Errorf("change cases=%d, want at least %d", changes, minChanges)
	}
	t.Logf("%d statements (%d expected memories), %d distractors, %d change cases", statements, expected, distractors, changes)
}

// wantChangeKinds fails unless c's change cases hold a repeat, a
// retraction and an addition.
func wantChangeKinds(t *testing.T, c *extraction.Corpus) {
	t.Helper()
	var repeat, retract, adds bool
	for _, ch := range c.Changes {
		repeat = repeat || ch.Unchanged
		retract = retract || len(ch.Valid) == 0
		adds = adds || len(ch.Invalidated) == 0
	}
	if !repeat || !retract || !adds {
		t.Errorf("change cases: a repeat %v, a retraction %v, an addition %v; want all", repeat, retract, adds)
	}
}

// TestDefault checks the embedded corpus: its size and its form.
func TestDefault(t *testing.T) {
	c, err := extraction.Default()
	if err != nil {
		t.Fatal(err)
	}
	wantSize(t, c, 300, 60, 40)
	check := func(id, m string) {
		if !strings.HasPrefix(m, "User") {
			t.Errorf("%s: expected memory %q does not start with User", id, m)
		}
	}
	for _, s := range c.Statements {
		for _, e := range s.Expected {
			check(s.ID, e.Text)
		}
	}
	for _, ch := range c.Changes {
		for _, m := range append(append([]string(nil), ch.Valid...), ch.Invalidated...) {
			check(ch.ID, m)
		}
	}
	wantChangeKinds(t, c)
}

// TestHeldout checks that the held-out corpora load and keep their size:
// heldout.json, written before reading the extractor's rules;
// heldout2.json to heldout8.json, written blind (from
// the corpus format and a brief only, without reading the extractor, its
// tests, the matcher or the other sets); see docs/extraction.md.
func TestHeldout(t *testing.T) {
	for _, tt := range []struct {
		file       string
		minChanges int
		kinds      bool
	}{
		{"testdata/heldout.json", 10, false},
		{"testdata/heldout2.json", 15, true},
		{"testdata/heldout3.json", 22, true},
		{"testdata/heldout4.json", 22, true},
		{"testdata/heldout5.json", 24, true},
		{"testdata/heldout6.json", 22, true},
		{"testdata/heldout7.json", 24, true},
		{"testdata/heldout8.json", 24, true},
	} {
		t.Run(tt.file, func(t *testing.T) {
			c, err := extraction.ReadFile(tt.file)
			if err != nil {
				t.Fatal(err)
			}
			wantSize(t, c, 120, 30, tt.minChanges)
			if tt.kinds {
				wantChangeKinds(t, c)
			}
		})
	}
}

func TestRead(t *testing.T) {
	for name, data := range map[string]string{
		"NotUser":           `{"statements":[{"id":"a","category":"place","text":"I live in Oslo.","expected":[{"text":"Lives in Oslo.","category":"place"}]}]}`,
		"DistractorExpects": `{"statements":[{"id":"a","category":"distractor","text":"hi","expected":[{"text":"User says hi.","category":"identity"}]}]}`,
		"NothingExpected":   `{"statements":[{"id":"a","category":"place","text":"I live in Oslo.","expected":[]}]}`,
		"DuplicateID":       `{"statements":[{"id":"a","category":"distractor","text":"hi","expected":[]},{"id":"a","category":"distractor","text":"yo","expected":[]}]}`,
		"UnknownField":      `{"statements":[{"id":"a","category":"distractor","text":"hi","expected":[],"kind":"x"}]}`,
		"OneTurn":           `{"changes":[{"id":"c","category":"place","turns":["I live in Oslo."],"valid":["User lives in Oslo."]}]}`,
		"Empty":             `{}`,
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := extraction.Read(strings.NewReader(data)); err == nil {
				t.Fatal("Read accepted a bad corpus")
			}
		})
	}
}

func options(t *testing.T, ext extraction.Extractor) extraction.Options {
	emb := lexical.New(0)
	return extraction.Options{Extract: ext, Store: testutil.MustOpenSQLite(t), Emb: emb, Space: emb.Space(), Name: "test"}
}

// TestRun_Heuristic runs the corpus through today's extractor and checks
// that the report is well-formed; the figures are the extractor's
// business (see docs/extraction.md), not this test's.
func TestRun_Heuristic(t *testing.T) {
	c, err := extraction.Default()
	if err != nil {
		t.Fatal(err)
	}
	rep, err := extraction.Run(context.Background(), c, options(t, extract.Heuristic))
	if err != nil {
		t.Fatal(err)
	}
	statements, distractors, expected, changes := c.Counts()
	if rep.Statements != statements || rep.Distractors != distractors || rep.Expected != expected || rep.Changes != changes {
		t.Errorf("report counts %d/%d/%d/%d, want %d/%d/%d/%d", rep.Statements, rep.Distractors, rep.Expected, rep.Changes,
			statements, distractors, expected, changes)
	}
	if len(rep.StatementResults) != len(c.Statements) || len(rep.ChangeResults) != len(c.Changes) {
		t.Errorf("%d statement results, %d change results; want %d, %d", len(rep.StatementResults), len(rep.ChangeResults), len(c.Statements), len(c.Changes))
	}
	for _, f := range []float64{rep.Precision, rep.Recall, rep.F1, rep.ChangeAccuracy} {
		if f < 0 || f > 1 {
			t.Errorf("a figure is %v, outside [0, 1]", f)
		}
	}
	if rep.Matched > rep.Extracted || rep.Matched > rep.Expected {
		t.Errorf("matched %d of %d extracted, %d expected", rep.Matched, rep.Extracted, rep.Expected)
	}
	sum := 0
	for _, cr := range rep.Categories {
		sum += cr.Expected
	}
	if sum != rep.Expected {
		t.Errorf("the categories expect %d memories, the report %d", sum, rep.Expected)
	}
	var text bytes.Buffer
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"precision", "distractors:", "changes:", "family", "all"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text report lacks %q:\n%s", want, text.String())
		}
	}
	if _, err := json.Marshal(rep); err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", text.String())
}

// TestRun_Oracle checks the scoring with an extractor that returns the
// expected memories: everything matches, nothing is wrong.
func TestRun_Oracle(t *testing.T) {
	c, err := extraction.Default()
	if err != nil {
		t.Fatal(err)
	}
	byText := map[string][]extract.Candidate{}
	for _, s := range c.Statements {
		for _, e := range s.Expected {
			byText[s.Text] = append(byText[s.Text], extract.Candidate{Text: e.Text, Category: e.Category})
		}
	}
	oracle := func(msgs []*agentmem.Message) []extract.Candidate { return byText[msgs[0].Content] }
	c.Changes = nil
	rep, err := extraction.Run(context.Background(), c, extraction.Options{Extract: oracle})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Precision != 1 || rep.Recall != 1 || rep.DistractorMemories != 0 {
		t.Errorf("precision %v, recall %v, distractor memories %d; want 1, 1, 0", rep.Precision, rep.Recall, rep.DistractorMemories)
	}
	for _, r := range rep.StatementResults {
		if len(r.Missed) > 0 || len(r.Wrong) > 0 {
			t.Errorf("%s: missed %q, wrong %q", r.ID, r.Missed, r.Wrong)
		}
	}
}

// TestRun_Changes checks how a change case is judged, with extractors
// that say where the user lives with and without a slot.
func TestRun_Changes(t *testing.T) {
	c := &extraction.Corpus{Changes: []*extraction.Change{
		{ID: "move", Category: "place", Turns: []string{"I live in Berlin.", "I live in Lisbon."},
			Valid: []string{"User lives in Lisbon."}, Invalidated: []string{"User lives in Berlin."}},
		{ID: "repeat", Category: "place", Turns: []string{"I live in Oslo.", "I live in Oslo."},
			Valid: []string{"User lives in Oslo."}, Unchanged: true},
	}}
	re := regexp.MustCompile(`I live in (\w+)`)
	extractor := func(slot string) extraction.Extractor {
		return func(msgs []*agentmem.Message) []extract.Candidate {
			m := re.FindStringSubmatch(msgs[0].Content)
			if m == nil {
				return nil
			}
			return []extract.Candidate{{Text: "User lives in " + m[1] + ".", Category: "place", Confidence: 0.9, Importance: 0.5, Slot: slot}}
		}
	}
	t.Run("Slot", func(t *testing.T) {
		rep, err := extraction.Run(context.Background(), c, options(t, extractor("residence")))
		if err != nil {
			t.Fatal(err)
		}
		if rep.ChangesCorrect != 2 {
			t.Fatalf("%d of 2 correct: %+v %+v", rep.ChangesCorrect, rep.ChangeResults[0], rep.ChangeResults[1])
		}
	})
	t.Run("NoSlot", func(t *testing.T) {
		// Without a slot Berlin stays valid beside Lisbon.
		rep, err := extraction.Run(context.Background(), c, options(t, extractor("")))
		if err != nil {
			t.Fatal(err)
		}
		move := rep.ChangeResults[0]
		if move.Correct || len(move.Extra) != 1 || len(move.NotInvalid) != 1 {
			t.Fatalf("move: %+v, want incorrect with Berlin extra and not invalidated", move)
		}
		if !rep.ChangeResults[1].Correct {
			t.Fatalf("repeat: %+v, want correct", rep.ChangeResults[1])
		}
	})
}

// TestRun_SameTextOnce: an extractor that proposes one text twice for a
// statement (a retraction and the event that tells it, "User quit
// smoking.") proposes one memory: the second is not counted wrong.
func TestRun_SameTextOnce(t *testing.T) {
	c, err := extraction.Default()
	if err != nil {
		t.Fatal(err)
	}
	twice := func(msgs []*agentmem.Message) []extract.Candidate {
		for _, s := range c.Statements {
			if s.Text == msgs[0].Content && len(s.Expected) > 0 {
				e := s.Expected[0]
				return []extract.Candidate{{Text: e.Text, Category: e.Category, Retract: true}, {Text: e.Text, Category: e.Category}}
			}
		}
		return nil
	}
	c.Changes = nil
	rep, err := extraction.Run(context.Background(), c, extraction.Options{Extract: twice})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Precision != 1 {
		t.Errorf("precision %v, want 1: a text proposed twice is one memory", rep.Precision)
	}
}
