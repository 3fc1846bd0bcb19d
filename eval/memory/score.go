package memory

import (
	"slices"
	"strings"

	"github.com/agentmem/agentmem"
)

// Observation is what agentmem knows of a conversation's user once its
// sessions are stored and its jobs have run: what Score scores.
type Observation struct {
	// Memories are the user's memories, valid and invalidated.
	Memories []*agentmem.Memory
	// Answers holds what was found for each question of the
	// conversation, in order.
	Answers []Answer
	// Profile is the text of the user's profile ("" when none).
	Profile string
}

// Answer is what agentmem gave for a question: the top results of a
// search over memories only and of one over the default scopes, and the
// text of a context built for a new thread with the question as input.
type Answer struct {
	Memories []agentmem.SearchResult
	Default  []agentmem.SearchResult
	Context  string
}

// Counts are the scores of one conversation, or their sum over several.
type Counts struct {
	// Facts true at the end, and those that some valid memory states
	// (matches the fact's keywords).
	Facts    int `json:"facts"`
	Recalled int `json:"recalled"`
	// Memories valid at the end, the invalidated ones, the valid ones
	// that state some fact or past fact (Precise), and the valid ones
	// that state a not-fact (False, counted apart: such a memory may
	// also be Precise).
	Memories    int `json:"memories"`
	Invalidated int `json:"invalidated"`
	Precise     int `json:"precise"`
	False       int `json:"false"`
	// Changes of fact, and those handled: the new fact stated by a valid
	// memory and the old one by none.
	Changes int `json:"changes"`
	Handled int `json:"handled"`
	// Questions asked; the searches' scores (over memories only and the
	// default scopes); the contexts that present a stale value as
	// current, and those that hold the answer.
	Questions      int          `json:"questions"`
	SearchMemories SearchCounts `json:"search_memories"`
	SearchDefault  SearchCounts `json:"search_default"`
	ContextStale   int          `json:"context_stale"`
	ContextAnswer  int          `json:"context_answer"`
	// The facts the profile states, and the past facts (of Past) it
	// still states.
	ProfileFacts int `json:"profile_facts"`
	Past         int `json:"past"`
	ProfilePast  int `json:"profile_past"`
	// Background jobs of the user that died (failed every attempt), and
	// that were still queued when the scoring began.
	JobsDead     int `json:"jobs_dead"`
	JobsDeferred int `json:"jobs_deferred"`
}

// SearchCounts score the searches of the questions: how many found a
// result that holds the answer first (Hit1) or within the top 5 (Hit5),
// and how many ranked above that answer (or anywhere, without one) a
// result that holds the stale value and is not marked superseded.
type SearchCounts struct {
	Hit1   int `json:"hit1"`
	Hit5   int `json:"hit5"`
	Stale5 int `json:"stale5"`
}

func (s *SearchCounts) add(o SearchCounts) {
	s.Hit1 += o.Hit1
	s.Hit5 += o.Hit5
	s.Stale5 += o.Stale5
}

func (c *Counts) add(o Counts) {
	c.Facts += o.Facts
	c.Recalled += o.Recalled
	c.Memories += o.Memories
	c.Invalidated += o.Invalidated
	c.Precise += o.Precise
	c.False += o.False
	c.Changes += o.Changes
	c.Handled += o.Handled
	c.Questions += o.Questions
	c.SearchMemories.add(o.SearchMemories)
	c.SearchDefault.add(o.SearchDefault)
	c.ContextStale += o.ContextStale
	c.ContextAnswer += o.ContextAnswer
	c.ProfileFacts += o.ProfileFacts
	c.Past += o.Past
	c.ProfilePast += o.ProfilePast
	c.JobsDead += o.JobsDead
	c.JobsDeferred += o.JobsDeferred
}

// Misses say what went wrong in a conversation.
type Misses struct {
	Facts []Labelled `json:"facts"` // facts no valid memory states
	// Unmatched are the valid memories that state no fact or past fact.
	Unmatched []string       `json:"unmatched"`
	False     []FalseFact    `json:"false"`
	Changes   []ChangeMiss   `json:"changes"`
	Questions []QuestionMiss `json:"questions"`
	Contexts  []ContextMiss  `json:"contexts"`
	Profile   []Labelled     `json:"profile_past"` // past facts the profile still states
	// Jobs are the user's jobs dead or left queued: "dead index
	// (attempts 5, run at …): last error".
	Jobs []string `json:"jobs"`
}

// Labelled is a fact of the labels.
type Labelled struct {
	ID   string `json:"id"`
	Text string `json:"text"`
}

// FalseFact is a valid memory that states a not-fact.
type FalseFact struct {
	Memory  string `json:"memory"`
	NotFact string `json:"not_fact"`
	Why     string `json:"why"`
}

// ChangeMiss is a change not handled: whether the new fact was recalled,
// and the valid memories that still state the old one.
type ChangeMiss struct {
	Old         Labelled `json:"old"`
	New         Labelled `json:"new"`
	NewRecalled bool     `json:"new_recalled"`
	Blocking    []string `json:"blocking"`
}

// QuestionMiss is a search that did not rank the answer first, or ranked a
// stale value above it: its scope (memories or default), the rank of the
// first result holding the answer (0: none in the top 5), and the top
// results.
type QuestionMiss struct {
	Question string    `json:"question"`
	Scope    string    `json:"scope"`
	Rank     int       `json:"rank"`
	Stale    bool      `json:"stale"`
	Top      []Visible `json:"top"`
}

// Visible is a search result as scored.
type Visible struct {
	Kind       string `json:"kind"`
	Text       string `json:"text"`
	Superseded bool   `json:"superseded,omitempty"`
}

// ContextMiss is a context that presents a stale value as current: the
// lines that state it.
type ContextMiss struct {
	Question string   `json:"question"`
	Lines    []string `json:"lines"`
}

// Score scores what agentmem knows of c's user:
//
//   - a fact is recalled when some valid memory matches its keywords;
//   - a valid memory is precise when it matches the keywords of some fact
//     or past fact, and false when it matches those of a not-fact;
//   - a change is handled when a valid memory matches its new fact and
//     none states its old one as current: matches its keywords, but not
//     the new fact's too ("A1C 6.6, from 8.4" tells the change) and
//     without telling that it ended ("User has given up lawn bowls.",
//     see stillStated);
//   - a search scores hit@1 and hit@5 when a result of its top 5 matches
//     the question's answer keywords, first or anywhere, and stale@5 when
//     a result above the first hit (in the top 5) matches its stale
//     keywords, is not marked superseded (SearchResult.InvalidAt) and
//     does not tell that the stale value ended;
//   - a context is stale when one of its lines outside those marked as
//     past (see Lines) matches the question's stale keywords and does not
//     tell that it ended;
//   - the profile states a fact when one of its lines, outside those
//     marked as past, matches the fact's keywords, and a past fact when
//     such a line also does not tell that it ended.
//
// Answers beyond c's questions are ignored; a question without an answer
// scores nothing.
func Score(c *Conversation, obs *Observation) (Counts, Misses) {
	var n Counts
	var miss Misses
	var valid []string
	for _, m := range obs.Memories {
		if m.Valid() {
			valid = append(valid, m.Text)
		} else {
			n.Invalidated++
		}
	}
	n.Memories = len(valid)
	stating := func(k Keywords) []string {
		var out []string
		for _, t := range valid {
			if k.Match(t) {
				out = append(out, t)
			}
		}
		return out
	}

	n.Facts = len(c.Facts)
	for _, f := range c.Facts {
		if len(stating(f.Keywords)) > 0 {
			n.Recalled++
		} else {
			miss.Facts = append(miss.Facts, Labelled{f.ID, f.Text})
		}
	}
	known := append(slices.Clip(c.Facts), c.Past...)
	for _, t := range valid {
		precise := false
		for _, f := range known {
			precise = precise || f.Keywords.Match(t)
		}
		if precise {
			n.Precise++
		} else {
			miss.Unmatched = append(miss.Unmatched, t)
		}
		for _, nf := range c.NotFacts {
			if nf.Keywords.Match(t) {
				n.False++
				miss.False = append(miss.False, FalseFact{Memory: t, NotFact: nf.Text, Why: nf.Why})
				break
			}
		}
	}

	n.Changes = len(c.Changes)
	for _, ch := range c.Changes {
		old, nw := c.fact(ch.Old), c.fact(ch.New)
		if old == nil || nw == nil {
			continue // Check rejects such a corpus
		}
		recalled, blocking := len(stating(nw.Keywords)) > 0, stillStated(stating(old.Keywords), nw.Keywords)
		if recalled && len(blocking) == 0 {
			n.Handled++
			continue
		}
		miss.Changes = append(miss.Changes, ChangeMiss{Old: Labelled{old.ID, old.Text}, New: Labelled{nw.ID, nw.Text}, NewRecalled: recalled, Blocking: blocking})
	}

	n.Questions = len(c.Questions)
	for i, q := range c.Questions {
		if i >= len(obs.Answers) {
			break
		}
		a := obs.Answers[i]
		for _, s := range []struct {
			scope   string
			results []agentmem.SearchResult
			counts  *SearchCounts
		}{{"memories", a.Memories, &n.SearchMemories}, {"default", a.Default, &n.SearchDefault}} {
			rank, stale := ScoreSearch(q, s.results)
			if rank == 1 {
				s.counts.Hit1++
			}
			if rank > 0 {
				s.counts.Hit5++
			}
			if stale {
				s.counts.Stale5++
			}
			if rank != 1 || stale {
				miss.Questions = append(miss.Questions, QuestionMiss{Question: q.Question, Scope: s.scope, Rank: rank, Stale: stale, Top: visible(s.results)})
			}
		}
		lines := Lines(a.Context, q.Question)
		if stale := stillStated(matching(lines, q.StaleKeywords), nil); len(stale) > 0 {
			n.ContextStale++
			miss.Contexts = append(miss.Contexts, ContextMiss{Question: q.Question, Lines: stale})
		}
		if len(matching(lines, q.AnswerKeywords)) > 0 {
			n.ContextAnswer++
		}
	}

	profile := Lines(obs.Profile, "")
	for _, f := range c.Facts {
		if len(matching(profile, f.Keywords)) > 0 {
			n.ProfileFacts++
		}
	}
	n.Past = len(c.Past)
	for _, p := range c.Past {
		if len(stillStated(matching(profile, p.Keywords), nil)) > 0 {
			n.ProfilePast++
			miss.Profile = append(miss.Profile, Labelled{p.ID, p.Text})
		}
	}
	return n, miss
}

// TopK is how many results of a search are scored.
const TopK = 5

// ScoreSearch scores the results of a question's search, best first: the
// rank (from 1) of the first of the top TopK that matches the answer
// keywords (0: none does), and whether one ranked above it (or in the
// top TopK, without one) matches the stale keywords and is not marked
// superseded.
func ScoreSearch(q *Question, results []agentmem.SearchResult) (rank int, stale bool) {
	for i, r := range results[:min(len(results), TopK)] {
		if q.AnswerKeywords.Match(r.Text) {
			return i + 1, stale
		}
		stale = stale || r.InvalidAt == nil && q.StaleKeywords.Match(r.Text) && len(stillStated([]string{r.Text}, nil)) > 0
	}
	return 0, stale
}

func visible(results []agentmem.SearchResult) []Visible {
	out := make([]Visible, 0, TopK)
	for _, r := range results[:min(len(results), TopK)] {
		out = append(out, Visible{Kind: r.Kind, Text: r.Text, Superseded: r.InvalidAt != nil})
	}
	return out
}

// pastLine are the words that mark a line as the past: what agentmem
// writes of an invalidated memory ("(outdated; superseded by: …)") and
// how a text says that something ended. pastSection are those that mark a
// section's heading as a history.
var (
	pastLine    = []string{"outdated", "superseded", "no longer", "formerly", "previously"}
	pastSection = append([]string{"history", "past", "previous", "former"}, pastLine...)
)

// endWords are the words with which a memory or a line tells that
// something ended ("User has given up lawn bowls.", "User and Kayla
// split.", "Hamish died last week."): it names the old fact, and does not
// state it as current.
var endWords = []string{"stopped", "stop ", "quit", "gave up", "given up", "giving up", "split", "broke up", "broken up",
	"binned", "passed away", "died", "lost ", "sold", "used to", "outgrew", "grew out", "anymore", "any more", "no more",
	"left ", "ended", "dropped", "ex-", "moved out", "moved away", "moved from", "stopping", "quitting"}

// stillStated returns the texts (memories or lines matching an old fact's
// keywords) that state the old fact as current: not those that tell it
// ended (endWords, pastLine), nor those that state the new fact too
// (matching nw: "A1C 6.6, from 8.4" tells the change).
func stillStated(texts []string, nw Keywords) []string {
	var out []string
	for _, t := range texts {
		l := strings.ToLower(t)
		if containsAny(l, endWords) || containsAny(l, pastLine) || nw != nil && nw.Match(t) {
			continue
		}
		out = append(out, t)
	}
	return out
}

// Lines returns the lines of a context or profile text that present
// something as current: every non-blank line but the headings ("# …",
// "### …", or a short "Title:"), the lines of a section whose heading
// marks it as the past (see pastSection), the lines that mark themselves
// as the past (see pastLine), and the line that is only the input (the
// context's "user: " + input).
func Lines(text, input string) []string {
	var out []string
	past := false
	for _, line := range strings.Split(text, "\n") {
		t := strings.TrimSpace(line)
		if t == "" {
			continue
		}
		lower := strings.ToLower(t)
		if isHeading(t) {
			past = containsAny(lower, pastSection)
			continue
		}
		if past || containsAny(lower, pastLine) || input != "" && strings.HasSuffix(t, ": "+strings.TrimSpace(input)) {
			continue
		}
		out = append(out, t)
	}
	return out
}

// isHeading reports whether a trimmed line is a Markdown heading or a
// short title ending in a colon, as the assembled profile's categories.
func isHeading(t string) bool {
	return strings.HasPrefix(t, "#") || len(t) <= 40 && strings.HasSuffix(t, ":") && !strings.HasPrefix(t, "-") && !strings.Contains(t, ": ")
}

func containsAny(s string, words []string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// matching returns the lines that match k.
func matching(lines []string, k Keywords) []string {
	var out []string
	for _, l := range lines {
		if k.Match(l) {
			out = append(out, l)
		}
	}
	return out
}
