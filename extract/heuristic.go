// Package extract turns conversation turns into long-term memories and
// keeps them consistent: extraction proposes candidate memories (a model's
// JSON, or without a model the first-person statements found by
// Heuristic), and a Consolidator decides for each whether it is new (ADD),
// refines a memory (UPDATE), contradicts one (INVALIDATE the old, ADD the
// new) or repeats one (NOOP). The index job (package index) runs both on
// new messages.
package extract

import (
	"regexp"
	"sort"
	"strings"
	"unicode"

	"github.com/agentmem/agentmem"
)

// Candidate is a proposed memory.
type Candidate struct {
	Text       string  `json:"text"`
	Category   string  `json:"category"`
	Confidence float64 `json:"confidence"`
	Importance float64 `json:"importance"`
	// Slot names what the statement is about, when one statement replaces
	// another about the same thing ("residence", "age", "name-of:dog");
	// "" when statements of its kind accumulate (likes, plans).
	Slot string `json:"slot,omitempty"`
	// Negated statements ("I don't like X") contradict their positive
	// twin.
	Negated bool   `json:"negated,omitempty"`
	Retract bool   `json:"retract,omitempty"`
	Object  string `json:"object,omitempty"` // what a preference is about, lower-cased
	// Provenance.
	SeqFrom int64 `json:"seq_from"`
	SeqTo   int64 `json:"seq_to"`
}

// rule recognises one kind of first-person statement. Its pattern runs on
// one sentence; the named group "v" is the value and "o" an object.
type rule struct {
	category   string
	slot       string // "" accumulate; "{o}" is replaced by the object
	re         *regexp.Regexp
	text       string // the memory, with {v} and {o}
	confidence float64
	importance float64
	negated    bool
}

// value is the end of a statement: up to a clause break.
const value = `(?P<v>[^,;.!?]{1,80}?)\s*(?:$|[,;.!?]|\s+(?:and|but|because|so|which|who)\s)`

var rules = func() []rule {
	r := func(category, slot, pattern, text string, confidence, importance float64) rule {
		return rule{category: category, slot: slot, re: regexp.MustCompile(`(?i)` + pattern), text: text, confidence: confidence, importance: importance}
	}
	neg := func(x rule) rule { x.negated = true; return x }
	return []rule{
		r("identity", "name", `\b(?:my name is|call me)\s+(?P<v>(?-i:[A-Z][\p{L}'-]+(?:\s+[A-Z][\p{L}'-]+)?))`, "User's name is {v}.", 0.95, 0.9),
		r("identity", "age", `\bi(?:'m| am)\s+(?P<v>\d{1,3})(?:\s+years?\s+old|\s*(?:$|[,;.!]))`, "User is {v} years old.", 0.9, 0.7),
		r("identity", "birthday", `\bmy birthday is (?:on\s+)?`+value, "User's birthday is {v}.", 0.9, 0.7),
		r("job", "job", `\bi work as (?:an? )?`+value, "User works as {v}.", 0.9, 0.8),
		r("job", "employer", `\bi work (?:at|for) `+value, "User works at {v}.", 0.85, 0.7),
		r("job", "job", `\bmy job is `+value, "User's job is {v}.", 0.9, 0.8),
		r("job", "job", `\bi(?:'m| am) an? (?P<v>(?:software |data |civil |mechanical )?(?:engineer|developer|teacher|nurse|doctor|lawyer|designer|student|writer|artist|accountant|manager|scientist|researcher|chef|pilot|musician|photographer|counselor|counsellor|therapist|architect|consultant|entrepreneur|programmer|analyst|farmer|firefighter|police officer|painter|dancer|singer|retiree))\b`, "User is a {v}.", 0.85, 0.8),
		r("place", "residence", `\bi (?:live|am living|'m living) in `+value, "User lives in {v}.", 0.9, 0.8),
		r("place", "residence", `\bi (?:just )?moved to `+value, "User moved to {v}.", 0.85, 0.8),
		r("place", "origin", `\bi(?:'m| am) (?:originally )?from `+value, "User is from {v}.", 0.9, 0.7),
		r("family", "name-of:{o}", `\bmy (?P<o>wife|husband|partner|girlfriend|boyfriend|son|daughter|mother|mom|mum|father|dad|brother|sister|dog|cat|best friend|boss)(?:'s name)? is (?:called |named )?(?P<v>(?-i:[A-Z][\p{L}'-]+))`, "User's {o} is {v}.", 0.9, 0.8),
		r("family", "", `\bi have (?P<v>(?:a|an|one|two|three|four|five|\d+) (?:kids?|children|child|sons?|daughters?|brothers?|sisters?|dogs?|cats?|pets?|grandchildren))\b`, "User has {v}.", 0.85, 0.7),
		r("family", "", `\bi(?:'m| am) (?P<v>married|single|divorced|engaged|widowed|pregnant)\b`, "User is {v}.", 0.85, 0.8),
		r("preference", "favourite:{o}", `\bmy fav(?:ou?rite) (?P<o>[\p{L} ]{2,30}?) is `+value, "User's favourite {o} is {v}.", 0.9, 0.6),
		neg(r("preference", "", `\bi (?:don't|do not|no longer|never) (?:like|love|enjoy) `+value, "User does not like {v}.", 0.85, 0.6)),
		r("preference", "", `\bi (?:really |also |absolutely )?(?:like|love|enjoy|adore|prefer) `+value, "User likes {v}.", 0.85, 0.6),
		neg(r("preference", "", `\bi (?:hate|dislike|can't stand|cannot stand) `+value, "User does not like {v}.", 0.85, 0.6)),
		r("preference", "", `\bi(?:'m| am) (?P<v>(?:an? )?(?:vegetarian|vegan)|allergic to [\p{L} ]{2,30}?)\s*(?:$|[,;.!?])`, "User is {v}.", 0.9, 0.8),
		r("plan", "", `\bi(?:'m| am) (?:planning|going|hoping) to `+value, "User plans to {v}.", 0.75, 0.6),
		r("plan", "", `\bi (?:plan|want|intend) to `+value, "User plans to {v}.", 0.75, 0.6),
		r("plan", "", `\bi will `+value, "User will {v}.", 0.7, 0.5),
		r("possession", "", `\bi (?:have|own|bought|got) (?P<v>(?:a|an|my|two|three) [^,;.!?]{2,60}?)\s*(?:$|[,;.!?])`, "User has {v}.", 0.75, 0.5),
		r("activity", "", `\bi(?:'ve| have) (?:been|started) `+value, "User has been {v}.", 0.7, 0.5),
		r("activity", "", `\bi (?:went|visited|travell?ed|joined|finished|started|took) `+value, "User {verb} {v}.", 0.7, 0.5),
	}
}()

var sentenceSplit = regexp.MustCompile(`[.!?\n]+\s*`)

// Heuristic extracts the clear first-person statements of the user's
// messages: identity, age, job, family, preferences, plans, possessions,
// places, dates. It needs no model. Each candidate is written in the third
// person ("User lives in Lisbon.") so that it reads alone.
func Heuristic(msgs []*agentmem.Message) []Candidate {
	var out []Candidate
	seen := map[string]bool{}
	for _, m := range msgs {
		if m.Role != agentmem.RoleUser {
			continue
		}
		for _, sentence := range sentenceSplit.Split(m.Content, -1) {
			sentence = strings.TrimSpace(sentence)
			if len(sentence) < 6 || strings.HasSuffix(sentence, "?") || isQuestion(sentence) || !firstPerson(sentence) {
				continue
			}
			var taken [][2]int // spans of the sentence already stated
			var found []Candidate
			var at []int
			for _, r := range rules {
				loc := r.re.FindStringSubmatchIndex(sentence + ".")
				if loc == nil || overlaps(taken, loc[0], loc[1]) {
					continue
				}
				match := make([]string, len(loc)/2)
				for i := range match {
					if loc[2*i] >= 0 {
						match[i] = (sentence + ".")[loc[2*i]:loc[2*i+1]]
					}
				}
				v, o := strings.TrimSpace(group(r.re, match, "v")), strings.ToLower(strings.TrimSpace(group(r.re, match, "o")))
				v = firstPersonToThird(v)
				if v == "" || len(v) > 120 {
					continue
				}
				taken = append(taken, [2]int{loc[0], loc[1]})
				text := strings.NewReplacer("{v}", v, "{o}", o, "{verb}", verbOf(match[0])).Replace(r.text)
				key := strings.ToLower(text)
				if seen[key] {
					continue
				}
				seen[key] = true
				c := Candidate{Text: text, Category: r.category, Confidence: r.confidence, Importance: r.importance,
					Slot: strings.ReplaceAll(r.slot, "{o}", o), Negated: r.negated, SeqFrom: m.Seq, SeqTo: m.Seq}
				if r.category == "preference" && r.slot == "" {
					c.Object = strings.ToLower(v)
				}
				found, at = append(found, c), append(at, loc[0])
			}
			// In the order the user said them.
			idx := make([]int, len(found))
			for i := range idx {
				idx[i] = i
			}
			sort.SliceStable(idx, func(a, b int) bool { return at[idx[a]] < at[idx[b]] })
			for _, i := range idx {
				out = append(out, found[i])
			}
		}
	}
	return out
}

// overlaps reports whether [from, to) overlaps one of spans.
func overlaps(spans [][2]int, from, to int) bool {
	for _, sp := range spans {
		if from < sp[1] && sp[0] < to {
			return true
		}
	}
	return false
}

func group(re *regexp.Regexp, match []string, name string) string {
	if i := re.SubexpIndex(name); i > 0 && i < len(match) {
		return match[i]
	}
	return ""
}

// firstPerson reports whether s has a word of the first person singular,
// which every rule needs: most sentences have none, and skipping them
// spares the rules' regular expressions (the bulk of extraction's cost).
func firstPerson(s string) bool {
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && r != '\'' }) {
		switch strings.ToLower(w) {
		case "i", "i'm", "i've", "i'll", "i'd", "my", "me", "im":
			return true
		}
	}
	return false
}

// isQuestion recognises a sentence that asks rather than states.
func isQuestion(s string) bool {
	first := strings.ToLower(strings.Fields(s)[0])
	switch first {
	case "what", "where", "when", "who", "why", "how", "which", "do", "does", "did", "can", "could", "should", "would", "is", "are", "will":
		return true
	}
	return false
}

// verbOf returns the past-tense verb a rule matched ("went", "visited"…).
func verbOf(s string) string {
	for _, w := range strings.Fields(strings.ToLower(s)) {
		switch w {
		case "went", "visited", "traveled", "travelled", "joined", "finished", "started", "took":
			return w
		}
	}
	return "did"
}

// firstPersonToThird rewrites the pronouns of a value ("my sister" →
// "their sister") so that a memory reads in the third person.
func firstPersonToThird(s string) string {
	words := strings.FieldsFunc(s, unicode.IsSpace)
	for i, w := range words {
		switch strings.ToLower(w) {
		case "my":
			words[i] = "their"
		case "me":
			words[i] = "them"
		case "mine":
			words[i] = "theirs"
		case "myself":
			words[i] = "themselves"
		case "i":
			words[i] = "they"
		}
	}
	return strings.Join(words, " ")
}
