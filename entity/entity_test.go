package entity_test

import (
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/entity"
	"github.com/agentmem/agentmem/internal/testutil"
	"github.com/agentmem/agentmem/llm/llmtest"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestAction(t *testing.T) {
	for s, want := range map[string]string{
		"I created the Task Management workflow.":  agentmem.EntityCreated,
		"We set up the CRM last week":              agentmem.EntityCreated,
		"Please update my task workflow":           agentmem.EntityModified,
		"I renamed Billing and then created Sales": agentmem.EntityCreated,
		"Tell me about the CRM":                    agentmem.EntityDiscussed,
		"The setup of the CRM is done":             agentmem.EntityDiscussed,
	} {
		if got := entity.Action(s); got != want {
			t.Errorf("Action(%q)=%s, want %s", s, got, want)
		}
	}
}

func TestSentences(t *testing.T) {
	got := entity.Sentences("Hi! I use Node.js daily. Is it good?\nYes; very\n\n ok")
	want := []string{"Hi!", "I use Node.js daily.", "Is it good?", "Yes;", "very", "ok"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("Sentences mismatch (-want +got):\n%s", diff)
	}
}

// TestIndexer_Index: the indexer records the entities that turns mention,
// by name, alias or as new proper nouns, with the action their sentences
// say, in both directions; indexing again changes nothing.
func TestIndexer_Index(t *testing.T) { testutil.Backends(t, testIndex) }

func testIndex(t *testing.T, s agentmem.Store) {
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
	x := &entity.Indexer{Store: s}
	for range 2 { // the second time changes nothing
		if err := x.Index(ctx, th, msgs); err != nil {
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

func TestPrompt_Golden(t *testing.T) {
	got, err := entity.Prompt(turns)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "entities_prompt", []byte(got))
}

// TestIndexer_Model: with a model, the model's entities are
// recorded with their types (and so their generated aliases), actions and
// turns, validated; a known entity the model names by its alias is that
// entity; one the model leaves out is still found by its alias, its
// action read from its sentence. When the model fails, the heuristics
// take over and a warning is logged.
func TestIndexer_Model(t *testing.T) {
	s := testutil.MustOpenSQLite(t)
	th := &agentmem.Thread{UserID: "alice", ID: "t"}
	if err := s.CreateThread(ctx, th); err != nil {
		t.Fatal(err)
	}
	known := []*agentmem.Entity{{Name: "Task Management", Type: "workflow"}, {Name: "Billing", Type: "project"}}
	if err := s.PutEntities(ctx, "alice", known); err != nil {
		t.Fatal(err)
	}
	msgs, err := s.AppendMessages(ctx, "alice", "t", []*agentmem.Message{
		{Role: agentmem.RoleUser, Content: "My sister Caroline helps with the task workflow now, caro is great."},
		{Role: agentmem.RoleAssistant, Content: "I set up a reminder bot for her. I renamed the billing project too."},
	}, agentmem.AppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	srv := llmtest.NewServer(t)
	srv.Push(llmtest.Text(`{"entities": [
		{"name": "Caroline", "type": "Person", "aliases": ["caro", "?"], "action": "discussed", "seq": 1},
		{"name": "the task workflow", "type": "workflow", "action": "modified", "seq": 1},
		{"name": "Reminder Bot", "type": "gadget", "action": "created", "seq": 99},
		{"name": "!!", "type": "tool", "action": "created", "seq": 2},
		{"name": "Nobody", "type": "person", "action": "exploded", "seq": 2}
	]}`))
	log, lb := testutil.NewLog()
	x := &entity.Indexer{Store: s, Chat: testutil.NewChat(t, srv.BaseURL()), Log: log}
	if err := x.Index(ctx, th, msgs); err != nil {
		t.Fatal(err)
	}
	type ref struct {
		Name, Type, Action string
		Seq                int64
	}
	got := map[ref]bool{}
	trefs, _, err := s.FindEntityRefs(ctx, "alice", agentmem.EntityRefFilter{ThreadID: "t"})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range trefs {
		got[ref{r.Entity.Name, r.Entity.Type, r.Action, r.Seq}] = true
	}
	want := map[ref]bool{
		{"Caroline", "person", agentmem.EntityDiscussed, 1}:         true,
		{"Task Management", "workflow", agentmem.EntityModified, 1}: true, // the model's, by its alias
		{"Reminder Bot", "other", agentmem.EntityCreated, 2}:        true, // an unknown type and seq
		{"Nobody", "person", agentmem.EntityDiscussed, 2}:           true, // an unknown action
		{"Billing", "project", agentmem.EntityModified, 2}:          true, // left out by the model: "renamed"
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("refs mismatch (-want +got):\n%s", diff)
	}
	if e, err := agentmem.ResolveEntity(ctx, s, "alice", "caro"); err != nil || e.Name != "Caroline" {
		t.Fatalf("ResolveEntity(caro) = %v, %v", e, err)
	}

	// The model fails: the proper nouns are found instead.
	more, err := s.AppendMessages(ctx, "alice", "t", []*agentmem.Message{{Role: agentmem.RoleUser, Content: "Then we flew to Lisbon with Caroline."}}, agentmem.AppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	srv.Push(llmtest.Fail(500))
	if err := x.Index(ctx, th, more); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(lb.String(), "entity model failed") {
		t.Fatalf("no warning logged: %s", lb.String())
	}
	for _, q := range []string{"Lisbon", "Caroline"} {
		e, err := agentmem.ResolveEntity(ctx, s, "alice", q)
		if err != nil {
			t.Fatalf("ResolveEntity(%s): %v", q, err)
		}
		refs, _, err := s.FindEntityRefs(ctx, "alice", agentmem.EntityRefFilter{EntityID: e.ID, Action: entityPtr(agentmem.EntityDiscussed)})
		if err != nil || len(refs) != 1 || refs[0].Seq != more[0].Seq {
			t.Fatalf("%s's refs: %v, %v", q, refs, err)
		}
	}
	// A malformed answer is a failure too.
	srv.Push(llmtest.Text(`{"things": []}`))
	if err := x.Index(ctx, th, more); err != nil {
		t.Fatal(err)
	}
}

func entityPtr[T any](v T) *T { return &v }

// TestIndexer_ModelSpared: turns that name nothing are not sent to
// the model; the user's entities they mention by an alias are found.
func TestIndexer_ModelSpared(t *testing.T) {
	s := testutil.MustOpenSQLite(t)
	th := &agentmem.Thread{UserID: "alice", ID: "t"}
	if err := s.CreateThread(ctx, th); err != nil {
		t.Fatal(err)
	}
	tm := []*agentmem.Entity{{Name: "Task Management", Type: "workflow"}}
	if err := s.PutEntities(ctx, "alice", tm); err != nil {
		t.Fatal(err)
	}
	msgs, err := s.AppendMessages(ctx, "alice", "t", []*agentmem.Message{
		{Role: agentmem.RoleUser, Name: "Alice", Content: "please update my task workflow."},
	}, agentmem.AppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	srv := llmtest.NewServer(t)
	x := &entity.Indexer{Store: s, Chat: testutil.NewChat(t, srv.BaseURL())}
	if err := x.Index(ctx, th, msgs); err != nil {
		t.Fatal(err)
	}
	if n := len(srv.ChatRequests()); n != 0 {
		t.Fatalf("%d model calls, want none", n)
	}
	refs, _, err := s.FindEntityRefs(ctx, "alice", agentmem.EntityRefFilter{EntityID: tm[0].ID})
	if err != nil || len(refs) != 1 || refs[0].Action != agentmem.EntityModified {
		t.Fatalf("refs %v, %v", refs, err)
	}
}

// TestContext: the entities an input names, for the context
// builder, one line each with its newest reference.
func TestContext(t *testing.T) {
	s := testutil.MustOpenSQLite(t)
	if err := s.CreateThread(ctx, &agentmem.Thread{UserID: "alice", ID: "t1"}); err != nil {
		t.Fatal(err)
	}
	es := []*agentmem.Entity{
		{Name: "Task Management", Type: "workflow", Aliases: []string{"TM", "chores"}},
		{Name: "Lisbon", Type: "place"},
		{Name: "Caroline Smith", Type: "person"},
	}
	if err := s.PutEntities(ctx, "alice", es); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	if err := s.PutEntityRefs(ctx, "alice", []*agentmem.EntityRef{
		{EntityID: es[0].ID, ThreadID: "t1", Action: agentmem.EntityCreated, At: at},
		{EntityID: es[0].ID, ThreadID: "t1", Action: agentmem.EntityModified, At: at.Add(24 * time.Hour)},
	}); err != nil {
		t.Fatal(err)
	}
	entities := entity.Context(s, 0)
	got, err := entities(ctx, "alice", "Please update my task workflow before Caroline Smith comes over.")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"Caroline Smith (person)", // named by its name
		`Task Management (workflow; also "TM", "chores"): modified Mar 02, 2026 in thread t1`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("Context mismatch (-want +got):\n%s", diff)
	}
	if got, err := entities(ctx, "alice", "Nothing to see"); err != nil || len(got) != 0 {
		t.Fatalf("Context(nothing) = %q, %v", got, err)
	}
}

// TestIndexer_NoModel: without a model, the entities of ordinary turns
// are the names they discuss, with the types they tell; an entity an
// older version made of a capitalised word ("Check") gets no references
// from the turns that say the word.
func TestIndexer_NoModel(t *testing.T) { testutil.Backends(t, testIndexNoModel) }

func testIndexNoModel(t *testing.T, s agentmem.Store) {
	th := &agentmem.Thread{UserID: "alice", ID: "t"}
	if err := s.CreateThread(ctx, th); err != nil {
		t.Fatal(err)
	}
	junk := []*agentmem.Entity{{Name: "Check"}, {Name: "Thanks Priya"}}
	if err := s.PutEntities(ctx, "alice", junk); err != nil {
		t.Fatal(err)
	}
	msgs, err := s.AppendMessages(ctx, "alice", "t", []*agentmem.Message{
		{Role: agentmem.RoleUser, Content: "We're going to Lisbon in May with my sister Priya. Any tips?"},
		{Role: agentmem.RoleAssistant, Content: tripAnswer},
		{Role: agentmem.RoleUser, Content: "Thanks Priya! we drove to Whitby on Monday with Tom"},
		{Role: agentmem.RoleUser, Content: "my doctor Dr. Okafor upped my metformin"},
	}, agentmem.AppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := (&entity.Indexer{Store: s}).Index(ctx, th, msgs); err != nil {
		t.Fatal(err)
	}
	all, _, err := s.FindEntities(ctx, "alice", agentmem.EntityFilter{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, e := range all {
		got[e.Name] = e.Type
	}
	want := map[string]string{"Lisbon": "place", "Priya": "person", "Whitby": "place", "Tom": "person", "Dr. Okafor": "person",
		"Check": "", "Thanks Priya": ""}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("entities mismatch (-want +got):\n%s", diff)
	}
	for _, j := range junk {
		refs, _, err := s.FindEntityRefs(ctx, "alice", agentmem.EntityRefFilter{EntityID: j.ID})
		if err != nil || len(refs) != 0 {
			t.Errorf("%s's refs: %v, %v", j.Name, refs, err)
		}
	}
	if e, err := agentmem.ResolveEntity(ctx, s, "alice", "okafor"); err != nil || e.Name != "Dr. Okafor" {
		t.Fatalf("ResolveEntity(okafor) = %v, %v", e, err)
	}
}

// TestContext_Plausible: the context names no entity that is a word
// capitalised by a sentence or a greeting ("Check", "Monday", "Thanks
// Priya"), as an older version found without a model; a typed one of an
// ordinary word stays.
func TestContext_Plausible(t *testing.T) {
	s := testutil.MustOpenSQLite(t)
	es := []*agentmem.Entity{
		{Name: "Check"}, {Name: "Monday"}, {Name: "Thanks Priya"}, {Name: "I'm"}, {Name: `{"City"`}, {Name: "Next Steps"},
		{Name: "Lisbon", Type: "place"}, {Name: "Priya"}, {Name: "Weather", Type: "tool"},
	}
	if err := s.PutEntities(ctx, "alice", es); err != nil {
		t.Fatal(err)
	}
	got, err := entity.Context(s, 3)(ctx, "alice", `Check the weather on Monday in Lisbon, thanks Priya! I'm {"City" next steps`)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"Lisbon (place)", "Priya", "Weather (tool)"}
	if diff := cmp.Diff(want, got, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
		t.Fatalf("Context mismatch (-want +got):\n%s", diff)
	}
}
