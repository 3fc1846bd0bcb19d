package extract_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/extract"
)

// want is an expected memory: its text, and its slot, object, negation and
// retraction as "slot=residence", "object=peanuts", "negated", "retract".
type want struct {
	text  string
	facts []string
}

func w(text string, facts ...string) want { return want{text, facts} }

// facts writes what a candidate says of its fact as want does.
func facts(c extract.Candidate) []string {
	var f []string
	if c.Slot != "" {
		f = append(f, "slot="+c.Slot)
	}
	if c.Object != "" {
		f = append(f, "object="+c.Object)
	}
	if c.Negated {
		f = append(f, "negated")
	}
	if c.Retract {
		f = append(f, "retract")
	}
	if c.Corrects != "" {
		f = append(f, "corrects="+c.Corrects)
	}
	return f
}

// checkHeuristic checks that Heuristic draws exactly wants, in order,
// from one user message, each with its provenance, a category, a
// confidence and an importance. The tests of a stage of the pipeline are
// beside it (segment_test.go, sentence_test.go, clause_test.go,
// subject_test.go, fragment_test.go, said_test.go, slot_test.go,
// normalise_test.go); here are those of the whole.
func checkHeuristic(t *testing.T, say string, wants []want) {
	t.Helper()
	got := extract.Heuristic([]*agentmem.Message{{Seq: 7, Role: agentmem.RoleUser, Content: say}})
	var g, x []string
	for _, c := range got {
		if c.SeqFrom != 7 || c.SeqTo != 7 || c.Category == "" || c.Confidence <= 0 || c.Importance <= 0 {
			t.Errorf("%q: candidate %+v lacks provenance, category, confidence or importance", say, c)
		}
		g = append(g, fmt.Sprintf("%s %v", c.Text, facts(c)))
	}
	for _, w := range wants {
		x = append(x, fmt.Sprintf("%s %v", w.text, w.facts))
	}
	if !slices.Equal(g, x) {
		t.Errorf("%q:\n got %s\nwant %s", say, strings.Join(g, " | "), strings.Join(x, " | "))
	}
}

// TestHeuristic_Issue12: every statement quoted in issue 12 becomes the
// self-contained memories it states, with the slot, object, negation or
// retraction that consolidation needs for changes of fact.
func TestHeuristic_Issue12(t *testing.T) {
	for _, tt := range []struct {
		say  string
		want []want
	}{
		{"I am vegetarian and my sister Ana lives in Porto.", []want{
			w("User is vegetarian.", "slot=diet"),
			w("User's sister Ana lives in Porto.", "object=sister ana: live in porto")}},
		{"I moved from Berlin to Lisbon last year.", []want{w("User moved from Berlin to Lisbon last year.", "slot=residence")}},
		{"My daughter Mia starts school in September.", []want{
			w("User's daughter Mia starts school in September.", "object=daughter mia: start school in september")}},
		{"I can't eat peanuts.", []want{w("User cannot eat peanuts.", "object=peanuts", "negated")}},
		{"I'm training for the Berlin marathon.", []want{w("User is training for the Berlin marathon.", "object=train for the berlin marathon")}},
		{"I was born in Madrid.", []want{w("User was born in Madrid.", "slot=birthplace")}},
		{"We're expecting a baby in March.", []want{w("User is expecting a baby in March.", "object=expect a baby in march")}},
		{"I speak Portuguese and German.", []want{w("User speaks Portuguese.", "object=portuguese"), w("User speaks German.", "object=german")}},
		{"I work in Porto.", []want{w("User works in Porto.", "slot=workplace", "object=porto")}},
		{"I have a daughter named Mia.", []want{w("User has a daughter named Mia.", "object=daughter mia")}},
		{"I'm a software engineer at Google.", []want{w("User is a software engineer at Google.", "slot=job")}},
		{"I work as a nurse.", []want{w("User works as a nurse.", "slot=job")}},
		{"Actually I moved back to Berlin.", []want{w("User moved back to Berlin.", "slot=residence")}},
		{"I'm not vegetarian anymore.", []want{w("User is not vegetarian anymore.", "slot=diet", "object=vegetarian", "negated", "retract")}},
		{"I eat meat now.", []want{w("User eats meat now.", "slot=diet")}},
		{"My daughter is Lea.", []want{w("User's daughter is Lea.", "object=daughter lea")}},
		{"My daughter is Mia.", []want{w("User's daughter is Mia.", "object=daughter mia")}},
		{"I work as a teacher.", []want{w("User works as a teacher.", "slot=job")}},
		{"I moved to Lisbon", []want{w("User moved to Lisbon.", "slot=residence")}},
		{"I live in Porto.", []want{w("User lives in Porto.", "slot=residence")}},
		// From the brief of the extractor.
		{"My brother, who lives in Oslo, is a doctor.", []want{
			w("User's brother lives in Oslo.", "object=brother: live in oslo"),
			w("User's brother is a doctor.", "object=brother: be a doctor")}},
		{"My dog Rex is 3.", []want{w("User's dog Rex is 3.", "slot=age-of:dog rex", "object=3")}},
		{"I don't drink coffee.", []want{w("User does not drink coffee.", "object=drink coffee", "negated")}},
		{"I'm going to run a marathon.", []want{w("User is going to run a marathon.", "object=go to run a marathon")}},
		{"My boss is Tom.", []want{w("User's boss is Tom.", "slot=name-of:boss")}},
		{"I quit my job.", []want{w("User quit their job.", "slot=employer", "retract"), w("User quit their job.", "slot=job", "retract")}},
		{"I left Google.", []want{w("User left Google.", "slot=employer", "object=google", "retract"), w("User left Google.", "slot=job", "object=google", "retract")}},
		{"I no longer live in Porto.", []want{w("User no longer lives in Porto.", "slot=residence", "object=porto", "negated", "retract")}},
		{"I'm asking because I'm moving to Lisbon next month.", []want{w("User is moving to Lisbon next month.", "object=move to lisbon next month")}},
		{"I work at Google and live in Lisbon.", []want{w("User works at Google.", "slot=employer"), w("User lives in Lisbon.", "slot=residence")}},
		{"I'm allergic to peanuts, shellfish and soy.", []want{
			w("User is allergic to peanuts.", "object=peanuts"),
			w("User is allergic to shellfish.", "object=shellfish"),
			w("User is allergic to soy.", "object=soy")}},
		{"My wife and I live in Porto.", []want{w("User and their wife live in Porto.", "slot=residence")}},
		{"When I was 10, I moved to Paris.", []want{w("User moved to Paris when they were 10.", "slot=residence")}},
		{"I've been a teacher for ten years.", []want{w("User has been a teacher for ten years.", "slot=job")}},
		{"I'm from Brazil but I live in Canada now.", []want{w("User is from Brazil.", "slot=origin"), w("User lives in Canada now.", "slot=residence")}},
		{"We have a golden retriever named Max.", []want{w("User has a golden retriever named Max.", "object=retriever max")}},
	} {
		checkHeuristic(t, tt.say, tt.want)
	}
}

// TestHeuristic: the statements the regular-expression rules knew still
// become memories (written more faithfully where the issue said they were
// wrong: "works as nurse"), and the assistant's words are not the user's.
func TestHeuristic(t *testing.T) {
	for _, tt := range []struct {
		say  string
		want []string // the memories' texts
	}{
		{"My name is Alice and I live in Lisbon.", []string{"User's name is Alice.", "User lives in Lisbon."}},
		{"I'm 34 years old. I work as a nurse at the city hospital.", []string{"User is 34 years old.", "User works as a nurse at the city hospital."}},
		{"My dog's name is Rex", []string{"User's dog's name is Rex."}},
		{"I have two kids, and my wife is Maria.", []string{"User has two kids.", "User's wife is Maria."}},
		{"My favourite food is sushi!", []string{"User's favourite food is sushi."}},
		{"I don't like horror movies.", []string{"User does not like horror movies."}},
		{"I love hiking in the mountains", []string{"User loves hiking in the mountains."}},
		{"I'm planning to visit Japan next spring.", []string{"User is planning to visit Japan next spring."}},
		{"I am vegetarian.", []string{"User is vegetarian."}},
		{"I moved to Berlin last year", []string{"User moved to Berlin last year."}},
		{"Where do you live? What is my name?", nil}, // questions state nothing
		{"The weather is nice today.", nil},
		{"I'm 5 minutes late, sorry", nil},
	} {
		got := extract.Heuristic([]*agentmem.Message{{Seq: 7, Role: agentmem.RoleUser, Content: tt.say}})
		var texts []string
		for _, c := range got {
			texts = append(texts, c.Text)
			if c.SeqFrom != 7 || c.SeqTo != 7 || c.Category == "" || c.Confidence <= 0 {
				t.Errorf("%q: candidate %+v lacks provenance, category or confidence", tt.say, c)
			}
		}
		if !slices.Equal(texts, tt.want) {
			t.Errorf("%q:\n got %q\nwant %q", tt.say, texts, tt.want)
		}
	}
	// The assistant's words are not the user's facts.
	if got := extract.Heuristic([]*agentmem.Message{{Role: agentmem.RoleAssistant, Content: "I live in the cloud."}}); len(got) != 0 {
		t.Errorf("assistant statement extracted: %+v", got)
	}
}

// FuzzHeuristic: no text makes Heuristic panic, and every memory it
// returns reads as a sentence about the user.
func FuzzHeuristic(f *testing.F) {
	for _, s := range []string{
		"I am vegetarian and my sister Ana lives in Porto.", "My brother, who lives in Oslo, is a doctor.",
		"my", "I", "I'm", "my ,", "and I", ", who", "my X, who", "When I, ", "I speak and", "I'm allergic to , and",
		"My dog's name", "my wife and I", "I have a daughter named", "We're", "I’m not vegetarian any more",
		"\xff\xfe I live in \x00", "I've", "I was born in", "Our son Leo just turned 5.",
		"I quit so ,", "I love it and , so", "me: 1, ,", "about me: ,", "dad's", "home's", "x is home", "veggie for",
		"divorced, ,", "no", "the dog", "live in", "Last year we , and I", "wfh", "3x", "I moved, 2018", "Tom is my",
		"noah already asked if 'the swim lesson man' is my friend lol", "she asked my mum if",
		"My daughter Lily started school. She is allergic to eggs.", "Her", "His name's", "They're", "my parents. they",
		"Jason, my head baker, is leaving. He's", "seeing someone, she's called", "Donna (my", "a puppy, a beagle called Rolo. He",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		// One message, and a conversation of it (a pronoun of the next
		// turn may stand for someone of the one before).
		for _, msgs := range [][]*agentmem.Message{
			{{Role: agentmem.RoleUser, Content: s}},
			{{Role: agentmem.RoleUser, Content: s}, {Role: agentmem.RoleAssistant, Content: s}, {Role: agentmem.RoleUser, Content: s}},
		} {
			for _, c := range extract.Heuristic(msgs) {
				if !strings.HasPrefix(c.Text, "User") || !strings.HasSuffix(c.Text, ".") {
					t.Fatalf("%q: memory %q does not read as a sentence about the user", s, c.Text)
				}
			}
		}
	})
}

// TestHeuristic_Variants runs the extractor over every statement of the
// evaluation corpora with each word in turn dropped, and with a comma or
// a conjunction put before it: the clause readers index tokens around
// commas and conjunctions, and no such text may make them panic or
// return a memory that does not read as a sentence about the user.
func TestHeuristic_Variants(t *testing.T) {
	files, err := filepath.Glob("../eval/extraction/testdata/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpora: %v", err)
	}
	var texts []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var c struct {
			Statements []struct{ Text string }
			Changes    []struct{ Turns []string }
		}
		if err := json.Unmarshal(data, &c); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, s := range c.Statements {
			texts = append(texts, s.Text)
		}
		for _, ch := range c.Changes {
			texts = append(texts, ch.Turns...)
		}
	}
	check := func(s string) {
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("%q: panic: %v", s, r)
			}
		}()
		for _, c := range extract.Heuristic([]*agentmem.Message{{Role: agentmem.RoleUser, Content: s}}) {
			if !strings.HasPrefix(c.Text, "User") || !strings.HasSuffix(c.Text, ".") {
				t.Fatalf("%q: memory %q does not read as a sentence about the user", s, c.Text)
			}
		}
	}
	n := 0
	for _, text := range texts {
		words := strings.Fields(text)
		for i := range words {
			for _, v := range [][]string{
				slices.Concat(words[:i], words[i+1:]),
				slices.Concat(words[:i], []string{","}, words[i:]),
				slices.Concat(words[:i], []string{"and"}, words[i:]),
				slices.Concat(words[:i], []string{"so"}, words[i:]),
				slices.Concat(words[:i], []string{"but", ","}, words[i:]),
				slices.Concat(words[:i], []string{":"}, words[i:]),
			} {
				check(strings.Join(v, " "))
				n++
			}
		}
	}
	t.Logf("%d texts, %d variants", len(texts), n)
}
