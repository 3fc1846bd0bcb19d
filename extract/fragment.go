// Stage 4 of the extractor without a model (heuristic.go lists them),
// subject, for chat that leaves it out: words without "I" → the user's
// clause.
//
// Takes a sentence's words, or a fragment of them between commas, from
// the sentence and clause stages (sentence.go, clause.go); gives them
// back as a clause of the user's with its subject restored, or nil:
// "broke my wrist skiing" → "I broke my wrist skiing", "been vegan since
// 2020" → "I've been vegan since 2020", "divorced, two kids" → "I'm
// divorced, I have two kids", "mum passed away" → "my mum passed away",
// "retired teacher here" → "I'm a retired teacher", "home's Dublin for
// now" → "I live in Dublin for now". Only what cannot be an order or a
// reply counts: "Read this", "Got it" and "Love it!" state nothing.

package extract

import (
	"slices"
	"strings"
)

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

// notIntro are the words that do not start an introduction before
// "here" ("Same here", "Nothing new here").
var notIntro = set("same me you not nothing all everything over right and out back there still been it this that what who no yes ok okay hi hello hey thanks im i'm i we my our your")

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

// idioms are a past tense and a particle that tell no fact of the
// user's when they lead a sentence.
var idioms = map[string]bool{"turned out": true, "sold out": true, "stopped by": true, "dropped by": true, "came by": true,
	"popped by": true, "made sense": true, "went well": true, "got it": true, "ran out": true}

// pastObjects may follow a past tense that leads a sentence: "handed in
// my notice", "painted the fence".
var pastObjects = set("my a an the our in up out on off for back")
