package extract_test

import (
	"testing"

	"github.com/agentmem/agentmem/extract"
)

// TestHeuristic_Segment: how a message is cut into sentences and words
// (segment.go): emoji and a greeting are no words of a memory, a form is
// a clause per field, a question keeps the statement it leads with, and
// the fillers and laughs of chat are dropped.
func TestHeuristic_Segment(t *testing.T) {
	for _, tt := range []struct {
		say  string
		want []want
	}{
		{"Hi, I'm Maya.", []want{w("User's name is Maya.", "slot=name")}},
		{"I live in Lisbon 😊 and I love it", []want{w("User lives in Lisbon.", "slot=residence")}},
		{"chris and i broke up last week 💔", []want{
			w("User and Chris broke up last week.", "slot=name-of:girlfriend", "object=chris", "retract"), w("User and Chris broke up last week.", "slot=name-of:boyfriend", "object=chris", "retract"),
			w("User and Chris broke up last week.", "slot=name-of:partner", "object=chris", "retract"), w("User and Chris broke up last week.", "slot=name-of:fiance", "object=chris", "retract"),
			w("User and Chris broke up last week.", "slot=name-of:fiancee", "object=chris", "retract"),
			w("User and Chris broke up last week.", "object=break up last week")}},
		{"name: Kofi / age: 22 / from: Accra / studying: economics at Ashesi", []want{
			w("User's name is Kofi.", "slot=name"), w("User is 22.", "slot=age"), w("User is from Accra.", "slot=origin"), w("User is studying economics at Ashesi.", "slot=study")}},
		{"Name: Ana, age: 31, job: nurse", []want{w("User's name is Ana.", "slot=name"), w("User is 31.", "slot=age"), w("User is a nurse.", "slot=job")}},
		{"on 50mg sertraline for anxiety, is it ok to drink on it?", []want{w("User is on 50mg sertraline for anxiety.", "object=be on 50mg sertraline for anxiety")}},
		{"Bhai I am from Lucknow", []want{w("User is from Lucknow.", "slot=origin")}},
		{"Allergies: shellfish, latex.", []want{w("User is allergic to shellfish.", "object=shellfish"), w("User is allergic to latex.", "object=latex")}},
		{"Meds: levothyroxine 100mcg, vitamin D", []want{w("User takes levothyroxine 100mcg.", "object=take levothyroxine 100mcg"), w("User takes vitamin D.", "object=take vitamin d")}},
		{"omg i just got into the school netball team!!", []want{w("User just got into the school netball team.", "object=get into the school netball team")}},
		{"Reckon I'll head up to Cairns for the holidays", []want{w("User will head up to Cairns for the holidays.", "object=head up to cairns for the holidays")}},
		{"im 16 lol dont judge", []want{w("User is 16, dont judge.", "slot=age")}},
		{"I'm a diabetic, what can I eat for breakfast?", []want{w("User is a diabetic.", "object=be a diabetic")}},
		{"as a nurse working nights, how do I fix my sleep?", []want{w("User is a nurse.", "slot=job"), w("User is working nights.", "object=work nights")}},
		{"Given that I'm a vegan training for a marathon, how much protein do I need?", []want{
			w("User is a vegan.", "slot=diet"), w("User is training for a marathon.", "object=train for a marathon")}},
		{"my daughter Zoe is 4, any ideas for her party?", []want{w("User's daughter Zoe is 4.", "slot=age-of:daughter zoe", "object=4")}},
	} {
		checkHeuristic(t, tt.say, tt.want)
	}
}

// TestStatements_Emoji: an emoji before a capital ends a sentence, as a
// full stop does; one inside a sentence does not.
func TestStatements_Emoji(t *testing.T) {
	for in, want := range map[string]string{
		"the new barista forgot to lock up on Friday 🙈 Next project: gluten-free": "the new barista forgot to lock up on Friday. Next project: gluten-free.",
		"so tired 😩😩 I need a holiday":                                            "so tired. I need a holiday.",
		"I live in Lisbon 😊 and I love it":                                        "I live in Lisbon 😊 and I love it.",
	} {
		if got := extract.Statements(in); got != want {
			t.Errorf("Statements(%q) = %q, want %q", in, got, want)
		}
	}
}
