package agentmem_test

import (
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/google/go-cmp/cmp"
)

func TestEntityKey(t *testing.T) {
	for in, want := range map[string]string{
		"Task Management":       "task management",
		"  task   management  ": "task management",
		"Task-Management!":      "task management",
		"Node.js":               "node js",
		"Zoë's Café":            "zoë s café",
		"--":                    "",
		"":                      "",
	} {
		if got := agentmem.EntityKey(in); got != want {
			t.Errorf("EntityKey(%q)=%q, want %q", in, got, want)
		}
	}
}

func TestEntityAliases(t *testing.T) {
	for _, tt := range []struct {
		name, typ string
		want      []string
	}{
		// Seed 004: "Task Management" → "task management", "my task",
		// "task management workflow"…
		{"Task Management", "workflow", []string{"task management", "task management workflow", "task workflow", "my task"}},
		{"Task Management", "", []string{"task management"}},
		{"Onboarding Workflow", "workflow", []string{"onboarding workflow", "onboarding"}},
		{"Onboarding Workflow", "", []string{"onboarding workflow", "onboarding"}},
		{"Acme Corp", "organization", []string{"acme corp", "acme", "acme organization"}},
		{"Billing", "project", []string{"billing", "billing project"}},
		{"Caroline Smith", "person", []string{"caroline smith", "caroline"}},
		{"Caroline", "Person", []string{"caroline"}},
		{"Dr. Okafor", "person", []string{"dr. okafor", "okafor"}},
		{"Dr Ana Okafor", "person", []string{"dr ana okafor", "ana okafor", "ana"}},
		{"Dr. Okafor", "", []string{"dr. okafor"}},
		{"Boston", "city", []string{"boston"}},
		{"Sales Pipeline", "pipeline", []string{"sales pipeline", "sales"}},
		{"  ", "workflow", nil},
	} {
		if diff := cmp.Diff(tt.want, agentmem.EntityAliases(tt.name, tt.typ)); diff != "" {
			t.Errorf("EntityAliases(%q, %q) mismatch (-want +got):\n%s", tt.name, tt.typ, diff)
		}
	}
}

func TestQueryKeys(t *testing.T) {
	for in, want := range map[string][]string{
		"my Task Workflow": {"my task workflow", "task workflow"},
		"The CRM":          {"the crm", "crm"},
		"Task Management":  {"task management"},
		"my":               {"my"},
		"?!":               nil,
	} {
		if diff := cmp.Diff(want, agentmem.QueryKeys(in)); diff != "" {
			t.Errorf("QueryKeys(%q) mismatch (-want +got):\n%s", in, diff)
		}
	}
}

func TestMentionKeys(t *testing.T) {
	got := agentmem.MentionKeys("Update my task workflow, please.")
	for _, k := range []string{"update", "my task", "task workflow", "my task workflow", "update my task workflow please"} {
		if !hasKey(got, k) {
			t.Errorf("MentionKeys lacks %q: %v", k, got)
		}
	}
	if want := 5 + 4 + 3 + 2 + 1; len(got) != want {
		t.Errorf("len(MentionKeys)=%d, want %d: %v", len(got), want, got)
	}
	// Repeated runs come once; a long text keeps its last words.
	long := strings.Repeat("alpha beta ", agentmem.MaxEntityKeys) + "omega"
	got = agentmem.MentionKeys(long)
	if len(got) > agentmem.MaxEntityKeys || !hasKey(got, "omega") || !hasKey(got, "beta omega") {
		t.Errorf("MentionKeys of a long text: %d keys, omega there: %v", len(got), hasKey(got, "omega"))
	}
	if got := agentmem.MentionKeys(strings.Repeat("a b c d e f g h ", 3)); len(got) != 8*agentmem.MaxEntityWords {
		t.Errorf("MentionKeys of a repeated text: %d keys, want %d (one per distinct run)", len(got), 8*agentmem.MaxEntityWords)
	}
}

func hasKey(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestEntity_Validate(t *testing.T) {
	e := &agentmem.Entity{UserID: "alice", Name: "  Task   Management ", Type: " Workflow ", Aliases: []string{"TM", "tm", " Tasks "}}
	if err := e.Validate(); err != nil {
		t.Fatal(err)
	}
	want := &agentmem.Entity{UserID: "alice", Name: "Task Management", Type: "workflow",
		Aliases: []string{"TM", "Tasks", "task management", "task management workflow", "task workflow", "my task"}}
	if diff := cmp.Diff(want, e); diff != "" {
		t.Fatalf("Validate mismatch (-want +got):\n%s", diff)
	}
	name, aliases := e.Keys()
	if name != "task management" || !cmp.Equal(aliases, []string{"tm", "tasks", "task management workflow", "task workflow", "my task"}) {
		t.Fatalf("Keys()=%q, %q", name, aliases)
	}

	for field, bad := range map[string]agentmem.Entity{
		"name":     {UserID: "alice", Name: " -- "},
		"name ":    {UserID: "alice", Name: ""},
		"name  ":   {UserID: "alice", Name: strings.Repeat("x", agentmem.MaxEntityNameBytes+1)},
		"type":     {UserID: "alice", Name: "X", Type: strings.Repeat("t", agentmem.MaxEntityType+1)},
		"aliases":  {UserID: "alice", Name: "X", Aliases: []string{"ok", "!"}},
		"aliases ": {UserID: "alice", Name: "X", Aliases: make([]string, agentmem.MaxEntityAliases+1)},
		"id":       {UserID: "alice", ID: "a/b", Name: "X"},
		"user_id":  {Name: "X"},
		"name\x00": {UserID: "alice", Name: "a\x00b"},
	} {
		err := bad.Validate()
		if agentmem.ErrorCode(err) != agentmem.EINVALID {
			t.Errorf("Validate(%s): %v, want EINVALID", field, err)
			continue
		}
		if f := strings.TrimRight(strings.Split(field, "\x00")[0], " "); !strings.Contains(agentmem.ErrorMessage(err), f) {
			t.Errorf("Validate(%s): message %q does not name the field", field, agentmem.ErrorMessage(err))
		}
	}
}

func TestEntity_MergeAndUpdate(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	e := &agentmem.Entity{UserID: "alice", Name: "Task Management"}
	if err := e.Prepare(now); err != nil {
		t.Fatal(err)
	}
	if e.ID == "" || !e.CreatedAt.Equal(now) || !cmp.Equal(e.Aliases, []string{"task management"}) {
		t.Fatalf("Prepare: %+v", e)
	}

	// The same entity put again changes nothing.
	again := &agentmem.Entity{UserID: "alice", Name: "task management"}
	if err := again.Validate(); err != nil {
		t.Fatal(err)
	}
	later := now.Add(time.Hour)
	if e.Merge(again, later) || !e.UpdatedAt.Equal(now) {
		t.Fatalf("Merge of the same entity changed it: %+v", e)
	}
	// A type and an alias are news; the type brings its aliases.
	in := &agentmem.Entity{UserID: "alice", Name: "Task management", Type: "workflow", Aliases: []string{"TM"}}
	if err := in.Validate(); err != nil {
		t.Fatal(err)
	}
	if !e.Merge(in, later) || !e.UpdatedAt.Equal(later) || e.Type != "workflow" || e.Name != "Task Management" {
		t.Fatalf("Merge: %+v", e)
	}
	if want := []string{"task management", "TM", "task management workflow", "task workflow", "my task"}; !cmp.Equal(e.Aliases, want) {
		t.Fatalf("aliases after Merge = %q, want %q", e.Aliases, want)
	}

	// Renaming keeps the old name as an alias; aliases given replace the
	// given ones, and the generated ones come back.
	upd := agentmem.EntityUpdate{Name: entityPtr(" Task  Tracker "), Aliases: &[]string{"TT"}}
	if err := upd.Validate(); err != nil {
		t.Fatal(err)
	}
	e.ApplyUpdate(upd, later.Add(time.Hour))
	if want := []string{"Task Management", "TT", "task tracker", "task tracker workflow", "task workflow", "my task"}; e.Name != "Task Tracker" || !cmp.Equal(e.Aliases, want) {
		t.Fatalf("after update: %q %q, want aliases %q", e.Name, e.Aliases, want)
	}
	for name, bad := range map[string]agentmem.EntityUpdate{
		"name":    {Name: entityPtr("")},
		"type":    {Type: entityPtr(strings.Repeat("t", 51))},
		"aliases": {Aliases: &[]string{"?"}},
	} {
		if err := bad.Validate(); agentmem.ErrorCode(err) != agentmem.EINVALID || !strings.Contains(agentmem.ErrorMessage(err), name) {
			t.Errorf("EntityUpdate.Validate(%s): %v, want EINVALID naming it", name, err)
		}
	}
}

func entityPtr[T any](v T) *T { return &v }

func TestEntityRef_Validate(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 6789, time.UTC)
	r := &agentmem.EntityRef{EntityID: "e1", ThreadID: "t1"}
	if err := r.Validate(now); err != nil {
		t.Fatal(err)
	}
	if r.Action != agentmem.EntityDiscussed || !r.At.Equal(now.Truncate(time.Microsecond)) {
		t.Fatalf("defaults: %+v", r)
	}
	for field, bad := range map[string]agentmem.EntityRef{
		"entity_id": {ThreadID: "t1"},
		"thread_id": {EntityID: "e1", ThreadID: "a b"},
		"action":    {EntityID: "e1", ThreadID: "t1", Action: "deleted"},
		"seq":       {EntityID: "e1", ThreadID: "t1", Seq: -1},
	} {
		if err := bad.Validate(now); agentmem.ErrorCode(err) != agentmem.EINVALID || !strings.Contains(agentmem.ErrorMessage(err), field) {
			t.Errorf("Validate(%s): %v, want EINVALID naming it", field, err)
		}
	}
	for name, f := range map[string]agentmem.EntityRefFilter{
		"none":   {},
		"both":   {EntityID: "e", ThreadID: "t"},
		"action": {EntityID: "e", Action: entityPtr("x")},
	} {
		if err := f.Validate(); agentmem.ErrorCode(err) != agentmem.EINVALID {
			t.Errorf("EntityRefFilter.Validate(%s): %v, want EINVALID", name, err)
		}
	}
}
