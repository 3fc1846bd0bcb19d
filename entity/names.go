package entity

import (
	"cmp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agentmem/agentmem"
)

// Names returns at most n proper nouns of turns: the speakers' names and
// runs of capitalised words that do not open a sentence (or do, and are
// capitalised elsewhere too), most mentioned first. The entities of turns
// without a model (of a chunk, of a page of messages).
func Names(turns []*agentmem.Message, n int) []string {
	count := map[string]int{}
	var order []string
	add := func(e string) {
		if count[e] == 0 {
			order = append(order, e)
		}
		count[e]++
	}
	for _, m := range turns {
		if m.Name != "" {
			add(m.Name)
		}
	}
	inside := map[string]bool{} // capitalised words seen inside a sentence
	type run struct {
		words []string
		start bool // the run opens a sentence
	}
	var runs []run
	for _, m := range turns {
		start := true
		var cur run
		flush := func() {
			if len(cur.words) > 0 {
				runs = append(runs, cur)
			}
			cur = run{}
		}
		for _, tok := range strings.Fields(m.Content) {
			w := strings.TrimFunc(tok, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
			r, _ := utf8.DecodeRuneInString(w)
			if w != "" && unicode.IsUpper(r) && !pronouns[w] {
				if len(cur.words) == 0 {
					cur.start = start
				}
				cur.words = append(cur.words, w)
				if !start {
					inside[w] = true
				}
			} else {
				flush()
			}
			if w == tok { // no punctuation around the word
				start = false
			} else {
				last, _ := utf8.DecodeLastRuneInString(tok)
				if strings.ContainsRune(".!?", last) {
					flush()
					start = true
				} else if strings.ContainsRune(",;:", last) {
					flush()
					start = false
				} else {
					start = false
				}
			}
		}
		flush()
	}
	for _, r := range runs {
		words := r.words
		if r.start && len(words) == 1 && !inside[words[0]] {
			continue // a sentence's first word, capitalised as every first word is
		}
		if r.start && !inside[words[0]] {
			words = words[1:]
		}
		if len(words) > 0 {
			add(strings.Join(words, " "))
		}
	}
	slices.SortStableFunc(order, func(a, b string) int { return cmp.Compare(count[b], count[a]) })
	return order[:min(n, len(order))]
}

// pronouns are capitalised words that are not names.
var pronouns = map[string]bool{"I": true, "I'm": true, "I've": true, "I'll": true, "I'd": true, "OK": true, "Ok": true}
