package extract_test

import (
	"strings"
	"testing"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/extract"
	"github.com/agentmem/agentmem/sqlite"
)

// TestConsolidate_FiguresUpdate: a newer figure of the same thing (a
// dose, a lab value, a count) replaces the older, which is invalidated
// with a link to it; a figure of another thing, or of a kind whose
// figures do not update, stands beside it.
func TestConsolidate_FiguresUpdate(t *testing.T) {
	c, s := mustConsolidator(t)
	apply := func(seq int64, kind, text string) extract.Decision {
		t.Helper()
		return applyOne(t, c, extract.Candidate{Text: text, Category: "health", Kind: kind, SeqFrom: seq})
	}
	apply(1, "medication", "User takes sertraline 50 mg.")
	apply(2, "medication", "User takes metformin 500 mg twice a day.")
	apply(3, "health", "User said: 3 month labs. A1C down to 7.2. From 8.4.")
	apply(4, "hobby", "User runs 3 times a week.")
	if d := apply(5, "medication", "User said: the GP put the sertraline up to 100mg."); d.Op != extract.OpInvalidate || d.Old == nil || !strings.Contains(d.Old.Text, "50 mg") {
		t.Errorf("new dose: %s (old %v), want the 50 mg memory invalidated", d.Op, d.Old)
	}
	if d := apply(6, "health", "User said: A1C 6.6! From 8.4 in February."); d.Op != extract.OpInvalidate || d.Old == nil || !strings.Contains(d.Old.Text, "7.2") {
		t.Errorf("new lab value: %s (old %v), want the 7.2 memory invalidated", d.Op, d.Old)
	}
	if d := apply(7, "hobby", "User runs 5 times a week now."); d.Op == extract.OpInvalidate {
		t.Errorf("a hobby's figure: %s, want it beside the old (hobbies are not figures that update)", d.Op)
	}
	if d := apply(8, "health", "User's ferritin is 45."); d.Op == extract.OpInvalidate {
		t.Errorf("another lab test: %s (old %v), want it beside the others", d.Op, d.Old)
	}
	got := mustStateAll(t, s, "100mg", "metformin 500", "A1C 6.6", "ferritin", "3 times", "5 times")
	for _, gone := range []string{"50 mg", "7.2"} {
		if strings.Contains(got, gone) {
			t.Errorf("valid memories %q still state %q", got, gone)
		}
	}
	all, _, err := s.FindMemories(ctx, "alice", agentmem.MemoryFilter{IncludeInvalid: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range all {
		if strings.Contains(m.Text, "50 mg") && m.SupersededBy == "" {
			t.Errorf("the old dose %q has no link to what replaced it", m.Text)
		}
	}
}

// TestConsolidate_Ends: a statement of an end invalidates the memories of
// its kind (any kind, when the end is filed as an event; of no kind, by
// the names it gives) that name what ended, superseded by it, and it is
// stored; a memory of another kind, or that names something else, stays.
func TestConsolidate_Ends(t *testing.T) {
	c, s := mustConsolidator(t)
	apply := func(seq int64, kind, category, text string, ends bool) extract.Decision {
		t.Helper()
		return applyOne(t, c, extract.Candidate{Text: text, Category: category, Kind: kind, Ends: ends, SeqFrom: seq})
	}
	apply(1, "pet", "family", "User has a dog named Bruno.", false)
	apply(2, "pet", "family", "User has a cat called Miso.", false)
	apply(3, "hobby", "activity", "User walks Bruno's old route on Sundays.", false)
	if d := apply(4, "pet", "family", "User said: we lost Bruno in May.", true); d.Op != extract.OpInvalidate || d.Old == nil || d.Old.Text != "User has a dog named Bruno." {
		t.Fatalf("the end: %s (old %v), want the dog invalidated", d.Op, d.Old)
	}
	if d := apply(5, "pet", "family", "User said: the vet visit is over.", true); d.Op != extract.OpAdd {
		t.Errorf("an end naming nothing stored: %s, want an add", d.Op)
	}
	for i, text := range []string{"User has a hamster called Pip.", "User's son Tom feeds the hamster every morning.", "User bought a bigger wheel for the hamster."} {
		apply(int64(6+i), "pet", "family", text, false)
	}
	if d := apply(9, "pet", "family", "User said: we gave the hamster cage away.", true); d.Op != extract.OpAdd {
		t.Errorf("an end of a word of three memories: %s (%s), want an add and nothing ended", d.Op, d.Reason)
	}
	// An end the classifier files as an event (its kind, not the pet's)
	// ends what it names whatever that is of.
	apply(10, "pet", "family", "User lives with their dog Rex.", false)
	if d := apply(11, "event", "event", "User lost Rex in May.", true); d.Op != extract.OpInvalidate || d.Old == nil || d.Old.Text != "User lives with their dog Rex." {
		t.Errorf("an end of kind event: %s (old %v), want the dog Rex invalidated", d.Op, d.Old)
	}
	// A memory of no kind (the classifier unsure) is ended by the names
	// the end gives.
	apply(12, "", "fact", "User's West Highland terrier is Hamish.", false)
	if d := apply(13, "pet", "family", "User's Hamish died last week.", true); d.Op != extract.OpInvalidate || d.Old == nil || d.Old.Text != "User's West Highland terrier is Hamish." {
		t.Errorf("an end of a memory of no kind: %s (old %v), want the terrier Hamish invalidated", d.Op, d.Old)
	}
	got := mustStateAll(t, s, "Miso", "old route", "lost Bruno", "Pip", "feeds the hamster", "bigger wheel", "lost Rex")
	if strings.Contains(got, "dog named Bruno") || strings.Contains(got, "dog Rex") || strings.Contains(got, "terrier") {
		t.Errorf("valid memories %q still say a dog is there", got)
	}
}

// applyOne consolidates one candidate of alice's thread t1 (confidence
// 0.8, from one turn) and returns the decision.
func applyOne(t *testing.T, c *extract.Consolidator, cd extract.Candidate) extract.Decision {
	t.Helper()
	cd.Confidence, cd.SeqTo = 0.8, cd.SeqFrom
	ds, err := c.Apply(ctx, "alice", "", "t1", []extract.Candidate{cd})
	if err != nil {
		t.Fatal(err)
	}
	return ds[0]
}

// mustStateAll checks that alice's valid memories state each of wants,
// and returns their texts joined by " | ".
func mustStateAll(t *testing.T, s *sqlite.Store, wants ...string) string {
	t.Helper()
	var texts []string
	for _, m := range valid(t, s) {
		texts = append(texts, m.Text)
	}
	got := strings.Join(texts, " | ")
	for _, want := range wants {
		if !strings.Contains(got, want) {
			t.Errorf("valid memories %q lack %q", got, want)
		}
	}
	return got
}
