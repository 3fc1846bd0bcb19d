// Stage 1 of the extractor without a model (heuristic.go lists them),
// segment: a user's message → its sentences, and a sentence → its words.
//
// Takes a message's text; gives each sentence, with whether it names the
// user, to the sentence stage (sentence.go), which asks words for its
// words. A message is cut at . ! ? ; and new lines (not in "3.5", "e.g."
// or "Dr. Smith"), and at an emoji before a capital; quotations are dropped (someone else's words, or text
// to work on); a question keeps only the statement it leads with ("I'm
// diabetic, what can I eat?"). In words, a comma is a word of its own,
// emoji and quotes go, chat abbreviations are written out ("wfh", "bf"),
// and the fillers that open a clause ("oh", "btw") and a hedge that ends
// it ("…, I guess") are dropped. Also here: a sentence written as a form
// ("name: Kofi / age: 22"), and one that is code.

package extract

import (
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// segment calls fn with each sentence of a message's text, in order: raw
// as written, and s what it may state, quotations dropped, a question's
// premise for a question ("" for nothing), and named when s names the
// user (mentionsUser, ownEvent): one that does not counts only as chat
// that leaves the "I" out (fragment.go).
func segment(text string, fn func(raw, s string, named bool)) {
	forSentences(text, func(raw string, question bool) {
		s := unquoted(raw)
		if question {
			s = premise(s)
		}
		fn(raw, s, s != "" && (mentionsUser(s) || ownEvent(s)))
	})
}

// forSentences calls fn with each sentence of text and whether it ends
// with a question mark.
func forSentences(text string, fn func(s string, question bool)) {
	start := 0
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '.', '!', '?', '\n', ';':
			if text[i] == '.' && !sentenceEnd(text, i) {
				continue
			}
			j, q := i, false
			for j < len(text) && strings.IndexByte(".!?\n; \t\r", text[j]) >= 0 {
				q = q || text[j] == '?'
				j++
			}
			if s := strings.TrimSpace(text[start:i]); s != "" {
				fn(s, q)
			}
			start, i = j, j-1
		default:
			if j := emojiEnd(text, i); j > i {
				// "…on Friday 🙈 Next project": an emoji, then a capital,
				// ends a sentence too.
				if s := strings.TrimSpace(text[start:i]); s != "" {
					fn(s, false)
				}
				start, i = j, j-1
			}
		}
	}
	if s := strings.TrimSpace(text[start:]); s != "" {
		fn(s, false)
	}
}

// emojiEnd returns where the sentence after an emoji at text[i] starts
// (after the emoji, any others and spaces), if it starts with a capital
// letter, else i.
func emojiEnd(text string, i int) int {
	if text[i] < utf8.RuneSelf {
		return i
	}
	r, n := utf8.DecodeRuneInString(text[i:])
	if !isEmoji(r) {
		return i
	}
	j := i + n
	for j < len(text) {
		r, n := utf8.DecodeRuneInString(text[j:])
		if !isEmoji(r) && r != ' ' && r != '\u200d' && r != '\ufe0f' {
			break
		}
		j += n
	}
	if r, _ := utf8.DecodeRuneInString(text[j:]); j == i+n || !unicode.IsUpper(r) {
		return i
	}
	return j
}

// isEmoji reports whether r is a pictograph or a symbol of the emoji
// blocks.
func isEmoji(r rune) bool {
	return r >= 0x1F000 && r <= 0x1FAFF || r >= 0x2600 && r <= 0x27BF
}

// sentenceEnd reports whether the period at text[i] ends a sentence: not
// in "3.5", "e.g.", "Dr. Smith" or an initial.
func sentenceEnd(text string, i int) bool {
	if i+1 < len(text) && text[i+1] != ' ' && text[i+1] != '\n' && text[i+1] != '\t' && text[i+1] != '"' && text[i+1] != ')' {
		return false // "3.5", "e.g", "agentmem.io"
	}
	j := i
	for j > 0 && isLetter(text[j-1]) {
		j--
	}
	w := strings.ToLower(text[j:i])
	switch w {
	case "mr", "mrs", "ms", "dr", "st", "jr", "sr", "prof", "vs", "mt", "e.g", "i.e", "approx":
		return false
	}
	return !(len(w) == 1 && text[j] >= 'A' && text[j] <= 'Z' && w != "i") // "J. K. Rowling"
}

// unquoted returns s without its quotations: words in quotes are someone
// else's ("My friend said 'I'm moving to Berlin'") or text to work on
// ("Translate 'I am a doctor'"), not the user's statements. A quote
// opens after a space or the start and closes before a space, a
// punctuation mark or the end ("I'm" inside it does not close it).
func unquoted(s string) string {
	opens := false
	for i := 0; i < len(s) && !opens; i++ {
		opens = (s[i] == '\'' || s[i] == '"' || s[i] == 0xe2) && (i == 0 || strings.IndexByte(" \t(:-", s[i-1]) >= 0)
	}
	if !opens {
		return s // no quote opens: "I'm", "can't" are apostrophes
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		closing := quotePairs[r]
		if closing == 0 || i > 0 && !strings.ContainsRune(" \t(:—-", rune(s[i-1])) {
			b.WriteString(s[i : i+n])
			i += n
			continue
		}
		end := -1
		for j := i + n; j < len(s); {
			q, m := utf8.DecodeRuneInString(s[j:])
			if q == closing || q == '\'' && closing == '’' || q == '’' && closing == '\'' {
				if k := j + m; k == len(s) || strings.ContainsRune(" \t.,!?:;)-—", rune(s[k])) {
					end = k
					break
				}
			}
			j += m
		}
		if end < 0 {
			b.WriteString(s[i : i+n]) // no closing quote: an apostrophe
			i += n
			continue
		}
		b.WriteString(" ")
		i = end
	}
	return b.String()
}

var quotePairs = map[rune]rune{'\'': '\'', '"': '"', '‘': '’', '“': '”'}

// premise returns the statement a question leads with, or "": "I'm
// diabetic, what can I eat for breakfast" states "I'm diabetic"; "as a
// nurse working nights, how do I sleep" states "I'm a nurse working
// nights". The statement is the text before the last comma (or dash)
// that is followed by a question word; a hypothetical or a question
// before it is dropped later, as in any sentence.
func premise(q string) string {
	for i := len(q) - 1; i > 0; i-- {
		if q[i] != ',' && q[i] != '-' && q[i] != ';' {
			continue
		}
		rest := strings.Fields(q[i+1:])
		if len(rest) < 2 || !questionWords[lower(rest[0])] {
			continue
		}
		head := strings.TrimSpace(q[:i])
		for _, lead := range []string{"given that ", "since ", "because ", "considering ", "seeing as "} {
			if len(head) > len(lead) && strings.EqualFold(head[:len(lead)], lead) {
				head = head[len(lead):] // "Given that I'm a vegetarian, how much protein…"
			}
		}
		if f := strings.Fields(head); len(f) > 2 && (lower(f[0]) == "as" && (lower(f[1]) == "a" || lower(f[1]) == "an") || lower(f[0]) == "being" && (lower(f[1]) == "a" || lower(f[1]) == "an")) {
			head = "I'm " + strings.Join(f[1:], " ") // "as a nurse working nights"
		}
		return head
	}
	return ""
}

var questionWords = set("what what's whats how how's which where when who why can could should would will is are do does any anything tips ideas")

// mentionsUser reports whether s has a word of the first person, which
// every memory needs: most sentences have none, and skipping them early
// spares the rest of the work.
func mentionsUser(s string) bool {
	for i := 0; i < len(s); {
		for i < len(s) && !isLetter(s[i]) {
			i++
		}
		j := i
		for j < len(s) && (isLetter(s[j]) || s[j] == '\'') {
			j++
		}
		switch w := s[i:j]; len(w) {
		case 1, 2, 3, 4, 5:
			switch strings.ToLower(w) {
			case "i", "i'm", "i've", "i'll", "i'd", "im", "ive", "my", "me", "we", "we're", "we've", "our", "mine":
				return true
			}
		}
		i = j
	}
	return false
}

// ownEvent reports whether a sentence that does not name the user moves
// an event of theirs: "The wedding got moved to September."
func ownEvent(s string) bool {
	f := strings.Fields(strings.ToLower(s))
	if len(f) < 4 || f[0] != "the" || !events[f[1]] {
		return false
	}
	for _, w := range f[2:] {
		if rescheduled[verbs[strings.Trim(w, ".,!")]] {
			return true
		}
	}
	return false
}

// words returns the words of a sentence (tokenize) with the chat
// abbreviations written out (expand), the fillers that open it and a
// hedge that ends it dropped.
func words(s string) []string {
	return stripHedge(stripFillers(expand(tokenize(s))))
}

// tokenize splits a sentence into words; a comma is a word of its own.
// Curly apostrophes become straight ones and quotes are dropped.
func tokenize(s string) []string {
	if strings.ContainsRune(s, '’') {
		s = strings.ReplaceAll(s, "’", "'")
	}
	toks := make([]string, 0, 16)
	for _, f := range strings.Fields(s) {
		f = strings.Trim(f, "\"“”()[]*_")
		comma := false
		for {
			// By rune: a byte of "—" ends "💔" too.
			r, n := utf8.DecodeLastRuneInString(f)
			if n == 0 || !strings.ContainsRune(",:—–", r) {
				break
			}
			comma, f = true, strings.Trim(f[:len(f)-n], "\"“”()[]*_") // "(6),"
		}
		f = strings.TrimRight(f, "!?.…")
		if f == "-" || f == "—" || f == "–" {
			comma, f = true, ""
		}
		if !strings.ContainsFunc(f, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) && f != "&" {
			f = "" // an emoji, ":)", "<3": no words of a memory
		}
		if f != "" {
			toks = append(toks, f)
		}
		if comma {
			toks = append(toks, ",")
		}
	}
	for len(toks) > 0 && toks[len(toks)-1] == "," {
		toks = toks[:len(toks)-1]
	}
	// "born and raised" is one predicate, not two verb phrases.
	for i := 0; i+2 < len(toks); i++ {
		if lower(toks[i]) == "born" && lower(toks[i+1]) == "and" && (lower(toks[i+2]) == "raised" || lower(toks[i+2]) == "bred") {
			toks = slices.Concat(toks[:i], []string{toks[i] + " and " + toks[i+2]}, toks[i+3:])
		}
	}
	return toks
}

// expand writes out the abbreviations of chat that stand for words of a
// clause: "wfh" is "work from home", "w/" is "with".
func expand(toks []string) []string {
	var out []string
	for i, t := range toks {
		if laughs[lower(t)] && i > 0 && i+1 < len(toks) {
			// "im 16 lol dont judge": a laugh ends the clause.
			if out == nil {
				out = slices.Clone(toks[:i])
			}
			out = append(out, ",")
			continue
		}
		if e, ok := expansions[lower(t)]; ok {
			if out == nil {
				out = slices.Clone(toks[:i])
			}
			out = append(out, strings.Fields(e)...)
		} else if out != nil {
			out = append(out, t)
		}
	}
	if out == nil {
		return toks
	}
	return out
}

var laughs = set("lol lmao rofl haha hahaha xd")

var expansions = map[string]string{"wfh": "work from home", "w/": "with", "w": "with", "b/c": "because", "bc": "because",
	"rn": "now", "atm": "now", "ppl": "people", "bf": "boyfriend", "gf": "girlfriend", "hubs": "husband", "yo": "years old"}

// stripFillers drops the discourse words that open a clause: "Actually,",
// "Oh and", "By the way".
func stripFillers(toks []string) []string {
	for len(toks) > 0 {
		w := lower(toks[0])
		switch {
		case w == ",":
		case w == "no" && len(toks) > 1 && toks[1] != "," && !subjectStart(toks, 1) && !verbStart(lower(toks[1])) && !fillers[lower(toks[1])]:
			return toks // "no credit cards": not a reply
		case (w == "reckon" || w == "guess" || w == "think") && len(toks) > 1 && subjectStart(toks, 1):
			// "Reckon I'll head up to Cairns": a hedge before the clause.
		case len(w) > 5 && strings.HasSuffix(w, "ly") && len(toks) > 1 && (subjectStart(toks, 1) || toks[1] == ","):
			// "Weirdly I've come round to olives": a comment on the clause.
		case fillers[w], w == "please" && len(toks) > 1 && toks[1] == ",":
		case w == "by" && len(toks) > 2 && lower(toks[1]) == "the" && lower(toks[2]) == "way":
			toks = toks[2:]
		case w == "just" && len(toks) > 3 && lower(toks[1]) == "so" && lower(toks[2]) == "you" && lower(toks[3]) == "know":
			toks = toks[3:]
		case (w == "you" || w == "as") && len(toks) > 2 && lower(toks[1]) == "know" && toks[2] == ",":
			toks = toks[1:]
		case w == "to" && len(toks) > 2 && lower(toks[1]) == "be" && lower(toks[2]) == "honest":
			toks = toks[2:]
		case w == "in" && len(toks) > 1 && lower(toks[1]) == "fact":
			toks = toks[1:]
		case w == "these" && len(toks) > 1 && lower(toks[1]) == "days":
			toks = toks[1:]
		default:
			return toks
		}
		toks = toks[1:]
	}
	return toks
}

var fillers = set("actually well oh ok okay so and but also plus btw fyi tbh ngl imo bhai bro dude mate guys omg wow yay woohoo sir madam maam ma'am anyway anyways um uh hmm honestly basically yeah yes yep yup yea no nope ah now then right sure lol haha oh, alright hey hi hello nowadays lately currently recently update: also, fun fact")

// stripHedge drops a hedge that ends a sentence: "…, I guess", "…
// I think", "… I suppose".
func stripHedge(toks []string) []string {
	n := len(toks)
	if n > 3 && lower(toks[n-2]) == "i" && hedges[lower(toks[n-1])] {
		toks = toks[:n-2]
		if toks[len(toks)-1] == "," {
			toks = toks[:len(toks)-1]
		}
	}
	return toks
}

var hedges = set("guess think suppose reckon believe")

// codeLike reports whether a sentence holds code: a word with a bracket
// or an operator inside it ("range(10)", "x=1", "{}").
func codeLike(s string) bool {
	for _, f := range strings.Fields(s) {
		f = strings.TrimRight(f, ",.!?:;")
		if i := strings.IndexAny(f, "({["); i > 0 && isLetter(f[i-1]) || strings.ContainsAny(f, "{}=") || strings.Contains(f, "()") {
			return true // "range(10)", "x=1", "{}"
		}
	}
	return false
}

// formFields reads a sentence written as a form, "name: Kofi / age: 22 /
// from: Accra / studying: economics at Ashesi", as the user's clauses
// ("my name is Kofi", "I'm 22", …), or returns nil. It must start with
// a field it knows; fields are separated by "/", "|" or ",".
func formFields(s string) []string {
	c := strings.IndexByte(s, ':')
	if c < 0 || c > 16 || !formKeys[strings.ToLower(strings.TrimSpace(s[:c]))] {
		return nil // no form: most sentences, without the regular expression
	}
	keys := formKey.FindAllStringSubmatchIndex(s, -1)
	if keys == nil || strings.TrimSpace(s[:keys[0][0]]) != "" {
		return nil
	}
	var out []string
	for n, k := range keys {
		end := len(s)
		if n+1 < len(keys) {
			end = keys[n+1][0]
		}
		key := strings.ToLower(s[k[2]:k[3]])
		v := strings.TrimSpace(strings.TrimRight(strings.TrimSpace(s[k[1]:end]), " ,/|;.!"))
		if v == "" {
			continue
		}
		a := "a "
		if w := strings.ToLower(strings.Fields(v)[0]); w == "a" || w == "an" || w == "the" {
			a = ""
		}
		switch key {
		case "name":
			out = append(out, "my name is "+v)
		case "age":
			out = append(out, "I'm "+v)
		case "from", "hometown", "nationality":
			out = append(out, "I'm from "+v)
		case "location", "based", "city", "country", "home", "lives", "live":
			out = append(out, "I live in "+v)
		case "job", "occupation", "profession", "work", "role":
			out = append(out, "I'm "+a+v)
		case "studying", "study", "studies", "course":
			out = append(out, "I'm studying "+v)
		case "diet":
			out = append(out, "I'm "+v)
		case "kids", "children", "pets":
			out = append(out, "I have "+v+" "+key)
		case "allergies", "allergy", "allergic":
			for _, it := range listValues(v) {
				out = append(out, "I'm allergic to "+it)
			}
		case "meds", "medication", "medications", "medicines":
			for _, it := range listValues(v) {
				out = append(out, "I take "+it)
			}
		case "car", "bike", "phone", "laptop", "pet", "dog", "cat":
			out = append(out, "my "+key+" is "+v)
		case "languages", "speak":
			for _, it := range listValues(v) {
				out = append(out, "I speak "+it)
			}
		}
	}
	return out
}

// listValues splits a form's value into its items: "shellfish, latex".
func listValues(v string) []string {
	var out []string
	for _, it := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ';' }) {
		for _, p := range strings.Split(it, " and ") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

var formKeys = set("name age from hometown nationality location based city country home lives live job occupation profession work role studying study studies course diet kids children pets allergies allergy allergic meds medication medications medicines car bike phone laptop pet dog cat languages speak")

var formKey = regexp.MustCompile(`(?i)\b(name|age|from|hometown|nationality|location|based|city|country|home|lives|live|job|occupation|profession|work|role|studying|study|studies|course|diet|kids|children|pets|allergies|allergy|allergic|meds|medications|medication|medicines|car|bike|phone|laptop|pet|dog|cat|languages|speak)\s*:`)
