package extract

import (
	"regexp"
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

var (
	// A greeting or an interjection, then the name, then the clause's end:
	// "Hi Sophie!", "Thanks, Gary.", "Good luck, Niamh —".
	greetingName = regexp.MustCompile(`(?:^|[\n.!?]\s*)(?i:hi|hey|hello|hiya|dear|morning|evening|afternoon|welcome back|welcome|thanks|thank you|cheers|congrats|congratulations|good morning|good evening|good afternoon|good night|good luck|sorry|bye|goodbye|well done|nice one|aw|aww|wow|anytime|of course|absolutely)[,!]?\s+(\p{Lu}\p{Ll}+)\s*(?:[,!.?…]|[—–]|$)`)
	// A clause, a comma, then the name that ends the sentence: "Enjoy
	// these first weeks, Sophie.", "Bon courage, Sophie — and …".
	closingName = regexp.MustCompile(`(\p{L}+),\s+(\p{Lu}\p{Ll}+)\s*(?:[!?.…]|[—–]|$)`)
)

// addressed returns the names an assistant's message calls the user by,
// in order, once each: a name after a greeting at a sentence's start, or
// set off by a comma at a sentence's end. Not a name that ends a list
// ("Leeds, York, Hull."), that the message says elsewhere too (a place it
// is about: "…the best area, Ari. Ari is calm"), or that is no person's
// name (a month, a weekday, a word of the lexicon).
func addressed(content string) []string {
	var out []string
	add := func(name string) {
		if !personWord(name) || strings.Count(content, name) > 1 {
			return
		}
		for _, n := range out {
			if n == name {
				return
			}
		}
		out = append(out, name)
	}
	for _, m := range greetingName.FindAllStringSubmatch(content, -1) {
		add(m[1])
	}
	for _, ix := range closingName.FindAllStringSubmatchIndex(content, -1) {
		prev := content[ix[2]:ix[3]]
		if r, _ := utf8.DecodeRuneInString(prev); unicode.IsUpper(r) && !sentenceStart(content, ix[2]) {
			continue // a list of names: "Lyon, Paris, Bangkok."
		}
		add(content[ix[4]:ix[5]])
	}
	return out
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

// A closing and a name that end a user's message: their signature
// ("Kind regards, Margaret.", "Thanks, Tom").
var signature = regexp.MustCompile(`(?i:regards|best|best wishes|cheers|thanks|thank you|many thanks|love|take care|sincerely|warmly|all the best|x+)[,!.]?\s+(\p{Lu}\p{Ll}+)[.!]?\s*$`)

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
		if ix := signature.FindStringSubmatchIndex(content); ix != nil && personWord(content[ix[2]:ix[3]]) {
			called(content[ix[2]:ix[3]], m.Seq)
			content = content[:ix[2]]
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
