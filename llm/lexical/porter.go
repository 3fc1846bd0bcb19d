package lexical

// stem reduces an English word to its stem with Porter's algorithm (M. F.
// Porter, "An algorithm for suffix stripping", Program 14(3), 1980), as in
// his reference C implementation, whose three departures from the paper it
// keeps: "bli"→"ble" instead of "abli"→"able", the extra rule "logi"→"log",
// and words of one or two letters are left alone. It is also the algorithm
// of SQLite FTS5's porter tokenizer. "running", "runs" and "run" give
// "run"; "relational" gives "relat".
//
// w must be lower-case ASCII letters. stem works in place (a stem is never
// longer than its word) and returns the stem, a prefix of w.
func stem(w []byte) []byte {
	if len(w) <= 2 {
		return w
	}
	z := stemmer{b: w, k: len(w) - 1}
	z.step1ab()
	if z.k > 0 {
		z.step1c()
		z.step2()
		z.step3()
		z.step4()
		z.step5()
	}
	return w[:z.k+1]
}

// stemmer follows the reference implementation's names: b[0..k] is the
// word being stemmed (k inclusive) and, after a successful ends, b[0..j]
// is the stem before the matched suffix.
type stemmer struct {
	b    []byte
	k, j int
}

// cons reports whether b[i] is a consonant: a letter other than a, e, i,
// o, u, and other than a y that follows a consonant.
func (z *stemmer) cons(i int) bool {
	switch z.b[i] {
	case 'a', 'e', 'i', 'o', 'u':
		return false
	case 'y':
		return i == 0 || !z.cons(i-1)
	}
	return true
}

// m measures b[0..j] as [C](VC)^m[V]: "tr", "ee" give 0, "tree" 0,
// "trouble" 1, "oats" 1, "troubles" 2, "private" 2.
func (z *stemmer) m() int {
	n, i := 0, 0
	for ; ; i++ {
		if i > z.j {
			return n
		}
		if !z.cons(i) {
			break
		}
	}
	for i++; ; i++ {
		for ; ; i++ {
			if i > z.j {
				return n
			}
			if z.cons(i) {
				break
			}
		}
		i++
		n++
		for ; ; i++ {
			if i > z.j {
				return n
			}
			if !z.cons(i) {
				break
			}
		}
	}
}

// vowelInStem reports whether b[0..j] has a vowel.
func (z *stemmer) vowelInStem() bool {
	for i := 0; i <= z.j; i++ {
		if !z.cons(i) {
			return true
		}
	}
	return false
}

// doubleC reports whether b[i-1..i] is a double consonant.
func (z *stemmer) doubleC(i int) bool {
	return i >= 1 && z.b[i] == z.b[i-1] && z.cons(i)
}

// cvc reports whether b[i-2..i] is consonant-vowel-consonant and b[i] is
// not w, x or y: the condition for restoring an e, as in "hop(e)",
// "fil(e)", but not "snow", "box", "tray".
func (z *stemmer) cvc(i int) bool {
	if i < 2 || !z.cons(i) || z.cons(i-1) || !z.cons(i-2) {
		return false
	}
	c := z.b[i]
	return c != 'w' && c != 'x' && c != 'y'
}

// ends reports whether b[0..k] ends with s, and if so sets j to the end of
// what precedes s.
func (z *stemmer) ends(s string) bool {
	n := len(s)
	if n > z.k+1 || s[n-1] != z.b[z.k] || string(z.b[z.k+1-n:z.k+1]) != s {
		return false
	}
	z.j = z.k - n
	return true
}

// setTo replaces b[j+1..k] by s.
func (z *stemmer) setTo(s string) {
	copy(z.b[z.j+1:], s)
	z.k = z.j + len(s)
}

// step1ab removes plurals and -ed or -ing: "caresses"→"caress",
// "ponies"→"poni", "cats"→"cat", "feed"→"feed", "agreed"→"agree",
// "plastered"→"plaster", "motoring"→"motor", "conflated"→"conflate",
// "hopping"→"hop", "filing"→"file".
func (z *stemmer) step1ab() {
	if z.b[z.k] == 's' {
		switch {
		case z.ends("sses"):
			z.k -= 2
		case z.ends("ies"):
			z.setTo("i")
		case z.b[z.k-1] != 's':
			z.k--
		}
	}
	if z.ends("eed") {
		if z.m() > 0 {
			z.k--
		}
		return
	}
	if !(z.ends("ed") || z.ends("ing")) || !z.vowelInStem() {
		return
	}
	z.k = z.j
	switch {
	case z.ends("at"):
		z.setTo("ate")
	case z.ends("bl"):
		z.setTo("ble")
	case z.ends("iz"):
		z.setTo("ize")
	case z.doubleC(z.k):
		if c := z.b[z.k]; c != 'l' && c != 's' && c != 'z' {
			z.k--
		}
	case z.m() == 1 && z.cvc(z.k):
		z.j = z.k
		z.setTo("e")
	}
}

// step1c turns a final y into i when there is another vowel: "happy"→
// "happi", "sky"→"sky".
func (z *stemmer) step1c() {
	if z.ends("y") && z.vowelInStem() {
		z.b[z.k] = 'i'
	}
}

// suffix is a rule of steps 2 to 4: the suffix and what replaces it.
type suffix struct{ from, to string }

// step2Rules and step3Rules are tried in order and the first suffix that
// matches is the only one considered. Grouped by their last-but-one
// letter, this is the reference implementation's order.
var step2Rules = []suffix{
	{"ational", "ate"}, {"tional", "tion"},
	{"enci", "ence"}, {"anci", "ance"},
	{"izer", "ize"},
	{"bli", "ble"}, {"alli", "al"}, {"entli", "ent"}, {"eli", "e"}, {"ousli", "ous"},
	{"ization", "ize"}, {"ation", "ate"}, {"ator", "ate"},
	{"alism", "al"}, {"iveness", "ive"}, {"fulness", "ful"}, {"ousness", "ous"},
	{"aliti", "al"}, {"iviti", "ive"}, {"biliti", "ble"},
	{"logi", "log"},
}

var step3Rules = []suffix{
	{"icate", "ic"}, {"ative", ""}, {"alize", "al"},
	{"iciti", "ic"},
	{"ical", "ic"}, {"ful", ""},
	{"ness", ""},
}

// step4Rules are removed when m > 1; "ion" only after s or t.
var step4Rules = []string{
	"al", "ance", "ence", "er", "ic", "able", "ible",
	"ant", "ement", "ment", "ent", "ion", "ou", "ism",
	"ate", "iti", "ous", "ive", "ize",
}

// replace applies the first rule whose suffix ends the word, when the stem
// before it has m > 0: step 2 maps double suffixes to single ones
// ("relational"→"relate"), step 3 strips -ful, -ness… ("hopeful"→"hope").
func (z *stemmer) replace(rules []suffix) {
	for _, r := range rules {
		if z.ends(r.from) {
			if z.m() > 0 {
				z.setTo(r.to)
			}
			return
		}
	}
}

func (z *stemmer) step2() { z.replace(step2Rules) }
func (z *stemmer) step3() { z.replace(step3Rules) }

// step4 removes -ant, -ence… when m > 1: "revival"→"reviv",
// "adoption"→"adopt".
func (z *stemmer) step4() {
	for _, s := range step4Rules {
		if !z.ends(s) {
			continue
		}
		if s == "ion" && (z.j < 0 || z.b[z.j] != 's' && z.b[z.j] != 't') {
			continue
		}
		if z.m() > 1 {
			z.k = z.j
		}
		return
	}
}

// step5 removes a final e when m > 1 ("probate"→"probat") or m = 1 and
// not after cvc ("cease"→"ceas", but "rate"), and ll to l when m > 1
// ("controll"→"control", but "roll").
func (z *stemmer) step5() {
	z.j = z.k
	if z.b[z.k] == 'e' {
		if a := z.m(); a > 1 || a == 1 && !z.cvc(z.k-1) {
			z.k--
		}
	}
	if z.b[z.k] == 'l' && z.doubleC(z.k) && z.m() > 1 {
		z.k--
	}
}
