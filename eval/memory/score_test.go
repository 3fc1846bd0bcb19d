package memory_test

import (
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/eval/memory"
	"github.com/google/go-cmp/cmp"
)

func TestKeywords_Match(t *testing.T) {
	for _, tt := range []struct {
		k    memory.Keywords
		text string
		want bool
	}{
		{memory.Keywords{{"leeds"}}, "User lives in Leeds.", true},
		{memory.Keywords{{"LEEDS"}}, "user moved to leeds", true},
		{memory.Keywords{{"lisinopril"}, {"20 mg", "20mg"}}, "User takes Lisinopril 20mg daily.", true},
		{memory.Keywords{{"lisinopril"}, {"20 mg", "20mg"}}, "User takes lisinopril 10 mg.", false},
		{memory.Keywords{{"lisinopril"}, {"20 mg", "20mg"}}, "User takes 20 mg of something.", false},
		{memory.Keywords{{"vegetarian", "meat"}}, "User does not eat meat.", true},
		{memory.Keywords{}, "anything", false},
		{nil, "anything", false},
	} {
		if got := tt.k.Match(tt.text); got != tt.want {
			t.Errorf("%v.Match(%q) = %v, want %v", tt.k, tt.text, got, tt.want)
		}
	}
}

// conversation is a hand-made conversation's labels: a move from Hull to
// Leeds, a dog, a hypothetical trip, one question.
func conversation() *memory.Conversation {
	return &memory.Conversation{
		ID: "x",
		Facts: []*memory.Fact{
			{ID: "f1", Text: "User lives in Leeds.", Keywords: memory.Keywords{{"leeds"}}},
			{ID: "f2", Text: "User has a dog named Bruno.", Keywords: memory.Keywords{{"bruno"}}},
		},
		Past:     []*memory.Fact{{ID: "p1", Text: "User lives in Hull.", Keywords: memory.Keywords{{"hull"}}, ReplacedBy: "f1"}},
		Changes:  []*memory.Change{{Old: "p1", New: "f1"}},
		NotFacts: []*memory.NotFact{{Text: "User lives in Spain.", Why: "hypothetical", Keywords: memory.Keywords{{"spain"}}}},
		Questions: []*memory.Question{{Question: "where does the user live now?", Fact: "f1",
			AnswerKeywords: memory.Keywords{{"leeds"}}, StaleKeywords: memory.Keywords{{"hull"}}}},
	}
}

func valid(text string) *agentmem.Memory { return &agentmem.Memory{Text: text} }

func invalid(text string) *agentmem.Memory {
	at := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	return &agentmem.Memory{Text: text, InvalidAt: &at}
}

func TestScore_Changes(t *testing.T) {
	for _, tt := range []struct {
		name     string
		memories []*agentmem.Memory
		handled  int
		miss     []memory.ChangeMiss
	}{
		{"Handled", []*agentmem.Memory{invalid("User lives in Hull."), valid("User lives in Leeds.")}, 1, nil},
		{"OldStillValid", []*agentmem.Memory{valid("User lives in Hull."), valid("User lives in Leeds.")}, 0,
			[]memory.ChangeMiss{{Old: memory.Labelled{ID: "p1", Text: "User lives in Hull."}, New: memory.Labelled{ID: "f1", Text: "User lives in Leeds."},
				NewRecalled: true, Blocking: []string{"User lives in Hull."}}}},
		{"OldToldEnded", []*agentmem.Memory{valid("User sold the house in Hull."), valid("User lives in Leeds.")}, 1, nil},
		{"OldToldWithNew", []*agentmem.Memory{valid("User said: we went from Hull to Leeds in May."), valid("User lives in Leeds.")}, 1, nil},
		{"NewNotLearned", []*agentmem.Memory{invalid("User lives in Hull.")}, 0,
			[]memory.ChangeMiss{{Old: memory.Labelled{ID: "p1", Text: "User lives in Hull."}, New: memory.Labelled{ID: "f1", Text: "User lives in Leeds."}}}},
		{"NewOnlyInvalid", []*agentmem.Memory{invalid("User lives in Leeds.")}, 0,
			[]memory.ChangeMiss{{Old: memory.Labelled{ID: "p1", Text: "User lives in Hull."}, New: memory.Labelled{ID: "f1", Text: "User lives in Leeds."}}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			n, miss := memory.Score(conversation(), &memory.Observation{Memories: tt.memories})
			if n.Changes != 1 || n.Handled != tt.handled {
				t.Errorf("changes %d handled %d, want 1 and %d", n.Changes, n.Handled, tt.handled)
			}
			if diff := cmp.Diff(tt.miss, miss.Changes); diff != "" {
				t.Errorf("change misses mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestScore_Precision(t *testing.T) {
	memories := []*agentmem.Memory{
		valid("User lives in Leeds."),        // a fact
		valid("User used to live in Hull."),  // a past fact: precise all the same
		valid("User is going to Spain."),     // a not-fact
		valid("User gets back."),             // nothing
		invalid("User has a cat named Tom."), // invalidated: not counted
	}
	n, miss := memory.Score(conversation(), &memory.Observation{Memories: memories})
	want := memory.Counts{Facts: 2, Recalled: 1, Memories: 4, Invalidated: 1, Precise: 2, False: 1, Changes: 1, Handled: 1, Past: 1, Questions: 1}
	if diff := cmp.Diff(want, n); diff != "" {
		t.Errorf("counts mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"User is going to Spain.", "User gets back."}, miss.Unmatched); diff != "" {
		t.Errorf("unmatched mismatch (-want +got):\n%s", diff)
	}
	wantFalse := []memory.FalseFact{{Memory: "User is going to Spain.", NotFact: "User lives in Spain.", Why: "hypothetical"}}
	if diff := cmp.Diff(wantFalse, miss.False); diff != "" {
		t.Errorf("false facts mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]memory.Labelled{{ID: "f2", Text: "User has a dog named Bruno."}}, miss.Facts); diff != "" {
		t.Errorf("facts missed mismatch (-want +got):\n%s", diff)
	}
}

func TestScoreSearch(t *testing.T) {
	q := conversation().Questions[0]
	at := time.Now()
	res := func(texts ...string) []agentmem.SearchResult {
		var out []agentmem.SearchResult
		for _, t := range texts {
			out = append(out, agentmem.SearchResult{Kind: "memory", Text: t})
		}
		return out
	}
	superseded := res("User lives in Hull.", "User lives in Leeds.")
	superseded[0].InvalidAt = &at
	for _, tt := range []struct {
		name      string
		results   []agentmem.SearchResult
		wantRank  int
		wantStale bool
	}{
		{"First", res("User lives in Leeds.", "User lives in Hull."), 1, false},
		{"StaleAbove", res("User has a dog.", "User lives in Hull.", "User lives in Leeds."), 3, true},
		{"SupersededAbove", superseded, 2, false},
		{"BeyondTop5", res("a", "b", "c", "d", "e", "User lives in Leeds."), 0, false},
		{"StaleWithoutAnswer", res("a", "User lives in Hull."), 0, true},
		{"EndAbove", res("User left Hull in May.", "User lives in Leeds."), 2, false},
		{"None", nil, 0, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rank, stale := memory.ScoreSearch(q, tt.results)
			if rank != tt.wantRank || stale != tt.wantStale {
				t.Errorf("rank %d stale %v, want %d %v", rank, stale, tt.wantRank, tt.wantStale)
			}
		})
	}
}

func TestLines(t *testing.T) {
	text := "<session_initialization>\n### Key Insights\nResidence:\n- User lives in Leeds.\n- User lives in Hull. (outdated; superseded by: User lives in Leeds.)\n" +
		"### History\n- User lives in Hull.\n\n### Relevant Memories\n- User no longer lives in Hull.\n- User has a dog.\n" +
		"### Active Conversation\nuser: where does the user live now?"
	got := memory.Lines(text, "where does the user live now?")
	want := []string{"<session_initialization>", "- User lives in Leeds.", "- User has a dog."}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("lines mismatch (-want +got):\n%s", diff)
	}
}

// TestScore_Context: a context is stale when a line not marked as the
// past states the old value; the profile likewise.
func TestScore_Context(t *testing.T) {
	obs := &memory.Observation{
		Answers: []memory.Answer{{Context: "### Recent Session Summaries\n- I live in Hull, near the docks.\n### Active Conversation\nuser: where does the user live now?"}},
		Profile: "Residence:\n- User lives in Leeds.\n- User lives in Hull.",
	}
	n, miss := memory.Score(conversation(), obs)
	if n.ContextStale != 1 || n.ContextAnswer != 0 || n.ProfileFacts != 1 || n.ProfilePast != 1 {
		t.Errorf("context stale %d answer %d, profile facts %d past %d; want 1 0 1 1", n.ContextStale, n.ContextAnswer, n.ProfileFacts, n.ProfilePast)
	}
	want := []memory.ContextMiss{{Question: "where does the user live now?", Lines: []string{"- I live in Hull, near the docks."}}}
	if diff := cmp.Diff(want, miss.Contexts); diff != "" {
		t.Errorf("context misses mismatch (-want +got):\n%s", diff)
	}
}
