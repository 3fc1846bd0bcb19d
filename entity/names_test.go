package entity_test

import (
	"slices"
	"testing"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/entity"
	"github.com/google/go-cmp/cmp"
)

func TestNames(t *testing.T) {
	turns := []*agentmem.Message{
		{Role: agentmem.RoleUser, Name: "Caroline", Content: "I met Maria Lopez in Paris. Paris was lovely, and Maria showed me the Louvre!"},
		{Role: agentmem.RoleAssistant, Content: "Then you should see Versailles too. I'm sure you'd love it."},
	}
	// Most mentioned first; the assistant's passing mention of
	// Versailles is not discussed.
	want := []string{"Paris", "Caroline", "Maria Lopez", "Maria", "Louvre"}
	if diff := cmp.Diff(want, entity.Names(turns, 10)); diff != "" {
		t.Errorf("Names mismatch (-want +got):\n%s", diff)
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
