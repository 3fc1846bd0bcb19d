package extract_test

import (
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/extract"
	"github.com/google/go-cmp/cmp"
)

func TestEntityAction(t *testing.T) {
	for s, want := range map[string]string{
		"I created the Task Management workflow.":  agentmem.EntityCreated,
		"We set up the CRM last week":              agentmem.EntityCreated,
		"Please update my task workflow":           agentmem.EntityModified,
		"I renamed Billing and then created Sales": agentmem.EntityCreated,
		"Tell me about the CRM":                    agentmem.EntityDiscussed,
		"The setup of the CRM is done":             agentmem.EntityDiscussed,
	} {
		if got := extract.EntityAction(s); got != want {
			t.Errorf("EntityAction(%q)=%s, want %s", s, got, want)
		}
	}
}

func TestSentences(t *testing.T) {
	got := extract.Sentences("Hi! I use Node.js daily. Is it good?\nYes; very\n\n ok")
	want := []string{"Hi!", "I use Node.js daily.", "Is it good?", "Yes;", "very", "ok"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("Sentences mismatch (-want +got):\n%s", diff)
	}
}

// TestIndexEntities: the indexer records the entities that turns mention,
// by name, alias or as new proper nouns, with the action their sentences
// say, in both directions; indexing again changes nothing.
func TestIndexEntities(t *testing.T) { backends(t, testIndexEntities) }

func testIndexEntities(t *testing.T, s agentmem.Store) {
	th := &agentmem.Thread{UserID: "alice", ID: "t"}
	if err := s.CreateThread(ctx, th); err != nil {
		t.Fatal(err)
	}
	// The client set the workflow up through the API, with its type.
	tm := []*agentmem.Entity{{Name: "Task Management", Type: "workflow"}}
	if err := s.PutEntities(ctx, "alice", tm); err != nil {
		t.Fatal(err)
	}
	msgs, err := s.AppendMessages(ctx, "alice", "t", []*agentmem.Message{
		{Role: agentmem.RoleUser, Content: "I created the Task Management workflow yesterday."},
		{Role: agentmem.RoleAssistant, Content: "Great, Task Management is ready. Should I invite Caroline Smith?"},
		{Role: agentmem.RoleTool, ToolCallID: "c1", Content: "Task Management was deleted"}, // not a turn
		{Role: agentmem.RoleUser, Name: "Ana", Content: "Yes. Please update my task workflow. Caroline Smith needs reminders!"},
	}, agentmem.AppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ix := &extract.Indexer{Store: s}
	for range 2 { // the second time changes nothing
		if err := extract.IndexEntities(ix, ctx, th, msgs); err != nil {
			t.Fatal(err)
		}
	}

	all, _, err := s.FindEntities(ctx, "alice", agentmem.EntityFilter{})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*agentmem.Entity{}
	for _, e := range all {
		byName[e.Name] = e
	}
	if len(all) != 3 || byName["Task Management"] == nil || byName["Caroline Smith"] == nil || byName["Ana"] == nil {
		t.Fatalf("entities %v, want Task Management, Caroline Smith and Ana", byName)
	}
	if byName["Ana"].Type != "person" || byName["Task Management"].ID != tm[0].ID {
		t.Fatalf("speaker %+v, workflow %+v", byName["Ana"], byName["Task Management"])
	}

	// The workflow's threads: created at 1, discussed at 2, modified at 4
	// ("my task workflow" is its alias).
	refs, _, err := s.FindEntityRefs(ctx, "alice", agentmem.EntityRefFilter{EntityID: tm[0].ID})
	if err != nil {
		t.Fatal(err)
	}
	type ref struct {
		Action string
		Seq    int64
	}
	got := map[ref]time.Time{}
	for _, r := range refs {
		got[ref{r.Action, r.Seq}] = r.At
	}
	want := map[ref]time.Time{
		{agentmem.EntityCreated, 1}:   msgs[0].CreatedAt,
		{agentmem.EntityDiscussed, 2}: msgs[1].CreatedAt,
		{agentmem.EntityModified, 4}:  msgs[3].CreatedAt,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("workflow refs mismatch (-want +got):\n%s", diff)
	}

	// The thread's entities, the other way round.
	trefs, _, err := s.FindEntityRefs(ctx, "alice", agentmem.EntityRefFilter{ThreadID: "t"})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]ref{}
	for _, r := range trefs {
		if r.Entity.Name != "Task Management" {
			seen[r.Entity.Name] = ref{r.Action, r.Seq}
		}
	}
	if diff := cmp.Diff(map[string]ref{"Caroline Smith": {agentmem.EntityDiscussed, 4}, "Ana": {agentmem.EntityDiscussed, 4}}, seen); diff != "" {
		t.Fatalf("thread refs mismatch (-want +got):\n%s", diff)
	}
	if len(trefs) != 5 {
		t.Fatalf("thread has %d refs, want 5: %v", len(trefs), trefs)
	}
	// The new entity resolves by its name, in any case.
	if e, err := agentmem.ResolveEntity(ctx, s, "alice", "caroline smith"); err != nil || e.Name != "Caroline Smith" {
		t.Fatalf("ResolveEntity(caroline smith) = %v, %v", e, err)
	}
}
