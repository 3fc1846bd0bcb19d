package extract

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agentmem/agentmem"
)

// The name the assistant calls the user by (subject stage). An app often
// tells its assistant the user's name, and the assistant uses it ("Enjoy
// these first weeks, Sophie.", "Hi Margaret!") where the user never says
// it: the name is the user's, and a question that names them ("what's
// Sophie's job now?") asks about the user (retrieve.Options.OwnNames).

// addressedObject prefixes the Object of a memory of a name the
// assistant called the user by: OwnNames reads them.
const addressedObject = "addressed:"

// greetings are the words that, at a sentence's start, may greet the
// user by name: "Hi Sophie!", "Thanks, Gary.", "Good luck, Niamh —".
var greetings = []string{"hi", "hey", "hello", "hiya", "dear", "morning", "evening", "afternoon", "welcome back", "welcome",
	"thanks", "thank you", "cheers", "congrats", "congratulations", "good morning", "good evening", "good afternoon",
	"good night", "good luck", "sorry", "bye", "goodbye", "well done", "nice one", "aw", "aww", "wow", "anytime", "see you",
	"of course", "absolutely"}

// addressed returns the names an assistant's message calls the user by,
// in order, once each: a name after a greeting at a sentence's start
// ("Hi Sophie!"), or set off by a comma at a sentence's end ("Enjoy
// these first weeks, Sophie."). Not a name that ends a list ("Leeds,
// York, Hull."), that the message says elsewhere too (a place it is
// about: "…the best area, Ari. Ari is calm"), or that is no person's
// name (a month, a weekday, a word of the lexicon).
func addressed(content string) []string {
	var out []string
	for i := 0; i < len(content); {
		r, n := utf8.DecodeRuneInString(content[i:])
		if !unicode.IsUpper(r) || i > 0 && !unicode.IsSpace(rune(content[i-1])) {
			i += n
			continue
		}
		j := i + n
		for j < len(content) {
			r, n := utf8.DecodeRuneInString(content[j:])
			if !unicode.IsLower(r) {
				break
			}
			j += n
		}
		name := content[i:j]
		if j > i+n && (vocativeEnd(content[j:], true) && afterGreeting(content[:i]) || vocativeEnd(content[j:], false) && afterClause(content[:i])) &&
			personWord(name) && !slices.Contains(greetings, strings.ToLower(name)) && strings.Count(content, name) == 1 && !slices.Contains(out, name) {
			out = append(out, name)
		}
		i = j
	}
	return out
}

// vocativeEnd reports whether the text after a name ends its clause: a
// full stop, a dash, the text's end, or a comma when comma is set (after
// a greeting: "Hi Sophie, …"; not after a clause, where a name between
// commas is an apposition: "this amazing woman, Jean, who…").
func vocativeEnd(after string, comma bool) bool {
	after = strings.TrimLeft(after, " ")
	if after == "" {
		return true
	}
	r, _ := utf8.DecodeRuneInString(after)
	return strings.ContainsRune("!.?…—–", r) || comma && r == ',' || strings.HasPrefix(after, "- ")
}

// afterGreeting reports whether the text before a name ends with a
// greeting that starts a sentence ("Hi", "Thanks,", "Good luck,").
func afterGreeting(before string) bool {
	b := strings.ToLower(strings.TrimRight(strings.TrimRight(before, " "), ",!"))
	for _, g := range greetings {
		if strings.HasSuffix(b, g) && sentenceStart(b, len(b)-len(g)) {
			return true
		}
	}
	return false
}

// afterClause reports whether the text before a name ends with a comma
// after a word that is no name of a list ("…first weeks," not "Lyon,
// Paris,"): a capitalised word there starts its sentence ("Anytime,").
func afterClause(before string) bool {
	b := strings.TrimRight(before, " ")
	if !strings.HasSuffix(b, ",") {
		return false
	}
	b = b[:len(b)-1]
	k := strings.LastIndexFunc(b, func(r rune) bool { return !unicode.IsLetter(r) }) + 1
	if k == len(b) {
		return false // "…2024, Sophie": no word before
	}
	r, _ := utf8.DecodeRuneInString(b[k:])
	return !unicode.IsUpper(r) || sentenceStart(b, k)
}

// sentenceStart reports whether the word at byte i of s starts a
// sentence: at the text's or a line's start, or after a full stop.
func sentenceStart(s string, i int) bool {
	before := strings.TrimRight(s[:i], " \t")
	if before == "" {
		return true
	}
	switch before[len(before)-1] {
	case '\n', '.', '!', '?':
		return true
	}
	return false
}

// signature returns the name a user's message ends with after a
// closing ("Kind regards, Margaret.", "Thanks, Tom", "xx Jo"), and where
// the name starts; "" and -1 when it ends otherwise.
func signature(content string) (string, int) {
	t := strings.TrimRight(content, " \t\r\n.!")
	i := strings.LastIndexAny(t, " \t\n,")
	if i < 0 {
		return "", -1
	}
	name := t[i+1:]
	r, n := utf8.DecodeRuneInString(name)
	if !unicode.IsUpper(r) || len(name) == n || strings.IndexFunc(name[n:], func(r rune) bool { return !unicode.IsLower(r) }) >= 0 {
		return "", -1
	}
	before := strings.ToLower(strings.TrimRight(t[:i+1], " \t\r\n,!."))
	for _, c := range closings {
		if strings.HasSuffix(before, c) && (len(before) == len(c) || !isLetter(before[len(before)-len(c)-1])) {
			return name, i + 1
		}
	}
	return "", -1
}

var closings = []string{"regards", "best", "best wishes", "cheers", "thanks", "thank you", "many thanks", "love", "take care",
	"sincerely", "warmly", "all the best", "x", "xx", "xxx"}

// addressedNames returns a candidate for each name the assistant's
// messages of msgs call the user by ("User is called Sophie."), and each
// name the user signs with ("Kind regards, Margaret."), but for a name
// that one of the user's messages says otherwise: the user speaks of
// someone else ("Rufus says hi." → "Hi Rufus!").
func addressedNames(msgs []*agentmem.Message) []Candidate {
	var said strings.Builder
	var out []Candidate
	called := func(name string, seq int64) {
		out = append(out, Candidate{Text: "User is called " + name + ".", Category: "identity", Confidence: 0.7, Importance: 0.5,
			Object: addressedObject + strings.ToLower(name), SeqFrom: seq, SeqTo: seq})
	}
	for _, m := range msgs {
		if m == nil || m.Role != agentmem.RoleUser {
			continue
		}
		content := m.Content
		if name, at := signature(content); name != "" && personWord(name) {
			called(name, m.Seq)
			content = content[:at]
		}
		said.WriteString(content)
		said.WriteString("\n")
	}
	for _, m := range msgs {
		if m == nil || m.Role != agentmem.RoleAssistant {
			continue
		}
		for _, name := range addressed(m.Content) {
			if _, ok := agentmem.ReplaceWord(said.String(), name, ""); !ok {
				called(name, m.Seq)
			}
		}
	}
	return out
}
