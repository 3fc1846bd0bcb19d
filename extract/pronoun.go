// Stage 4 of the extractor without a model (heuristic.go lists them),
// subject, across sentences and turns: "she", "his" or "they" at the
// start of a sentence → the one person or pet of the user's it stands
// for.
//
// Within a sentence the clause stage hands "he" and "she" the subject of
// the clause before (subject.go). Here, a sentence that starts with a
// pronoun ("She is allergic to eggs.", "His school is in Leeds.", "They
// are both retired.") is rewritten with the one the pronoun stands for
// ("my daughter Lily is allergic to eggs") before the sentence stage
// reads it, when exactly one is in play: the people and pets named in the
// sentences before it in the message (referents), or, when those name
// none, in the user's previous turn of the batch. It is left as it is
// (and so states nothing of the user) when two are in play, when the
// only one is not the user's ("I met Sarah at the gym"), when the
// assistant's turn since names someone else, when no one was named, and
// when the writer does not capitalise names ("for ethan"), so that one
// may be hidden. The user is never a referent. "She's called Ines" and
// "her name is Ines" name the one before ("I've started seeing someone,
// she's called Ines" → "… seeing someone named Ines").

package extract

import (
	"slices"
	"strings"
	"unicode"
)

// referent is someone a pronoun may stand for.
type referent struct {
	rel  []string // "daughter", "head baker"; nil for a name alone
	name []string // "Lily", "Ben and Olly"; nil when not named
	own  bool     // the user's: "my daughter Lily", "a kitten called Mochi" they got
	many bool     // more than one: "my parents", "my sons Ben and Olly"
}

// discourse is what the subject stage keeps of a batch of messages for
// the pronouns that start a sentence. Its sentences are read for
// referents only when a pronoun needs them.
type discourse struct {
	cur     turn     // the user's message so far
	prev    turn     // the user's previous message
	between []string // the assistant's turns between the two
	heard   []string // the assistant's turns since the user's message
	// places are the names the user gave places ("to Porto"), which the
	// assistant may name again.
	places map[string]bool
}

// turn is a message of the user's, for its referents.
type turn struct {
	refs    []referent // named in it, in order
	pending []string   // its sentences not read yet
	blind   bool       // a sentence of it writes no capital: a name may be hidden
}

// user starts a message of the user's: the one before becomes the
// previous turn.
func (d *discourse) user() {
	d.prev, d.cur, d.between, d.heard = d.cur, turn{}, d.heard, nil
}

// assistant keeps a turn of the assistant's: when it names someone other
// than those of the user's previous turn, a pronoun that starts the
// user's next one is left unresolved.
func (d *discourse) assistant(text string) {
	d.heard = append(d.heard, text)
}

// sentence returns a sentence of the user's with a pronoun at its start
// replaced by the one it stands for, and whether it now names the user;
// raw is the sentence as written (s its statement, "" for a question),
// kept for its referents.
func (d *discourse) sentence(raw, s string, named bool) (string, bool) {
	if s != "" {
		s = nameSomeone(s)
		if r, ok := d.resolve(s); ok {
			s, named = r, mentionsUser(r) || ownEvent(r)
		}
	}
	d.cur.pending = append(d.cur.pending, raw)
	return s, named
}

// read reads the sentences of t not read yet for their referents.
func (d *discourse) read(t *turn) {
	for _, s := range t.pending {
		for _, r := range d.scan(s, false) {
			t.add(r)
		}
		t.blind = t.blind || uncased(s)
	}
	t.pending = nil
}

// resolve returns s with the pronoun it starts with replaced by the one
// referent it stands for, if there is one.
func (d *discourse) resolve(s string) (string, bool) {
	if !pronounFirst(s) {
		return "", false // (most sentences: the words are not read)
	}
	toks := words(s)
	if len(toks) < 2 {
		return "", false
	}
	p, ok := pronouns[lower(toks[0])]
	if !ok {
		return "", false
	}
	d.read(&d.cur)
	pool, blind := d.cur.refs, d.cur.blind
	if len(pool) == 0 && !blind {
		d.read(&d.prev)
		pool, blind = d.prev.refs, d.prev.blind || d.named(d.prev.refs)
	}
	if blind {
		return "", false
	}
	var r referent
	switch {
	case p.many && len(pool) == 1 && pool[0].many && pool[0].own && (len(pool[0].name) > 0 || len(pool[0].rel) > 0 && family[lower(pool[0].rel[len(pool[0].rel)-1])]):
		// "My parents moved to Spain. They are both retired.": a couple
		// or a family's children, not "my dogs" or "my friends", of
		// whom "they" says how the user feels more than a fact.
		r = pool[0]
	case !p.many && len(pool) == 1 && !pool[0].many:
		r = pool[0]
	default:
		return "", false // none, or two in play: no guess
	}
	phrase := r.phrase()
	if phrase == nil {
		return "", false // "the doctor": no one of the user's to name
	}
	if p.poss {
		last := phrase[len(phrase)-1]
		if strings.HasSuffix(last, "s") && r.many {
			last += "'"
		} else {
			last += "'s"
		}
		phrase = append(phrase[:len(phrase)-1:len(phrase)-1], last)
	}
	rest := toks[1:]
	if p.poss && lower(rest[0]) == "name's" {
		rest = slices.Concat([]string{"name", "is"}, rest[1:]) // "his name's Alex"
	}
	if p.verb != "" {
		v := p.verb
		if v == "is" && (lower(rest[0]) == "been" || lower(rest[0]) == "got" || lower(rest[0]) == "gotten") {
			v = "has" // "she's been", "he's got"
		}
		rest = prepend(v, rest)
	}
	out := strings.Join(slices.Concat(phrase, rest), " ")
	if !r.own && !mentionsUser(out) {
		return "", false // "I met Sarah at the gym. She…": not of the user's
	}
	if len(r.name) == 0 && (p.poss && len(rest) > 2 && lower(rest[0]) == "name" || !p.poss && len(rest) > 2 && lower(rest[1]) == "called") {
		// "Her name is Priya", "she's called Ines": the referent's name.
		r.name = nameIn(rest)
	}
	d.cur.add(r) // in play in this message now
	return out, true
}

// named reports whether the assistant's turns since the user's previous
// one name someone not among refs.
func (d *discourse) named(refs []referent) bool {
	named := false
	for _, text := range d.between {
		forSentences(text, func(s string, _ bool) {
			for _, r := range d.scan(s, true) {
				named = named || !slices.ContainsFunc(refs, r.same)
			}
		})
	}
	return named
}

// pronounFirst reports, without reading its words, whether a sentence
// may start with a pronoun: one of its first four words is one.
func pronounFirst(s string) bool {
	for i, f := 0, 0; i < len(s) && f < 4; f++ {
		for i < len(s) && s[i] == ' ' {
			i++
		}
		j := i
		for j < len(s) && s[j] != ' ' {
			j++
		}
		w := strings.TrimRight(s[i:j], ",.!?:;")
		if len(w) >= 2 && len(w) <= 7 && (w[0] == 'h' || w[0] == 'H' || w[0] == 's' || w[0] == 'S' || w[0] == 't' || w[0] == 'T') {
			if _, ok := pronouns[strings.ToLower(strings.ReplaceAll(w, "’", "'"))]; ok {
				return true
			}
		}
		i = j
	}
	return false
}

// pronoun is what a pronoun at a sentence's start stands for and says.
type pronoun struct {
	many bool   // "they": more than one
	poss bool   // "his", "her": the referent's
	verb string // "she's": "is"
}

var pronouns = map[string]pronoun{
	"he": {}, "she": {}, "he's": {verb: "is"}, "she's": {verb: "is"}, "hes": {verb: "is"}, "shes": {verb: "is"},
	"he'll": {verb: "will"}, "she'll": {verb: "will"}, "his": {poss: true}, "her": {poss: true},
	"they": {many: true}, "they're": {many: true, verb: "are"}, "they've": {many: true, verb: "have"}, "they'll": {many: true, verb: "will"},
}

// phrase is how a sentence names the referent: "my daughter Lily", or
// "Sarah", not the user's; nil for someone else's not named ("the
// doctor").
func (r referent) phrase() []string {
	if !r.own || len(r.rel) == 0 {
		return slices.Clone(r.name)
	}
	return slices.Concat([]string{"my"}, r.rel, r.name)
}

// same reports whether r and o are the one person: the same name, or the
// same relation where one is not named.
func (r referent) same(o referent) bool {
	if len(r.name) > 0 && len(o.name) > 0 {
		return strings.EqualFold(strings.Join(r.name, " "), strings.Join(o.name, " "))
	}
	return len(r.rel) > 0 && strings.EqualFold(strings.Join(r.rel, " "), strings.Join(o.rel, " "))
}

// add records a referent of the user's message: one already in play is
// completed (a name, a relation), another joins them.
func (t *turn) add(r referent) {
	for i, o := range t.refs {
		if m, ok := merge(o, r); ok && o.same(r) {
			t.refs[i] = m
			return
		}
	}
	t.refs = append(t.refs, r)
}

// merge returns one referent for a and b, said to be the same ("Jason,
// my head baker,", "a puppy, a beagle called Rolo"), when neither
// contradicts the other.
func merge(a, b referent) (referent, bool) {
	if len(a.name) > 0 && len(b.name) > 0 && !strings.EqualFold(strings.Join(a.name, " "), strings.Join(b.name, " ")) {
		return referent{}, false
	}
	if a.many != b.many && len(a.name) > 0 && len(b.name) > 0 {
		return referent{}, false
	}
	m := a
	if len(b.rel) > 0 && (len(a.rel) == 0 || len(b.name) > 0 && len(a.name) == 0) {
		m.rel = b.rel
	}
	if len(m.name) == 0 {
		m.name = b.name
	}
	m.own = a.own || b.own
	m.many = a.many || b.many
	return m, true
}

// scan returns the people and pets a sentence names, in order: "my
// daughter Lily", "our parents", "a kitten called Mochi" the user got,
// "someone" the user is seeing (theirs); "her husband", "the doctor",
// "Sarah" (someone else's, or no one's said). yours reads the
// assistant's "your sister" as the user's.
func (d *discourse) scan(raw string, yours bool) []referent {
	toks := expand(tokenize(parens.Replace(raw)))
	var refs []referent
	last := -1 // where the last referent ends
	add := func(r referent, start, end int) {
		if n := len(refs); n > 0 && start > 0 && last == start-1 && toks[start-1] == "," {
			// In apposition: "Jason, my head baker,", "a puppy, a beagle
			// called Rolo".
			if m, ok := merge(refs[n-1], r); ok && (len(refs[n-1].name) == 0 || len(r.name) == 0) {
				refs[n-1], last = m, end
				return
			}
		}
		if len(r.name) == 0 && !r.kin() {
			return // "my keyboard", "my head baker" in apposition to no one
		}
		refs, last = append(refs, r), end
	}
	for i := 0; i < len(toks); i++ {
		w := lower(toks[i])
		switch {
		case w == "my" || w == "our" || yours && w == "your":
			s, rest, ok := possessive(toks[i:])
			if !ok || s.rel == "" || len(strings.Fields(s.rel)) > 3 || slices.ContainsFunc(strings.Fields(s.rel), func(t string) bool { return stops[t] || determiners[t] }) {
				continue // "my first full conversation with the vet about…": no one
			}
			end := len(toks) - len(rest)
			rel := s.rel // lower case; the words as written, but for a household ("my wife and I")
			if s.kind == other {
				rel = strings.TrimSuffix(strings.TrimPrefix(s.text, "User's "), " "+s.name)
			}
			r := referent{rel: strings.Fields(rel), own: true}
			if s.name != "" {
				r.name = strings.Fields(s.name)
			}
			if base, ok := strings.CutSuffix(rel, "'s name"); ok {
				// "my dog's name is Rex".
				r.rel = strings.Fields(base)
				if len(rest) > 1 && be[lower(rest[0])] {
					r.name = nameIn(rest)
				}
			}
			if strings.Contains(s.rel, "'s") && !strings.HasSuffix(s.rel, "'s name") {
				r.own = false // "my brother's wife": someone, but no relation of the user's to name
			}
			r.many = plural(r)
			add(r, i, end)
			i = max(i, end-1)
		case determiners[w] && w != "my" && w != "our" || w == "your":
			j := i + 1
			for j < len(toks) && j < i+3 && !kinWord(toks[j]) && isWord(toks[j]) && !capitalized(toks[j]) && !stops[lower(toks[j])] && !verbStart(lower(toks[j])) {
				j++
			}
			if j >= len(toks) || !kinWord(toks[j]) {
				continue
			}
			r := referent{rel: []string{lower(toks[j])}}
			end := j + 1
			if n, e := calledAfter(toks, end); n != nil {
				r.name, end = n, e
			} else if end < len(toks) && capitalized(toks[end]) && personWord(toks[end]) {
				r.name, end = toks[end:end+1], end+1 // "her husband Tom"
			}
			r.own = (w == "a" || w == "an") && possessed(toks[:i])
			r.many = plural(r)
			add(r, i, end)
			i = end - 1
		case (w == "someone" || w == "somebody") && dating(toks[:i]):
			// "I've started seeing someone": the user's partner.
			r := referent{rel: []string{"partner"}, own: true}
			end := i + 1
			if n, e := calledAfter(toks, end); n != nil {
				r.name, end = n, e
			}
			add(r, i, end)
			i = end - 1
		case (w == "named" || w == "called") && i > 0 && i+1 < len(toks) && capitalized(toks[i+1]) && personWord(toks[i+1]) && isWord(toks[i-1]) && !be[lower(toks[i-1])]:
			// "a beagle called Rolo" the user got; "a guy called Sam".
			start := i - 1
			if start > 0 && determiners[lower(toks[start-1])] {
				start--
			}
			r := referent{name: toks[i+1 : i+2]}
			if n := lower(toks[i-1]); !anyone[n] {
				r.rel, r.own = []string{n}, !things[n] && possessed(toks[:start])
			}
			add(r, start, i+2)
			i++
		case bareKin[w] && (i == 0 || !determiners[lower(toks[i-1])]) && (i+1 >= len(toks) || !capitalized(toks[i+1])):
			// "dad drives a bus", "with mum".
			add(referent{rel: []string{w}, own: true}, i, i+1)
		case d.personAt(toks, i):
			j := i + 1
			for j < len(toks) && capitalized(toks[j]) && personWord(toks[j]) {
				j++
			}
			name := slices.Clone(toks[i:j])
			name[len(name)-1] = strings.TrimSuffix(name[len(name)-1], "'s")
			add(referent{name: name}, i, j)
			i = j - 1
		}
		if (placeWords[w] || w == "to" && motionBefore(toks[:i])) && !yours {
			// A place the user names, which the assistant may name again.
			for j := i + 1; j < len(toks) && capitalized(toks[j]); j++ {
				if d.places == nil {
					d.places = map[string]bool{}
				}
				d.places[strings.TrimSuffix(lower(toks[j]), "'s")] = true
			}
		}
	}
	return refs
}

// parens writes "Donna (my wife)" as an apposition, "Donna , my wife ,".
var parens = strings.NewReplacer("(", " , ", ")", " , ")

// kin reports whether a referent is a person or a pet by its relation.
func (r referent) kin() bool {
	return len(r.rel) > 0 && kinWord(r.rel[len(r.rel)-1])
}

// kinWord reports whether w names a person or pet by relation: "sister",
// "dog", "kids".
func kinWord(w string) bool {
	w = lower(w)
	return kin[w] || pets[w] || ownKin[w] || bareKin[w] || extraKin[w]
}

var (
	// bareKin name the user's relative without "my": "dad drives a bus".
	bareKin  = set("mum mom mam dad nan nana gran granny grandma grandpa")
	extraKin = set("grandson granddaughter grandchild grandkid puppy kitten babies niece nephew nieces nephews aunt uncle aunts uncles cousins grandsons granddaughters neighbours neighbors colleagues coworkers")
	// family are more than one of the user's family: "they" may stand
	// for them.
	family  = set("parents kids children twins sons daughters grandparents grandchildren grandkids in-laws")
	manyKin = set("kids children parents brothers sisters siblings cousins twins sons daughters boys girls grandparents grandchildren grandkids grandsons granddaughters in-laws friends dogs cats pets nieces nephews aunts uncles neighbours neighbors colleagues coworkers babies")
)

// plural reports whether a referent is more than one: "my parents", "my
// sons Ben and Olly".
func plural(r referent) bool {
	if slices.ContainsFunc(r.name, func(t string) bool { return lower(t) == "and" }) {
		return true
	}
	return len(r.rel) > 0 && manyKin[lower(r.rel[len(r.rel)-1])]
}

// possessed reports whether the words before an indefinite "a son", "a
// kitten" say the user has or got it.
func possessed(before []string) bool {
	for _, t := range before {
		switch verbs[lower(t)] {
		case "have", "get", "adopt", "own", "buy", "rescue", "welcome", "foster":
			return true
		}
	}
	return false
}

// dating reports whether the words before "someone" say the user is
// seeing or dating them.
func dating(before []string) bool {
	for _, t := range before[max(0, len(before)-3):] {
		switch lower(t) {
		case "seeing", "dating", "date":
			return true
		}
	}
	return false
}

// calledAfter returns the name that follows a referent at toks[i] ("…
// called Rolo", "…, she's called Ines", "…, her name is Ines") and where
// it ends, or nil.
func calledAfter(toks []string, i int) ([]string, int) {
	if i < len(toks) && toks[i] == "," {
		i++
	}
	if i+1 < len(toks) && (lower(toks[i]) == "named" || lower(toks[i]) == "called") && capitalized(toks[i+1]) && personWord(toks[i+1]) {
		return toks[i+1 : i+2], i + 2
	}
	if i+2 < len(toks) {
		switch w := lower(toks[i]); {
		case w == "she's" || w == "he's":
			return calledAfter(toks, i+1)
		case (w == "she" || w == "he") && be[lower(toks[i+1])]:
			return calledAfter(toks, i+2)
		case (w == "her" || w == "his") && lower(toks[i+1]) == "name's" && capitalized(toks[i+2]) && personWord(toks[i+2]):
			return toks[i+2 : i+3], i + 3
		case (w == "her" || w == "his") && lower(toks[i+1]) == "name" && i+3 < len(toks) && be[lower(toks[i+2])] && capitalized(toks[i+3]) && personWord(toks[i+3]):
			return toks[i+3 : i+4], i + 4
		}
	}
	return nil, i
}

// nameIn returns the name of "name is Priya", "is called Ines", "'s
// called Ines", or nil.
func nameIn(toks []string) []string {
	for i, t := range toks[:min(len(toks), 4)] {
		if capitalized(t) && personWord(t) && i > 0 {
			return []string{strings.TrimSuffix(t, "'s")}
		}
		if w := lower(t); w != "name" && w != "name's" && !be[w] && w != "called" && w != "named" {
			return nil
		}
	}
	return nil
}

// nameSomeone returns a sentence that names someone the user is seeing
// in a clause of its own as one that names them in the first: "I've
// started seeing someone, she's called Ines" → "… seeing someone named
// Ines".
func nameSomeone(s string) string {
	if !strings.Contains(s, "omeone") && !strings.Contains(s, "omebody") {
		return s
	}
	toks := words(s)
	for i, t := range toks {
		if w := lower(t); (w == "someone" || w == "somebody") && dating(toks[:i]) {
			if n, end := calledAfter(toks, i+1); n != nil && end > i+3 {
				return strings.Join(slices.Concat(toks[:i+1], []string{"named"}, n, toks[end:]), " ")
			}
		}
	}
	return s
}

// personAt reports whether a capitalised word at toks[i] may be the name
// of someone: not "I", a month, a day, an acronym, a nationality or a
// place ("in Porto", "at St James's"), and, leading the sentence, a name
// before a verb ("Colin passed away", "Jason, my head baker").
func (d *discourse) personAt(toks []string, i int) bool {
	t := toks[i]
	if !capitalized(t) || !personWord(t) {
		return false
	}
	if i > 0 {
		p := lower(toks[i-1])
		if p == "the" && i > 1 {
			p = lower(toks[i-2]) // "from the Tierheim"
		}
		if capitalized(toks[i-1]) && p != "i" || placeWords[p] || p == "to" && motionBefore(toks[:i-1]) {
			return false // the rest of a name, or a place: "in Porto", "at St James's"
		}
	}
	if d.places[strings.TrimSuffix(lower(t), "'s")] {
		return false // a place the user named
	}
	if i == 0 {
		if i+1 >= len(toks) {
			return false
		}
		n := lower(toks[i+1])
		return n == "," || n == "and" || strings.HasSuffix(lower(t), "'s") || verbStart(n) && !stops[n] || past[n]
	}
	return true
}

// personWord reports whether a capitalised word may be (part of) a name.
func personWord(t string) bool {
	w := strings.TrimSuffix(lower(t), "'s")
	if w == "" || !isWord(w) || len(t) > 1 && strings.ToUpper(t) == t {
		return false // "GP", "NHS", "I"
	}
	if commonLower[t] != "" || months[w] || weekdays[strings.TrimSuffix(w, "s")] || nationalities[w] || notPeople[w] || fillers[w] || laughs[w] ||
		determiners[w] || stops[w] || auxiliaries[w] || timeWords[w] || notName[w] || questionWords[w] || splitConj[w] {
		return false
	}
	if _, ok := verbs[w]; ok {
		return false // a verb that leads a sentence: "Went to the GP"
	}
	return true
}

var (
	// anyone is named, not related: "a guy called Sam".
	anyone = set("someone somebody guy girl man woman lady bloke chap lad person")
	// things are named, but are no one: "a book called Dune".
	things = set("book novel story game movie film show series song album band app company business shop cafe restaurant bar pub place town village street hotel boat car house project podcast channel")
)

// placeWords lead a place, not a person: "in Porto", "at St James's";
// "to" does after a verb of going ("moved to Porto", not "talked to
// Sam").
var placeWords = set("in at from near into around across outside via through towards toward visit visiting visited st saint")

// motionBefore reports whether the word before "to" is of going: "moved
// to", "flying back to", "a trip to".
func motionBefore(before []string) bool {
	if len(before) == 0 {
		return false
	}
	w := lower(before[len(before)-1])
	if (w == "back" || w == "over" || w == "up" || w == "down" || w == "out") && len(before) > 1 {
		w = lower(before[len(before)-2])
	}
	switch verbs[w] {
	case "move", "go", "fly", "travel", "relocate", "head", "drive", "come", "return", "emigrate", "commute", "walk", "get", "ride", "take", "bring", "send":
		return true
	}
	return w == "trip" || w == "flight" || w == "move" || w == "way" || w == "visit" || w == "holiday" || w == "train" || w == "ticket"
}

var notPeople = set("english french spanish italian portuguese chinese japanese korean greek irish scottish welsh british american canadian australian indian african european asian dutch polish swedish christmas easter halloween thanksgiving ramadan diwali eid new god lord hi hey hello thanks thank sorry please wow yay aww congrats congratulations dear great good nice cool awesome fine yes no ok okay omg lol")

// uncased reports whether a sentence of three words or more starts with
// a small letter and has no capital but in "I": its writer may not
// capitalise names either.
func uncased(s string) bool {
	f := strings.Fields(s)
	if i := strings.IndexFunc(s, unicode.IsLetter); i < 0 || unicode.IsUpper(rune(s[i])) {
		return false
	}
	for _, w := range f {
		if strings.IndexFunc(w, func(r rune) bool { return r >= 'A' && r <= 'Z' }) >= 0 && !selfClause([]string{strings.Trim(w, ",.!?;:")}) {
			return false
		}
	}
	return len(f) >= 3
}
