// Stage 2 of the extractor without a model (heuristic.go lists them),
// sentence: a sentence → what kind of sentence it is, and the clauses to
// read.
//
// Takes a sentence from the segment stage (segment.go), and whether it
// names the user; gives its words to the clause stage (clause.go,
// extractClauses), or nothing. A question, a request, a hypothetical,
// fiction and small talk state nothing ("If I were rich…", "Can you…",
// "In the story, I am a dragon"); a correction is a candidate of its own
// ("sorry, I meant Braga, not Porto"); a form ("name: Kofi / age: 22") is
// a clause per field; a sentence with no word of the user counts only as
// chat that leaves the "I" out (fragment.go); a subordinate clause or a
// time that leads the sentence dates its main clause ("When I was 10, I
// moved to Paris" → "User moved to Paris when they were 10."); a
// favourite said the other way round is turned ("Dune is my favourite
// book").

package extract

import (
	"slices"
	"strings"
)

// extractSentence appends the memories of one sentence to out: named says
// it names the user (mentionsUser, ownEvent); one that does not counts
// only when it is the user's with the "I" left out (withSubject).
func extractSentence(out []Candidate, s string, named bool) []Candidate {
	if clauses := formFields(s); clauses != nil {
		for _, c := range clauses {
			out = extractSentence(out, c, true)
		}
		return out
	}
	if strings.ContainsAny(s, "({[=") && codeLike(s) {
		return out // code, not a statement: "for i in range(10) print(i)"
	}
	toks := words(s)
	if len(toks) == 1 {
		switch w := lower(toks[0]); {
		case statuses[w] || diets[w] || states[w]:
			toks, named = []string{"I'm", w}, true // "engaged!", "vegetarian."
		case singleEvents[w]:
			toks, named = []string{"I", w}, true // "graduated!"
		case jobs[w]:
			toks, named = []string{"I'm", "a", w}, true // "nurse."
		}
	}
	if len(toks) < 2 {
		return out
	}
	if c, ok := correction(toks); ok {
		return append(out, c)
	}
	if c, said, ok := saidWrong(toks); ok {
		// The correction, and what was said, set right: "my condo is in
		// Ari" is a statement of its own, when nothing stored names
		// Sukhumvit to correct.
		out = append(out, c)
		if len(said) < 2 {
			return out
		}
		toks = said
	}
	if n := len(toks); n >= 5 && toks[n-3] == "," && lower(toks[n-2]) == "not" && capitalized(toks[n-1]) && capitalized(toks[n-4]) &&
		lower(toks[n-4]) != "i" && toks[n-1] != toks[n-4] && isWord(lower(toks[n-1])) && isWord(lower(toks[n-4])) {
		// "my condo is in Ari, not Sukhumvit": the statement, and the
		// name it corrects wherever a memory says it.
		out = append(out, correctionOf(toks[n-4], toks[n-1]))
		toks = toks[:n-3]
	}
	if k := index(toks, "free"); k >= 3 && habitWords[lower(toks[k-1])] != "" && isNumber(lower(toks[0])) && timeUnits[strings.TrimSuffix(lower(toks[1]), "s")] {
		// "3 months smoke free today!!": the habit has ended.
		habit := habitWords[lower(toks[k-1])]
		text := "User has been " + lower(toks[k-1]) + " free for " + toks[0] + " " + lower(toks[1]) + "."
		return append(out, Candidate{Text: text, Category: "activity", Confidence: 0.8, Importance: 0.6, Object: habit, Retract: true},
			Candidate{Text: text, Category: "health", Confidence: 0.8, Importance: 0.6, Object: lower(toks[k-1]) + " free"})
	}
	if thing := forgetAbout(toks); thing != "" {
		// "forget what I said about the marathon": its memories end.
		return append(out, Candidate{Text: "User took back what they said about " + thing + ".", Category: "fact", Confidence: 0.8, Importance: 0.6, Object: thing, Retract: true})
	}
	if k := 0; len(toks) > 2 {
		if lower(toks[0]) == "please" {
			k = 1
		}
		if k+2 < len(toks) && lower(toks[k]) == "call" && lower(toks[k+1]) == "me" && capitalized(toks[k+2]) {
			// "Call me Dave": what the user goes by.
			return append(out, Candidate{Text: "User goes by " + toks[k+2] + ".", Category: "identity", Slot: "nickname", Confidence: 0.85, Importance: 0.8})
		}
	}
	if l := profileList(toks); l != nil {
		return extractClauses(out, l, nil)
	}
	if full := withSubject(toks); full != nil {
		toks = full
	} else if !named {
		return fragments(out, toks) // nothing of the user's in it, but for a list of fragments
	}
	toks = inverted(toks)
	switch lower(toks[0]) {
	case "if", "unless", "suppose", "supposing", "imagine", "assuming", "hypothetically", "what", "who",
		"where", "why", "how", "which", "do", "does", "did", "can", "could", "would", "should", "will", "is",
		"are", "am", "have", "has", "please", "let's", "lets", "let", "tell", "help", "remind", "show", "give",
		"thanks", "thank", "sorry", "hi", "hello", "hey", "maybe", "perhaps", "probably":
		if c := index(toks, ","); c > 0 && smallTalkLeads[lower(toks[0])] && c+2 < len(toks) {
			// "sorry, typing with one hand, my son Noah won't nap": the
			// greeting or apology ends at the comma; the rest is read.
			return extractSentence(out, strings.Join(toks[c+1:], " "), named)
		}
		return out // a question, a hypothetical, a request or small talk
	case "roleplay", "role-play", "pretend", "scenario", "roleplaying":
		return out // fiction: "Roleplay: you are a landlord and I'm a tenant"
	case "in":
		// "In the story, I am a dragon": fiction, a game, a dream.
		for _, t := range toks[1:min(len(toks), 5)] {
			if fiction[lower(t)] {
				return out
			}
		}
	case "when", "while", "after", "before", "since", "once", "because", "as", "until", "although", "though":
		// A leading subordinate clause: "When I was 10, I moved to Paris."
		// The main clause starts after the comma, or at its subject when
		// that comes first: "Since my divorce I've been living with my
		// sister", "Since my divorce I live with my parents, for now".
		c := index(toks, ",")
		sub, main := []string(nil), []string(nil)
		if c >= 0 {
			sub, main = toks[1:c], toks[c+1:]
		}
		if len(toks) > 2 && strings.HasSuffix(lower(toks[1]), "ing") && verbs[lower(toks[1])] != "" && (c < 0 || c > 2) {
			// "Since moving to Oslo in 2022 I've picked up skiing": the
			// user moved.
			l := verbs[lower(toks[1])]
			p := pastTense(l)
			end := 2
			for ; end < len(toks) && end != c && !subjectStart(toks, end); end++ {
			}
			if lower(toks[0]) != "while" {
				out = extractClauses(out, slices.Concat([]string{"I", p}, toks[2:end]), nil)
			}
			if end == c {
				end++
			}
			return extractClauses(out, toks[end:], nil)
		}
		for i := 2; i < len(toks) && (c < 0 || i < c); i++ {
			if s := lower(toks[i]); s == "i" || s == "i'm" || s == "i've" || s == "im" || s == "we" || s == "we're" || s == "we've" {
				if !hasPredicate(toks[1:i]) && !slices.Contains(lowerAll(toks[1:i]), "i") && !slices.Contains(lowerAll(toks[1:i]), "we") || c < 0 && i > 2 {
					sub, main = toks[1:i], toks[i:]
					break
				}
			}
		}
		if main == nil {
			return out
		}
		conj := lower(toks[0])
		if conj == "because" || conj == "since" || conj == "although" || conj == "though" {
			return extractClauses(extractClauses(out, sub, nil), main, nil)
		}
		return extractClauses(out, main, append([]string{conj}, thirdPersonRest(sub)...))
	}
	if i := frontedTime(toks); i > 0 {
		// "Yesterday I passed my driving test": the time dates the clause.
		when := toks[:i]
		if when[len(when)-1] == "," {
			when = when[:len(when)-1]
		}
		start := len(out)
		tail := thirdPersonRest(lowerFirst(when))
		out = extractClauses(out, toks[i:], tail)
		// The time dates every clause of the sentence: "Last spring we
		// moved to Bristol and I started at the uni".
		at := " " + strings.Join(tail, " ")
		for k := start; k < len(out); k++ {
			if t := out[k].Text; !strings.Contains(strings.ToLower(t), strings.ToLower(at)) && strings.HasSuffix(t, ".") {
				out[k].Text = t[:len(t)-1] + at + "."
			}
		}
		return out
	}
	return extractClauses(out, toks, nil)
}

var smallTalkLeads = set("thanks thank sorry hi hello hey please")

// singleEvents may make a sentence on their own: "graduated!".
var singleEvents = set("graduated retired engaged married divorced")

// correction reads a sentence that corrects what the user said before:
// "sorry, I meant Braga, not Porto" (a value for another, see
// Candidate.Corrects) and "oops, 28 actually" (a bare number: the age).
// It needs a word of correction (sorry, oops, typo, meant, actually…)
// before the value, and nothing else in the clause; a restated fact
// ("sorry, I am 54, not 45") is read as a statement instead.
func correction(toks []string) (Candidate, bool) {
	marked := false
	i := 0
	for ; i < len(toks); i++ {
		w := lower(toks[i])
		if correctionWords[w] {
			marked = true
			continue
		}
		if w == "," || w == "i" || w == "it's" || w == "its" || w == "it" || w == "is" || w == "was" || w == "no" || w == "my" || w == "bad" || fillers[w] {
			continue
		}
		break
	}
	if !marked || i >= len(toks) {
		return Candidate{}, false
	}
	if n := index(toks, "not"); n > i && n+1 < len(toks) && i > 0 && (lower(toks[i-1]) == "it's" || lower(toks[i-1]) == "its") && isWord(toks[i]) && isWord(toks[n+1]) {
		// "Correction — it's amoxicillin I'm allergic to, not penicillin".
		return correctionOf(toks[i], toks[n+1]), true
	}
	value := func(j int) int { // the end of a value that starts at j
		if j < len(toks) && isNumber(lower(toks[j])) {
			return j + 1
		}
		k := j
		for k < len(toks) && capitalized(toks[k]) && lower(toks[k]) != "i" {
			k++
		}
		return k
	}
	end := value(i)
	if end == i {
		return Candidate{}, false
	}
	newValue := strings.Join(toks[i:end], " ")
	j := end
	for j < len(toks) && (toks[j] == "," || lower(toks[j]) == "actually") {
		j++
	}
	if j < len(toks) && lower(toks[j]) == "not" {
		oldEnd := value(j + 1)
		if oldEnd == j+1 {
			return Candidate{}, false
		}
		return correctionOf(newValue, strings.Join(toks[j+1:oldEnd], " ")), true
	}
	if n := len(toks); n >= 2 && lower(toks[n-2]) == "not" && capitalized(toks[n-1]) && capitalized(toks[i]) && toks[n-1] != toks[i] && j < n {
		// "Sorry, I meant Galway - my sister lives in Galway, not
		// Dublin": the value meant, against the one at the end.
		return correctionOf(newValue, toks[n-1]), true
	}
	if n := lower(newValue); isNumber(n) && len(n) <= 3 && (j >= len(toks) || toks[j-1] == ",") {
		// "oops, 28 actually, I keep adding a year": the age.
		return Candidate{Text: "User is " + n + ".", Category: "identity", Slot: "age", Object: n, Confidence: 0.8, Importance: 0.7}, true
	}
	return Candidate{}, false
}

// saidWrong reads "I said my condo is in Sukhumvit but that's wrong —
// it's in Ari": the name said before "wrong", corrected by the one after
// "it's" (and a preposition), and what was said after "said", set right
// ("my condo is in Ari"; nil when "said" does not lead it).
func saidWrong(toks []string) (Candidate, []string, bool) {
	w := index(toks, "wrong")
	if w < 3 || !(lower(toks[w-1]) == "that's" || lower(toks[w-1]) == "was" || lower(toks[w-1]) == "is") {
		return Candidate{}, nil, false
	}
	old := ""
	for _, t := range toks[1 : w-1] {
		if capitalized(t) && lower(t) != "i" && isWord(lower(t)) {
			old = t
		}
	}
	for i := w + 1; i+1 < len(toks); i++ {
		if l := lower(toks[i]); l != "it's" && l != "its" {
			continue
		}
		j := i + 1
		if j+1 < len(toks) && (stops[lower(toks[j])] || lower(toks[j]) == "called") {
			j++
		}
		if old != "" && capitalized(toks[j]) && isWord(lower(toks[j])) && toks[j] != old {
			var said []string
			if k := index(toks, "said"); k >= 0 && k < w-1 {
				end := w - 1
				for e := k + 1; e < w-1; e++ {
					if splitConj[lower(toks[e])] || toks[e] == "," {
						end = e
						break
					}
				}
				for _, t := range toks[k+1 : end] {
					if t == old {
						t = toks[j]
					}
					said = append(said, t)
				}
			}
			return correctionOf(toks[j], old), said, true
		}
		break
	}
	return Candidate{}, nil, false
}

var correctionWords = set("sorry oops typo meant mean actually correction whoops scratch that")

// forgetAbout reads "forget what I said about the marathon": the user
// takes back what they said of a thing; it returns its noun, or "".
func forgetAbout(toks []string) string {
	k := 0
	if k < len(toks) && lower(toks[k]) == "please" {
		k++
	}
	if k+3 < len(toks) && lower(toks[k]) == "scratch" && lower(toks[k+1]) == "that" {
		k++ // "scratch that about sushi"
	} else if k+4 >= len(toks) || lower(toks[k]) != "forget" {
		return ""
	}
	a := index(toks, "about")
	if a < 0 || a > k+5 {
		return ""
	}
	end := a + 1
	for end < len(toks) && toks[end] != "," && !splitConj[lower(toks[end])] {
		end++
	}
	if end == a+1 {
		return ""
	}
	return lower(toks[end-1])
}

// inverted returns a sentence that names the user's favourite or passion
// last in the order the clause reader expects: "The Remains of the Day is
// my all-time favourite novel" is "my all-time favourite novel is The
// Remains of the Day"; "spicy food is my thing" is "I love spicy food".
// Anything else is returned as it is.
func inverted(toks []string) []string {
	if len(toks) < 4 || subjectStart(toks, 0) {
		return toks
	}
	for k := 1; k+2 < len(toks) && k <= 8; k++ {
		if w := lower(toks[k]); (w != "is" && w != "are") || lower(toks[k+1]) != "my" {
			continue
		}
		rest, after := toks[k+2:], []string(nil)
		if end := index(rest, ","); end >= 0 {
			rest, after = rest[:end], rest[end:] // "…, the hotter the better"
		}
		if len(after) < 2 || !especially[lower(after[1])] {
			after = nil // but "…, especially Coltrane" stays
		}
		switch {
		case len(rest) >= 1 && len(rest) <= 3 && passions[lower(rest[len(rest)-1])] && !slices.ContainsFunc(rest, func(t string) bool { return verbStart(lower(t)) }):
			return slices.Concat([]string{"I", "love"}, lowerFirst(toks[:k]), after)
		case len(rest) >= 2 && len(rest) <= 4 && slices.ContainsFunc(rest[:len(rest)-1], func(t string) bool { return favourites[lower(t)] }):
			return slices.Concat([]string{"my"}, rest, []string{toks[k]}, toks[:k])
		case len(rest) >= 1 && len(rest) <= 3 && (len(rest) >= 2 || kin[lower(rest[0])] || pets[lower(rest[0])] || ownThings[lower(rest[0])]) && after == nil && !otherSubjects[lower(toks[0])] && !notPlaces[lower(toks[0])] && index(toks[:k], ",") < 0 &&
			!verbStart(lower(toks[0])) && !slices.ContainsFunc(rest, func(t string) bool { return verbStart(lower(t)) || stops[lower(t)] }):
			// "Ramen is my comfort food": "my comfort food is Ramen".
			return slices.Concat([]string{"my"}, rest, []string{toks[k]}, toks[:k])
		}
		return toks
	}
	return toks
}

// frontedTime returns where the main clause starts when the sentence
// leads with an adverbial of time before its subject ("Yesterday I…",
// "Last week we…", "On Sundays I…", "Two days ago, my sister…",
// "This morning I…"), or 0. The adverbial is a few words that start with
// a time word, a month or weekday, or a number ("two days ago"); a
// sentence that leads with anything else is not moved.
func frontedTime(toks []string) int {
	w := lower(toks[0])
	switch {
	case w == "yesterday", w == "today", w == "tonight", w == "lately", w == "recently", w == "earlier",
		w == "last", w == "this", w == "next", w == "every", w == "on", w == "in", w == "over", w == "back", w == "a", w == "two",
		w == "three", w == "few", w == "couple", months[w], weekdays[strings.TrimSuffix(w, "s")], isNumber(w):
	default:
		return 0
	}
	for i := 1; i < min(len(toks), 6); i++ {
		switch t := lower(toks[i]); {
		case subjectStart(toks, i) && (i > 1 || oneWordTime(w)): // not "In my opinion, …", "This I know"
			if i > 1 && w == "a" && lower(toks[i-1]) != "ago" && lower(toks[i-1]) != "," {
				return 0 // "A friend and I…"
			}
			return i
		case t == "," || t == "ago" || t == "of" || t == "the" || months[t] || weekdays[strings.TrimSuffix(t, "s")] || isNumber(t) || timeUnits[strings.TrimSuffix(t, "s")]:
		case i == 1 && (w == "last" || w == "this" || w == "next" || w == "every" || w == "on" || w == "over" || w == "back"):
			// "last summer", "this morning", "on weekends", "back in 2019"
		default:
			return 0
		}
	}
	return 0
}

// oneWordTime reports whether w alone dates a clause: "Yesterday I…".
func oneWordTime(w string) bool {
	switch w {
	case "yesterday", "today", "tonight", "lately", "recently", "earlier":
		return true
	}
	return months[w] || weekdays[strings.TrimSuffix(w, "s")]
}
