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
	var runs []run
	for _, m := range turns {
		if m.Role == agentmem.RoleTool || looksLikeJSON(m.Content) {
			continue // a structure's keys and values, not talk
		}
		var cur run
		flush := func() {
			if len(cur.words) > 0 {
				runs = append(runs, cur)
			}
			cur = run{}
		}
		for line := range strings.Lines(m.Content) {
			line = strings.TrimSpace(line)
			if strings.HasPrefix(line, "#") {
				continue // a markdown heading: a title, capitalised as titles are
			}
			start := true // a line opens a sentence, a list item too
			for _, tok := range strings.Fields(line) {
				if listMarker(tok) {
					continue
				}
				if strings.Contains(tok, "**") || strings.Contains(tok, "__") || strings.Contains(tok, "`") {
					flush() // emphasis and code: capitalised by style, not names
					start = false
					continue
				}
				start = nameToken(tok, start, &cur, inside, flush)
			}
			flush()
		}
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

// run is a run of capitalised words; start tells whether it opens a
// sentence.
type run struct {
	words []string
	start bool
}

// nameToken reads one token of a line into cur, recording in inside the
// capitalised words met inside a sentence, flushing cur when the run
// ends, and returns whether the next token opens a sentence.
func nameToken(tok string, start bool, cur *run, inside map[string]bool, flush func()) bool {
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
		return false
	}
	last, _ := utf8.DecodeLastRuneInString(tok)
	switch {
	case strings.ContainsRune(".!?", last):
		flush()
		return true
	case strings.ContainsRune(",;:", last):
		flush()
	}
	return false
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

// looksLikeJSON reports whether s is a JSON object or array, as a tool's
// answer or a structured reply is.
func looksLikeJSON(s string) bool {
	s = strings.TrimSpace(s)
	return strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") || strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]")
}

// pronouns are capitalised words that are not names.
var pronouns = map[string]bool{"I": true, "I'm": true, "I've": true, "I'll": true, "I'd": true, "OK": true, "Ok": true}
