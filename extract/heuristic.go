package extract

import (
	"context"
	"slices"
	"strings"

	"github.com/agentmem/agentmem"
)

// HeuristicExtractor is the Extractor that needs no model: Heuristic's
// clear first-person statements, weighed by the classifiers learned from
// the labelled corpus when Learned is set.
type HeuristicExtractor struct {
	Learned *Learned
}

// Extract implements Extractor.
func (x HeuristicExtractor) Extract(ctx context.Context, _ *agentmem.Thread, msgs []*agentmem.Message) ([]Candidate, error) {
	cands := Heuristic(msgs)
	if x.Learned == nil || x.Learned.Model == nil || x.Learned.Embed == nil {
		return cands, nil
	}
	return x.Learned.weigh(ctx, msgs, cands)
}

// Heuristic extracts the first-person statements of the user's messages
// about themselves and the people, pets, places and things in their life.
// It needs no model: each message is split into sentences and clauses
// (coordination, relative and subordinate clauses), each clause whose
// subject is the user ("I", "we", "my sister Ana") is checked against
// what is not a memory (questions, hypotheticals, requests, quotes, small
// talk) and rewritten in the third person ("User's sister Ana lives in
// Porto."), keeping its names, places, dates and quantities. Slot, Object,
// Negated and Retract say how the fact relates to earlier ones.
func Heuristic(msgs []*agentmem.Message) []Candidate {
	var out []Candidate
	for _, m := range msgs {
		if m == nil || m.Role != agentmem.RoleUser {
			continue
		}
		start := len(out)
		segment(m.Content, func(s string, named bool) {
			out = extractSentence(out, s, named)
		})
		for i := start; i < len(out); i++ {
			out[i].SeqFrom, out[i].SeqTo = m.Seq, m.Seq
			out[i].Text = spelledOut(out[i].Text)
		}
	}
	return dedupe(out)
}

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

// fragmentList reads a sentence of three or more fragments, most of
// which describe the user as items of a list (listItem: "38, two kids,
// one dog, Leeds"), as the user's clauses; the last fragment may be a
// place alone. It returns nil for anything else.
func fragmentList(toks []string) []string {
	var frags [][]string
	for start := 0; start <= len(toks); {
		end := commaEnd(toks, start)
		frags = append(frags, toks[start:end])
		start = end + 1
	}
	if len(frags) < 3 {
		return nil
	}
	var out []string
	items := 0
	for k, f := range frags {
		if len(f) == 0 {
			continue
		}
		item := listItem(f)
		if item == nil && k == len(frags)-1 && items >= 2 && len(f) <= 2 && allCapitalized(f) {
			item = slices.Concat([]string{",", "I", "live", "in"}, f) // "…, Leeds"
		}
		if item != nil {
			out = append(out, item...)
			items++
		}
	}
	if items*2 < len(frags) || items < 2 {
		return nil
	}
	return out[1:]
}

// fragments appends the memories of a sentence that is a list of chat
// fragments ("contacts during the day, glasses at night, pretty
// short-sighted"): each fragment that is the user's with the "I" left
// out (withSubject) is a clause of its own; the others are not read.
func fragments(out []Candidate, toks []string) []Candidate {
	if index(toks, ",") < 0 {
		return out
	}
	if l := fragmentList(toks); l != nil {
		return extractClauses(out, l, nil) // "38, two kids, one dog"
	}
	for start := 0; start < len(toks); {
		end := commaEnd(toks, start)
		if end-start >= 2 && !especially[lower(toks[start])] { // not "mostly shops and portfolios"
			if full := withSubject(toks[start:end]); full != nil {
				out = extractClauses(out, full, nil)
			}
		}
		start = end + 1
	}
	return out
}

// notIntro are the words that do not start an introduction before
// "here" ("Same here", "Nothing new here").
var notIntro = set("same me you not nothing all everything over right and out back there still been it this that what who no yes ok okay hi hello hey thanks im i'm i we my our your")

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

// home returns a sentence that says where home is as one about where
// the user lives, or nil: "home's Dublin for now" is "I live in Dublin
// for now", "Phoenix isn't home anymore" is "I don't live in Phoenix
// anymore", "Leeds is home now" is "I live in Leeds now".
func home(toks []string) []string {
	if len(toks) < 3 {
		return nil
	}
	switch w := lower(toks[0]); {
	case (w == "home's" || w == "home" && lower(toks[1]) == "is") && len(toks) > 2:
		at := 1
		if w == "home" {
			at = 2
		}
		if !capitalized(toks[at]) && !capitalized(toks[at][:1]) {
			return nil
		}
		return slices.Concat([]string{"I", "live", "in"}, toks[at:])
	case (capitalized(toks[0]) || isLetter(toks[0][0])) && !otherSubjects[w] && !notPlaces[w]:
		n := 1
		for n < len(toks) && capitalized(toks[n]) {
			n++
		}
		if n+1 >= len(toks) || lower(toks[n+1]) != "home" {
			return nil
		}
		rest := toks[n+2:]
		switch lower(toks[n]) {
		case "is":
			if len(rest) > 0 && lower(rest[0]) == "now" || len(rest) == 0 {
				return slices.Concat([]string{"I", "live", "in"}, toks[:n], rest)
			}
		case "isn't", "is not":
			return slices.Concat([]string{"I", "don't", "live", "in"}, toks[:n], rest)
		}
	}
	return nil
}

// listItem returns an item of a list that describes the user as a
// clause of theirs, or nil: an age ("27"), "a"/"an" and a noun, a place
// of origin ("from Osaka"), a word of status ("divorced", "married with
// one kid"), a count of people, pets or things ("two kids"), what they
// have ("have a collie called Pip"), a job ("retired firefighter",
// "pilot for easyJet") or a fragment of chat (withSubject).
func listItem(frag []string) []string {
	if len(frag) == 0 || subjectStart(frag, 0) || selfClause(frag) {
		return nil // a clause already
	}
	w := lower(frag[0])
	switch {
	case len(frag) == 1 && isNumber(w) && len(w) <= 3:
		return []string{",", "I'm", w} // "27"
	case len(frag) == 1 && len(w) >= 3 && len(w) <= 4 && isNumber(w[:len(w)-1]) && (w[len(w)-1] == 'f' || w[len(w)-1] == 'm'):
		return []string{",", "I'm", w[:len(w)-1]} // "35F"
	case len(frag) == 1 && (statuses[w] || states[w] || diets[w] || nationalities[w]):
		return []string{",", "I'm", w} // "divorced", "vegan"
	case len(frag) == 1 && jobs[w]:
		return []string{",", "I'm", "a", w} // "nurse"
	case (w == "a" || w == "an") && len(frag) > 1 && (!verbStart(lower(frag[1])) || lower(frag[1]) == "bit"),
		w == "from" && len(frag) > 1 && capitalized(frag[1]):
		return slices.Concat([]string{",", "I'm"}, frag) // "a UX designer in Dublin", "from Osaka"
	case statuses[w] && len(frag) > 2 && lower(frag[1]) == "with":
		// "married with one kid".
		return slices.Concat([]string{",", "I'm", w, ",", "I", "have"}, frag[2:])
	case (isNumber(w) || w == "no" || w == "one" || numberWords[w]) && len(frag) >= 2 && (listKin[strings.TrimSuffix(lower(frag[1]), "s")] || pets[lower(frag[1])]):
		return slices.Concat([]string{",", "I", "have"}, frag) // "two kids"
	case (w == "have" || w == "got") && len(frag) > 1 && !pronounObjects[lower(frag[1])]:
		return slices.Concat([]string{",", "I", "have"}, frag[1:]) // "have a collie called Pip"
	case verbs[w] == w && !requests[w] && w != "like" && len(frag) > 1 && !pronounObjects[lower(frag[1])] && lower(frag[1]) != "me":
		return slices.Concat([]string{",", "I"}, frag) // "run a lot"
	}
	if full := withSubject(frag); full != nil {
		return prepend(",", full)
	}
	if jobPhrase(prepend("a", lowerAll(frag))) && !verbStart(lower(frag[0])) {
		return slices.Concat([]string{",", "I'm", "a"}, lowerFirst(frag)) // "pilot for easyJet" (not "dont judge")
	}
	if full := fragment(frag); full != nil {
		return prepend(",", full) // "recently divorced"
	}
	return nil
}

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

var correctionWords = set("sorry oops typo meant mean actually correction whoops scratch that")

// profileList returns a sentence that introduces a list about the user
// ("me: 34, nonbinary, software tester", "quick background: 52, retired
// firefighter, live on a narrowboat") as a sentence of the user's
// clauses, one per item it can read, or nil.
func profileList(toks []string) []string {
	k := index(toks, ",")
	if k < 1 || k > 4 || k+1 >= len(toks) {
		return nil
	}
	about := false
	for _, t := range toks[:k] {
		switch lower(t) {
		case "me", "background", "bio", "context", "about", "intro", "stats", "basics", "profile":
			about = true
		case "you", "your", "not", "and":
			return nil
		}
	}
	if !about {
		return nil
	}
	var out []string
	items := 0
	for start := k + 1; start < len(toks); {
		end := commaEnd(toks, start)
		if lower(toks[start]) == "and" && end-start > 1 {
			start++ // "…, and 2 rabbits"
		}
		if item := listItem(toks[start:end]); item != nil {
			out = append(out, item...)
			items++
		}
		start = end + 1
	}
	if items < 2 {
		return nil
	}
	return out[1:] // without the first comma
}

// withSubject returns toks with the "I" that chat drops restored
// ("broke my wrist skiing in February", "love gardening and baking
// bread", "just got back from Japan", "been vegan since 2020"), or nil
// when they do not start so. Only what cannot be an order or a reply
// counts: a past tense that is not also the verb's base ("Put it there",
// "Read this"), a verb of liking, or "been", followed by something other
// than a pronoun or a word of judgement ("Got it.", "Love it!", "Went
// well."); and nothing addressed to the assistant ("Told you so", "Saw
// your reply").
func withSubject(toks []string) []string {
	if h := home(toks); h != nil {
		return h
	}
	if k := index(toks, "here"); k >= 1 && k <= 4 && (k+1 == len(toks) || toks[k+1] == ",") && !notIntro[lower(toks[0])] && !conditions[lower(toks[k-1])] &&
		(!verbStart(lower(toks[0])) || k >= 2 && strings.HasSuffix(lower(toks[0]), "ed")) {
		// "retired teacher here, 68": an introduction (a participle may
		// lead its noun).
		full := []string{"I'm"}
		if k == 1 && capitalized(toks[0]) {
			return slices.Concat(full, toks[:1], toks[2:]) // "Kenji here, 23"
		}
		if w := lower(toks[0]); w != "a" && w != "an" {
			full = append(full, "a")
		}
		return slices.Concat(full, lowerFirst(toks[:k]), toks[k+1:])
	}
	i := 0
	if len(toks) > 2 && (lower(toks[0]) == "just" || lower(toks[0]) == "recently" || lower(toks[0]) == "finally" || lower(toks[0]) == "still" || lower(toks[0]) == "also" ||
		lower(toks[0]) == "all" && past[lower(toks[1])]) { // ("all moved in")
		i = 1 // "just got back from Japan"
	}
	if len(toks) < i+2 {
		if i < len(toks) && (states[lower(toks[i])] || statuses[lower(toks[i])]) {
			return fragment(toks) // "recently divorced"
		}
		return nil
	}
	w := lower(toks[i])
	next := lower(toks[i+1])
	lemma, isVerb := verbs[w]
	var subj []string
	switch {
	case i == 0 && w == "got" && isNumber(next) && len(toks) > 2:
		subj = []string{"I've"} // "got 3 kids": I have
	case states[w] || statuses[w]:
		return fragment(toks) // "divorced, two kids", "recently divorced", not "I divorced"
	case statives[w] && (stops[next] || next == "near"):
		subj = []string{"I'm"} // "based in Austin", "licensed in Texas"
	case w == "diagnosed" && next == "with":
		subj = []string{"I", "was"} // "diagnosed with ADHD in June"
	case w == "been":
		subj = []string{"I've"}
	case w == "born" || strings.HasPrefix(w, "born and "):
		subj = []string{"I", "was"} // "born and raised in Glasgow"
	case i == 0 && (w == "planning" || w == "hoping" || w == "trying" || w == "thinking" || w == "gonna") && (next == "to" || next == "of" || next == "about" && w == "thinking" || w == "gonna"):
		subj = []string{"I'm"} // "planning to propose at Christmas"
	case i == 0 && (w == "big" || w == "huge" || w == "massive") && next == "fan" || w == "fan" && next == "of":
		subj = []string{"I'm", "a"} // "big fan of bluegrass"
	case isVerb && past[w] && lemma != w && !auxiliaries[w]:
		subj = []string{"I"}
	case isVerb && (w == "quit" || w == "cut" || w == "hurt") && (strings.HasSuffix(next, "ing") || next == "my" || next == "out"):
		subj = []string{"I"} // "quit vaping in 2021" (not "Quit it")
	case !isVerb && len(w) > 4 && strings.HasSuffix(w, "ed") && (next == "to" || next == "of" || next == "about" || next == "with"):
		subj = []string{"I'm"} // "excited to start my new job"
	case !isVerb && len(w) > 4 && strings.HasSuffix(w, "ed") && pastObjects[next]:
		subj = []string{"I"} // "handed in my notice", a verb the lists do not know
	case i == 0 && likes[w] && lemma == w && !(w == "like" && (determiners[next] || next == "so" || next == "every" || next == "literally" || isNumber(next))):
		subj = []string{"I"}
	case isVerb && lemma != w && strings.HasSuffix(w, "ing") && !smallTalkVerbs[lemma] && lemma != "look" && !beForms[next] && !momentary[w] &&
		!slices.ContainsFunc(toks[i+1:commaEnd(toks, i+1)], func(t string) bool { return be[lower(t)] && t != "'s" }): // (not "cooking for two is a puzzle")
		subj = []string{"I'm"} // "learning Korean on Duolingo"
	case i == 0 && !isVerb && len(w) > 5 && strings.HasSuffix(w, "ing") && !ingNouns[w] && !momentary[w] && (next == "a" || next == "an" || next == "my" || next == "the" || next == "some" || next == "for" || next == "with" || next == "on"):
		subj = []string{"I'm"} // "knitting a jumper for my niece", a verb the lists lack
	case i == 0 && (w == "originally" || w == "now" || w == "currently") && (next == "from" || next == "in" || next == "based") && len(toks) > 2 && capitalized(toks[2]) || i == 0 && w == "from" && capitalized(toks[1]):
		subj = []string{"I'm"} // "originally from Lagos, now in Manchester"
	case i == 0 && w == "originally" && capitalized(toks[1]) && lower(toks[1]) != "i" && !demonym(lower(toks[1])):
		return slices.Concat([]string{"I'm", "originally", "from"}, toks[1:]) // "Originally Lagos, but…"
	case i == 0 && w == "never" && next == "been" && len(toks) > 2:
		subj = []string{"I've"} // "never been to Asia"
	case i == 0 && (w == "have" || w == "has") && (next == "a" || next == "an" || isNumber(next) || next == "one") && len(toks) > 2 && !haveIdioms[lower(toks[2])]:
		subj = []string{"I"} // "- have a 6yo named Arlo"
	case i == 0 && w == "myself" && capitalized(toks[1]):
		return slices.Concat([]string{"I'm"}, toks[1:]) // "Myself Ramesh": I'm Ramesh
	case i == 0 && w == "on" && len(toks) > 2 && (containsDigitByte(next) || isWord(next) && !timeWords[next] && !weekdays[strings.TrimSuffix(next, "s")] && !months[next] && !determiners[next] && !onTransient[next]):
		subj = []string{"I'm"} // "on 50mg sertraline for anxiety"
	case i == 0 && w == "had" && next == "to" && len(toks) > 3 && hadToChange[lower(toks[2])]:
		subj = []string{"I"} // "had to give up rugby"
	case i == 0 && w == "had" && (!determiners[next] || (next == "a" || next == "an") && len(toks) > 2 && !experiences[lower(toks[2])] && !haveIdioms[lower(toks[2])] && !meals[lower(toks[2])]) &&
		!pronounObjects[next] && next != "to" && next != "some" && next != "no" && !meals[next] && len(toks) > 2:
		subj = []string{"I"} // "had knee surgery in 2021"
	case i == 0 && w == "not" && strings.HasSuffix(next, "ing") && verbs[next] != "" && len(toks) > 2:
		subj = []string{"I'm"} // "not doing keto anymore"
	case i == 0 && (w == "haven't" || w == "havent") && (past[next] || participles[next]) && len(toks) > 2:
		subj = []string{"I"} // "haven't had a drink in 100 days"
	case i == 0 && (w == "can't" || w == "cant" || w == "don't" || w == "dont" || w == "never") && (verbs[next] == next || past[next]) && len(toks) > 2 && !pronounObjects[lower(toks[2])] && !smallTalkVerbs[verbs[next]]:
		subj = []string{"I"} // "can't stand coriander", "don't drink", "never learned to drive"
	case (w == "into" || (w == "big" || w == "really" || w == "very" || w == "super" || w == "heavily") && next == "into") && len(toks) > i+2:
		subj = []string{"I'm"} // "big into Warhammer"
	case i == 0 && owns[w] && (next == "a" || next == "an" || isNumber(next) || len(toks) > 1 && capitalized(toks[1])):
		subj = []string{"I"} // "drive a 2012 Golf", "speak Welsh"
	case i == 0 && (w == "part" || w == "full") && (next == "time" || next == "timer") && len(toks) > 2 && (lower(toks[2]) == "at" || lower(toks[2]) == "for" || lower(toks[2]) == "in"):
		return slices.Concat([]string{"I", "work"}, lowerFirst(toks)) // "Part time at Tesco, weekends"
	case i == 0 && w == "play" && (instruments[next] || next == "the" && len(toks) > 2 && instruments[lower(toks[2])]):
		subj = []string{"I"} // "play guitar in a covers band"
	case i == 0 && (w == "live" || w == "work") && (stops[next] || next == "near" || next == "abroad" || next == "nights" || next == "remotely"):
		subj = []string{"I"} // "live in Manchester atm", "work from home"
	case i == 0 && isVerb && lemma == w && w != "like" && habitual(w, toks):
		subj = []string{"I"} // "help out at the food bank every Wednesday"
	default:
		return fragment(toks)
	}
	if phrasal := w + " " + next; idioms[phrasal] {
		return nil // "Turned out fine.", "Stopped by the shop.", "Sold out."
	}
	obj := i + 1
	if subj[len(subj)-1] == "I'm" && obj+1 < len(toks) && (next == "of" || next == "about" || next == "with" || next == "to") {
		obj++ // "Tired of this."
	}
	switch lower(toks[obj]) {
	case "it", "that", "this", "them", "you", "him", "her", "those", "these", "so", "well", "fine", "great", "good", "ok",
		"okay", "there", "here", "too", "what", "back", ",":
		if !((lower(toks[obj]) == "back" || lower(toks[obj]) == "here") && obj+1 < len(toks) && stops[lower(toks[obj+1])]) { // "got back from Japan", "moved here from Lagos"
			return nil
		}
	}
	for _, t := range toks {
		if t := lower(t); t == "you" || t == "your" || t == "yours" {
			return nil
		}
	}
	full := slices.Concat(subj, toks)
	full[len(subj)] = lower(full[len(subj)]) // "Loved the movie"
	return full
}

// fragment returns a subjectless fragment of chat as a clause of the
// user's, or nil: a relative named without "my" ("mum passed away in
// 2021", "dad's 78", "the dog needs a pill every morning"), and phrases
// with no verb that describe the user: a state ("divorced", "pretty
// short-sighted", "not religious at all", "not a big drinker"), a count
// of people, pets or things they have ("two cats, Miso and Tofu"), an
// allergy or intolerance ("severe peanut allergy") and a job or a
// passion ("freelance translator", "photography nerd").
func fragment(toks []string) []string {
	if len(toks) < 2 || subjectStart(toks, 0) && !ownKin[strings.TrimSuffix(lower(toks[0]), "'s")] || selfClause(toks) {
		return nil
	}
	if lower(toks[0]) == "blood" && strings.HasPrefix(lower(toks[1]), "pressure") && len(toks) > 2 {
		toks = slices.Concat([]string{"blood " + toks[1]}, toks[2:]) // one noun: "blood pressure's"
	}
	w := lower(toks[0])
	next := lower(toks[1])
	if r := strings.TrimSuffix(w, "'s"); ownKin[r] && (r != w || verbStart(next) || capitalized(toks[1]) && len(toks) > 2 && verbStart(lower(toks[2]))) ||
		w == "the" && (ownKin[next] || pets[next] || ownThings[next] || events[next]) && len(toks) > 2 && (verbStart(lower(toks[2])) || past[lower(toks[2])]) ||
		(events[w] || ownThings[strings.TrimSuffix(w, "'s")] || strings.HasPrefix(w, "blood pressure")) && (strings.HasSuffix(w, "'s") || next == "was" || next == "is" || next == "got" || next == "has" || next == "came" || next == "starts" || next == "ends" || (past[next] || len(next) > 4 && strings.HasSuffix(next, "ed")) && !events[w]) && len(toks) > 2 {
		// "honeymoon was in Zanzibar", "wedding is in June".
		// "mum passed away", "dad's 78", "sister Ana lives in Porto".
		rest := slices.Clone(toks)
		if w == "the" {
			rest = rest[1:]
		}
		rest[0] = lower(rest[0])
		return prepend("my", rest)
	}
	if r := strings.TrimSuffix(toks[0], "'s"); r != toks[0] && capitalized(r) && (next == "cancelled" || next == "canceled" || next == "off") {
		return []string{"I", "cancelled", r} // "Bali's cancelled": the plan ends
	}
	if capitalized(toks[0]) && w != "i" && (next == "died" || next == "passed" && len(toks) > 2 && lower(toks[2]) == "away") {
		return toks // "Luna died this morning": someone of the user's, named
	}
	if (w == "currently" || w == "now") && capitalized(toks[1]) && lower(toks[1]) != "i" {
		return slices.Concat([]string{"I", "live", "in"}, toks[1:]) // "…, currently Singapore"
	}
	if w == "full" && (next == "name's" || next == "name" && len(toks) > 2 && lower(toks[2]) == "is") {
		rest := toks[2:]
		if next == "name" {
			rest = toks[3:]
		}
		return slices.Concat([]string{"my", "name", "is"}, rest) // "Full name's David Okafor"
	}
	if k := index(toks, "is"); favourites[w] && k > 1 && k <= 4 && k+1 < len(toks) {
		return prepend("my", lowerFirst(toks)) // "favourite food is my nan's jollof"
	}
	i := 0
	for i < len(toks)-1 && (intensifiers[lower(toks[i])] || lower(toks[i]) == "not" || leadAdverbs[lower(toks[i])]) {
		i++ // "pretty short-sighted", "not religious at all", "recently divorced"
	}
	lead := lower(toks[i])
	noun, n := "", 0
	for _, t := range toks {
		if t == "," || t == "(" || lower(t) == "here" || n > 0 && (stops[lower(t)] || lower(t) == "so" || lower(t) == "who") {
			break
		}
		noun, n = lower(t), n+1
	}
	if verbStart(w) && !states[w] && !statuses[w] && !leadAdverbs[w] && w != "no" && w != "never" || thirdPronoun(w) || w == "they" || w == "it" || w == "you" || w == "i" || w == "everyone" || w == "people" {
		return nil // "is a doctor", "she is a doctor": a predicate or a clause, not a fragment
	}
	named := n <= 5 && (passions2[noun] || jobs[noun]) // "die hard Liverpool fan"
	for j, t := range toks {
		if t == "," {
			break
		}
		if t := lower(t); t == "who" || t == "that" || t == "which" || j > 0 && (stops[t] || t == "so" || t == "but" || t == "and" || t == "since") {
			break // "two teenagers who live with me", "at the bottom of the garden"
		}
		nounPlace := j > 0 && (isNumber(lower(toks[j-1])) || determiners[lower(toks[j-1])]) // "two kids", "a cook"
		if t := lower(t); verbStart(t) && !named && !nounPlace && !leadAdverbs[t] && !(j == i && (states[t] || statuses[t])) && !(j == 0 && t == "no") || t == "you" || t == "your" || t == "i" || t == "me" || t == "it" {
			return nil // a clause with a verb, or not the user's
		}
	}

	switch {
	case i == 0 && strings.HasSuffix(w, "ed") && statuses[w] && (next == "in" || next == "last" || next == "on" || next == "after" || next == "this" || next == "at"):
		return prepend("I", lowerFirst(toks)) // "retired in September", "married last year"
	case jobs[noun] && n <= 4 && w != "a" && w != "an" && w != "the" && w != "no" && w != "not":
		return concat([]string{"I'm", "a"}, lowerFirst(toks)) // "retired firefighter"
	case states[noun] && n <= 3 && w != "not":
		if lasting(toks) {
			return concat([]string{"I've", "been"}, lowerFirst(toks)) // "type 1 diabetic since I was 11"
		}
		return prepend("I'm", lowerFirst(toks)) // "type 1 diabetic"
	case states[lead] || statuses[lead] || diets[lead] || maritalStatus[lead] || nationalities[lead]:
		if lasting(toks) {
			return concat([]string{"I've", "been"}, lowerFirst(toks)) // "veggie for 10 years"
		}
		return prepend("I'm", lowerFirst(toks))
	case w == "no" && (listKin[strings.TrimSuffix(next, "s")] || pets[next] || next == "children" || len(toks) <= 3 && lacks[next]):
		return concat([]string{"I", "have"}, toks) // "no kids", "no licence"
	case w == "not" && (next == "a" || next == "an") && len(toks) > 2:
		return prepend("I'm", toks) // "not a big drinker"
	case (isNumber(w) || numberWords[w]) && strings.HasSuffix(lower(toks[1]), "s") && !timeUnits[strings.TrimSuffix(lower(toks[1]), "s")] && !intensifiers[next] && !conversational[next] && !notCounts[next]:
		return concat([]string{"I", "have"}, toks) // "two cats, Miso and Tofu"
	case conditions[noun] && w != "a" && w != "the" && w != "no":
		if k := index(toks, "here"); k > 0 && lower(toks[k-1]) == noun {
			toks = slices.Delete(slices.Clone(toks), k, k+1) // "cat allergy here"
		}
		return concat([]string{"I", "have", "a"}, lowerFirst(toks)) // "severe peanut allergy"
	case w != "a" && w != "an" && w != "the" && w != "no" && (jobPhrase(prepend("a", lowerAll(toks[:n]))) && !slices.ContainsFunc(toks[1:n], func(t string) bool {
		t = lower(t)
		return past[t] || len(t) > 4 && strings.HasSuffix(t, "ed") || t == "my" || t == "your"
	}) || passions2[noun]): // (not "Doctor upped my citalopram")
		if lasting(toks) {
			return concat([]string{"I've", "been", "a"}, lowerFirst(toks)) // "huge Arsenal fan since I was a kid"
		}
		return concat([]string{"I'm", "a"}, lowerFirst(toks)) // "retired nurse", "photography nerd"
	}
	return nil
}

// fragmentAt returns the fragment of chat that starts at toks[i] and
// ends at the next comma as a clause of the user's (see withSubject), or
// nil.
func fragmentAt(toks []string, i int) []string {
	end := commaEnd(toks, i)
	if end-i == 1 && (states[lower(toks[i])] || statuses[lower(toks[i])]) {
		return []string{"I'm", lower(toks[i])} // "…, married, …"
	}
	if end-i < 2 {
		return nil
	}
	return withSubject(toks[i:end])
}

// demonym reports whether w names a people rather than a place: "Greek",
// "Ghanaian", "Japanese", "Polish".
func demonym(w string) bool {
	if nationalities[w] {
		return true
	}
	for _, suf := range []string{"ese", "ish", "ian", "ean"} {
		if strings.HasSuffix(w, suf) && len(w) > len(suf)+2 {
			return true
		}
	}
	return false
}

var smallTalkLeads = set("thanks thank sorry hi hello hey please")

// singleEvents may make a sentence on their own: "graduated!".
var singleEvents = set("graduated retired engaged married divorced")

// experiences follow "had a" in what is no fact: "had a great time".
var experiences = set("great good lovely nice fun bad long rough busy quick amazing terrible hard tough brilliant wonderful weird strange crazy blast laugh")

// instruments and sports follow "play" in a fact without "I": "play
// guitar in a covers band".
var instruments = set("guitar piano drums bass violin cello flute saxophone sax trumpet ukulele keyboard keys harp clarinet football soccer tennis golf rugby cricket chess hockey basketball netball squash badminton padel volleyball")

// haveIdioms follow "have a" in an order or a wish, not a possession:
// "have a look", "have a nice day".
var haveIdioms = set("look go think nice good great lovely try seat break rest chat word listen read peek think drink bite")

// onTransient follow "on" in what is no fact: "on holiday", "on hold".
var onTransient = set("holiday vacation hold call leave break it that this top board way time track mute speaker")

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

// leadAdverbs may come before a state in a fragment: "recently
// divorced", "originally Greek", "happily married".
var leadAdverbs = set("recently newly happily originally currently formerly proudly")

// hadToChange are the verbs of a change after "had to" ("had to give up
// rugby", "had to rehome Thumper"): the change happened. Others ("had to
// leave early") are an errand of the day.
var hadToChange = set("give quit stop sell move cancel retire rehome drop put leave change switch")

// momentary verbs tell what the user is doing as they type, not a fact
// of their life: "typing with one hand", "sitting in traffic".
var momentary = set("typing sitting waiting standing lying holding texting heading hanging chilling resting relaxing scrolling browsing")

// lasting reports whether a fragment says how long it has held: "since
// 2019", "for 10 years", "for ages".
func lasting(toks []string) bool {
	for i, t := range toks {
		switch lower(t) {
		case ",":
			return false
		case "since":
			return true
		case "for":
			if i+1 < len(toks) {
				n := lower(toks[i+1])
				return isNumber(n) || numberWords[n] || n == "a" || n == "ages" || n == "years" || n == "decades" || n == "most" || n == "over"
			}
		}
	}
	return false
}

// habitual reports whether a sentence that leads with a verb's base form
// ("work nights at the hospital", "help out at the food bank every
// Wednesday") tells what the user does rather than asking the assistant
// to do it ("write me a cover letter", "check my code"): it says how
// often, and the verb is not one of a request.
func habitual(verb string, toks []string) bool {
	if requests[verb] && !(verb == "help" && lower(toks[1]) == "out") {
		return false
	}
	often := false
	for i, t := range toks {
		switch t := lower(t); {
		case t == "me" || t == "you" || t == "your" || t == "please" || t == "this" || t == "it":
			return false
		case t == "every" || t == "daily" || t == "weekly" || t == "nightly" || t == "nights" || t == "weekends" ||
			t == "mornings" || t == "evenings" || t == "most" || t == "winters" || t == "summers" || t == "weekdays" || t == "everywhere" || weekdays[strings.TrimSuffix(t, "s")] && strings.HasSuffix(t, "s"):
			often = true
		case (t == "a" || t == "per") && i > 0 && i+1 < len(toks) && timeUnits[lower(toks[i+1])]:
			often = true // "twice a week"
		}
	}
	return often
}

// idioms are a past tense and a particle that tell no fact of the
// user's when they lead a sentence.
var idioms = map[string]bool{"turned out": true, "sold out": true, "stopped by": true, "dropped by": true, "came by": true,
	"popped by": true, "made sense": true, "went well": true, "got it": true, "ran out": true}

// pastObjects may follow a past tense that leads a sentence: "handed in
// my notice", "painted the fence".
var pastObjects = set("my a an the our in up out on off for back")

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
