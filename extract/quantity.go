package extract

import (
	"context"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agentmem/agentmem"
)

// endedBy returns the valid memories that a statement of an end
// (Candidate.Ends) ends: of its kind (or, either's unknown, its
// category), positive, and sharing a distinctive word with it, the
// thing that ended ("bruno", "swahili", "statins"): one that at most
// maxEnded memories hold, and none when more than maxEnded would end. A
// memory of no kind, or of another than an end filed as an event, ends
// only by a name they share ("Hamish").
func endedBy(cd Candidate, valid []*agentmem.Memory) []*agentmem.Memory {
	if !cd.Ends || cd.Negated || cd.Retract {
		return nil
	}
	things := distinctive(thingWords(cd.Text), valid)
	// An end filed as an event ("we lost Bruno in May") says nothing of
	// the kind of what ended: a name it gives ("Bruno") decides alone.
	named := distinctive(nameWords(cd.Text), valid)
	var out []*agentmem.Memory
	for _, m := range valid {
		meta := metaOf(m)
		if meta.Negated || normalize(m.Text) == normalize(cd.Text) {
			continue
		}
		of := things
		if meta.Kind != "" && cd.Kind != "" && meta.Kind != cd.Kind || (meta.Kind == "" || cd.Kind == "") && m.Category != cd.Category {
			if cd.Kind != "event" && meta.Kind != "" {
				continue
			}
			of = named // an end filed as an event, or a memory of no kind: by the names alone
		}
		for w := range thingWords(m.Text) {
			if of[w] {
				out = append(out, m)
				break
			}
		}
	}
	if len(out) > maxEnded {
		return nil // not one thing that ended: a word of many memories
	}
	return out
}

// maxEnded is the most memories one end ends: more, and what it names is
// no one thing ("User shared a photo…" is no end of every photo).
const maxEnded = 2

// distinctive returns the words of things that at most maxEnded of the
// valid memories hold: names of one thing ("bruno", "sertraline"), not
// words of many ("photo", "family").
func distinctive(things map[string]bool, valid []*agentmem.Memory) map[string]bool {
	n := map[string]int{}
	for _, m := range valid {
		for w := range thingWords(m.Text) {
			if things[w] {
				n[w]++
			}
		}
	}
	out := map[string]bool{}
	for w := range things {
		if n[w] <= maxEnded {
			out[w] = true
		}
	}
	return out
}

// figureKinds are the kinds of fact (Candidate.Kind) whose figures
// update: a dose, a lab value, a weight, a count of subscribers, a rent,
// an age, the number of grandchildren.
var figureKinds = map[string]bool{"medication": true, "health": true, "body": true, "count": true, "finance": true,
	"age": true, "family": true}

// updatedFigures returns the valid memories whose figure the candidate
// updates, and the thing the figure is of: memories of a kind whose
// figures update (or of no kind, stored before kinds were or by the
// rules unsure of it: "User's ferritin is 18.") that share a distinctive word with the candidate (the
// drug, the lab test, what is counted: "sertraline", "a1c",
// "subscribers") and hold figures, none of them the candidate's first
// ("User takes sertraline 50 mg." is updated by "sertraline up to
// 100mg"; "A1C down to 7.2. From 8.4." by "A1C 6.6, from 8.4").
func updatedFigures(cd Candidate, valid []*agentmem.Memory) ([]*agentmem.Memory, string) {
	if !figureKinds[cd.Kind] || cd.Negated || cd.Retract {
		return nil, ""
	}
	figs := figuresIn(cd.Text)
	if len(figs) == 0 {
		return nil, ""
	}
	things := distinctive(thingWords(cd.Text), valid)
	var out []*agentmem.Memory
	var thing string
	for _, m := range valid {
		meta := metaOf(m)
		if meta.Negated || !figureKinds[meta.Kind] && meta.Kind != "" {
			continue // of a kind whose figures do not update
		}
		old := figuresIn(m.Text)
		if len(old) == 0 || slices.Contains(old, figs[0]) {
			continue
		}
		for w := range thingWords(m.Text) {
			if things[w] {
				out, thing = append(out, m), w
				break
			}
		}
	}
	if len(out) > maxEnded {
		return nil, ""
	}
	return out, thing
}

// figuresIn returns the numbers of a text in order, digits as written
// ("6.6", "100", "240k") or spelled out ("three" as "3").
func figuresIn(text string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '.' || r == ',')
	}) {
		w = strings.Trim(w, ".,")
		if n, ok := spelledNumbers[w]; ok {
			out = append(out, n)
			continue
		}
		if w == "" || w[0] < '0' || w[0] > '9' {
			continue
		}
		i := 0
		for i < len(w) && (w[i] >= '0' && w[i] <= '9' || w[i] == '.' || w[i] == ',') {
			i++
		}
		out = append(out, strings.ReplaceAll(strings.TrimRight(w[:i], ".,"), ",", ""))
	}
	return out
}

var spelledNumbers = map[string]string{"one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6",
	"seven": "7", "eight": "8", "nine": "9", "ten": "10", "eleven": "11", "twelve": "12"}

// thingWords are a text's distinctive words: four letters or more (or a
// letter-and-digit name like "a1c"), not a light word, a unit, a word of
// time or change, nor a number spelled out; a final s dropped.
func thingWords(text string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.FieldsFunc(text, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r > 127)
	}) {
		name := w[0] >= 'A' && w[0] <= 'Z' // a name of three letters is a thing ("Rex", "Ana")
		w = strings.ToLower(w)
		if w[0] >= '0' && w[0] <= '9' || spelledNumbers[w] != "" || lightWords[w] || notThings[w] {
			continue
		}
		if len(w) >= 4 || len(w) == 3 && (name || strings.ContainsAny(w, "0123456789")) {
			out[stemS(w)] = true
		}
	}
	return out
}

// nameWords returns the thing words of text that it writes with a
// capital, past its first word: the names it gives ("Bruno", "Rex").
func nameWords(text string) map[string]bool {
	out := map[string]bool{}
	for i, w := range strings.Fields(text) {
		if r, _ := utf8.DecodeRuneInString(w); i > 0 && unicode.IsUpper(r) {
			for t := range thingWords(w) {
				out[t] = true
			}
		}
	}
	return out
}

var notThings = set("said about around almost over under down from since still just went gone came come back more less than with into onto take takes taking took taken start started stopped stop doctor doc labs lab test tests result results week weeks month months year years today yesterday last next this that these those then when were been being they them their there here what which also really pretty quite very much many each every now again already only even finally pleased happy said told says went goes doing does done make made making have having need needs want wants like likes good great well better worse bigger smaller higher lower went total about roughly around nearly almost approximately currently daily morning evening night twice once times time per a-day " +
	// an end's own words, and the calendar's: no thing that ends
	"lost lose losing died dies passed away quit quits quitting ended ends stopped stopping gave give sold sell split broke " +
	"january february march april may june july august september october november december " +
	"monday tuesday wednesday thursday friday saturday sunday")

// OwnNames returns the user's own names that their valid memories of the
// slots "name" and "nickname" tell ("User's name is Mariana.",
// "User goes by Mari."), and those the assistant calls them by ("User is
// called Sophie.", see addressed): the words with a capital after the
// first; see
// retrieve.Options.OwnNames.
func OwnNames(ctx context.Context, store agentmem.MemoryStore, userID string) ([]string, error) {
	identity := "identity"
	ms, _, err := store.FindMemories(ctx, userID, agentmem.MemoryFilter{Category: &identity, Limit: agentmem.MaxPageSize})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, m := range ms {
		if meta := metaOf(m); meta.Slot != "name" && meta.Slot != "nickname" && !strings.HasPrefix(meta.Object, addressedObject) {
			continue
		}
		words := strings.Fields(m.Text)
		for _, w := range words[min(1, len(words)):] {
			w = strings.TrimRight(w, ".,;:!?")
			w = strings.TrimSuffix(strings.TrimSuffix(w, "'s"), "’s")
			if r, _ := utf8.DecodeRuneInString(w); unicode.IsUpper(r) && len(w) > 1 && !slices.Contains(out, w) {
				out = append(out, w)
			}
		}
	}
	return out, nil
}
