package extraction

import (
	"regexp"
	"sort"
	"strings"
	"unicode"
)

// Matching an extracted memory with an expected one tolerates wording but
// not a different fact. Both texts are reduced to content terms:
//
//  1. lower case; contractions expanded ("can't" → "can not", "n't" →
//     " not", "'m" → " am", …); a possessive or "'s" dropped; "years old"
//     dropped; number words (one … twenty) and ordinals (3rd) become
//     digits; a few synonyms are folded (kid/kids/children → child,
//     mom/mum → mother, dad → father, favourite → favorite, …), and so
//     are the verbs of liking: love, enjoy, adore and prefer read as
//     "like", hate, dislike and "can't stand" as "not like";
//  2. split on anything but letters and digits, and a number from its
//     unit ("50mg" is "50 mg");
//  3. negation words (not, no, never, cannot) set the text's polarity and
//     are not terms; stop words (articles, pronouns, forms of be/have/do,
//     prepositions, "user", modal and filler words) are dropped;
//  4. every remaining word is stemmed by stripping one suffix (ing, ed,
//     es, s, e, y→i), so lives/live/lived/living are one term.
//
// The key terms of the expected memory are its numbers and the words it
// capitalises after the first (names, places, months, brands).
//
// An extracted memory matches an expected one when the polarities are the
// same, every key term is present, it covers at least MinCoverage of the
// expected terms, and at least MinPrecision of its own terms are expected
// ones (so that one long memory that strings several facts together does
// not pass for each of them). The score of a pair is the harmonic mean of
// coverage and precision; pairs are assigned greedily by score, so one
// extracted memory matches at most one expected memory and the other way
// round.
const (
	MinCoverage  = 0.75
	MinPrecision = 0.5
)

// Pair is a match: indices into the expected and the extracted texts.
type Pair struct {
	Expected  int     `json:"expected"`
	Extracted int     `json:"extracted"`
	Score     float64 `json:"score"`
}

// Match pairs extracted memories with expected ones (see the constants),
// best score first; each index appears in at most one pair.
func Match(expected, extracted []string) []Pair {
	ex := make([]terms, len(expected))
	for i, e := range expected {
		ex[i] = termsOf(e, true)
	}
	got := make([]terms, len(extracted))
	for j, x := range extracted {
		got[j] = termsOf(x, false)
	}
	var cands []Pair
	for i := range ex {
		for j := range got {
			if s, ok := score(ex[i], got[j]); ok {
				cands = append(cands, Pair{Expected: i, Extracted: j, Score: s})
			}
		}
	}
	sort.SliceStable(cands, func(a, b int) bool { return cands[a].Score > cands[b].Score })
	usedE, usedX := map[int]bool{}, map[int]bool{}
	var out []Pair
	for _, p := range cands {
		if usedE[p.Expected] || usedX[p.Extracted] {
			continue
		}
		usedE[p.Expected], usedX[p.Extracted] = true, true
		out = append(out, p)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Expected < out[b].Expected })
	return out
}

// Matches reports whether an extracted memory matches an expected one,
// and the pair's score.
func Matches(expected, extracted string) (float64, bool) {
	return score(termsOf(expected, true), termsOf(extracted, false))
}

type terms struct {
	set     map[string]bool
	keys    []string
	negated bool
	folded  string // the normalised words, for texts without content terms
}

func score(e, x terms) (float64, bool) {
	if e.negated != x.negated {
		return 0, false
	}
	for _, k := range e.keys {
		if !x.set[k] {
			return 0, false
		}
	}
	if len(e.set) == 0 || len(x.set) == 0 {
		return 1, len(e.set) == 0 && len(x.set) == 0 && e.folded == x.folded
	}
	common := 0
	for t := range e.set {
		if x.set[t] {
			common++
		}
	}
	cov, prec := float64(common)/float64(len(e.set)), float64(common)/float64(len(x.set))
	if cov < MinCoverage || prec < MinPrecision {
		return 0, false
	}
	return 2 * cov * prec / (cov + prec), true
}

var contractions = strings.NewReplacer(
	"’", "'", "‘", "'",
	"can't stand", "not like", "can’t stand", "not like", "cannot stand", "not like", "can not stand", "not like",
	"can't", "can not", "cannot", "can not", "won't", "will not", "shan't", "shall not", "ain't", "is not",
	"n't", " not", "'m", " am", "'re", " are", "'ve", " have", "'ll", " will", "'d", " would", "'s", "", "s' ", "s ",
	"years old", "", "year old", "", "yrs old", "", "y/o", "",
)

var numberWords = map[string]string{
	"one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7", "eight": "8",
	"nine": "9", "ten": "10", "eleven": "11", "twelve": "12", "thirteen": "13", "fourteen": "14", "fifteen": "15",
	"sixteen": "16", "seventeen": "17", "eighteen": "18", "nineteen": "19", "twenty": "20", "once": "1", "twice": "2",
}

var synonyms = map[string]string{
	"kid": "child", "kids": "child", "children": "child", "mom": "mother", "mum": "mother", "mommy": "mother",
	"mam": "mother", "dad": "father", "daddy": "father", "grandma": "grandmother", "granny": "grandmother",
	"grandpa": "grandfather", "nan": "grandmother", "nana": "grandmother", "nanna": "grandmother", "gran": "grandmother",
	"grandad": "grandfather", "granddad": "grandfather", "stepdad": "stepfather", "stepmum": "stepmother", "stepmom": "stepmother",
	"uni": "university", "favourite": "favorite", "colour": "color", "grandkids": "grandchild",
	"grandchildren": "grandchild", "wed": "married", "hubby": "husband", "bf": "boyfriend", "gf": "girlfriend",
	"cant": "can", "dont": "do", "doesnt": "does", "im": "am", "ive": "have",
	"love": "like", "loves": "like", "loved": "like", "enjoy": "like", "enjoys": "like", "enjoyed": "like",
	"adore": "like", "adores": "like", "prefer": "like", "prefers": "like", "preferred": "like",
}

// dislikes are the words that say "does not like": they read as "not like".
var dislikes = map[string]bool{"hate": true, "hates": true, "hated": true, "dislike": true, "dislikes": true,
	"detest": true, "detests": true}

// ordinal is a day or rank in digits: 3rd, 10th.
var ordinal = regexp.MustCompile(`^([0-9]+)(?:st|nd|rd|th)$`)

// withUnit is a number written with its unit: 50mg, 2pm, 6kg.
var withUnit = regexp.MustCompile(`^([0-9]+)([a-z]+)$`)

var negations = map[string]bool{"not": true, "no": true, "never": true, "nor": true}

var stopWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`user users a an the this that these those it its he she his her him they them their
		we our us i me my you your
		is am are was were be been being has have had having do does did doing
		will would shall should can could may might must gonna going wanna
		to of in on at for from by with about as into onto than then
		and or but so also too very really just quite currently now still
		who which whose where when what there here some any own named called originally`) {
		stopWords[w] = true
	}
}

// termsOf reduces a memory to its terms (see the package's constants).
// Key terms are collected only for expected memories.
func termsOf(s string, keys bool) terms {
	t := terms{set: map[string]bool{}}
	var keyWords map[string]bool
	if keys {
		keyWords = map[string]bool{}
		for i, w := range strings.FieldsFunc(s, func(r rune) bool { return unicode.IsSpace(r) }) {
			w = strings.TrimFunc(w, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
			if i == 0 || w == "" || !unicode.IsUpper([]rune(w)[0]) {
				continue
			}
			for _, f := range words(w) {
				keyWords[f] = true
			}
		}
	}
	var folded []string
	for _, w := range words(s) {
		folded = append(folded, w)
		if negations[w] {
			t.negated = true
			continue
		}
		if stopWords[w] {
			continue
		}
		st := stem(w)
		t.set[st] = true
		if keyWords[w] || keys && containsDigit(w) {
			t.keys = append(t.keys, st)
		}
	}
	t.folded = strings.Join(folded, " ")
	return t
}

// words lower-cases, expands and splits a text into words, number words
// as digits and synonyms folded.
func words(s string) []string {
	s = contractions.Replace(strings.ToLower(s) + " ")
	var out []string
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if n, ok := numberWords[w]; ok {
			w = n
		}
		if m := ordinal.FindStringSubmatch(w); m != nil {
			w = m[1]
		} else if m := withUnit.FindStringSubmatch(w); m != nil {
			out = append(out, m[1]) // "50mg" is "50 mg"
			w = m[2]
		}
		if syn, ok := synonyms[w]; ok {
			w = syn
		}
		if dislikes[w] {
			out = append(out, "not", "like")
			continue
		}
		out = append(out, w)
	}
	return out
}

func containsDigit(w string) bool { return strings.IndexFunc(w, unicode.IsDigit) >= 0 }

// stem strips one suffix, keeping at least three letters: lives, lived,
// living and live are "liv"; studies and study are "studi".
func stem(w string) string {
	if containsDigit(w) {
		return w
	}
	for _, suf := range []string{"ies", "ing", "ed", "es", "s", "e", "y"} {
		if !strings.HasSuffix(w, suf) || len([]rune(w))-len(suf) < 3 {
			continue
		}
		if suf == "s" && strings.HasSuffix(w, "ss") {
			return w
		}
		switch suf {
		case "ies", "y":
			return w[:len(w)-len(suf)] + "i"
		}
		return w[:len(w)-len(suf)]
	}
	return w
}
