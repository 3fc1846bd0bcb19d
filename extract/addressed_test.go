package extract_test

import (
	"slices"
	"testing"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/extract"
)

// TestHeuristic_Addressed: the name the assistant calls the user by
// (addressed.go) is a memory of the user's ("User is called Sophie."):
// after a greeting, or set off by a comma at a sentence's end; never a
// list's last name, a name the message says again (what it is about), a
// month, or a name the user spoke of (the user's dog greeted).
func TestHeuristic_Addressed(t *testing.T) {
	for _, tt := range []struct {
		user, assistant string
		want            []string
	}{
		{"I started the new job today.", "Enjoy these first weeks, Sophie.", []string{"User is called Sophie."}},
		{"Thanks!", "Hi Margaret! Lovely to hear from you.", []string{"User is called Margaret."}},
		{"cheers", "Anytime, Gary. You're doing great.", []string{"User is called Gary."}},
		{"ok", "Bon courage with everything, Sophie — and good luck with the move!", []string{"User is called Sophie."}},
		{"Where should I go?", "Good options are Lyon, Paris, Bordeaux.", nil},
		{"Which area?", "The calmer choice is the north, Ari. Ari has cafés and parks.", nil},
		{"When is it?", "It happens every year in the spring, May.", nil},
		{"Rufus says hi.", "Hi Rufus! Keep up the walks, both of you.", nil},
		{"I moved.", "That's a big change, honestly.", nil},
		{"I volunteered.", "You met this amazing woman, Jean, who had been through a lot.", nil},
		{"ok", "Talk soon, Bye!", nil},
		{"I found it, thank you. Kind regards, Margaret.", "You're very welcome, Margaret.", []string{"User is called Margaret."}},
	} {
		msgs := []*agentmem.Message{
			{Seq: 1, Role: agentmem.RoleUser, Content: tt.user},
			{Seq: 2, Role: agentmem.RoleAssistant, Content: tt.assistant},
		}
		var got []string
		for _, c := range extract.Heuristic(msgs) {
			if c.Category == "identity" {
				got = append(got, c.Text)
			}
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%q → %q: %q, want %q", tt.user, tt.assistant, got, tt.want)
		}
	}
}

// TestOwnNames_Addressed: the name the assistant calls the user by is one
// of their own names, once stored.
func TestOwnNames_Addressed(t *testing.T) {
	x, s := mustConsolidator(t)
	cands := extract.Heuristic([]*agentmem.Message{
		{Seq: 1, Role: agentmem.RoleUser, Content: "My dog Rex is 3."},
		{Seq: 2, Role: agentmem.RoleAssistant, Content: "Give Rex a birthday pat from me, Sophie!"},
	})
	if _, err := x.Apply(ctx, "alice", "", "", cands); err != nil {
		t.Fatal(err)
	}
	names, err := extract.OwnNames(ctx, s, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(names, []string{"Sophie"}) {
		t.Errorf("own names %q, want [Sophie]", names)
	}
}
