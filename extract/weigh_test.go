package extract_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/extract"
	"github.com/agentmem/agentmem/extract/learned"
	"github.com/agentmem/agentmem/llm/minilm"
)

func mustLearned(t *testing.T) extract.HeuristicExtractor {
	t.Helper()
	m, err := learned.Default()
	if err != nil {
		t.Fatal(err)
	}
	return extract.HeuristicExtractor{Learned: &extract.Learned{Model: m, Embed: minilm.NewStatic()}}
}

func extractTexts(t *testing.T, x extract.Extractor, turns ...string) []extract.Candidate {
	t.Helper()
	var msgs []*agentmem.Message
	for i, s := range turns {
		msgs = append(msgs, &agentmem.Message{Seq: int64(i + 1), Role: agentmem.RoleUser, Content: s})
	}
	cands, err := x.Extract(ctx, &agentmem.Thread{}, msgs)
	if err != nil {
		t.Fatal(err)
	}
	return cands
}

// TestLearned_SaidInTheirWords: a terse message the rules cannot parse
// but that states facts is kept in the user's words, its question left
// out, filed under its slot; small talk and questions are not.
func TestLearned_SaidInTheirWords(t *testing.T) {
	x := mustLearned(t)
	cands := extractTexts(t, x, "finally moved!! new flat in leeds, 2 bed, way quieter. any tips for unpacking?")
	if len(cands) != 1 || !strings.Contains(cands[0].Text, "leeds") || strings.Contains(cands[0].Text, "unpacking") {
		t.Fatalf("got %+v, want one memory in the user's words with leeds and without the question", cands)
	}
	if cands[0].Slot != "residence" || cands[0].Category != "place" {
		t.Errorf("slot %q, category %q: want residence, place", cands[0].Slot, cands[0].Category)
	}
	for _, s := range []string{"haha ok cheers", "i'll get back to you on that", "what's a good recipe for banana bread?", "can you make that shorter"} {
		if cands := extractTexts(t, x, s); len(cands) != 0 {
			t.Errorf("%q: got %+v, want nothing", s, cands)
		}
	}
}

// TestLearned_Weighs: the rules' proposals keep their slots; a learned
// kind is given to what the classifier is sure of; with the plain rules
// (no Learned) the extractor is unchanged.
func TestLearned_Weighs(t *testing.T) {
	x := mustLearned(t)
	turn := "The doctor started me on lisinopril, 10mg in the morning."
	cands := extractTexts(t, x, turn)
	if len(cands) == 0 {
		t.Fatalf("%q: nothing kept", turn)
	}
	var kinds []string
	for _, c := range cands {
		kinds = append(kinds, c.Kind)
		if !strings.Contains(strings.ToLower(c.Text), "lisinopril") {
			t.Errorf("memory %q lost the drug's name", c.Text)
		}
	}
	if kinds[0] != "medication" {
		t.Errorf("kinds %v, want medication first", kinds)
	}
	plain := extractTexts(t, extract.HeuristicExtractor{}, "I live in Lisbon and I'm a nurse.")
	learnedToo := extractTexts(t, x, "I live in Lisbon and I'm a nurse.")
	if len(plain) != len(learnedToo) {
		t.Fatalf("rules %+v, weighed %+v: want the same clear statements", plain, learnedToo)
	}
	for i := range plain {
		if plain[i].Text != learnedToo[i].Text || plain[i].Slot != learnedToo[i].Slot {
			t.Errorf("rules %+v, weighed %+v", plain[i], learnedToo[i])
		}
	}
}

// TestSection: a memory the rules file under their catch-all ("fact")
// is shown under its learned kind's category, so that the profile groups
// it with its like; a category the rules chose stays.
func TestSection(t *testing.T) {
	x := mustLearned(t)
	for turn, want := range map[string]string{
		"I live on my own in Dunedin.":                "place",
		"I take apixaban 5 mg twice a day for my AF.": "health",
	} {
		cands := extractTexts(t, x, turn)
		if len(cands) == 0 {
			t.Fatalf("%q: nothing kept", turn)
		}
		m := &agentmem.Memory{Text: cands[0].Text, Category: cands[0].Category, Metadata: json.RawMessage(`{"kind":"` + cands[0].Kind + `"}`)}
		if got := extract.Section(m); got != want {
			t.Errorf("%q: category %q, kind %q: section %q, want %q", turn, m.Category, cands[0].Kind, got, want)
		}
	}
	for _, tc := range []struct{ category, meta, want string }{
		{"fact", `{"kind":"residence"}`, "place"},
		{"job", `{"kind":"residence"}`, "job"},
		{"fact", `{}`, "fact"},
		{"other", `{"kind":"none"}`, "other"},
		{"fact", `not json`, "fact"},
	} {
		if got := extract.Section(&agentmem.Memory{Category: tc.category, Metadata: json.RawMessage(tc.meta)}); got != tc.want {
			t.Errorf("Section(%s, %s) = %q, want %q", tc.category, tc.meta, got, tc.want)
		}
	}
}

// TestLearned_SettledIn: a statement of where the user now lives that the
// rules do not read as their residence is filed under it when the
// classifier is sure, so that it replaces the old place; where another
// person lives never is.
func TestLearned_SettledIn(t *testing.T) {
	x := mustLearned(t)
	for turn, want := range map[string]string{
		"we've finally settled into the new place in Leeds": "residence",
		"My sister lives in Leeds.":                         "",
		"my parents live in York":                           "",
	} {
		cands := extractTexts(t, x, turn)
		if len(cands) == 0 {
			t.Fatalf("%q: nothing kept", turn)
		}
		if cands[0].Slot != want {
			t.Errorf("%q: %q of slot %q, want %q", turn, cands[0].Text, cands[0].Slot, want)
		}
	}
}
