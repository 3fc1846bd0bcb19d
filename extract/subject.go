// Stage 4 of the extractor without a model (heuristic.go lists them),
// subject: a clause → who it is about, and what is said of them.
//
// Takes a clause's words from the clause stage (clause.go) and the subject
// of the clause before it in the sentence; gives the subject and its
// predicate to the said stage (said.go, extractPredicate), and returns
// the subject that "he" or "she" in the next clause stands for. The
// subject is the user ("I", "I'm", "I'd rather"), the household ("we",
// "my wife and I", "Lena and I", "me and my wife Sara"), or someone or
// something of the user's ("my sister Ana", "my best friend, Tom,", "my
// brother's wife", "dad", "the wedding", "Rex died"); "he" and "she"
// continue the subject before ("my wife's name is Julia and she's a
// dentist": Julia; "I have a dog named Biscuit, she's 4": Biscuit). A
// clause of anyone else is not read. Chat that leaves the user's "I" out
// is read in fragment.go.

package extract

import (
	"slices"
	"strings"
)

// subject is who a clause is about.
type subject struct {
	kind int    // self ("I"), household ("we", "my wife and I") or other ("my sister Ana")
	text string // "User", "User and their family", "User's sister Ana"
	rel  string // "sister", "best friend", "dog"; "" for the user
	name string // "Ana"
	// owner: whose thing the subject is ("my mum's dementia"), whom "she"
	// in the next clause stands for.
	owner *subject
}

// The kinds of subject.
const (
	self = iota
	household
	other
)

// extractClause appends the memories of one clause to out: it finds the
// clause's subject, hands it and its predicate to the said stage
// (extractPredicate), and returns the subject "he" or "she" stands for in
// the next clause (subject{} for none).
func extractClause(out []Candidate, toks []string, tail []string, prev subject) ([]Candidate, subject) {
	toks = stripFillers(toks)
	if len(toks) < 2 {
		return out, subject{}
	}
	var subj subject
	var pred []string
	switch lower(toks[0]) {
	case "he", "she":
		if prev.kind != other {
			return out, subject{}
		}
		subj, pred = prev, toks[1:]
	case "he's", "she's":
		if prev.kind != other {
			return out, subject{}
		}
		subj, pred = prev, prepend("is", toks[1:])
	case "i":
		subj, pred = subject{kind: self, text: "User"}, toks[1:]
	case "i'm", "im":
		subj, pred = subject{kind: self, text: "User"}, prepend("am", toks[1:])
	case "i've", "ive":
		subj, pred = subject{kind: self, text: "User"}, prepend("have", toks[1:])
	case "i'll":
		subj, pred = subject{kind: self, text: "User"}, prepend("will", toks[1:])
	case "i'd", "id":
		if len(toks) < 3 || lower(toks[1]) != "rather" {
			return out, subject{} // "I'd love a holiday": a wish
		}
		// "I'd rather take the train than fly": a preference.
		subj, pred = subject{kind: self, text: "User"}, slices.Concat([]string{"would", "rather"}, toks[2:])
	case "me":
		// "Me and my wife Sara run a B&B."
		if len(toks) < 4 || lower(toks[1]) != "and" || lower(toks[2]) != "my" {
			return out, subject{}
		}
		s, rest, ok := possessive(toks[2:])
		if !ok {
			return out, subject{}
		}
		subj, pred = subject{kind: household, text: "User and their " + strings.TrimPrefix(s.text, "User's ")}, rest
	case "we":
		subj, pred = subject{kind: household, text: "User"}, toks[1:]
	case "we're":
		subj, pred = subject{kind: household, text: "User"}, prepend("are", toks[1:])
	case "we've":
		subj, pred = subject{kind: household, text: "User"}, prepend("have", toks[1:])
	case "we'll":
		subj, pred = subject{kind: household, text: "User"}, prepend("will", toks[1:])
	case "my", "our":
		var ok bool
		subj, pred, ok = possessive(toks)
		if !ok {
			return out, subject{}
		}
		// A relative clause after the subject: "my brother, who lives in
		// Oslo, is a doctor".
		if len(pred) > 2 && pred[0] == "," && (lower(pred[1]) == "who" || lower(pred[1]) == "which") {
			end := index(pred[2:], ",")
			var rel []string
			if end < 0 {
				rel, pred = pred[2:], nil
			} else {
				rel, pred = pred[2:2+end], pred[3+end:]
			}
			out = extractPredicate(out, subj, rel, nil)
			if len(pred) == 0 {
				return out, subj
			}
		}
	case "mum", "mom", "mam", "dad", "mum's", "mom's", "dad's", "nan", "nan's", "grandma", "grandma's", "grandpa", "grandpa's", "wife", "wife's", "husband", "husband's", "partner", "partner's":
		// "…and dad drives a bus": the user's relative, named without "my".
		return extractClause(out, prepend("my", lowerFirst(toks)), tail, prev)
	case "the":
		// "The wedding got moved to September": the user's own event.
		if len(toks) < 4 || !events[lower(toks[1])] || !ownEvent(strings.Join(toks, " ")) {
			return out, subject{}
		}
		subj, pred = makeSubject(toks[1:2], nil), toks[2:]
	case "it", "it's", "today", "yesterday":
		if c, ok := birthdayClause(toks); ok {
			return append(out, c), subject{}
		}
		return out, subject{}
	default:
		// "Lena and I broke up."
		if len(toks) > 3 && lower(toks[1]) == "and" && lower(toks[2]) == "i" && (capitalized(toks[0]) || isWord(toks[0]) && !kin[lower(toks[0])] && !notName[lower(toks[0])]) {
			n := strings.ToUpper(toks[0][:1]) + toks[0][1:] // "chris and i broke up"
			subj, pred = subject{kind: household, text: "User and " + n, name: n}, toks[3:]
			break
		}
		// "Rex died last week": someone named, who died.
		if len(toks) > 1 && capitalized(toks[0]) && toks[0] != "I" && (lower(toks[1]) == "died" || lower(toks[1]) == "passed" && len(toks) > 2 && lower(toks[2]) == "away") {
			subj, pred = subject{kind: other, text: "User's " + toks[0], name: toks[0]}, toks[1:] // "User's Rex died"
			break
		}
		return out, subject{}
	}
	if subj.text == "User" && subj.kind == household && slices.ContainsFunc(pred, func(t string) bool {
		t = lower(t)
		return t == "both" || t == "together" || t == "each" || t == "all"
	}) {
		subj.text = "User and their family" // "we are both vegetarian", "we live together"
	}
	out = extractPredicate(out, subj, pred, tail)
	if subj.kind != other {
		if named, ok := namedIn(pred); ok {
			// "I have a golden retriever named Biscuit, she's 4": she is
			// Biscuit.
			return out, named
		}
	}
	if subj.owner != nil {
		return out, *subj.owner // "my mum's dementia is getting worse, she…": mum
	}
	if n := len(pred); subj.kind == other && n >= 2 && n <= 3 && be[lower(pred[0])] && allCapitalized(pred[1:]) {
		// "My wife's name is Julia and she's a dentist": she is Julia.
		r := strings.TrimSuffix(subj.rel, "'s name")
		subj = makeSubject([]string{r}, pred[1:])
	}
	return out, subj
}

// possessive parses a subject that starts with "my": "my sister Ana",
// "my best friend, Tom,", "my dog's name", "my wife and I". It returns the
// rest of the clause.
func possessive(toks []string) (subject, []string, bool) {
	i := 1
	var rel, name []string
	for ; i < len(toks); i++ {
		t, w := toks[i], lower(toks[i])
		if w == "and" && len(name) > 0 && i+1 < len(toks) && capitalized(toks[i+1]) && lower(toks[i+1]) != "i" {
			name = append(name, t) // "my kids Tom and Lucy"
			continue
		}
		if i > 1 && (verbStart(w) && !favourites[lower(toks[i-1])] || w == "," || w == "and" || w == "who" || w == "which" || w == "that" ||
			len(w) > 5 && strings.HasSuffix(w, "ed") && !capitalized(t) && len(name) == 0) { // (and "my basement flooded", a verb the lexicon lacks)
			break // (but "my favourite book is…": a noun after favourite)
		}
		if w == "fav" || w == "fave" {
			t = "favorite" // "my fav season"
		}
		if len(rel) > 0 && (kin[lower(rel[len(rel)-1])] || pets[lower(rel[len(rel)-1])] || len(name) > 0) && !capitalized(t) && !strings.HasSuffix(w, "'s") &&
			!(len(name) == 0 && (kin[w] || pets[w])) { // (but "my twin sister")
			break // "my grandfather passed away": a verb the lexicon lacks
		}
		if strings.HasSuffix(w, "'s") && len(w) > 2 {
			// "my dog's name is", or "my sister's a doctor".
			if i+1 < len(toks) && (lower(toks[i+1]) == "name" || lower(toks[i+1]) == "names") {
				rel = append(rel, t[:len(t)-2])
				i += 2
				rel = append(rel, "")
				break
			}
			if i+2 < len(toks) && (kin[lower(toks[i+1])] || pets[lower(toks[i+1])] || events[lower(toks[i+1])]) && (verbStart(lower(toks[i+2])) || capitalized(toks[i+2]) || events[lower(toks[i+2])]) {
				// "my brother's wife is a doctor": a chain of possessives,
				// not "my brother is".
				rel = append(rel, t)
				continue
			}
			if k := ownedThing(toks, i+1); k > 0 && (len(rel) > 0 || !capitalized(t)) {
				// "my son's school is in Leeds", "my son Theo's favourite
				// food is pasta": a thing of theirs.
				s := makeSubject(slices.Concat(rel, name, toks[i:k]), nil)
				o := makeSubject(rel, name)
				if len(rel) == 0 {
					o = makeSubject(toks[i:i+1], nil)
					o.text, o.rel = strings.TrimSuffix(o.text, "'s"), strings.TrimSuffix(o.rel, "'s")
				}
				s.owner = &o
				return s, toks[k:], true
			}
			if capitalized(t) && len(rel) > 0 {
				name = append(name, t[:len(t)-2])
			} else {
				rel = append(rel, t[:len(t)-2])
			}
			aux := "is"
			if i+1 < len(toks) && (lower(toks[i+1]) == "been" || lower(toks[i+1]) == "got") {
				aux = "has" // "my grandma's been living with us"
			}
			return makeSubject(rel, name), prepend(aux, toks[i+1:]), len(rel) > 0
		}
		if capitalized(t) && len(rel) > 0 {
			name = append(name, t)
		} else if len(name) > 0 {
			break
		} else {
			rel = append(rel, t)
		}
	}
	if len(rel) > 0 && rel[len(rel)-1] == "" {
		// "my dog's name is Rex": the subject is the name itself.
		s := makeSubject(rel[:len(rel)-1], name)
		s.text += "'s name"
		s.rel += "'s name"
		return s, toks[i:], true
	}
	rest := toks[i:]
	// Apposition: "my sister, Ana, lives in Porto".
	if len(name) == 0 && len(rest) >= 3 && rest[0] == "," && capitalized(rest[1]) && rest[2] == "," && !verbStart(lower(rest[1])) {
		name, rest = rest[1:2], rest[3:]
	} else if len(name) == 0 && len(rest) >= 5 && rest[0] == "," && capitalized(rest[1]) && lower(rest[2]) == "and" && capitalized(rest[3]) && rest[4] == "," {
		name, rest = rest[1:4], rest[5:] // "our twins, Ava and Eli, turn three"
	}
	if len(rel) == 0 || fiction[lower(rel[len(rel)-1])] && favouriteOf(strings.ToLower(strings.Join(rel, " "))) == "" {
		return subject{}, nil, false // "my character in the novel", not "my favourite novel"
	}
	s := makeSubject(rel, name)
	// "my wife and I live in Porto".
	if len(rest) >= 2 && lower(rest[0]) == "and" && lower(rest[1]) == "i" {
		s = subject{kind: household, text: "User and their " + strings.Join(append(rel, name...), " "), rel: strings.ToLower(strings.Join(rel, " ")), name: strings.Join(name, " ")}
		rest = rest[2:]
	}
	return s, rest, true
}

// ownedThing returns where the verb is after the noun of a possessive
// at toks[i:] ("school is", "favourite food is"), or 0 when what follows
// the possessive is no noun then "is" or "has" ("'s a doctor", "'s
// moving", "'s allergic to").
func ownedThing(toks []string, i int) int {
	for k := i; k < len(toks) && k < i+3; k++ {
		w := lower(toks[k])
		if k > i && (be[w] && w != "'s" && w != "be" && w != "been" || w == "has" || w == "had") {
			return k
		}
		if !isWord(w) || verbStart(w) || past[w] || stops[w] || determiners[w] || isNumber(w) || capitalized(toks[k]) || strings.HasSuffix(w, "ly") || kin[w] || pets[w] {
			return 0
		}
	}
	return 0
}

// makeSubject is the subject of the user's relation rel, named name or
// not: "User's sister Ana".
func makeSubject(rel, name []string) subject {
	r := strings.ToLower(strings.Join(rel, " "))
	n := strings.Join(name, " ")
	text := "User's " + strings.Join(rel, " ")
	if n != "" {
		text += " " + n
	}
	return subject{kind: other, text: text, rel: r, name: n}
}

// namedIn returns who a predicate of the user's names, for "he" and
// "she" in the next clause: "have a golden retriever named Biscuit",
// "lost our old dog Max".
func namedIn(pred []string) (subject, bool) {
	for i := 1; i+1 < len(pred); i++ {
		w := lower(pred[i])
		if (w == "named" || w == "called") && capitalized(pred[i+1]) && anyone[lower(pred[i-1])] {
			if !dating(pred[:i-1]) {
				return subject{}, false // "met a guy called Sam": no one of the user's
			}
			// "I'm seeing someone named Ines": the user's partner.
			return makeSubject([]string{"partner"}, pred[i+1:i+2]), true
		}
		if (w == "named" || w == "called") && capitalized(pred[i+1]) && (kin[lower(pred[i-1])] || pets[lower(pred[i-1])] || isWord(pred[i-1])) {
			return makeSubject([]string{lower(pred[i-1])}, pred[i+1:i+2]), true
		}
		if (kin[w] || pets[w]) && pred[i+1] == "," && i+2 < len(pred) && capitalized(pred[i+2]) {
			return makeSubject([]string{w}, pred[i+2:i+3]), true // "a son, Jake"
		}
		if (kin[w] || pets[w]) && capitalized(pred[i+1]) && lower(pred[i+1]) != "i" {
			for j := i - 1; j >= 0 && j >= i-3; j-- {
				if l := lower(pred[j]); l == "my" || l == "our" {
					return makeSubject([]string{w}, pred[i+1:i+2]), true
				}
			}
		}
	}
	return subject{}, false
}

// birthdayClause returns the memory of the age of a clause that tells it
// without the user as its subject: "it was my 45th birthday on Saturday",
// "today is my 30th birthday" → "User turned 45 on Saturday."; a birthday
// to come ("it's my 40th birthday next month") tells no age yet.
func birthdayClause(toks []string) (Candidate, bool) {
	lc := lowerAll(toks)
	age := birthdayAge(lc)
	if age == "" || len(lc) < 4 {
		return Candidate{}, false
	}
	past := lc[0] == "it" && lc[1] == "was" || lc[0] == "yesterday" && lc[1] == "was"
	today := lc[0] == "today" && lc[1] == "is" || (lc[0] == "it's" || lc[0] == "it" && lc[1] == "is") && index(lc, "today") > 0
	if !past && !today {
		return Candidate{}, false
	}
	rest := toks[index(lc, "birthday")+1:]
	text := "User turned " + age
	if lc[0] == "yesterday" || lc[0] == "today" {
		text += " " + lc[0]
	}
	for _, t := range thirdPersonRest(rest) {
		if t != "," {
			text += " " + t
		}
	}
	return Candidate{Text: text + ".", Category: "identity", Slot: "age", Confidence: 0.85, Importance: 0.7}, true
}
