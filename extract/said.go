// Stage 5 of the extractor without a model (heuristic.go lists them),
// said: a clause's subject and predicate → what is said of the subject.
//
// Takes a subject and its predicate from the subject stage (subject.go).
// A predicate of several verb phrases, or with a coordinated object, says
// one thing each ("I work at Google and live in Lisbon", "I speak
// Portuguese and German": extractPredicate, coordinated). Each is read for
// its verb, the main verb's lemma and complement, its polarity ("don't",
// "never", "no longer"), its tense and aspect ("have been living", "used
// to", "gonna") and whether it ends a fact ("anymore"): statementOf.
// What is said in conversation rather than about a life is dropped: a
// hypothetical, small talk, a request, a quote, words to the assistant
// (notMemory). Gives each statement, worded by normalise.go, to the slot
// stage (slot.go).

package extract

import (
	"slices"
	"strings"
)

// extractPredicate appends the memories of subject + pred, splitting a
// coordination of verb phrases ("I work at Google and live in Lisbon") and
// of objects ("I speak Portuguese and German").
func extractPredicate(out []Candidate, subj subject, pred []string, tail []string) []Candidate {
	for i := 1; i+1 < len(pred); i++ {
		if w := lower(pred[i]); (w == "and" || w == "but" || w == "," && verbs[lower(pred[i+1])] != "" && i+2 < len(pred) && pred[i+2] != "," && lower(pred[i+2]) != "me" && lower(pred[i+2]) != "us" && (past[lower(pred[i+1])] || verbs[lower(pred[i+1])] == lower(pred[i+1]))) && verbStart(lower(pred[i+1])) && !capitalized(pred[i+1]) && !strings.HasSuffix(lower(pred[i+1]), "ing") && lower(pred[i+1]) != "no" && !(index(pred[:i], "to") >= 0 && verbs[lower(pred[i+1])] == lower(pred[i+1])) &&
			!(preAdverbs[lower(pred[i+1])] && i+2 < len(pred) && !verbStart(lower(pred[i+2])) && !(len(pred[i+2]) > 4 && strings.HasSuffix(lower(pred[i+2]), "ed"))) { // (but "vegan and also a Hindu")
			end := i
			if pred[end-1] == "," {
				end--
			}
			out = extractPredicate(out, subj, pred[:end], nil)
			pred = pred[i+1:]
			i = 0
		}
	}
	if k := index(pred, "and"); k > 0 && k+2 < len(pred) && (lower(pred[k+1]) == "also" || lower(pred[k+1]) == "then") && !verbStart(lower(pred[k+2])) {
		pred = slices.Delete(slices.Clone(pred), k+1, k+2) // "vegan and also a Hindu"
	}
	if alts := coordinated(pred); alts != nil {
		for _, p := range alts {
			out = interpret(out, subj, p, tail)
		}
		return out
	}
	return interpret(out, subj, pred, tail)
}

// coordinated splits a predicate with a coordinated object ("speak
// Portuguese and German", "am allergic to peanuts, shellfish and soy") into
// one predicate per conjunct, or returns nil.
func coordinated(pred []string) [][]string {
	a := -1
	negated := slices.ContainsFunc(pred, func(t string) bool {
		t = lower(t)
		return t == "not" || t == "never" || strings.HasSuffix(t, "n't") || t == "dont" || t == "cant"
	})
	for i := 2; i+1 < len(pred); i++ {
		if w := lower(pred[i]); w == "and" || w == "or" && negated { // "I don't eat pork or beef"
			a = i
			break
		}
	}
	if a < 0 {
		return nil
	}
	// The right conjunct runs to a preposition, a comma or the end.
	r := a + 1
	for r < len(pred) && pred[r] != "," && !stops[lower(pred[r])] {
		if r == a+1 && verbStart(lower(pred[r])) && !capitalized(pred[r]) || lower(pred[r]) == "i" || lower(pred[r]) == "then" {
			return nil
		}
		r++
	}
	n := r - a - 1
	if n < 1 || n > 4 {
		return nil
	}
	if rw := lower(pred[a+1]); strings.HasSuffix(rw, "ly") && len(rw) > 4 && !capitalized(pred[a+1]) ||
		strings.HasSuffix(rw, "ing") && verbs[rw] != "" && !strings.HasSuffix(lower(pred[a-1]), "ing") {
		return nil // "turning 40 next month and honestly dreading it": a second predicate
	}
	if rw := lower(pred[a+1]); n == 1 && (weekdays[strings.TrimSuffix(rw, "s")] || months[rw] || isNumber(rw) && isNumber(lower(pred[a-1]))) {
		return nil // "on Tuesdays and Thursdays" is one time, "kids (9 and 6)" one list of ages
	}
	if capitalized(pred[a+1]) && capitalized(pred[a-1]) && a+2 == len(pred) && a >= 2 && lower(pred[a-2]) == "the" {
		return nil // "keep it on the Kennet and Avon": one name
	}
	if capitalized(pred[a+1]) && capitalized(pred[a-1]) && a+2 < len(pred) {
		if nx := lower(pred[a+2]); isWord(nx) && !capitalized(pred[a+2]) && !timeWords[nx] && !stops[nx] && !verbStart(nx) && !strings.HasSuffix(nx, "ly") && !fillers[nx] && !trailingFillers[nx] {
			return nil // "the Kennet and Avon canal": one name
		}
	}
	// The left conjuncts: the n words before "and", or a comma list.
	var lefts [][2]int
	end := a
	if pred[end-1] == "," {
		end--
	}
	for {
		from := end - n
		if c := lastIndex(pred[:end], ","); c >= 0 && end-c-1 <= 3 && end-c-1 >= 1 && c >= 2 {
			from = c + 1
		}
		if from < 1 {
			from = 1
		}
		for k := end - 1; k >= from; k-- {
			// A verb ends the conjunct where it heads a phrase, not a noun
			// after a modifier ("a vegetable garden").
			if w := lower(pred[k]); verbStart(w) && w != "no" && !capitalized(pred[k]) && (k == 0 || lower(pred[k-1]) == "to" || auxiliaries[lower(pred[k-1])] || determiners[lower(pred[k-1])] || k == from) || stops[w] || w == "between" || w == "both" {
				from = k + 1
				break
			}
		}
		if from >= end {
			return nil
		}
		lefts = append(lefts, [2]int{from, end})
		if from >= 2 && pred[from-1] == "," {
			end = from - 1
			continue
		}
		break
	}
	if len(lefts) > 1 {
		// A comma list whose conjuncts differ in kind ("two cats, Luna
		// and Milo") is an apposition, not a list.
		cap := capitalized(pred[a+1])
		for _, l := range lefts {
			if capitalized(pred[l[0]]) != cap {
				return nil
			}
		}
	}
	prefix := pred[:lefts[len(lefts)-1][0]]
	if len(prefix) == 0 {
		return nil
	}
	switch lower(prefix[len(prefix)-1]) {
	case "with", "between", "both", "of", "and", ",": // "two cats, Luna and Milo" names them
		return nil // "a garden with tomatoes and herbs", "between London and Dubai"
	}
	suffix := pred[r:]
	// A right conjunct with its own article is a noun phrase of its own:
	// "a vegetable garden and an allotment with a shed" shares neither the
	// article nor the complement.
	own := determiners[lower(pred[a+1])] && determiners[lower(prefix[len(prefix)-1])]
	out := make([][]string, 0, len(lefts)+1)
	for i := len(lefts) - 1; i >= 0; i-- {
		left, sfx := pred[lefts[i][0]:lefts[i][1]], suffix
		if len(left) == 1 && isNumber(lower(left[0])) != isNumber(lower(pred[a+1])) || own {
			sfx = nil // "is 11 and obsessed with Minecraft": the age takes none of it
		}
		out = append(out, concat(prefix, left, sfx))
	}
	if own {
		return append(out, concat(prefix[:len(prefix)-1], pred[a+1:r], suffix))
	}
	return append(out, concat(prefix, pred[a+1:r], suffix))
}

// interpret appends the memory of one simple clause: subject + pred.
func interpret(out []Candidate, subj subject, pred []string, tail []string) []Candidate {
	st, lemma, ok := statementOf(pred)
	if !ok || notMemory(subj, lemma, st.verb, st.comp, st.progressive) {
		return out
	}
	c := Candidate{Text: memoryText(subj, st.pred, st.v, st.rest, tail), Category: "fact", Confidence: 0.7, Importance: 0.5, Negated: st.negated}
	if len(c.Text) > 240 {
		return out
	}
	return classify(out, c, subj, lemma, st.verb, st.comp, st.progressive, st.retract)
}

// statement is what a simple clause says of its subject, read from its
// predicate by statementOf: "I have been living in Leeds" is the verb
// "have" and the main verb's complement "in Leeds", in the progressive
// (and, beside it, the main verb's lemma "live").
type statement struct {
	pred        []string // as the memory words it: the adverbs before the verb (pred[:v]), the verb, rest
	v           int
	rest        []string
	verb        string   // the verb as written, lower-case: "don't", "have", "moved"
	comp        []string // the main verb's complement
	negated     bool     // "don't", "never", "not", "no longer"
	progressive bool     // "am moving", "have been living", "gonna"
	retract     bool     // "anymore", "no longer": with a negation, the fact ends
}

// statementOf reads a simple clause's predicate: what it says, and the
// lemma of its main verb ("live", "be", "move"), or false when it says
// nothing that could be a memory: no verb, a hypothetical ("I would …",
// "I wish …"), words to or about the assistant, a quote. The lemma is
// apart from the statement because it ends up in memories (a habit's
// object): in the struct it would take the predicate's words to the
// heap with it, escape analysis telling no field from another.
func statementOf(pred []string) (statement, string, bool) {
	for len(pred) > 0 && pred[len(pred)-1] == "," {
		pred = pred[:len(pred)-1]
	}
	for len(pred) > 0 && trailingFillers[lower(pred[len(pred)-1])] {
		pred = pred[:len(pred)-1]
	}
	if len(pred) == 0 {
		return statement{}, "", false
	}
	// Adverbs before the verb: "I also speak", "I no longer live".
	v := 0
	neg, retract := false, false
	for v < len(pred) && (preAdverbs[lower(pred[v])] || lower(pred[v]) == "much" && v+1 < len(pred) && likes[verbs[lower(pred[v+1])]]) { // "I much prefer"
		switch lower(pred[v]) {
		case "never":
			neg = true
		case "no":
			if v+1 < len(pred) && lower(pred[v+1]) == "longer" {
				neg, retract = true, true
			}
		}
		v++
	}
	if v >= len(pred) {
		return statement{}, "", false
	}
	for k := v; k <= v+1 && k+2 < len(pred); k++ {
		if w := lower(pred[k]); (w == "come" || w == "came") && (lower(pred[k+1]) == "round" || lower(pred[k+1]) == "around") && lower(pred[k+2]) == "to" {
			pred = slices.Concat(pred[:v], []string{"like"}, pred[k+3:]) // "I've come round to olives": I like them
			break
		}
	}
	if lower(pred[v]) == "had" && v+3 < len(pred) && lower(pred[v+1]) == "to" && verbs[lower(pred[v+2])] == lower(pred[v+2]) && hadToChange[lower(pred[v+2])] &&
		(lower(pred[v+2]) != "leave" || determiners[lower(pred[v+3])] || capitalized(pred[v+3])) {
		// "I had to give up rugby": the user did, an obligation past.
		l := lower(pred[v+2])
		pred = slices.Concat(pred[:v], []string{pastTense(l)}, pred[v+3:])
	}
	verb := lower(pred[v])
	rest := pred[v+1:]
	if (verb == "would" || verb == "'d") && len(rest) > 1 && lower(rest[0]) == "rather" && lower(rest[1]) != "not" { // ("I'd rather not talk about that": no fact)
		verb, pred, rest = "prefer", slices.Concat(pred[:v], []string{"prefers", "to"}, rest[1:]), slices.Concat([]string{"to"}, rest[1:])
		pred[v] = "prefer"
	}
	switch verb {
	case "would", "could", "should", "might", "may", "must", "wish", "wished", "'d", "wouldn't", "couldn't", "shouldn't":
		return statement{}, "", false // hypothetical
	}
	for _, t := range pred {
		switch lower(t) {
		case "you", "your", "you're", "you've", "yours", "u", "ur":
			return statement{}, "", false // about or to the assistant
		case "anymore", "any more", "actually":
			retract = true // (a retraction only when the clause is negated: "I don't actually have a dog")
		case "said", "says":
			return statement{}, "", false // a quote
		case "not", "n't", "never":
			neg = true
		}
	}
	if len(rest) > 1 && lower(rest[len(rest)-2]) == "any" && lower(rest[len(rest)-1]) == "more" {
		retract = true
	}
	// The main verb and its complement.
	main, comp := verb, rest
	switch {
	case negAux[verb] != "":
		neg = true
		main, comp = nextVerb(rest)
	case modalAux[verb]:
		main, comp = nextVerb(rest)
	case verb == "have" || verb == "has" || verb == "had":
		if len(rest) > 0 {
			main, comp = nextVerb(rest)
			if main == "been" {
				main = "be"
			} else if main == "got" {
				// "I've got a PS5" is "User has a PS5.": the same text as
				// "I have a PS5", so that a repeat in either words is one.
				main = "have"
				if g := index(rest, "got"); g >= 0 {
					rest = slices.Delete(slices.Clone(rest), g, g+1)
				}
			} else if l, ok := verbs[main]; !ok || !isParticiple(main) || l == main && main != "quit" && main != "put" && main != "read" {
				main, comp = verb, rest // "I have a daughter"
			}
		}
	case verb == "used" && len(rest) > 1 && lower(rest[0]) == "to":
		main, comp = nextVerb(rest[1:])
	}
	if len(comp) > 0 && lower(comp[0]) == "not" {
		neg, comp = true, comp[1:]
	}
	lemma := main
	if l, ok := verbs[main]; ok {
		lemma = l
	} else if be[main] {
		lemma = "be"
	}
	progressive := false
	if lemma == "be" && len(comp) > 0 {
		w, after := nextVerb(comp)
		if l, ok := verbs[w]; ok && strings.HasSuffix(w, "ing") {
			lemma, comp, progressive = l, after, true
		} else if w == "gonna" {
			lemma, comp, progressive = "go", prepend("to", after), true
		}
	}
	return statement{pred: pred, v: v, rest: rest, verb: verb, comp: comp, negated: neg, progressive: progressive, retract: retract}, lemma, true
}

// nextVerb skips adverbs and "not" to the verb after an auxiliary.
func nextVerb(rest []string) (string, []string) {
	for i, t := range rest {
		w := lower(t)
		if preAdverbs[w] || w == "not" {
			continue
		}
		return w, rest[i+1:]
	}
	return "", nil
}

var (
	be       = set("am is are was were be been 's 're")
	negAux   = map[string]string{"don't": "do", "dont": "do", "doesn't": "do", "didn't": "do", "didnt": "do", "can't": "can", "cant": "can", "cannot": "can", "won't": "will", "wont": "will", "haven't": "have", "hasn't": "have", "wasn't": "be", "weren't": "be", "isn't": "be", "aren't": "be", "ain't": "be"}
	modalAux = set("do does did can will")
)

// isParticiple reports whether w may be a past participle: "moved",
// "taken", "been".
func isParticiple(w string) bool {
	return strings.HasSuffix(w, "ed") || strings.HasSuffix(w, "en") || participles[w]
}

// notMemory recognises what is said in conversation rather than about
// oneself: small talk ("I think so", "I'm fine"), talk about the talk
// ("I'm asking because"), requests, obligations of the moment ("I have to
// go") and quotes of others ("my boss said…").
func notMemory(subj subject, lemma, verb string, comp []string, progressive bool) bool {
	first := ""
	if len(comp) > 0 {
		first = lower(comp[0])
	}
	if (lemma == "make" && slices.Contains(lowerAll(comp), "mistake") || lemma == "write" && len(comp) > 0 && (first == "wrong" || first == "it" && len(comp) > 1 && lower(comp[1]) == "wrong") ||
		lemma == "mean" || lemma == "type" && first == "wrong") && subj.kind == self {
		return true // "I made a mistake earlier", "I wrote wrong": talk about the conversation
	}
	if (strings.HasPrefix(lemma, "press") || lemma == "hit") && (first == "send" || first == "enter") {
		return true // "I pressed send too early": talk about the conversation
	}
	if subj.kind == other && technical[lastWord(subj.rel)] {
		return true // "my code throws a KeyError": a request for help, not a fact of the user's life
	}
	if (lemma == "go" || lemma == "do" || lemma == "get") && !slices.ContainsFunc(comp, func(t string) bool {
		t = lower(t)
		return t != "anymore" && t != "now" && t != "again" && t != "any" && t != "more"
	}) {
		return true // "I don't go anymore": go where is said elsewhere
	}
	if lemma == "be" && len(comp) == 1 && (first == "allergic" || first == "intolerant") {
		return true // "I'm allergic": to what is said elsewhere
	}
	if smallTalkVerbs[lemma] && !(lemma == "hope" && first == "to" || progressive && lemma == "think" && (first == "of" || first == "about") || seesSomeone(lemma, comp) || lemma == "need" && subj.kind == other && first != "to") {
		return true // (but "my dog needs a pill every morning" is a fact)
	}
	if subj.kind == other && quoteVerbs[lemma] {
		return true
	}
	switch lemma {
	case "be":
		if progressive {
			break
		}
		i := 0
		for i < len(comp) && (intensifiers[lower(comp[i])] || lower(comp[i]) == "not") {
			i++
		}
		if i == len(comp) || transient[lower(comp[i])] && !(i+1 < len(comp) && (lower(comp[i+1]) == "of" || lower(comp[i]) == "right" && (stops[lower(comp[i+1])] || lower(comp[i+1]) == "by" || lower(comp[i+1]) == "next"))) {
			return true // "I'm fine", "I'm so tired", but "I'm afraid of heights"
		}
		if (subj.kind != other || len(comp) > 2 && transient[lower(comp[2])]) && isNumber(first) && len(comp) > 1 && comp[1] != "," && !strings.HasPrefix(lower(comp[1]), "year") && lower(comp[1]) != "now" && lower(comp[1]) != "today" &&
			!(len(comp) > 2 && (statuses[lower(comp[2])] || states[lower(comp[2])])) {
			return true // "I'm 5 minutes late" (but "I'm 6 months pregnant")
		}
	case "have":
		if first == "to" || first == "got" || first == "a" && len(comp) > 1 && conversational[lower(comp[1])] || first == "no" && len(comp) > 1 && lower(comp[1]) == "idea" {
			return true
		}
	case "want", "like", "love":
		if first == "to" && len(comp) > 1 && smallTalkVerbs[lower(comp[1])] || verb == "'d" || lemma == "want" && first != "to" {
			return true // "I want a short answer" asks for one
		}
	case "get":
		if first == "it" || first == "that" {
			return true
		}
	case "look":
		if progressive && first == "for" && !(len(comp) > 1 && lookingFor(comp[1:])) {
			return true // "I'm looking for a recipe" asks for help
		}
	case "go":
		if progressive && first == "to" && len(comp) > 1 && smallTalkVerbs[lower(comp[1])] {
			return true
		}
	case "":
		return true
	}
	if progressive && smallTalkVerbs[lemma] && lemma != "think" && !seesSomeone(lemma, comp) && !(lemma == "hope" && first == "to") {
		return true
	}
	// A bare pronoun object is not self-contained: "I love it".
	if len(comp) > 0 && len(comp) <= 2 && pronounObjects[first] && !(len(comp) == 2 && timeUnits[strings.TrimSuffix(lower(comp[1]), "s")]) && !(first == "one" && len(comp) == 2 && !pronounObjects[lower(comp[1])] && !fillers[lower(comp[1])] && !clauseAdverbs[lower(comp[1])] && !trailingFillers[lower(comp[1])]) {
		return true
	}
	if len(comp) == 0 && (modalAux[lemma] || lemma == "be" || lemma == "have" || lemma == "do" || lemma == "get" || lemma == "go") {
		return true
	}
	return false
}

// lookingFor reports whether what the user is looking for is a fact of
// their life (a job, a flat, a partner) rather than help ("a recipe").
func lookingFor(comp []string) bool {
	for _, t := range comp {
		switch lower(t) {
		case "job", "work", "apartment", "flat", "house", "home", "place", "partner", "girlfriend", "boyfriend", "roommate", "school":
			return true
		}
	}
	return false
}

// seesSomeone reports whether "see" meets a person rather than
// understanding ("I'm seeing a therapist for anxiety", "I see a
// physio every week", "I'm seeing someone new"; not "I see what you
// mean").
func seesSomeone(lemma string, comp []string) bool {
	if lemma != "see" {
		return false
	}
	for _, w := range comp[:min(len(comp), 4)] {
		if w := lower(w); jobs[w] || kin[w] || w == "someone" || w == "somebody" || w == "physio" || w == "specialist" {
			return true
		}
	}
	return false
}

var (
	smallTalkVerbs  = set("think guess know see mean suppose believe hope wonder agree understand reckon bet assume appreciate thank apologize apologise ask say tell mention forget remember realize realise doubt promise swear admit recall imagine need care mind feel sound seem kid joke ping check clarify confirm repeat explain")
	quoteVerbs      = set("say tell claim think believe mention suggest insist argue complain ask reckon")
	transient       = set("fine good ok okay great sorry glad afraid tired late back here there ready done busy bored confused sure curious kidding joking home away off right wrong lost stuck listening talking worried annoyed exhausted hungry sleepy thirsty cold hot grateful thankful happy sad heartbroken devastated excited nervous upset angry frustrated alright about gonna wondering asking new")
	intensifiers    = set("so very really pretty quite super totally just still all kind sort of a bit little")
	conversational  = set("question questions idea problem doubt thought request favor favour suggestion follow-up quick")
	pronounObjects  = set("it that this those these them so too one her him")
	trailingFillers = set("lol haha hahaha lmao btw though tho tbh honestly fwiw imo imho :) :( :D ;)") // (atm, rn: expand makes them "now")
	preAdverbs      = set("also really still just actually recently currently now usually always never often finally already definitely absolutely totally mostly sometimes only even generally normally mainly no longer kind sort of probably basically literally originally both all")
)

// technical things are the subject of a request for help, not of a fact
// to remember: "my code throws…", "my query returns…".
var technical = set("code script program function query test tests build error output regex file files function loop variable essay draft prompt")
