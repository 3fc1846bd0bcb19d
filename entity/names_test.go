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

// TestNames_NotStructure: the words that markdown's structure capitalises
// (list items, headings, bold and code), the imperatives that open a list
// item, a tool's JSON and thanks are not names; the names in the same
// turns are.
func TestNames_NotStructure(t *testing.T) {
	turns := []*agentmem.Message{
		{Role: agentmem.RoleUser, Content: "Thanks Priya! We fly to Lisbon on Friday."},
		{Role: agentmem.RoleAssistant, Content: "## Packing\nHere's a plan for Lisbon:\n- Check the weather\n- Bring water\n* **Prices** vary, see `Config` notes.\n1. Book early\n2) Pack light"},
		{Role: agentmem.RoleTool, Content: `{"Restaurants": [{"Name": "Tasca", "City": "Lisbon"}]}`},
		{Role: agentmem.RoleAssistant, Content: `{"Summary": "Trip", "Items": ["Sunscreen"]}`},
	}
	got := entity.Names(turns, 20)
	for _, want := range []string{"Priya", "Lisbon"} {
		if !slices.Contains(got, want) {
			t.Errorf("Names lack %q: %q", want, got)
		}
	}
	for _, not := range []string{"Thanks", "Thanks Priya", "Packing", "Check", "Bring", "Prices", "Config", "Book", "Pack", "Restaurants", "Name", "Tasca", "City", "Summary", "Items", "Sunscreen"} {
		if slices.Contains(got, not) {
			t.Errorf("Names hold %q: %q", not, got)
		}
	}
}
