// Stage 3 of the extractor without a model (heuristic.go lists them),
// clause: a sentence's words → its clauses.
//
// Takes the words of a sentence from the sentence stage (sentence.go) and
// a tail (a time, or a subordinate clause that led the sentence, to date
// its last clause); gives each clause in order to the subject stage
// (subject.go, extractClause) with the subject of the clause before. A
// sentence is cut at a conjunction or a comma before a new subject ("I am
// vegetarian and my sister Ana lives in Porto"); the user's clause ends
// before an afterthought ("I wear glasses, -4 in both eyes"), a comment
// (", which I love"), a condition ("… if the visa comes through"),
// someone else's clause ("… but everyone calls me Seun") and a relative
// clause on its object; a list after "I'm" is a clause per item ("I'm 42,
// divorced, two kids"); "there" becomes the place named before it.

package extract

import (
	"slices"
	"strings"
)

// extractClauses splits toks into clauses at coordinating and subordinating
// conjunctions followed by a new subject ("I am vegetarian and my sister
// Ana lives in Porto") and at commas before one, and extracts each; tail,
// when not nil, is appended to the last clause (a subordinate clause that
// led the sentence).
func extractClauses(out []Candidate, toks []string, tail []string) []Candidate {
	toks = resolveThere(selfList(toks))
	start := 0
	var prev subject // the last clause's subject, for "she" and "he"
	var frag []string
	read := func(f []string) bool { frag = f; return f != nil } // a case's fragment, read once for its test and its body
	for i := 0; i < len(toks); i++ {
		w := lower(toks[i])
		switch {
		case w == "," && i > start && i+3 < len(toks) && capitalized(toks[i+1]) && lower(toks[i+1]) != "i" && (lower(toks[i+2]) == "is" || lower(toks[i+2]) == "was") && lower(toks[i+3]) == "my":
			// "I'm Deaf, BSL is my first language": a clause of its own.
			out, prev = extractClause(out, toks[start:i], nil, prev)
			return extractClauses(out, inverted(toks[i+1:]), tail)
		case w == "," && i > start && i+2 < len(toks) && correctionAt(toks, i+1):
			// "I'm 27 - sorry, 28": the clause, then its correction.
			out, prev = extractClause(out, toks[start:i], nil, prev)
			if c, ok := correction(toks[i+1:]); ok {
				out = append(out, c)
			}
			return out
		case w == "," && i+1 < len(toks) && (subjectStart(toks, i+1) || thirdPronoun(toks[i+1])):
			out, prev = extractClause(out, toks[start:i], nil, prev)
			start = i + 1
		case w == "," && i > start && commaEnd(toks, i+1) == i+2 && isYear(toks[i+1]):
			// "honeymoon was in Zanzibar, 2018": the year dates the clause.
			toks = slices.Concat(toks[:i], []string{"in"}, toks[i+1:])
		case w == "," && i > start && i+2 < len(toks) && !subjectStart(toks, i+1) && hasVerb(toks[start:i]) && read(fragmentAt(toks, i+1)):
			// "got diagnosed in March, divorced, two kids": a fragment of
			// the user's after a comma is a clause of its own.
			out, _ = extractClause(out, toks[start:i], nil, prev)
			return extractClauses(out, slices.Concat(frag, toks[commaEnd(toks, i+1):]), tail)
		case w == "," && i+1 < len(toks) && lower(toks[i+1]) == "which":
			// "I'm ambidextrous, which is handy for tennis": a comment on
			// the clause, which ends here; the next clause starts at its
			// subject.
			out, prev = extractClause(out, toks[start:i], nil, prev)
			start = i + 2
			for start < len(toks) && toks[start] != "," { // the relative clause: "which I love"
				start++
			}
			for ; start < len(toks) && !subjectStart(toks, start); start++ {
			}
			i = start - 1
		case w == "," && i+2 < len(toks) && frequency[lower(toks[i+1])] && (auxiliaries[lower(toks[i+2])] || verbStart(lower(toks[i+2]))) && selfClause(toks[start:i]) &&
			!mostlyAfterBe(toks, i):
			// "I've had insomnia for years, usually can't sleep before 3am":
			// the user again, their subject left out.
			out, prev = extractClause(out, toks[start:i], nil, prev)
			toks = slices.Concat(toks[:i+1], []string{"I"}, toks[i+1:])
			start = i + 1
		case w == "," && i+1 < len(toks) && afterthought(toks, i):
			// "I wear glasses, -4 in both eyes": the clause ends here.
			out, prev = extractClause(out, toks[start:i], nil, prev)
			for start = i + 1; start < len(toks) && !subjectStart(toks, start); start++ {
			}
			i = start - 1
		case (w == "though" || w == "although") && i > start && toks[i-1] == ",":
			// "I'm Catholic, though not very religious": a concession.
			out, _ = extractClause(out, toks[start:i-1], tail, prev)
			return out
		case splitConj[w] && i > start && i+2 < len(toks) && lower(toks[i+1]) == "there" && beForms[lower(toks[i+2])]:
			// "I went to Paris and there were crowds": a new clause,
			// not a second object.
			end := i
			if toks[end-1] == "," {
				end--
			}
			out, prev = extractClause(out, toks[start:end], nil, prev)
			start = i + 1
		case (w == "so" || w == "and") && i > start && i+1 < len(toks) && !subjectStart(toks, i+1) && hasVerb(toks[start:i]) && (selfClause(toks[start:i]) || w == "so") && read(fragment(toks[i+1:commaEnd(toks, i+1)])):
			// "started eating fish again so pescatarian now": a state of
			// the user's.
			end := i
			if toks[end-1] == "," {
				end--
			}
			out, _ = extractClause(out, toks[start:end], nil, prev)
			return extractClauses(out, slices.Concat(frag, toks[commaEnd(toks, i+1):]), tail)
		case w == "but" && i > start && i+2 < len(toks) && !subjectStart(toks, i+1) && hasVerb(toks[start:i]) && selfClause(toks[start:i]) && strings.HasSuffix(lower(toks[i+1]), "ing") && read(fragmentAt(toks, i+1)):
			// "from Osaka but studying in Melbourne": the user again.
			end := i
			if toks[end-1] == "," {
				end--
			}
			out, _ = extractClause(out, toks[start:end], nil, prev)
			return extractClauses(out, slices.Concat(frag, toks[commaEnd(toks, i+1):]), tail)
		case i > start && i+1 < len(toks) && (w == "but" || w == "so" || w == "and" && (lower(toks[i+1]) == "it" || lower(toks[i+1]) == "it's")) && otherSubjects[lower(toks[i+1])]:
			// "My name is Oluwaseun but everyone calls me Seun", "I have a
			// bad knee so no running for me": what follows is not the
			// user's clause; the user's ends here.
			end := i
			if toks[end-1] == "," {
				end--
			}
			out, _ = extractClause(out, toks[start:end], tail, prev)
			if k := index(toks[i:], "me"); k > 0 && i+k+1 < len(toks) && verbs[lower(toks[i+k-1])] == "call" && capitalized(toks[i+k+1]) {
				// "…but everyone calls me Pri": what the user goes by.
				out = append(out, Candidate{Text: "User goes by " + toks[i+k+1] + ".", Category: "identity", Slot: "nickname", Confidence: 0.8, Importance: 0.8})
			}
			return out
		case (w == "if" || w == "unless") && i > start+2 && (i+1 == len(toks) || !subjectStart(toks, i+1)):
			// "planning to move to Canada next year if the visa comes
			// through": the condition is not a fact.
			end := i
			if toks[end-1] == "," {
				end--
			}
			out, _ = extractClause(out, toks[start:end], tail, prev)
			return out
		case w == "and" && i > start+1 && i+3 < len(toks) && !subjectStart(toks, i+1) && !thirdPronoun(toks[i+1]) && otherClause(toks[i+1:]):
			// "I'm autistic and phone calls are really hard for me": the
			// next clause is about something else; the user's ends here.
			out, prev = extractClause(out, toks[start:i], nil, prev)
			for start = i + 1; start < len(toks) && !subjectStart(toks, start); start++ {
			}
			i = start - 1
		case (w == "who" || w == "that") && i > start+2 && i+2 < len(toks) && (selfClause(toks[start:i]) || householdClause(toks[start:i])) &&
			(kin[lower(toks[i-1])] || pets[lower(toks[i-1])]) && verbStart(lower(toks[i+1])) && !determiners[lower(toks[i-1])]:
			// "I have a husband who works away most weeks": the user has
			// one, and what he does is a clause of his own.
			out, prev = extractClause(out, toks[start:i], nil, prev)
			toks = slices.Concat(toks[:i], []string{"my", lower(toks[i-1])}, toks[i+1:])
			start = i
			i++
		case (w == "that" || w == "which") && i > start+2 && i+1 < len(toks) && (selfClause(toks[start:i]) || householdClause(toks[start:i])) && relativeAfter(toks[i-1]) &&
			(!verbStart(lower(toks[i+1])) || possessionVerb(toks[start:i])):
			// "I own a flat in Krakow that I rent out to students": the
			// relative clause says more of the object; the fact ends here.
			out, prev = extractClause(out, toks[start:i], nil, prev)
			for start = i + 1; start < len(toks) && !(toks[start-1] == "," || splitConj[lower(toks[start-1])]) || start < len(toks) && !subjectStart(toks, start); start++ {
			}
			i = start - 1
		case strings.HasSuffix(w, "ing") && verbs[w] != "" && verbs[w] != w && i+1 < len(toks) && nounThenVerb(toks[start:i]):
			// "I'm a vegetarian training for a triathlon", "as a nurse
			// working nights": who the user is, and what they do.
			out, prev = extractClause(out, toks[start:i], nil, prev)
			toks = slices.Concat(toks[:i], []string{"I'm"}, toks[i:])
			start = i
			i++
		case w == "while" && i > start+1 && i+2 < len(toks) && selfClause(toks[start:i]) && strings.HasSuffix(lower(toks[i+1]), "ing"):
			// "I'm studying for the CPA while working full time": two
			// facts of the user's.
			end := i
			if toks[end-1] == "," {
				end--
			}
			out, prev = extractClause(out, toks[start:end], nil, prev)
			toks = slices.Concat(toks[:i], []string{"I'm"}, toks[i+1:])
			start = i
		case (w == "so" || w == "but") && i > start+1 && i+1 < len(toks) && !subjectStart(toks, i+1) && !thirdPronoun(toks[i+1]) &&
			!(w == "so" && (auxiliaries[lower(toks[i-1])] || be[lower(toks[i-1])] || soFollowers[lower(toks[i+1])])) && lower(toks[i+1]) != "also" && fragmentAt(toks, i+1) == nil:
			// "I have celiac disease so everything has to be gluten free",
			// "I'm lactose intolerant but cheese is ok": what follows is
			// not a clause of the user's; theirs ends here, and the
			// sentence goes on at the next clause that is.
			end := i
			if toks[end-1] == "," {
				end--
			}
			out, prev = extractClause(out, toks[start:end], nil, prev)
			for start = i + 1; start < len(toks) && !subjectStart(toks, start); start++ {
			}
			i = start - 1
		case splitConj[w] && i > start && i+1 < len(toks) && (subjectStart(toks, i+1) || thirdPronoun(toks[i+1])) && !jointSubject(toks[start:i], toks[i+1]) && !timeClause(toks, i) &&
			!(w == "since" && !hasPredicate(toks[i+2:])) &&
			!((w == "before" || w == "after" || w == "until") && !(i+2 < len(toks) && (past[lower(toks[i+2])] || lower(toks[i+2]) == "had"))):
			end := i
			if toks[end-1] == "," {
				end--
			}
			if w == "if" || w == "unless" {
				return out // the rest is hypothetical
			}
			out, prev = extractClause(out, toks[start:end], nil, prev)
			start = i + 1
		}
	}
	out, _ = extractClause(out, toks[start:], tail, prev)
	return out
}

// subjectStart reports whether toks[i] starts a clause about the user
// (false past the end).
func subjectStart(toks []string, i int) bool {
	if i >= len(toks) {
		return false
	}
	if i+1 < len(toks) && clauseAdverbs[lower(toks[i])] {
		i++ // "and now I live in Seattle"
	}
	switch lower(toks[i]) {
	case "i", "i'm", "im", "i've", "i'll", "i'd", "we", "we're", "we've", "we'll", "we'd":
		return true
	case "my", "our":
		return i+1 < len(toks)
	}
	// "…and dad drives a bus": a relative of the user's named without
	// "my" (see fragment).
	if w := lower(toks[i]); ownKin[strings.TrimSuffix(w, "'s")] && i+1 < len(toks) && (strings.HasSuffix(w, "'s") || verbStart(lower(toks[i+1])) && !strings.HasSuffix(lower(toks[i+1]), "ing")) {
		return true
	}
	return false
}

var splitConj = set("and but so because since cause 'cause cos coz although though while whereas plus or if unless yet and, before after until")

var clauseAdverbs = set("now then also actually currently recently later eventually finally so still")

// selfList returns toks with "I'm" (or "I have") restored before each
// fragment of a list that describes the user after "I'm …": "I'm Sam, 27,
// a UX designer in Dublin" is "I'm Sam, I'm 27, I'm a UX designer in
// Dublin"; "I'm 42, divorced, two kids" is "I'm 42, I'm divorced, I have
// two kids". A fragment is an age, "a"/"an" and a noun, a word of
// status (divorced, single, retired…) or a count of people or pets;
// anything else ("Lisbon, Portugal", "sorry") is left as it is, and so is
// the rest of the sentence after it.
func selfList(toks []string) []string {
	if len(toks) < 4 || !(lower(toks[0]) == "i'm" || lower(toks[0]) == "im" || lower(toks[0]) == "i" && lower(toks[1]) == "am") {
		return toks
	}
	var out []string
	changed := false
	for i := 0; i < len(toks); i++ {
		out = append(out, toks[i])
		if toks[i] != "," || i+1 >= len(toks) {
			continue
		}
		end := i + 1
		for end < len(toks) && toks[end] != "," && lower(toks[end]) != "and" {
			end++
		}
		frag := toks[i+1 : end]
		if len(frag) == 0 {
			return slices.Concat(out, toks[i+1:]) // ", and …"
		}
		item := listItem(frag)
		if item == nil {
			return slices.Concat(out, toks[i+1:]) // not a list of the user's
		}
		out = append(out[:len(out)-1], item...)
		i = end - 1
		changed = true
	}
	if !changed {
		return toks
	}
	return out
}

// resolveThere returns toks with an adverb "there" that points back to a
// place named earlier in the sentence replaced by it: "I've been living
// in Montreal since 2018 and I teach Spanish there" → "… I teach Spanish
// in Montreal", so that each clause's memory holds on its own. "There is",
// "there are" and a "there" with no place before it are left alone.
func resolveThere(toks []string) []string {
	var place []string // "in", "Montreal"
	for i := 0; i < len(toks); i++ {
		w := lower(toks[i])
		if (w == "in" || w == "to" || w == "at") && i+1 < len(toks) && capitalized(toks[i+1]) && !months[lower(toks[i+1])] &&
			!weekdays[strings.TrimSuffix(lower(toks[i+1]), "s")] && lower(toks[i+1]) != "i" {
			j := i + 1
			for j < len(toks) && capitalized(toks[j]) {
				j++
			}
			place = slices.Concat([]string{"in"}, toks[i+1:j])
			continue
		}
		if w != "there" && w != "here" || place == nil || i == 0 {
			continue
		}
		if i+1 < len(toks) && beForms[lower(toks[i+1])] {
			continue // "there is"
		}
		if lower(toks[i-1]) == "from" || lower(toks[i-1]) == "over" || lower(toks[i-1]) == "out" {
			continue // "from there", "over there"
		}
		toks = slices.Concat(toks[:i], place, toks[i+1:])
		i += len(place) - 1
	}
	return toks
}

var beForms = set("is are was were 's will has have")

// afterthought reports whether the comma at toks[i] is followed by a
// fragment that adds to the clause rather than continuing it: not a name
// ("Lisbon, Portugal"), a time ("…, last year"), a conjunction, a list
// ("peanuts, shellfish and soy") or a verb phrase ("…, work at Equinor").
func afterthought(toks []string, i int) bool {
	n := toks[i+1]
	w := lower(n)
	if (w == "still" || w == "just") && i+2 < len(toks) && strings.HasSuffix(lower(toks[i+2]), "ing") {
		return true // "just relocated to Vancouver, still unpacking"
	}
	if k := i + 1 + slices.IndexFunc(toks[i+1:min(len(toks), i+6)], func(t string) bool { return lower(t) == "a" || lower(t) == "per" }); (w == "about" || w == "around" || w == "roughly" || isNumber(w)) &&
		k > i+1 && k <= i+3 && k+1 < len(toks) && (lower(toks[k+1]) == "day" || lower(toks[k+1]) == "week" || lower(toks[k+1]) == "month") {
		return false // "I smoke, about 10 a day": how much
	}
	if i+2 < len(toks) && verbs[w] == w && (lower(toks[i+2]) == "me" || lower(toks[i+2]) == "us") {
		return true // "…, give me a romcom any day": an order to the assistant
	}
	if mostlyAfterBe(toks, i) {
		return true // "I'm a freelance designer, mostly logos and packaging"
	}
	if especially[w] && w != "mostly" {
		return true // "I love jazz, especially Coltrane": the fact ends before the example
	}
	if w == "no" && i+2 < len(toks) && (lower(toks[i+2]) == "more" || lower(toks[i+2]) == "longer") {
		return true // "I went vegan in January, no more dairy"
	}
	if frequency[w] && i+2 < len(toks) && stops[lower(toks[i+2])] {
		return true // "I'm a night owl, usually in bed by 2am"
	}
	if capitalized(n) || auxiliaries[w] || timeWords[w] || splitConj[w] || w == "who" || w == "which" || w == "though" || w == "although" || w == "," {
		return false
	}
	if l, ok := verbs[w]; ok && (l == w || l != w && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss")) || past[w] && !strings.HasSuffix(w, "ed") {
		return false // a verb phrase of the same subject ("my boss, Karen, keeps…")
	}
	for j := i + 1; j < len(toks); j++ {
		switch lower(toks[j]) {
		case "and", "or":
			return j+1 < len(toks) && subjectStart(toks, j+1)
		}
	}
	return true
}

// frequency adverbs may lead a verb phrase whose subject is left out.
var frequency = set("usually often always sometimes normally mostly rarely never generally typically")

// otherSubjects start a clause about someone or something other than the
// user after "but" or "so".
var otherSubjects = set("everyone everybody people nobody no one they it that there this the")

// soFollowers make "so" an adverb of the clause rather than a
// conjunction: "so far", "so much", "so that".
var soFollowers = set("far much many long that often well badly called to")

// otherClause reports whether toks start a clause of a subject that is
// not the user's: a noun phrase of up to three words, then a form of be
// ("phone calls are hard", "the kids were asleep"), or "the" and a noun
// phrase of up to five, then has, have, had or will ("the surgeon in
// Dunedin has booked me").
func otherClause(toks []string) bool {
	if len(toks) > 3 && lower(toks[0]) == "the" {
		// "…and the surgeon in Dunedin has booked me": a noun phrase with
		// a place or a time, then an auxiliary.
		for j := 2; j < len(toks) && j <= 6; j++ {
			w := lower(toks[j])
			if w == "," || splitConj[w] || subjectStart(toks, j) {
				break
			}
			if (w == "has" || w == "have" || w == "had" || w == "will" || w == "won't") && !determiners[lower(toks[j-1])] && !stops[lower(toks[j-1])] {
				return true
			}
		}
	}
	for j := 0; j < len(toks) && j <= 3; j++ {
		w := lower(toks[j])
		if j > 0 && (w == "is" || w == "are" || w == "was" || w == "were") {
			return true
		}
		if j >= 2 && lower(toks[0]) == "the" && (verbStart(w) && !preAdverbs[w] || strings.HasSuffix(w, "n't")) {
			return true // "…and the airline won't rebook me"
		}
		if j > 0 && verbStart(w) && !determiners[lower(toks[j-1])] && !(j+1 < len(toks) && be[lower(toks[j+1])]) || w == "," || subjectStart(toks, j) || isNumber(w) || determiners[w] && j > 0 || j == 0 && (auxiliaries[w] || preAdverbs[w]) {
			return false // ("phone calls are": a noun that is also a verb leads)
		}
	}
	return false
}

// correctionAt reports whether a correction starts at toks[i]: "sorry,
// 28", "no sorry Wednesday", "I mean 28".
func correctionAt(toks []string, i int) bool {
	w := lower(toks[i])
	if !(w == "sorry" || w == "oops" || w == "typo" || w == "i" && i+1 < len(toks) && (lower(toks[i+1]) == "mean" || lower(toks[i+1]) == "meant")) {
		return false
	}
	_, ok := correction(toks[i:])
	return ok
}

// hasPredicate reports whether toks hold a verb that is not a noun after
// a determiner ("my divorce", "the move").
func hasPredicate(toks []string) bool {
	for i, t := range toks {
		if verbStart(lower(t)) && (i == 0 || !determiners[lower(toks[i-1])]) {
			return true
		}
	}
	return false
}

// hasVerb reports whether a clause has a verb after its first word, so
// is more than its subject ("my eldest, Grace, just started…").
func hasVerb(toks []string) bool {
	for _, t := range toks {
		if t := lower(t); verbStart(t) || strings.HasSuffix(t, "'m") || strings.HasSuffix(t, "'ve") || strings.HasSuffix(t, "'re") {
			return true
		}
	}
	return false
}

// commaEnd returns the index of the first comma at or after i, or
// len(toks).
func commaEnd(toks []string, i int) int {
	for ; i < len(toks) && toks[i] != ","; i++ {
	}
	return i
}

// mostlyAfterBe reports whether the comma at toks[i] is followed by
// "mostly" or "mainly" and a noun after a clause of "be": "I'm a
// freelance designer, mostly logos" (but "big into Warhammer, mostly
// paint Space Marines" goes on with a verb).
func mostlyAfterBe(toks []string, i int) bool {
	if i+2 >= len(toks) || !(lower(toks[i+1]) == "mostly" || lower(toks[i+1]) == "mainly") || verbs[lower(toks[i+2])] == lower(toks[i+2]) {
		return false
	}
	return slices.ContainsFunc(toks[:i], func(t string) bool { return be[lower(t)] || lower(t) == "i'm" || lower(t) == "im" })
}

// thirdPronoun reports whether w is "he" or "she", which continue a
// sentence about someone in the user's life: "my wife's name is Julia and
// she's a dentist".
func thirdPronoun(w string) bool {
	switch lower(w) {
	case "he", "she", "he's", "she's":
		return true
	}
	return false
}

// timeClause reports whether the conjunction at toks[i] starts a clause
// that dates the one before rather than stating a fact of its own: "since
// I was 8", "since we were kids".
func timeClause(toks []string, i int) bool {
	if lower(toks[i]) != "since" || i+2 >= len(toks) {
		return false
	}
	switch lower(toks[i+2]) {
	case "was", "were":
		return true
	}
	return false
}

// jointSubject reports whether "and I" joins a subject ("my wife and I
// live in Porto") rather than a new clause: before it, only "my X".
func jointSubject(before []string, next string) bool {
	if len(before) == 1 && (lower(before[0]) == "me" || (capitalized(before[0]) || isWord(before[0]) && !kin[lower(before[0])] && !notName[lower(before[0])]) && lower(next) == "i") {
		return true // "me and my wife Sara run a B&B", "Tom and I got divorced"
	}
	if lower(next) != "i" || len(before) < 2 || len(before) > 4 {
		return false
	}
	if w := lower(before[0]); w != "my" && w != "me" && w != "our" {
		return false
	}
	for _, t := range before[1:] {
		if verbStart(lower(t)) || t == "," {
			return false
		}
	}
	return true
}

// selfClause reports whether a clause's subject is the user alone.
func selfClause(toks []string) bool {
	if len(toks) == 0 {
		return false
	}
	switch lower(toks[0]) {
	case "i", "i'm", "im", "i've", "ive", "i'd", "i'll":
		return true
	}
	return false
}

// householdClause reports whether a clause is of "we".
func householdClause(toks []string) bool {
	if len(toks) == 0 {
		return false
	}
	switch lower(toks[0]) {
	case "we", "we're", "we've", "we'll", "we'd":
		return true
	}
	return false
}

// possessionVerb reports whether a clause of the user's says what they
// have, own or drive: what follows its object's "that" says more of the
// thing ("a piano that belonged to my late mother").
func possessionVerb(toks []string) bool {
	for _, t := range toks[1:min(len(toks), 3)] {
		switch verbs[lower(t)] {
		case "have", "own", "drive", "ride", "keep":
			return true
		}
	}
	return false
}

// nounThenVerb reports whether a clause is "I'm a/an" and a noun phrase
// of a few words with no verb: "I'm a nurse", "I'm a single mum".
func nounThenVerb(toks []string) bool {
	if len(toks) < 3 || len(toks) > 6 {
		return false
	}
	w := lower(toks[0])
	if w == "i" && lower(toks[1]) == "am" {
		toks, w = toks[1:], "i'm"
	}
	if (w == "i'm" || w == "im") && len(toks) > 2 && lower(toks[1]) == "from" && allCapitalized(toks[2:]) {
		return true // "I'm from Chennai working in Dubai"
	}
	if w != "i'm" && w != "im" || lower(toks[1]) != "a" && lower(toks[1]) != "an" {
		return false
	}
	for _, t := range toks[2:] {
		if verbStart(lower(t)) || t == "," || stops[lower(t)] || strings.HasSuffix(lower(t), "ing") {
			return false
		}
	}
	return true
}

// relativeAfter reports whether "that" after w starts a relative clause
// of a noun ("a flat that I rent out") rather than a clause after a verb
// or an adjective ("I think that", "so sure that").
func relativeAfter(w string) bool {
	l := lower(w)
	return isWord(l) && !verbStart(l) && !smallTalkVerbs[verbs[l]] && !transient[l] && !intensifiers[l] && !determiners[l] &&
		!strings.HasSuffix(l, "ly") && l != "now" && l != "such" && l != "so"
}
