// Package memory scores agentmem's memory pipeline on multi-session
// conversations between a user and an assistant, each labelled with what a
// perfect memory would know at the end: the facts true then, the past
// facts they replaced, the changes between the two, the things said that
// must not become memories (hypotheticals, other people's facts, small
// talk), and questions about the present with the words their answer must
// and must not hold.
//
// Run stores each conversation as a user of a real agentmem (any
// agentmem.Service: cmd/agentmem gives it serve's wiring with no model),
// one thread per session, lets the background jobs finish, and scores the
// user's memories, searches, contexts and profile (see Score). The corpus
// format is one JSON file per conversation (see Conversation and ReadDir).
package memory

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Conversation is one corpus file: a user's sessions and their labels.
type Conversation struct {
	ID       string     `json:"id"`
	Style    string     `json:"style"`
	UserName string     `json:"user_name"`
	Sessions []*Session `json:"sessions"`
	// Facts are true at the end; Past were true once and were replaced
	// or ended; Changes pair each old fact (of Past) with its new one.
	Facts     []*Fact     `json:"facts"`
	Past      []*Fact     `json:"past"`
	Changes   []*Change   `json:"changes"`
	NotFacts  []*NotFact  `json:"not_facts"`
	Questions []*Question `json:"questions"`
}

// Session is one conversation thread, on a date.
type Session struct {
	Date  time.Time `json:"date"`
	Turns []*Turn   `json:"turns"`
}

// Turn is one message.
type Turn struct {
	Role    string `json:"role"` // user or assistant
	Content string `json:"content"`
}

// Fact is a statement about the user, labelled with the keywords a memory
// that states it holds.
type Fact struct {
	ID         string   `json:"id"`
	Text       string   `json:"text"`
	Slot       string   `json:"slot"`
	Session    int      `json:"session"`
	Keywords   Keywords `json:"keywords"`
	ReplacedBy string   `json:"replaced_by,omitempty"` // of a past fact: the fact that replaced it
}

// Change is a change of fact: Old (a past fact) replaced by New (a fact).
type Change struct {
	Old string `json:"old"`
	New string `json:"new"`
}

// NotFact is something said that must not become a memory about the user.
type NotFact struct {
	Text     string   `json:"text"`
	Why      string   `json:"why"`
	Keywords Keywords `json:"keywords"`
}

// Question is a question about the user's present: its answer holds
// AnswerKeywords; StaleKeywords (none: empty) are the old value, which an
// answer must not present as current.
type Question struct {
	Question       string   `json:"question"`
	Fact           string   `json:"fact"`
	AnswerKeywords Keywords `json:"answer_keywords"`
	StaleKeywords  Keywords `json:"stale_keywords"`
}

// Keywords say what a text must contain to state something: a list of
// groups, each a list of alternatives.
type Keywords [][]string

// Match reports whether text contains, for every group, at least one of
// its alternatives, as a case-insensitive substring. Empty keywords match
// nothing.
func (k Keywords) Match(text string) bool {
	if len(k) == 0 {
		return false
	}
	text = strings.ToLower(text)
	for _, group := range k {
		if !slices.ContainsFunc(group, func(alt string) bool { return alt != "" && strings.Contains(text, strings.ToLower(alt)) }) {
			return false
		}
	}
	return true
}

// Messages returns the number of turns of all the sessions.
func (c *Conversation) Messages() int {
	n := 0
	for _, s := range c.Sessions {
		n += len(s.Turns)
	}
	return n
}

// fact returns the fact or past fact with id, or nil.
func (c *Conversation) fact(id string) *Fact {
	for _, list := range [][]*Fact{c.Facts, c.Past} {
		if i := slices.IndexFunc(list, func(f *Fact) bool { return f.ID == id }); i >= 0 {
			return list[i]
		}
	}
	return nil
}

// ReadDir reads every *.json file of dir as a conversation, in file name
// order, and checks each (see Conversation.Check).
func ReadDir(dir string) ([]*Conversation, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("%s: no *.json conversation files", dir)
	}
	slices.Sort(paths)
	var out []*Conversation
	ids := map[string]string{}
	for _, p := range paths {
		c, err := ReadFile(p)
		if err != nil {
			return nil, err
		}
		if prev, ok := ids[c.ID]; ok {
			return nil, fmt.Errorf("%s: id %q is also the id of %s", p, c.ID, prev)
		}
		ids[c.ID] = p
		out = append(out, c)
	}
	return out, nil
}

// ReadFile reads and checks one conversation file.
func ReadFile(path string) (*Conversation, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var c Conversation
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := c.Check(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &c, nil
}

// Check checks what scoring relies on: an id that can name a user; at
// least one session, each with a date and turns of role user or assistant
// with content; facts and past facts with unique ids and keywords;
// changes, replaced_by and questions naming facts that exist; keyword
// groups that are not empty.
func (c *Conversation) Check() error {
	if c.ID == "" || strings.ContainsFunc(c.ID, func(r rune) bool { return r == '/' || r == '\\' || r <= ' ' }) {
		return fmt.Errorf("id %q: want a non-empty id without slashes or spaces", c.ID)
	}
	if len(c.Sessions) == 0 {
		return fmt.Errorf("no sessions")
	}
	for i, s := range c.Sessions {
		if s.Date.IsZero() {
			return fmt.Errorf("sessions[%d]: no date", i)
		}
		if len(s.Turns) == 0 {
			return fmt.Errorf("sessions[%d]: no turns", i)
		}
		for j, t := range s.Turns {
			if t.Role != "user" && t.Role != "assistant" {
				return fmt.Errorf("sessions[%d].turns[%d]: role %q, want user or assistant", i, j, t.Role)
			}
			if strings.TrimSpace(t.Content) == "" {
				return fmt.Errorf("sessions[%d].turns[%d]: no content", i, j)
			}
		}
	}
	seen := map[string]bool{}
	for name, list := range map[string][]*Fact{"facts": c.Facts, "past": c.Past} {
		for i, f := range list {
			if f.ID == "" || seen[f.ID] {
				return fmt.Errorf("%s[%d]: id %q is empty or not unique", name, i, f.ID)
			}
			seen[f.ID] = true
			if err := f.Keywords.check(true); err != nil {
				return fmt.Errorf("%s[%d] (%s): keywords: %w", name, i, f.ID, err)
			}
		}
	}
	isFact := func(id string) bool { return slices.ContainsFunc(c.Facts, func(f *Fact) bool { return f.ID == id }) }
	isPast := func(id string) bool { return slices.ContainsFunc(c.Past, func(f *Fact) bool { return f.ID == id }) }
	for i, p := range c.Past {
		if p.ReplacedBy != "" && !isFact(p.ReplacedBy) && !isPast(p.ReplacedBy) {
			return fmt.Errorf("past[%d] (%s): replaced_by %q is no fact", i, p.ID, p.ReplacedBy)
		}
	}
	for i, ch := range c.Changes {
		if !isPast(ch.Old) {
			return fmt.Errorf("changes[%d]: old %q is no past fact", i, ch.Old)
		}
		if !isFact(ch.New) && !isPast(ch.New) {
			return fmt.Errorf("changes[%d]: new %q is no fact", i, ch.New)
		}
	}
	for i, n := range c.NotFacts {
		if err := n.Keywords.check(true); err != nil {
			return fmt.Errorf("not_facts[%d]: keywords: %w", i, err)
		}
	}
	for i, q := range c.Questions {
		if strings.TrimSpace(q.Question) == "" {
			return fmt.Errorf("questions[%d]: no question", i)
		}
		if q.Fact != "" && !isFact(q.Fact) {
			return fmt.Errorf("questions[%d]: fact %q is no fact", i, q.Fact)
		}
		if err := q.AnswerKeywords.check(true); err != nil {
			return fmt.Errorf("questions[%d]: answer_keywords: %w", i, err)
		}
		if err := q.StaleKeywords.check(false); err != nil {
			return fmt.Errorf("questions[%d]: stale_keywords: %w", i, err)
		}
	}
	return nil
}

// check reports an empty group or alternative, and no groups at all when
// required.
func (k Keywords) check(required bool) error {
	if required && len(k) == 0 {
		return fmt.Errorf("none")
	}
	for i, g := range k {
		if len(g) == 0 {
			return fmt.Errorf("group %d is empty", i)
		}
		for _, alt := range g {
			if strings.TrimSpace(alt) == "" {
				return fmt.Errorf("group %d has an empty alternative", i)
			}
		}
	}
	return nil
}
