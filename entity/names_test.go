package entity_test

import (
	"slices"
	"testing"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/entity"
)

func TestNames(t *testing.T) {
	turns := []*agentmem.Message{
		{Role: agentmem.RoleUser, Name: "Caroline", Content: "I met Maria Lopez in Paris. Paris was lovely, and Maria showed me the Louvre!"},
		{Role: agentmem.RoleAssistant, Content: "Then you should see Versailles too. I'm sure you'd love it."},
	}
	got := entity.Names(turns, 10)
	for _, want := range []string{"Caroline", "Maria Lopez", "Paris", "Louvre", "Versailles", "Maria"} {
		if !slices.Contains(got, want) {
			t.Errorf("Names lack %q: %q", want, got)
		}
	}
	for _, not := range []string{"Then", "I", "I'm", "Paris was"} {
		if slices.Contains(got, not) {
			t.Errorf("Names hold %q: %q", not, got)
		}
	}
	if got[0] != "Paris" {
		t.Errorf("most mentioned first: %q", got)
	}
	if n := len(entity.Names(turns, 2)); n != 2 {
		t.Errorf("Names(…, 2) returned %d", n)
	}
}
