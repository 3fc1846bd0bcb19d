// Stage 6 of the extractor without a model, slot (see slot.go): the
// values a statement gives a slot or an object.
//
// Takes the lower-case words of a statement's complement; gives a value:
// a noun phrase (phrase), a slotless fact's identity (objectOf), whether
// it is a job (jobPhrase), a diet, a degree, a relation and its name ("a
// daughter named Mia"), the age a birthday tells, and what an ending
// ends: a habit ("quit smoking", "haven't had a drink in 100 days"), a
// possession ("sold the Subaru"), a plan ("cancelled the Japan trip"), a
// liking ("gone off oysters").

package extract

import (
	"slices"
	"strings"
)

// phrase is the noun phrase of lc from i: up to a time expression, a
// preposition that starts another phrase, or a comma.
func phrase(lc []string, i int) string {
	if i < 0 || i >= len(lc) {
		return ""
	}
	j := i
	for j < len(lc) {
		w := lc[j]
		if j > i && (w == "," || timeWords[w] || w == "as" || w == "since" || w == "because" || w == "for" || w == "with" || w == "and" || w == "but" || w == "now" || w == "anymore" || w == "again" || w == "too") {
			break
		}
		j++
	}
	for i < j && (lc[i] == "a" || lc[i] == "an" || lc[i] == "the" || lc[i] == "back") {
		if i+1 == j {
			break
		}
		if lc[i] == "back" && j-i > 1 && lc[i+1] == "to" {
			i += 2
			continue
		}
		i++
	}
	return strings.Join(lc[i:j], " ")
}

// objectOf is the identity of a slotless fact: its verb and complement,
// lower-case, with no negation or time words, so that "I don't play tennis
// anymore" meets "I play tennis".
func objectOf(lemma string, lc []string) string {
	var b strings.Builder
	if !likes[lemma] {
		b.WriteString(lemma)
	}
	for _, w := range lc {
		switch w {
		case "anymore", "not", "no", "longer", "now", "again", "too", "also", "really", "still", ",", "any", "more":
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strings.Trim(w, "'"))
		if b.Len() > 60 {
			break
		}
	}
	return b.String()
}

// jobPhrase reports whether lc starts with "a" or "an" and names a job in
// its first words: "a nurse", "a senior data analyst", "a physiotherapist".
func jobPhrase(lc []string) bool {
	i := 0
	if i < len(lc) && (lc[i] == "a" || lc[i] == "an") {
		i++
	} else {
		return false
	}
	for ; i < len(lc) && i < 6; i++ {
		w := lc[i]
		if stops[w] || w == "," {
			break
		}
		if jobs[w] {
			return true
		}
		if notJobs[w] {
			continue
		}
		for _, suf := range []string{"ist", "ologist", "ician", "engineer", "developer", "manager", "designer", "analyst", "officer", "assistant", "consultant", "technician", "director", "teacher", "worker", "nurse", "administrator"} {
			if strings.HasSuffix(w, suf) && w != "assist" {
				return true
			}
		}
	}
	return false
}

// notJobs end like a job ("-ist") but name a belief, a trait or a pastime.
var notJobs = set("buddhist methodist baptist atheist communist socialist feminist perfectionist optimist pessimist minimalist realist idealist marxist calvinist cyclist tourist hobbyist purist nudist extremist separatist nationalist catholic")

// nationality reports whether a capitalised word after "I'm" says where
// the user is from or what they believe rather than their name.
func nationality(w string) bool {
	if nationalities[w] {
		return true
	}
	if names[w] {
		return false
	}
	for _, suf := range []string{"ese", "ish", "ian", "ean", "can", "ch", "ss", "ani", "eli", "aqi"} {
		if strings.HasSuffix(w, suf) {
			return true
		}
	}
	return false
}

// dietWord returns the diet named in the first words of lc ("vegan",
// "pescatarian"), or "".
func dietWord(lc []string) string {
	for i, w := range lc {
		if i > 2 {
			break
		}
		if diets[w] {
			return w
		}
	}
	return ""
}

// degree reports whether a phrase names a course of study in its first
// words: "my masters at UCL", "a PhD on coral bleaching".
func degree(lc []string) bool {
	for i, w := range lc {
		if i > 3 {
			break
		}
		if degrees[strings.TrimSuffix(strings.TrimSuffix(w, "'s"), "'")] {
			return true
		}
	}
	return false
}

var degrees = set("masters master phd doctorate degree bachelors bachelor mba msc bsc ba ma llb llm apprenticeship a-levels gcses diploma dissertation thesis")

// haveRelation returns the relation noun of "have a daughter (named Mia)",
// "have two cats", or "".
func haveRelation(lc []string) string {
	if len(lc) < 2 {
		return ""
	}
	if !(lc[0] == "a" || lc[0] == "an" || lc[0] == "one" || isNumber(lc[0]) || lc[0] == "two" || lc[0] == "three") {
		return ""
	}
	for i := 1; i < len(lc) && i < 4; i++ {
		w := lc[i]
		if stops[w] || w == "," || w == "named" || w == "called" {
			break
		}
		sing := strings.TrimSuffix(w, "s")
		if w == "children" {
			sing = "child"
		}
		if kin[w] || pets[w] {
			return w
		}
		if kin[sing] || pets[sing] {
			return w
		}
	}
	return ""
}

// nameAfter is the name in "a daughter named Mia", "a dog called Rex",
// "a son, Leo".
func nameAfter(comp []string) string {
	for i, t := range comp {
		w := lower(t)
		if (w == "named" || w == "called" || w == ",") && i+1 < len(comp) && capitalized(comp[i+1]) {
			return comp[i+1]
		}
	}
	return ""
}

// favouriteOf returns what a relation names the favourite of: "book" of
// "favourite book", "all-time favourite novel", "fav band"; "" for any
// other relation.
func favouriteOf(rel string) string {
	f := strings.Fields(rel)
	for i, w := range f[:max(len(f)-1, 0)] {
		if favourites[w] && i <= 1 {
			return strings.Join(f[i+1:], " ")
		}
	}
	return ""
}

// birthdayAge returns the age that "my 38th birthday" tells, or "".
func birthdayAge(lc []string) string {
	for i := 0; i+2 < len(lc); i++ {
		if lc[i] == "my" && lc[i+2] == "birthday" {
			if n := strings.TrimRight(lc[i+1], "stndrh"); n != lc[i+1] && n != "" && isNumber(n) {
				return n
			}
		}
	}
	return ""
}

var employers = set("startup start-up company firm agency bank consultancy")

// newEmployer reports whether a clause of "start" or "join" tells a job
// at an employer: "started at Amazon", "joined Deloitte as a consultant",
// "joined a startup"; not "joined a running club" or "started a blog".
func newEmployer(lemma string, comp []string) bool {
	if len(comp) < 2 {
		return false
	}
	switch lemma {
	case "start":
		if lower(comp[0]) == "as" && jobPhrase(lowerAll(comp[1:])) {
			return true // "started as a trainee solicitor at Clifford Chance"
		}
		return lower(comp[0]) == "at" && (capitalized(comp[1]) || lower(comp[1]) == "the" || lower(comp[1]) == "a")
	case "join":
		if capitalized(comp[0]) {
			return index(comp, "as") > 0 // "joined Toastmasters" is no job
		}
		lc := lowerAll(comp)
		return (lc[0] == "a" || lc[0] == "the") && slices.ContainsFunc(lc[1:min(len(lc), 4)], func(w string) bool { return employers[w] })
	}
	return false
}

// endsHabit returns the object of the habit that "stopped playing
// tennis", "quit smoking", "gave up coffee" ends: the verb of the gerund
// and its object up to a preposition, a time or a number ("play tennis",
// "smoke", "coffee"), or "".
func endsHabit(lemma string, lc []string) string {
	switch {
	case len(lc) > 0 && lemma == "give" && lc[0] == "up", len(lc) > 0 && lemma == "cut" && lc[0] == "out",
		len(lc) > 1 && (lemma == "come" || lemma == "get") && lc[0] == "off":
		// "came off the sertraline", "got off the pill".
		lc = lc[1:]
	case lemma == "cut" && index(lc, "out") > 0 && index(lc, "out") <= 3:
		// "I cut sugar out in May".
		o := index(lc, "out")
		lc = append(slices.Clone(lc[:o]), lc[o+1:]...)
	case lemma == "stop" && len(lc) > 1 && (lc[0] == "the" || lc[0] == "my"):
		// "I stopped the intermittent fasting", "stopped my
		// medication"; not "I stopped the car".
		p := strings.Fields(phrase(lc, 1))
		if len(p) == 0 || !strings.HasSuffix(p[len(p)-1], "ing") && !habitNouns[p[len(p)-1]] {
			return ""
		}
		return strings.Join(p, " ")
	case !endVerbs[lemma]:
		return ""
	}
	if len(lc) == 0 || lc[0] == "my" || lc[0] == "job" || lc[0] == "work" || lc[0] == "by" || stops[lc[0]] {
		return "" // "quit my job" ends the job
	}
	words := []string{}
	start := 0
	if l, ok := verbs[lc[0]]; ok && strings.HasSuffix(lc[0], "ing") {
		words, start = append(words, l), 1
	} else if lemma == "stop" {
		return "" // "I stopped the car"
	}
	for _, w := range lc[start:] {
		if stops[w] || timeWords[w] || w == "," || w == "and" || w == "but" || w == "because" || w == "cos" || isNumber(w) || w == "anymore" || w == "now" || w == "again" {
			break
		}
		if w == "a" || w == "an" || w == "the" || strings.HasSuffix(w, "ly") && len(w) > 4 {
			continue // "cut out coffee completely"
		}
		words = append(words, w)
	}
	return strings.Join(words, " ")
}

// habitWords are the words of a habit's things, by habit: what "I've
// stopped drinking" ends ("a glass of wine most nights"), what "haven't
// had a cigarette in a month" and "3 months alcohol free" tell.
var habitWords = map[string]string{
	"drink": "drink", "beer": "drink", "wine": "drink", "pint": "drink", "alcohol": "drink", "booze": "drink",
	"whisky": "drink", "whiskey": "drink", "gin": "drink", "vodka": "drink", "cocktail": "drink", "cider": "drink", "rum": "drink",
	"smoke": "smoke", "cigarette": "smoke", "fag": "smoke", "ciggie": "smoke", "cig": "smoke", "nicotine": "smoke",
	"sugar": "sugar",
}

// habitOfHave returns the habit that "haven't had a drink" (a cigarette,
// a smoke, a beer) tells of, or "".
func habitOfHave(lc []string) string {
	for _, w := range lc[:min(len(lc), 3)] {
		if h := habitWords[strings.TrimSuffix(w, "s")]; h != "" {
			return h
		}
	}
	return ""
}

// abstained reports whether a negated perfect says for how long the user
// has not done something: "haven't smoked in three months", "haven't
// had a drink for a year" (verb is the auxiliary as written).
func abstained(verb string, lc []string) bool {
	switch strings.ToLower(verb) {
	case "have", "has", "haven't", "hasn't", "'ve", "havent", "hasnt", "ive", "i've":
	default:
		return false
	}
	for i, w := range lc {
		if (w == "in" || w == "for") && i+2 < len(lc) && (isNumber(lc[i+1]) || lc[i+1] == "a" || lc[i+1] == "over") && timeUnits[strings.TrimSuffix(lc[i+2], "s")] ||
			w == "since" && i+1 < len(lc) {
			return true
		}
	}
	return false
}

// parted returns the noun of a possession the user parted with, or "":
// sold, gave away, got rid of, traded in "my", "our" or "the" thing ("sold
// the Subaru last week": "subaru").
func parted(lemma string, lc []string) string {
	i := 0
	switch {
	case lemma == "sell":
	case lemma == "give" && len(lc) > 0 && lc[0] == "away", lemma == "trade" && len(lc) > 0 && lc[0] == "in":
		i = 1
	case lemma == "get" && len(lc) > 1 && lc[0] == "rid" && lc[1] == "of":
		i = 2
	default:
		return ""
	}
	if i >= len(lc) || lc[i] != "my" && lc[i] != "our" && lc[i] != "the" {
		return "" // "I sold cookies at the fair"
	}
	return lastWord(phrase(lc, i+1))
}

// planOf is the object of a cancelled plan: its names ("the Japan trip":
// "japan"), else its last noun.
func planOf(comp []string) string {
	var names []string
	for _, t := range comp {
		if capitalized(t) && t != "I" {
			names = append(names, strings.ToLower(t))
		}
	}
	if len(names) > 0 {
		return strings.Join(names, " ")
	}
	return lastWord(phrase(lowerAll(comp), 0))
}

// offPreference returns where the object of a liking lost starts in lc,
// or 0: "gone off oysters" (not "went off to college"), "sick of
// podcasts", "tired of", "fed up with".
func offPreference(lemma string, lc []string) int {
	if len(lc) < 2 || pronounObjects[lc[len(lc)-1]] {
		return 0 // "I'm tired of it"
	}
	switch {
	case lemma == "go" && lc[0] == "off" && !stops[lc[1]] && !timeWords[lc[1]] && lc[1] != ",":
		return 1
	case lemma == "be" && (lc[0] == "sick" || lc[0] == "tired") && lc[1] == "of" && len(lc) > 2:
		return 2
	case lemma == "be" && lc[0] == "fed" && lc[1] == "up" && len(lc) > 3 && lc[2] == "with":
		return 3
	}
	return 0
}
