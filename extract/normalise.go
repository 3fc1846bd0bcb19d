// Stage 7 of the extractor without a model (heuristic.go lists them),
// normalise: what a clause says → the memory as it is stored.
//
// Takes a clause's subject and predicate from the said stage (said.go),
// and at the end the candidates of a batch; gives the memory's text, in
// the third person and self-contained, keeping the names, places, dates
// and quantities of the user's words ("I moved from Berlin to Lisbon last
// year" → "User moved from Berlin to Lisbon last year."; "my sister Ana
// lives in Porto" → "User's sister Ana lives in Porto."), the
// abbreviations of chat spelled out ("in jan" → "in January"), and a
// repeat within the batch dropped.

package extract

import (
	"strings"
)

// memoryText writes a clause as a memory in the third person: its
// subject ("User", "User's sister Ana"), the adverbs before its verb
// (pred[:v]), the verb (pred[v]) agreeing with the subject, the rest with
// "my" as "their" and "me" as "them", and tail (a time or a clause that
// led the sentence): "I also speak German" → "User also speaks German.".
func memoryText(subj subject, pred []string, v int, rest, tail []string) string {
	var b strings.Builder
	b.WriteString(subj.text)
	for _, t := range pred[:v] {
		b.WriteByte(' ')
		b.WriteString(t)
	}
	b.WriteByte(' ')
	if subj.kind == self || subj.text == "User" { // ("we" reads as the user: "We moved to Leeds" is "User moved to Leeds")
		b.WriteString(agree(pred[v]))
	} else {
		b.WriteString(pred[v])
	}
	for _, t := range thirdPersonRest(rest) {
		if t != "," {
			b.WriteByte(' ')
		}
		switch lower(t) {
		case "gonna":
			t = "going to"
		case "wanna":
			t = "want to"
		}
		b.WriteString(t)
	}
	for _, t := range tail {
		b.WriteByte(' ')
		b.WriteString(t)
	}
	b.WriteByte('.')
	return b.String()
}

// agree makes a verb of the first person agree with "User": "am" → "is",
// "live" → "lives", "can't" → "cannot"; past forms stay.
func agree(v string) string {
	w := lower(v)
	switch w {
	case "am", "'m":
		return "is"
	case "are":
		return "is"
	case "have", "'ve":
		return "has"
	case "do":
		return "does"
	case "don't", "dont":
		return "does not"
	case "didn't", "didnt":
		return "did not"
	case "can't", "cant", "cannot":
		return "cannot"
	case "won't", "wont":
		return "will not"
	case "haven't":
		return "has not"
	case "wasn't":
		return "was not"
	case "aren't", "ain't":
		return "is not"
	case "was", "were", "will", "can", "did", "had", "used", "has", "is", "no", "never", "'ll":
		if w == "'ll" {
			return "will"
		}
		return v
	}
	if forms, ok := thirdPerson[w]; ok {
		return forms
	}
	if past[w] || strings.HasSuffix(w, "ed") || !isWord(w) {
		return v
	}
	if _, verb := verbs[w]; !verb && strings.HasSuffix(w, "ly") {
		return v // an adverb before the verb: "nearly died"
	}
	return s3(w)
}

// thirdPersonRest rewrites the first person in the rest of a clause:
// "my" → "their", "me" → "them", "I was" → "they were".
func thirdPersonRest(rest []string) []string {
	var out []string
	for i, t := range rest {
		r := ""
		switch lower(t) {
		case "my", "our":
			r = "their"
		case "me", "us":
			if t == "US" || t == "ME" {
				break // the United States, Maine
			}
			r = "them"
		case "mine", "ours":
			r = "theirs"
		case "myself", "ourselves":
			r = "themselves"
		case "i", "we":
			r = "they"
		case "i'm", "we're", "im":
			r = "they're"
		case "i've", "we've":
			r = "they've"
		case "i'll", "we'll":
			r = "they'll"
		case "i'd", "we'd":
			r = "they'd"
		case "am", "was":
			if i > 0 && (lower(rest[i-1]) == "i" || lower(rest[i-1]) == "we") {
				r = map[string]string{"am": "are", "was": "were"}[lower(t)]
			}
		}
		if r != "" {
			if out == nil {
				out = make([]string, len(rest))
				copy(out, rest)
			}
			out[i] = r
		}
	}
	if out == nil {
		return rest
	}
	return out
}

// spelledOut writes the abbreviations of chat out in full in a memory,
// which is read later without the conversation: "in jan" → "in January",
// "since uni" → "since university", "a backend dev" → "a backend
// developer".
func spelledOut(text string) string {
	if !strings.ContainsFunc(text, func(r rune) bool { return r >= 'a' && r <= 'z' }) {
		return text
	}
	words := strings.Split(text, " ")
	changed := false
	for i, w := range words {
		core := strings.TrimRight(w, ".,;:!")
		if n := len(core); n >= 2 && n <= 3 && core[n-1] == 'x' && isNumber(core[:n-1]) {
			words[i] = core[:n-1] + " times" + w[n:] // "3x a week"
			changed = true
			continue
		}
		if (core == "min" || core == "hr") && i > 0 && isNumber(words[i-1]) {
			words[i] = map[string]string{"min": "minutes", "hr": "hours"}[core] + w[len(core):] // "50 min"
			changed = true
			continue
		}
		if full, ok := abbreviations[core]; ok && i > 0 {
			words[i] = full + w[len(core):]
			changed = true
		}
	}
	if !changed {
		return text
	}
	return strings.Join(words, " ")
}

var abbreviations = map[string]string{
	"jan": "January", "feb": "February", "mar": "March", "apr": "April", "jun": "June", "jul": "July",
	"aug": "August", "sept": "September", "sep": "September", "oct": "October", "nov": "November", "dec": "December",
	"january": "January", "february": "February", "march": "March", "april": "April", "june": "June", "july": "July",
	"august": "August", "september": "September", "october": "October", "november": "November", "december": "December",
	"monday": "Monday", "tuesday": "Tuesday", "wednesday": "Wednesday", "thursday": "Thursday", "friday": "Friday",
	"saturday": "Saturday", "sunday": "Sunday", "mondays": "Mondays", "tuesdays": "Tuesdays", "wednesdays": "Wednesdays",
	"thursdays": "Thursdays", "fridays": "Fridays", "saturdays": "Saturdays", "sundays": "Sundays",
	"uni": "university", "veggie": "vegetarian", "dev": "developer", "devs": "developers", "yrs": "years", "yr": "year", "mins": "minutes",
	"hrs": "hours", "wks": "weeks", "hubby": "husband", "bday": "birthday", // (bf, gf: expand writes them out on the way in)
}

// unfinished reports whether a memory's text stops where its statement
// has not ended: at a verb that needs what follows ("User's mother
// lives.", "User will book."), or at a word that stands for something
// not said ("User sells most.", "User is parking that."; "them" is the
// user: "User's aunt Rosa raised them."): a clause cut short by the
// rules, no fact. A retraction ("User quit.") is not asked.
func unfinished(text string) bool {
	ws := strings.Fields(strings.TrimSuffix(text, "."))
	if len(ws) < 2 || len(ws) > 5 {
		return false
	}
	last := lower(ws[len(ws)-1])
	if dangling[last] && ws[len(ws)-1] == last { // not "User works in IT."
		return true
	}
	prev := lower(ws[len(ws)-2])
	if determiners[prev] || strings.ContainsAny(prev, "0123456789") {
		return false // a noun: "User pays £950 rent."
	}
	lemma, ok := verbs[last]
	return ok && needsObject[lemma] && !strings.HasSuffix(last, "ing")
}

var (
	dangling    = set("a an the my their his her our your this that these those most some any all more it one each every")
	needsObject = set("live book sell want need like love take make get give put buy use bring have keep find tell say call own rent")
)

// dedupe drops a candidate whose text repeats an earlier one's.
func dedupe(cs []Candidate) []Candidate {
	out := cs[:0]
	if len(cs) > 16 { // a long text: a map beats comparing every pair
		seen := make(map[string]bool, len(cs))
		for _, c := range cs {
			k := strings.ToLower(c.Text) + "\x00" + c.Slot
			if c.Retract {
				k += "\x00r"
			}
			if !seen[k] {
				seen[k] = true
				out = append(out, c)
			}
		}
		return out
	}
next:
	for _, c := range cs {
		for _, o := range out {
			if strings.EqualFold(o.Text, c.Text) && o.Retract == c.Retract && o.Slot == c.Slot {
				continue next
			}
		}
		out = append(out, c)
	}
	return out
}
