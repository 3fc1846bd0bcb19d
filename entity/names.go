package entity

import (
	"cmp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agentmem/agentmem"
)

// Noun is a name that turns mention, with the type they tell.
type Noun struct {
	Name string
	// Type is person, pet, place, organization or product when the
	// turns tell it ("my sister Priya", "our dog Bruno", "drove to
	// Whitby", "Acme Corp", "playing Valorant"), "" when they do not.
	Type string
}

// Names returns the names of ProperNouns: the entities of a chunk's
// turns without a model.
func Names(turns []*agentmem.Message, n int) []string {
	nouns := ProperNouns(turns, n)
	names := make([]string, len(nouns))
	for i, x := range nouns {
		names[i] = x.Name
	}
	return names
}

// ProperNouns returns at most n names of the people, places,
// organisations and things that turns discuss, most mentioned first, with
// the types the turns tell; the entities of turns without a model. A name
// is the speakers' (persons), or a run of capitalised words ("Frank
// Herbert", "The Lord of the Rings", "FIFA 23", "Dr. Okafor") or a title
// in quotes ("Dune"), that a user's turn says, that the turns say more
// than once, or that they say of a person ("Thanks, Gina!", "my sister
// Priya"); an assistant's passing mention is not one.
//
// What is capitalised for another reason is not a name: a sentence's
// first word ("Yesterday", "Check the weather") unless it is capitalised
// inside a sentence too, the greeting before a name ("Thanks Priya" is
// Priya), weekdays, months, pronouns and interjections, the titles of
// markdown (headings, a table's header, Title Case lines, bold and
// italics, which open a sentence as a list item does), code (fenced,
// inline, URLs, paths) and JSON (a tool's answer, a structured reply, a
// line of keys and values).
func ProperNouns(turns []*agentmem.Message, n int) []Noun {
	var r reader
	for _, m := range turns {
		if m.Name != "" {
			r.mentions = append(r.mentions, mention{words: []string{m.Name}, speaker: true, user: true})
		}
	}
	for _, m := range turns {
		if m.Role == agentmem.RoleTool || looksLikeJSON(m.Content) {
			continue // a structure's keys and values, not talk
		}
		r.user = m.Role != agentmem.RoleAssistant
		for _, s := range r.segments(m.Content) {
			r.segment(s)
		}
	}
	return r.nouns(n)
}

// mention is a run of capitalised words of a turn, with what stands
// around it.
type mention struct {
	words      []string
	start      bool      // it opens a sentence, after none but never-words
	afterComma bool      // a comma stands before it…
	prevCap    bool      // …after a capitalised word
	end        bool      // a sentence ends after it
	closed     bool      // punctuation ends it: its next words are another clause's
	title      bool      // a title in quotes
	speaker    bool      // a speaker's name
	user       bool      // in a turn that is not an assistant's
	prev       [3]string // the words of its sentence before it, nearest first
	next       [2]string // the words after it
	nexts      int       // how many of next are read
}

// reader collects the mentions of turns.
type reader struct {
	user     bool
	mentions []mention
	words    []string // the words of the mentions, one after the other
}

// Boundaries that segments leave in a line: one opens a sentence (a bold
// or italic span, a title, a quotation), one only breaks a run (code).
const (
	opens  = "\x00"
	breaks = "\x02"
)

// segments returns the lines of text that are prose, a table's cells each
// as a line, without list markers, inline code, links' addresses, bold
// markers (which become boundaries) and titles in quotes (which it
// records as mentions). Fenced code, headings, a table's header, lines of
// code or JSON and an assistant's Title Case lines are left out.
func (r *reader) segments(text string) []string {
	var out []string
	fenced := false
	lines := strings.Split(text, "\n")
	for i, line := range lines {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			fenced = !fenced
			continue
		}
		if fenced || t == "" || strings.HasPrefix(t, "#") || codeLine(t) {
			continue
		}
		if strings.HasPrefix(t, "|") {
			if i+1 < len(lines) && separatorRow(lines[i+1]) {
				continue // a table's header
			}
			for _, cell := range strings.Split(strings.Trim(t, "|"), "|") {
				if c := r.clean(cell); c != "" {
					out = append(out, c)
				}
			}
			continue
		}
		if c := r.clean(listItem(strings.TrimLeft(t, "> "))); c != "" && (r.user || !titleLine(c)) {
			out = append(out, c)
		}
	}
	return out
}

// clean returns a line without inline code, links' addresses and bold
// markers, and records the titles it quotes.
func (r *reader) clean(line string) string {
	if strings.Contains(line, "`") {
		parts := strings.Split(line, "`")
		for i := 1; i < len(parts); i += 2 {
			parts[i] = " " + breaks + " "
		}
		line = strings.Join(parts, "")
	}
	for {
		i := strings.Index(line, "](")
		if i < 0 {
			break
		}
		j := strings.IndexByte(line[i:], ')')
		if j < 0 {
			break
		}
		line = line[:i] + " " + line[i+j+1:]
	}
	if strings.ContainsAny(line, "[]*_\"") || strings.Contains(line, "“") {
		line = boldReplacer.Replace(line)
		line = r.quotes(line)
	}
	return strings.TrimSpace(line)
}

var boldReplacer = strings.NewReplacer("**", " "+opens+" ", "__", " "+opens+" ", "[", " ", "]", " ")

// quotes records the titles that line quotes ("Dune", "The Lord of the
// Rings") and returns the line with each title, and each quotation's
// opening, a boundary: a quotation opens a sentence.
func (r *reader) quotes(line string) string {
	var b strings.Builder
	for {
		i := indexEither(line, "\"", "“")
		if i < 0 {
			b.WriteString(line)
			return b.String()
		}
		_, size := utf8.DecodeRuneInString(line[i:])
		b.WriteString(line[:i])
		rest := line[i+size:]
		j := indexEither(rest, "\"", "”")
		if j < 0 {
			b.WriteString(" " + opens + " ")
			b.WriteString(rest)
			return b.String()
		}
		_, csize := utf8.DecodeRuneInString(rest[j:])
		inner := strings.TrimRight(strings.TrimSpace(rest[:j]), ",")
		if words := strings.Fields(inner); titleWordsOf(words) {
			r.mentions = append(r.mentions, mention{words: words, title: true, user: r.user})
			b.WriteString(" " + opens + " ")
		} else {
			b.WriteString(" " + opens + " " + rest[:j] + " ")
		}
		line = rest[j+csize:]
	}
}

// titleWordsOf reports whether the words of a quotation are a title: one
// to six words, capitalised but for connectors and short function
// words, not all ordinary ones, without a sentence's end.
func titleWordsOf(words []string) bool {
	if len(words) == 0 || len(words) > 6 || !capitalised(words[0]) {
		return false
	}
	last := words[len(words)-1]
	if strings.ContainsAny(last[len(last)-1:], ".!?") {
		return false
	}
	ordinary := true
	for _, w := range words {
		lw := strings.ToLower(w)
		switch {
		case capitalised(w) || isNumber(w):
		case connectors[lw] || titleWords[lw]:
		default:
			return false
		}
		ordinary = ordinary && (openers[lw] || never[lw] || connectors[lw])
	}
	return !ordinary
}

// listItem returns a line without the marker of its list item: "-",
// "*", "+", "•", "1.", "2)", "[ ]", "[x]".
func listItem(line string) string {
	for {
		tok, rest, ok := strings.Cut(line, " ")
		if !ok || !listMarker(tok) && tok != "[" && tok != "[x]" && tok != "[]" {
			return line
		}
		line = strings.TrimLeft(rest, " ]")
	}
}

// listMarker reports whether tok marks a list item: "-", "*", "+", "•",
// "1.", "2)".
func listMarker(tok string) bool {
	switch tok {
	case "-", "*", "+", "•", "–":
		return true
	}
	digits := strings.TrimRight(tok, ".)")
	return len(digits) > 0 && len(digits) < len(tok) && len(digits) <= 3 && strings.Trim(digits, "0123456789") == ""
}

// separatorRow reports whether line is a table's line under its header:
// "|---|:--:|".
func separatorRow(line string) bool {
	t := strings.TrimSpace(line)
	return strings.HasPrefix(t, "|") && strings.Trim(t, "|-: ") == "" && strings.Contains(t, "-")
}

// codeLine reports whether a line is code or JSON rather than prose: it
// has braces, a JSON key ("name":), an assignment, an arrow or a tag.
func codeLine(t string) bool {
	return strings.ContainsAny(t, "{}") || strings.Contains(t, "\":") || strings.Contains(t, " = ") ||
		strings.Contains(t, "=>") || strings.Contains(t, "</") || strings.Contains(t, "();") || strings.HasPrefix(t, "$ ")
}

// titleLine reports whether a line is a title in Title Case ("Step 4:
// Reserve A Table For Dinner"): three words or more, most capitalised,
// and no sentence's end.
func titleLine(t string) bool {
	if strings.ContainsAny(t, ".!?") {
		return false
	}
	words, caps := 0, 0
	for _, f := range strings.Fields(t) {
		r, _ := utf8.DecodeRuneInString(f)
		if !unicode.IsLetter(r) {
			continue
		}
		words++
		if unicode.IsUpper(r) {
			caps++
		}
	}
	return words >= 3 && caps*4 >= words*3
}

// segment reads the mentions of a line of prose.
func (r *reader) segment(s string) {
	tokens := strings.Fields(s)
	var (
		cur      mention // the run being read, when open
		open     bool
		from     int   // where cur's words start in r.words
		waiting  []int // the mentions that want their next words
		prev     [3]string
		pending  []string // connectors that continue cur if a capitalised word comes
		start    = true
		comma    bool
		prevCap  bool
		flushEnd = func(end bool) {
			if open && cur.start && allOpeners(r.words[from:]) {
				open = false // "The", "Sounds great": nothing to read of it
				r.words = r.words[:from]
			}
			if open {
				cur.end = end
				cur.closed = cur.closed || end
				cur.words = r.words[from:len(r.words):len(r.words)]
				waiting = append(waiting, len(r.mentions))
				r.mentions = append(r.mentions, cur)
				open = false
			}
			pending = pending[:0]
		}
	)
	for i, tok := range tokens {
		switch tok {
		case opens:
			flushEnd(false)
			start, comma = true, false
			continue
		case breaks:
			flushEnd(false)
			start, comma = false, false
			prev = push(prev, "")
			continue
		}
		lo := strings.IndexFunc(tok, isWordRune)
		if lo < 0 { // a dash, an ampersand, an emoji, an ellipsis
			switch tok {
			case "&":
				if open {
					pending = append(pending, tok)
					continue
				}
			case "-", "–", "—":
				flushEnd(false)
				start = false
				continue
			}
			flushEnd(true)
			start, comma, prev = true, false, [3]string{}
			continue
		}
		hi := lastWordEnd(tok)
		pre, w, suf := tok[:lo], tok[lo:hi], tok[hi:]
		if pre != "" && marks(pre)&markEmphasis != 0 {
			flushEnd(false)
			start = true
		}
		if codeWord(tok, w) {
			flushEnd(false)
			start, comma = false, false
			prev = push(prev, "")
			continue
		}
		possessive, contraction := false, false
		for _, s := range []string{"'s", "’s"} {
			if base, ok := strings.CutSuffix(w, s); ok && base != "" && (has(openers, base) || has(never, base)) {
				contraction = true // "Let's", "It's", "That's": no name's
			} else if ok && base != "" {
				possessive = true
				if i+1 == len(tokens) || !capitalised(strings.TrimLeftFunc(tokens[i+1], func(r rune) bool { return !isWordRune(r) })) {
					w = base
				}
			}
		}
		abbrev := false
		if strings.HasPrefix(suf, ".") && (initials(w) || honorifics[strings.ToLower(w)+"."]) {
			w, suf, abbrev = w+".", suf[1:], true
		}
		isCap := capitalised(w) && !contraction
		isNever := isCap && has(never, w) // a lower-case word is none of them to the reader
		switch {
		case isCap && !isNever:
			if !open {
				cur, open, from = mention{start: start, afterComma: comma, prevCap: prevCap, user: r.user, prev: prev}, true, len(r.words)
			}
			r.words = append(append(r.words, pending...), w)
			pending = pending[:0]
		case open && (pre == "" && suf == "" && has(connectors, w)):
			pending = append(pending, w)
		case open && isNumber(w) && pre == "" && (suf != "" || i == len(tokens)-1):
			r.words = append(append(r.words, pending...), w)
			pending = pending[:0]
		default:
			flushEnd(false)
		}
		for _, j := range waiting {
			if m := &r.mentions[j]; m.nexts < len(m.next) {
				m.next[m.nexts] = w
				m.nexts++
			}
		}
		if !start || !isNever {
			start = false // never-words at a sentence's start leave it open: "Thanks Priya"
		}
		prev = push(prev, w)
		if possessive && (i+1 == len(tokens) || !capitalised(strings.TrimLeftFunc(tokens[i+1], func(r rune) bool { return !isWordRune(r) }))) {
			flushEnd(false) // "Tom's car"; not "St Mary's Primary"
		}
		comma = false
		after := marks(suf)
		switch {
		case abbrev || suf == "":
		case after&markEnd != 0:
			flushEnd(true)
			start, prev = true, [3]string{} // the words around a name are its sentence's
		case after&markColon != 0:
			flushEnd(false)
			start, prev = true, [3]string{}
		case after&markEmphasis != 0:
			flushEnd(false)
			start = true
		case after&(markPause|markComma) != 0:
			if open {
				cur.closed = true
			}
			flushEnd(false)
			comma, prevCap = after&markComma != 0, isCap && !isNever && !has(openers, w) // "Paris, France", not "Wow, Jon"
		}
	}
	flushEnd(true)
}

// named is what a mention names, and how: its type, whether it is
// surely a person's name ("Thanks, Gina", "my sister Priya", "Dr.
// Okafor"), whether it stands alone at a sentence's start, where only
// the same word inside a sentence elsewhere makes it a name.
type named struct {
	name     string
	words    []string
	typ      string
	person   bool
	initial  bool
	mention  *mention
	position int
}

// nouns resolves the mentions into at most n nouns (see ProperNouns).
func (r *reader) nouns(n int) []Noun {
	var cands []named
	inside := map[string]bool{} // words of names met inside a sentence
	for i := range r.mentions {
		m := &r.mentions[i]
		c, ok := resolve(m)
		if !ok {
			continue
		}
		c.position = i
		if !m.start && !m.speaker {
			for _, w := range c.words {
				inside[w] = true
			}
		}
		cands = append(cands, c)
	}
	type tally struct {
		name         string
		count, first int
		strong       bool
		votes        [len(typeOrder)]int
	}
	var order []*tally
	byKey := map[string]*tally{}
	for _, c := range cands {
		if c.initial && !inside[c.name] {
			continue // a sentence's first word, capitalised as every first word is
		}
		t := byKey[c.name]
		if t == nil {
			t = &tally{name: c.name, first: c.position}
			byKey[c.name] = t
			order = append(order, t)
		}
		t.count++
		t.strong = t.strong || c.mention.user || c.person
		if i := slices.Index(typeOrder[:], c.typ); i >= 0 {
			t.votes[i]++
		}
	}
	order = slices.DeleteFunc(order, func(t *tally) bool { return !t.strong && t.count < 2 })
	slices.SortStableFunc(order, func(a, b *tally) int { return cmp.Compare(b.count, a.count) })
	out := make([]Noun, 0, min(n, len(order)))
	for _, t := range order[:min(n, len(order))] {
		x, most := Noun{Name: t.name}, 0
		for i, typ := range typeOrder {
			if t.votes[i] > most {
				x.Type, most = typ, t.votes[i]
			}
		}
		out = append(out, x)
	}
	return out
}

// typeOrder breaks ties between the types that mentions tell.
var typeOrder = [...]string{"person", "pet", "place", "organization", "product"}

// resolve returns what a mention names, if anything.
func resolve(m *mention) (named, bool) {
	words := m.words
	if m.speaker {
		return named{name: words[0], words: words, typ: "person", person: true, mention: m}, true
	}
	if m.title {
		return named{name: strings.Join(words, " "), words: words, mention: m}, true
	}
	if m.start {
		for len(words) > 0 && (has(openers, words[0]) || len(words) > 1 && strings.HasSuffix(words[0], "ing")) {
			words = words[1:] // "Visit Sintra", "Yesterday Tom", "Learning German"
		}
	}
	if len(words) == 0 {
		return named{}, false
	}
	ordinary := true
	for i, w := range words {
		if i > 0 && capitalised(w) && has(titleWords, w) {
			return named{}, false // Title Case: "Book Your Flights"
		}
		ordinary = ordinary && (has(openers, w) || has(connectors, w) || has(honorifics, w))
	}
	if ordinary && (len(words) > 1 || m.start || has(honorifics, words[0])) {
		return named{}, false // "Good Luck", "Next Steps", "Dr."; not "Go" inside a sentence
	}
	c := named{name: strings.Join(words, " "), words: words, mention: m}
	c.typ, c.person = cue(m, words)
	c.initial = m.start && len(words) == 1 && !c.person
	return c, true
}

// cue returns the type that the words around a mention tell, and whether
// they tell it is surely a person's name.
func cue(m *mention, words []string) (typ string, person bool) {
	last := words[len(words)-1]
	var prev [3]string
	for i, w := range m.prev {
		prev[i] = strings.ToLower(w)
	}
	p1, p2 := prev[0], prev[1]
	var n1, n2 string
	if !m.closed {
		n1, n2 = strings.ToLower(m.next[0]), strings.ToLower(m.next[1])
	}
	switch {
	case has(honorifics, words[0]) && len(words) > 1,
		greetings[p1], p1 == "you" && p2 == "thank",
		interjections[p1] && len(words) <= 2 && m.closed && (m.start || m.afterComma), // "Wow, John, that's…", "Yeah John.
		m.afterComma && m.end && len(words) <= 2 && !m.prevCap,                        // "Got it, Nate."
		people[p1],
		n1 == "and" && (n2 == "i" || n2 == "me"), personAfter[n1], // "Tom and I", "Tom said"
		p1 == "and" && p2 == "me": // "me and Sarah"
		return "person", true
	case pets[p1]:
		return "pet", false
	case p1 == "named" || p1 == "called":
		for _, w := range prev[1:] {
			switch {
			case people[w] || w == "she's" || w == "he's":
				return "person", true
			case pets[w]:
				return "pet", false
			case thingKinds[w] != "":
				return thingKinds[w], false
			}
		}
	}
	if len(words) > 1 {
		switch {
		case has(orgSuffixes, last):
			return "organization", false
		case has(placeSuffixes, last):
			return "place", false
		}
	}
	// The words before it, past a determiner: "went to the Tate Modern".
	before := prev[:]
	for len(before) > 0 && (before[0] == "the" || before[0] == "a" || before[0] == "an") {
		before = before[1:]
	}
	at := func(i int) string {
		if i < len(before) {
			return before[i]
		}
		return ""
	}
	p1, p2 = at(0), at(1)
	switch {
	case placeBefore[p1] && !(p1 == "in" && written[p2]):
		return "place", false // "in Leeds", not "written in Rust"
	case (p1 == "to" || p1 == "into" || p1 == "from") && motion[p2]:
		return "place", false
	case p1 == "at" || p1 == "for":
		if work[p2] || work[at(2)] {
			return "organization", false
		}
		if p1 == "at" {
			return "place", false
		}
	case p1 == "with" && len(words) <= 2:
		return "person", false
	case p1 == "by" && len(words) >= 2:
		return "person", false
	case using[p1]:
		return "product", false
	}
	if isNumber(last) && len(words) > 1 || camel(words[0]) {
		return "product", false // "FIFA 23", "iPhone"
	}
	return "", false
}

// indexEither returns the index of the first a or b in s, or -1; one
// of them is not ASCII, which strings.IndexAny would read rune by rune.
func indexEither(s, a, b string) int {
	i, j := strings.Index(s, a), strings.Index(s, b)
	if i < 0 || j >= 0 && j < i {
		return j
	}
	return i
}

// allOpeners reports whether words are all openers.
func allOpeners(words []string) bool {
	for _, w := range words {
		if !has(openers, w) {
			return false
		}
	}
	return true
}

// The punctuation around a word, as marks tells it.
const (
	markEnd      = 1 << iota // . ! ? …
	markColon                // :
	markEmphasis             // * _
	markComma                // ,
	markPause                // ; ) " ”
)

// marks returns the punctuation of s, a word's prefix or suffix.
func marks(s string) int {
	m := 0
	for _, r := range s {
		switch r {
		case '.', '!', '?', '…':
			m |= markEnd
		case ':':
			m |= markColon
		case '*', '_':
			m |= markEmphasis
		case ',':
			m |= markComma
		case ';', ')', '"', '”':
			m |= markPause
		}
	}
	return m
}

// push returns the last three words after w.
func push(prev [3]string, w string) [3]string {
	return [3]string{w, prev[0], prev[1]}
}

// has reports whether set holds w in lower case, without allocating for
// an ASCII word.
func has(set map[string]bool, w string) bool {
	var buf [48]byte
	if len(w) > len(buf) {
		return set[strings.ToLower(w)]
	}
	for i := 0; i < len(w); i++ {
		c := w[i]
		if c >= utf8.RuneSelf {
			return set[strings.ToLower(w)]
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[i] = c
	}
	return set[string(buf[:len(w)])]
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// lastWordEnd returns the end of tok's last letter or digit.
func lastWordEnd(tok string) int {
	for i := len(tok); i > 0; {
		r, size := utf8.DecodeLastRuneInString(tok[:i])
		if isWordRune(r) {
			return i
		}
		i -= size
	}
	return 0
}

// codeWord reports whether a token (its word w) is code, an address or a
// path rather than a word: "main.go", "fmt.Println", "https://…",
// "a@b.c", "src/main", "snake_case".
func codeWord(tok, w string) bool {
	for i := 0; i < len(w); i++ {
		switch w[i] {
		case '/', '\\', '=', '_', '@', '<', '>', '{', '}', '[', ']', '(', ')', '#', '$', '%', '^', '|', '~', ':':
			return true
		}
	}
	if strings.HasPrefix(tok, "www.") {
		return true
	}
	if i := strings.IndexByte(w, '.'); i >= 0 && !initials(w) {
		r, _ := utf8.DecodeRuneInString(w)
		return !unicode.IsUpper(r) // "main.go", not "Node.js"
	}
	return false
}

// initials reports whether w is a name's initials: "J", "J.K", "U.S";
// not "I".
func initials(w string) bool {
	if w == "I" {
		return false
	}
	for i, r := range w {
		if i%2 == 0 && !unicode.IsUpper(r) || i%2 == 1 && r != '.' {
			return false
		}
	}
	return w != ""
}

// capitalised reports whether w is written as a name is: with a capital
// first letter, or a small one before a capital ("iPhone", "eBay").
func capitalised(w string) bool {
	r, size := utf8.DecodeRuneInString(w)
	return unicode.IsUpper(r) || camel(w) && size > 0
}

// camel reports whether w is a product's name in camel case: "iPhone".
func camel(w string) bool {
	r, size := utf8.DecodeRuneInString(w)
	r2, _ := utf8.DecodeRuneInString(w[size:])
	return unicode.IsLower(r) && unicode.IsUpper(r2) && utf8.RuneCountInString(w) >= 3
}

// isNumber reports whether w is digits: "23", "2077".
func isNumber(w string) bool {
	return w != "" && strings.Trim(w, "0123456789") == ""
}

// looksLikeJSON reports whether s is a JSON object or array, as a tool's
// answer or a structured reply is.
func looksLikeJSON(s string) bool {
	s = strings.TrimSpace(s)
	return strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") || strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]")
}
