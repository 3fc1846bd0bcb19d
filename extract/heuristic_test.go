package extract_test

import (
	"slices"
	"testing"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/extract"
)

func TestHeuristic(t *testing.T) {
	for _, tt := range []struct {
		say  string
		want []string // the memories' texts
	}{
		{"My name is Alice and I live in Lisbon.", []string{"User's name is Alice.", "User lives in Lisbon."}},
		{"I'm 34 years old. I work as a nurse at the city hospital.", []string{"User is 34 years old.", "User works as nurse at the city hospital."}},
		{"My dog's name is Rex", []string{"User's dog is Rex."}},
		{"I have two kids, and my wife is Maria.", []string{"User has two kids.", "User's wife is Maria."}},
		{"My favourite food is sushi!", []string{"User's favourite food is sushi."}},
		{"I don't like horror movies.", []string{"User does not like horror movies."}},
		{"I love hiking in the mountains", []string{"User likes hiking in the mountains."}},
		{"I'm planning to visit Japan next spring.", []string{"User plans to visit Japan next spring."}},
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
