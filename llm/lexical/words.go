package lexical

import (
	"strings"
	"unicode/utf8"
)

// stopwords are common English words that say little about what a text is
// about: articles, pronouns, auxiliaries, prepositions, conjunctions, and
// the "n't" contractions, whose apostrophe is dropped. Negations are among
// them: a bag of words cannot tell "likes" from "doesn't like" anyway.
// "may" (the month) and "us" (the country) are kept.
var stopwords = func() map[string]bool {
	m := make(map[string]bool)
	for _, w := range strings.Fields(`
		a about above after again against all also am an and any are as at
		be because been before being below between both but by
		can could did do does doing down during each few for from further
		had has have having he her here hers herself him himself his how
		i if in into is it its itself just me more most my myself
		no nor not of off on once only or other our ours ourselves out over own
		same she should so some such than that the their theirs them themselves
		then there these they this those through to too under until up very
		was we were what when where which while who whom why will with would
		you your yours yourself yourselves
		oh ok okay yeah yes
		aint arent cant couldnt didnt doesnt dont hadnt hasnt havent isnt
		mustnt neednt shant shouldnt wasnt werent wont wouldnt`) {
		m[w] = true
	}
	return m
}()

func isStopword(w []byte) bool { return stopwords[string(w)] }

// appendFolded appends r, lower-case, to b, without the accents of the
// Latin-1 and Latin Extended-A letters ("é" is "e", "ł" is "l", "ß" is
// "ss"), so that "café" and "cafe", "José" and "Jose" match.
func appendFolded(b []byte, r rune) []byte {
	switch r {
	case 'ß':
		return append(b, "ss"...)
	case 'æ':
		return append(b, "ae"...)
	case 'þ':
		return append(b, "th"...)
	case 'ĳ':
		return append(b, "ij"...)
	case 'œ':
		return append(b, "oe"...)
	}
	if 0xe0 <= r && r < 0x180 {
		if c := latinFold[r-0xe0]; c != '.' {
			return append(b, c)
		}
	}
	return utf8.AppendRune(b, r)
}

// latinFold maps U+00E0 to U+017F (à to ſ) to ASCII letters; "." is a rune
// folded otherwise (÷ is not a letter; æ, þ, ĳ, œ are two letters).
const latinFold = "" +
	"aaaaaa.ceeeeiiiidnooooo.ouuuuy.y" + // U+00E0 à … ÿ
	"aaaaaaccccccccddddeeeeeeeeeegggggggghhhhiiiiiiiiii..jjkkk" + // U+0100 Ā … ĸ
	"llllllllllnnnnnnnnnoooooo..rrrrrrsssssssstttttt" + // U+0139 Ĺ … ŧ
	"uuuuuuuuuuuuwwyyyzzzzzzs" // U+0168 Ũ … ſ
