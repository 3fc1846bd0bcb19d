// Package extraction measures how well an extractor turns what users say
// into memories, offline: it runs a corpus of first-person chat statements
// (testdata/statements.json, embedded) through the extractor and matches
// what comes out with the memories expected of each (see Match), and it
// plays short sequences of statements that change a fact through the real
// consolidation (extract.Consolidator on a real store) to check which
// memories end valid and which invalidated.
//
// The corpus was written from how people talk to an assistant, not from
// any extractor's rules: varied phrasing, lower case, the odd typo,
// several facts in a sentence, and distractors (questions, requests,
// hypotheticals, quotes of others, small talk, facts about the world)
// that must yield nothing.
package extraction

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

// Distractor is the category of the statements that must yield no memory.
const Distractor = "distractor"

//go:embed testdata/statements.json
var defaultCorpus []byte

// Corpus is the data of the evaluation.
type Corpus struct {
	Statements []*Statement `json:"statements"`
	Changes    []*Change    `json:"changes"`
}

// Statement is one user message and the memories expected of it.
type Statement struct {
	ID       string     `json:"id"`
	Category string     `json:"category"` // what it is mostly about; Distractor when nothing is expected
	Text     string     `json:"text"`
	Expected []Expected `json:"expected"`
	// Acceptable memories are neither required nor wrong (a quote of
	// someone else about the user, a request that states a preference):
	// an extracted memory that matches one is not counted at all.
	Acceptable []string `json:"acceptable,omitempty"`
}

// Expected is a memory expected of a statement: third person, starting
// with "User", self-contained.
type Expected struct {
	Text     string `json:"text"`
	Category string `json:"category"`
}

// Change is a short conversation that changes a fact: its turns are the
// user's messages in order, Valid the memories that must be valid at the
// end (and no other), Invalidated those that must have been invalidated.
// Unchanged says that no valid memory may have been updated (a plain
// repeat must change nothing).
type Change struct {
	ID          string   `json:"id"`
	Category    string   `json:"category"`
	Name        string   `json:"name"`
	Turns       []string `json:"turns"`
	Valid       []string `json:"valid"`
	Invalidated []string `json:"invalidated"`
	Unchanged   bool     `json:"unchanged,omitempty"`
}

// Default returns the corpus embedded in the package.
func Default() (*Corpus, error) { return Read(bytes.NewReader(defaultCorpus)) }

// ReadFile reads and checks a corpus file.
func ReadFile(path string) (*Corpus, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	c, err := Read(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// Read reads and checks a corpus: unknown fields are refused, every ID is
// unique, every statement and turn has text, every expected memory starts
// with "User", a distractor expects nothing and any other statement
// something.
func Read(r io.Reader) (*Corpus, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var c Corpus
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("read corpus: %w", err)
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return &c, nil
}

// Validate checks the corpus as Read describes.
func (c *Corpus) Validate() error {
	if len(c.Statements) == 0 && len(c.Changes) == 0 {
		return fmt.Errorf("corpus: no statements and no changes")
	}
	ids := map[string]bool{}
	id := func(id string) error {
		if id == "" {
			return fmt.Errorf("corpus: an item has no id")
		}
		if ids[id] {
			return fmt.Errorf("corpus: id %q is used twice", id)
		}
		ids[id] = true
		return nil
	}
	memory := func(owner, text string) error {
		if !strings.HasPrefix(text, "User") {
			return fmt.Errorf("corpus: %s: expected memory %q does not start with \"User\"", owner, text)
		}
		return nil
	}
	for _, s := range c.Statements {
		if err := id(s.ID); err != nil {
			return err
		}
		switch {
		case strings.TrimSpace(s.Text) == "":
			return fmt.Errorf("corpus: %s: text is empty", s.ID)
		case s.Category == "":
			return fmt.Errorf("corpus: %s: category is empty", s.ID)
		case s.Category == Distractor && len(s.Expected) > 0:
			return fmt.Errorf("corpus: %s: a distractor expects no memory", s.ID)
		case s.Category != Distractor && len(s.Expected) == 0:
			return fmt.Errorf("corpus: %s: expects no memory (a statement that should yield none is a %s)", s.ID, Distractor)
		}
		for _, e := range s.Expected {
			if err := memory(s.ID, e.Text); err != nil {
				return err
			}
			if e.Category == "" || e.Category == Distractor {
				return fmt.Errorf("corpus: %s: expected memory %q needs a category", s.ID, e.Text)
			}
		}
		for _, a := range s.Acceptable {
			if err := memory(s.ID, a); err != nil {
				return err
			}
		}
	}
	for _, ch := range c.Changes {
		if err := id(ch.ID); err != nil {
			return err
		}
		if len(ch.Turns) < 2 {
			return fmt.Errorf("corpus: %s: a change needs at least two turns", ch.ID)
		}
		for _, t := range ch.Turns {
			if strings.TrimSpace(t) == "" {
				return fmt.Errorf("corpus: %s: a turn is empty", ch.ID)
			}
		}
		if len(ch.Valid) == 0 && len(ch.Invalidated) == 0 {
			return fmt.Errorf("corpus: %s: expects neither valid nor invalidated memories", ch.ID)
		}
		for _, m := range append(append([]string(nil), ch.Valid...), ch.Invalidated...) {
			if err := memory(ch.ID, m); err != nil {
				return err
			}
		}
	}
	return nil
}

// Counts returns the number of statements that expect memories, of
// distractors, of expected memories and of change cases.
func (c *Corpus) Counts() (statements, distractors, expected, changes int) {
	for _, s := range c.Statements {
		if s.Category == Distractor {
			distractors++
		} else {
			statements++
		}
		expected += len(s.Expected)
	}
	return statements, distractors, expected, len(c.Changes)
}
