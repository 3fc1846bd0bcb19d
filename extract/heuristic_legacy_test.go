package extract

// The regular-expression rules that Heuristic replaced, kept only so that
// BenchmarkHeuristic measures the new extractor against them in the same run.

import (
	"regexp"
	"sort"
	"strings"
	"unicode"

	"github.com/agentmem/agentmem"
)

// legacyRule recognises one kind of first-person statement. Its pattern runs on
// one sentence; the named group "v" is the value and "o" an object.
type legacyRule struct {
	category   string
	slot       string // "" accumulate; "{o}" is replaced by the object
	re         *regexp.Regexp
	text       string // the memory, with {v} and {o}
	confidence float64
	importance float64
	negated    bool
}

// value is the end of a statement: up to a clause break.
const legacyValue = `(?P<v>[^,;.!?]{1,80}?)\s*(?:$|[,;.!?]|\s+(?:and|but|because|so|which|who)\s)`

var legacyRules = func() []legacyRule {
	r := func(category, slot, pattern, text string, confidence, importance float64) legacyRule {
		return legacyRule{category: category, slot: slot, re: regexp.MustCompile(`(?i)` + pattern), text: text, confidence: confidence, importance: importance}
	}
	neg := func(x legacyRule) legacyRule { x.negated = true; return x }
	return []legacyRule{
		r("identity", "name", `\b(?:my name is|call me)\s+(?P<v>(?-i:[A-Z][\p{L}'-]+(?:\s+[A-Z][\p{L}'-]+)?))`, "User's name is {v}.", 0.95, 0.9),
		r("identity", "age", `\bi(?:'m| am)\s+(?P<v>\d{1,3})(?:\s+years?\s+old|\s*(?:$|[,;.!]))`, "User is {v} years old.", 0.9, 0.7),
		r("identity", "birthday", `\bmy birthday is (?:on\s+)?`+legacyValue, "User's birthday is {v}.", 0.9, 0.7),
		r("job", "job", `\bi work as (?:an? )?`+legacyValue, "User works as {v}.", 0.9, 0.8),
		r("job", "employer", `\bi work (?:at|for) `+legacyValue, "User works at {v}.", 0.85, 0.7),
		r("job", "job", `\bmy job is `+legacyValue, "User's job is {v}.", 0.9, 0.8),
		r("job", "job", `\bi(?:'m| am) an? (?P<v>(?:software |data |civil |mechanical )?(?:engineer|developer|teacher|nurse|doctor|lawyer|designer|student|writer|artist|accountant|manager|scientist|researcher|chef|pilot|musician|photographer|counselor|counsellor|therapist|architect|consultant|entrepreneur|programmer|analyst|farmer|firefighter|police officer|painter|dancer|singer|retiree))\b`, "User is a {v}.", 0.85, 0.8),
		r("place", "residence", `\bi (?:live|am living|'m living) in `+legacyValue, "User lives in {v}.", 0.9, 0.8),
		r("place", "residence", `\bi (?:just )?moved to `+legacyValue, "User moved to {v}.", 0.85, 0.8),
		r("place", "origin", `\bi(?:'m| am) (?:originally )?from `+legacyValue, "User is from {v}.", 0.9, 0.7),
		r("family", "name-of:{o}", `\bmy (?P<o>wife|husband|partner|girlfriend|boyfriend|son|daughter|mother|mom|mum|father|dad|brother|sister|dog|cat|best friend|boss)(?:'s name)? is (?:called |named )?(?P<v>(?-i:[A-Z][\p{L}'-]+))`, "User's {o} is {v}.", 0.9, 0.8),
		r("family", "", `\bi have (?P<v>(?:a|an|one|two|three|four|five|\d+) (?:kids?|children|child|sons?|daughters?|brothers?|sisters?|dogs?|cats?|pets?|grandchildren))\b`, "User has {v}.", 0.85, 0.7),
		r("family", "", `\bi(?:'m| am) (?P<v>married|single|divorced|engaged|widowed|pregnant)\b`, "User is {v}.", 0.85, 0.8),
		r("preference", "favourite:{o}", `\bmy fav(?:ou?rite) (?P<o>[\p{L} ]{2,30}?) is `+legacyValue, "User's favourite {o} is {v}.", 0.9, 0.6),
		neg(r("preference", "", `\bi (?:don't|do not|no longer|never) (?:like|love|enjoy) `+legacyValue, "User does not like {v}.", 0.85, 0.6)),
		r("preference", "", `\bi (?:really |also |absolutely )?(?:like|love|enjoy|adore|prefer) `+legacyValue, "User likes {v}.", 0.85, 0.6),
		neg(r("preference", "", `\bi (?:hate|dislike|can't stand|cannot stand) `+legacyValue, "User does not like {v}.", 0.85, 0.6)),
		r("preference", "", `\bi(?:'m| am) (?P<v>(?:an? )?(?:vegetarian|vegan)|allergic to [\p{L} ]{2,30}?)\s*(?:$|[,;.!?])`, "User is {v}.", 0.9, 0.8),
		r("plan", "", `\bi(?:'m| am) (?:planning|going|hoping) to `+legacyValue, "User plans to {v}.", 0.75, 0.6),
		r("plan", "", `\bi (?:plan|want|intend) to `+legacyValue, "User plans to {v}.", 0.75, 0.6),
		r("plan", "", `\bi will `+legacyValue, "User will {v}.", 0.7, 0.5),
		r("possession", "", `\bi (?:have|own|bought|got) (?P<v>(?:a|an|my|two|three) [^,;.!?]{2,60}?)\s*(?:$|[,;.!?])`, "User has {v}.", 0.75, 0.5),
		r("activity", "", `\bi(?:'ve| have) (?:been|started) `+legacyValue, "User has been {v}.", 0.7, 0.5),
		r("activity", "", `\bi (?:went|visited|travell?ed|joined|finished|started|took) `+legacyValue, "User {verb} {v}.", 0.7, 0.5),
	}
}()

var legacySentenceSplit = regexp.MustCompile(`[.!?\n]+\s*`)

// Heuristic extracts the clear first-person statements of the user's
// messages: identity, age, job, family, preferences, plans, possessions,
// places, dates. It needs no model. Each candidate is written in the third
// person ("User lives in Lisbon.") so that it reads alone.
func legacyHeuristic(msgs []*agentmem.Message) []Candidate {
	var out []Candidate
	seen := map[string]bool{}
	for _, m := range msgs {
		if m.Role != agentmem.RoleUser {
			continue
		}
		for _, sentence := range legacySentenceSplit.Split(m.Content, -1) {
			sentence = strings.TrimSpace(sentence)
			if len(sentence) < 6 || strings.HasSuffix(sentence, "?") || legacyIsQuestion(sentence) || !legacyFirstPerson(sentence) {
				continue
			}
			var taken [][2]int // spans of the sentence already stated
			var found []Candidate
			var at []int
			for _, r := range legacyRules {
				loc := r.re.FindStringSubmatchIndex(sentence + ".")
				if loc == nil || legacyOverlaps(taken, loc[0], loc[1]) {
					continue
				}
				match := make([]string, len(loc)/2)
				for i := range match {
					if loc[2*i] >= 0 {
						match[i] = (sentence + ".")[loc[2*i]:loc[2*i+1]]
					}
				}
				v, o := strings.TrimSpace(legacyGroup(r.re, match, "v")), strings.ToLower(strings.TrimSpace(legacyGroup(r.re, match, "o")))
				v = legacyFirstPersonToThird(v)
				if v == "" || len(v) > 120 {
					continue
				}
				taken = append(taken, [2]int{loc[0], loc[1]})
				text := strings.NewReplacer("{v}", v, "{o}", o, "{verb}", legacyVerbOf(match[0])).Replace(r.text)
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
func legacyOverlaps(spans [][2]int, from, to int) bool {
	for _, sp := range spans {
		if from < sp[1] && sp[0] < to {
			return true
		}
	}
	return false
}

func legacyGroup(re *regexp.Regexp, match []string, name string) string {
	if i := re.SubexpIndex(name); i > 0 && i < len(match) {
		return match[i]
	}
	return ""
}

// firstPerson reports whether s has a word of the first person singular,
// which every rule needs: most sentences have none, and skipping them
// spares the rules' regular expressions (the bulk of extraction's cost).
func legacyFirstPerson(s string) bool {
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && r != '\'' }) {
		switch strings.ToLower(w) {
		case "i", "i'm", "i've", "i'll", "i'd", "my", "me", "im":
			return true
		}
	}
	return false
}

// isQuestion recognises a sentence that asks rather than states.
func legacyIsQuestion(s string) bool {
	first := strings.ToLower(strings.Fields(s)[0])
	switch first {
	case "what", "where", "when", "who", "why", "how", "which", "do", "does", "did", "can", "could", "should", "would", "is", "are", "will":
		return true
	}
	return false
}

// verbOf returns the past-tense verb a rule matched ("went", "visited"…).
func legacyVerbOf(s string) string {
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
func legacyFirstPersonToThird(s string) string {
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
