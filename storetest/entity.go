package storetest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/google/go-cmp/cmp"
)

// MustPutEntity puts e for user and returns it as stored.
func MustPutEntity(tb testing.TB, s agentmem.EntityStore, user string, e *agentmem.Entity) *agentmem.Entity {
	tb.Helper()
	if err := s.PutEntities(ctx, user, []*agentmem.Entity{e}); err != nil {
		tb.Fatalf("PutEntities(%s): %v", e.Name, err)
	}
	if e.ID == "" || e.UserID != user {
		tb.Fatalf("PutEntities left %+v", e)
	}
	return e
}

func entityNames(es []*agentmem.Entity) []string {
	names := make([]string, len(es))
	for i, e := range es {
		names[i] = e.Name
	}
	return names
}

// allEntities pages through FindEntities with f (its Limit per page).
func allEntities(tb testing.TB, s agentmem.EntityStore, user string, f agentmem.EntityFilter) []*agentmem.Entity {
	tb.Helper()
	all := []*agentmem.Entity{}
	for {
		page, next, err := s.FindEntities(ctx, user, f)
		if err != nil {
			tb.Fatalf("FindEntities: %v", err)
		}
		if page == nil || f.Limit > 0 && len(page) > f.Limit {
			tb.Fatalf("page of %d entities (nil: %v), limit %d", len(page), page == nil, f.Limit)
		}
		all = append(all, page...)
		if f.Cursor = next; next == "" {
			return all
		}
	}
}

// allEntityRefs pages through FindEntityRefs with f (its Limit per page).
func allEntityRefs(tb testing.TB, s agentmem.EntityStore, user string, f agentmem.EntityRefFilter) []*agentmem.EntityRef {
	tb.Helper()
	all := []*agentmem.EntityRef{}
	for {
		page, next, err := s.FindEntityRefs(ctx, user, f)
		if err != nil {
			tb.Fatalf("FindEntityRefs: %v", err)
		}
		if page == nil || f.Limit > 0 && len(page) > f.Limit {
			tb.Fatalf("page of %d refs (nil: %v), limit %d", len(page), page == nil, f.Limit)
		}
		all = append(all, page...)
		if f.Cursor = next; next == "" {
			return all
		}
	}
}

func mustResolve(tb testing.TB, s agentmem.EntityStore, user, q, wantName string) {
	tb.Helper()
	e, err := agentmem.ResolveEntity(ctx, s, user, q)
	if err != nil {
		tb.Fatalf("ResolveEntity(%q): %v, want %s", q, err, wantName)
	}
	if e.Name != wantName {
		tb.Fatalf("ResolveEntity(%q)=%s, want %s", q, e.Name, wantName)
	}
}

func testEntities(t *testing.T, s agentmem.Store) {
	for name, e := range map[string]agentmem.Entity{
		"no name":   {Name: "  "},
		"no letter": {Name: "--"},
		"bad alias": {Name: "X", Aliases: []string{"!"}},
		"bad id":    {ID: "a b", Name: "X"},
	} {
		if err := s.PutEntities(ctx, "alice", []*agentmem.Entity{&e}); agentmem.ErrorCode(err) != agentmem.EINVALID {
			t.Errorf("PutEntities(%s): %v, want EINVALID", name, err)
		}
	}
	if got := allEntities(t, s, "alice", agentmem.EntityFilter{}); len(got) != 0 {
		t.Fatalf("refused puts stored %d entities", len(got))
	}

	tm := MustPutEntity(t, s, "alice", &agentmem.Entity{Name: " Task  Management", Type: "Workflow", Aliases: []string{"TM"}})
	want := &agentmem.Entity{ID: tm.ID, UserID: "alice", Name: "Task Management", Type: "workflow",
		Aliases: []string{"TM", "task management", "task management workflow", "task workflow", "my task"}, CreatedAt: tm.CreatedAt, UpdatedAt: tm.CreatedAt}
	if diff := cmp.Diff(want, tm); diff != "" {
		t.Fatalf("PutEntities mismatch (-want +got):\n%s", diff)
	}
	if tm.CreatedAt.IsZero() || tm.CreatedAt.Nanosecond()%1000 != 0 {
		t.Fatalf("CreatedAt %v is not a time in microseconds", tm.CreatedAt)
	}
	got, err := s.FindEntityByID(ctx, "alice", tm.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("FindEntityByID mismatch (-want +got):\n%s", diff)
	}

	// The same name, spelled otherwise, is the same entity: it gains the
	// new alias and keeps its ID and name.
	time.Sleep(2 * time.Millisecond)
	again := MustPutEntity(t, s, "alice", &agentmem.Entity{Name: "task-management", Aliases: []string{"Tasks"}})
	if again.ID != tm.ID || again.Name != "Task Management" || again.Type != "workflow" || !again.UpdatedAt.After(tm.UpdatedAt) || !again.CreatedAt.Equal(tm.CreatedAt) {
		t.Fatalf("put again: %+v, want a merge into %+v", again, tm)
	}
	if !cmp.Equal(again.Aliases, append(want.Aliases, "Tasks")) {
		t.Fatalf("aliases after a merge: %q", again.Aliases)
	}
	// A put that changes nothing leaves the entity as it is.
	same := MustPutEntity(t, s, "alice", &agentmem.Entity{Name: "TASK MANAGEMENT"})
	if !same.UpdatedAt.Equal(again.UpdatedAt) {
		t.Fatalf("a put of nothing new moved updated_at from %v to %v", again.UpdatedAt, same.UpdatedAt)
	}
	// IDs: a client's ID must not name another entity.
	wantCode(t, s.PutEntities(ctx, "alice", []*agentmem.Entity{{ID: "other", Name: "Task Management"}}), agentmem.ECONFLICT)
	MustPutEntity(t, s, "alice", &agentmem.Entity{ID: "crm", Name: "CRM", Type: "system"})
	wantCode(t, s.PutEntities(ctx, "alice", []*agentmem.Entity{{ID: "crm", Name: "Another"}}), agentmem.ECONFLICT)
	if _, err := s.FindEntityByID(ctx, "alice", "crm"); err != nil {
		t.Fatal(err)
	}

	t.Run("Resolve", func(t *testing.T) {
		// Alias resolution: by name, any spelling, and by each alias.
		for _, q := range []string{"Task Management", "task   management!", "TM", "tasks", "task management workflow", "my Task Workflow", "the task workflow", "my task"} {
			mustResolve(t, s, "alice", q, "Task Management")
		}
		mustResolve(t, s, "alice", "the crm", "CRM")
		for _, q := range []string{"task", "management", "Task Manager", "?!"} {
			if e, err := agentmem.ResolveEntity(ctx, s, "alice", q); agentmem.ErrorCode(err) != agentmem.ENOTFOUND {
				t.Errorf("ResolveEntity(%q)=%v, %v, want ENOTFOUND", q, e, err)
			}
		}
		// Another user resolves nothing of alice's.
		if _, err := agentmem.ResolveEntity(ctx, s, "bob", "Task Management"); agentmem.ErrorCode(err) != agentmem.ENOTFOUND {
			t.Fatalf("bob resolved alice's entity: %v", err)
		}
		_, err := s.FindEntityByID(ctx, "bob", tm.ID)
		wantCode(t, err, agentmem.ENOTFOUND)
	})

	t.Run("NameBeforeAlias", func(t *testing.T) {
		// "Task Workflow" is a name of its own and an alias of Task
		// Management, which is updated later: the name comes first.
		tw := MustPutEntity(t, s, "alice", &agentmem.Entity{Name: "Task Workflow"})
		time.Sleep(2 * time.Millisecond)
		MustPutEntity(t, s, "alice", &agentmem.Entity{Name: "Task Management", Aliases: []string{"TMW"}})
		mustResolve(t, s, "alice", "task workflow", "Task Workflow")
		for _, limit := range []int{0, 1} {
			got := allEntities(t, s, "alice", agentmem.EntityFilter{Keys: []string{"task workflow"}, Limit: limit})
			if !cmp.Equal(entityNames(got), []string{"Task Workflow", "Task Management"}) {
				t.Fatalf("FindEntities(task workflow, limit %d) = %q", limit, entityNames(got))
			}
		}
		// An entity found by two keys comes once.
		got := allEntities(t, s, "alice", agentmem.EntityFilter{Keys: []string{"task management", "tm", "task workflow"}})
		if !cmp.Equal(entityNames(got), []string{"Task Management", "Task Workflow"}) {
			t.Fatalf("FindEntities(three keys) = %q", entityNames(got))
		}
		if err := s.DeleteEntity(ctx, "alice", tw.ID); err != nil {
			t.Fatal(err)
		}
		mustResolve(t, s, "alice", "task workflow", "Task Management")
	})

	t.Run("Mentioned", func(t *testing.T) {
		MustPutEntity(t, s, "alice", &agentmem.Entity{Name: "Caroline Smith", Type: "person"})
		got, err := agentmem.FindMentionedEntities(ctx, s, "alice", "Please update my task workflow, and tell Caroline.", 0)
		if err != nil {
			t.Fatal(err)
		}
		if !cmp.Equal(entityNames(got), []string{"Task Management", "Caroline Smith"}) && !cmp.Equal(entityNames(got), []string{"Caroline Smith", "Task Management"}) {
			t.Fatalf("FindMentionedEntities = %q", entityNames(got))
		}
		if got, err := agentmem.FindMentionedEntities(ctx, s, "alice", "Nothing known here", 0); err != nil || len(got) != 0 {
			t.Fatalf("FindMentionedEntities(nothing) = %q, %v", entityNames(got), err)
		}
	})

	t.Run("List", func(t *testing.T) {
		for i := range 5 {
			MustPutEntity(t, s, "alice", &agentmem.Entity{Name: fmt.Sprintf("Project %d", i), Type: "project"})
		}
		all := allEntities(t, s, "alice", agentmem.EntityFilter{})
		paged := allEntities(t, s, "alice", agentmem.EntityFilter{Limit: 2})
		if len(all) != 8 || !cmp.Equal(entityNames(all), entityNames(paged)) {
			t.Fatalf("entities %q, paged %q", entityNames(all), entityNames(paged))
		}
		for i := 1; i < len(all); i++ {
			if all[i].UpdatedAt.After(all[i-1].UpdatedAt) {
				t.Fatalf("entities not newest updated first: %v after %v", all[i].UpdatedAt, all[i-1].UpdatedAt)
			}
		}
		projects := allEntities(t, s, "alice", agentmem.EntityFilter{Type: entityPtr(" Project "), Limit: 3})
		if len(projects) != 5 {
			t.Fatalf("projects: %q", entityNames(projects))
		}
		if got := allEntities(t, s, "alice", agentmem.EntityFilter{Keys: []string{"task management"}, Type: entityPtr("project")}); len(got) != 0 {
			t.Fatalf("type and keys: %q", entityNames(got))
		}
		_, _, err := s.FindEntities(ctx, "alice", agentmem.EntityFilter{Cursor: "nope"})
		wantCode(t, err, agentmem.EINVALID)
		if got := allEntities(t, s, "bob", agentmem.EntityFilter{}); len(got) != 0 {
			t.Fatalf("bob lists alice's entities: %q", entityNames(got))
		}
	})

	t.Run("Update", func(t *testing.T) {
		e, err := s.UpdateEntity(ctx, "alice", tm.ID, agentmem.EntityUpdate{Name: entityPtr("Task Tracker")})
		if err != nil {
			t.Fatal(err)
		}
		if e.Name != "Task Tracker" || e.Aliases[0] != "Task Management" {
			t.Fatalf("renamed: %+v", e)
		}
		if got, err := s.FindEntityByID(ctx, "alice", tm.ID); err != nil || !cmp.Equal(got, e) {
			t.Fatalf("FindEntityByID after the update = %+v, %v, want %+v", got, err, e)
		}
		// The old name is an alias now; the new one is the name.
		mustResolve(t, s, "alice", "Task Management", "Task Tracker")
		mustResolve(t, s, "alice", "task tracker workflow", "Task Tracker")
		e, err = s.UpdateEntity(ctx, "alice", tm.ID, agentmem.EntityUpdate{Aliases: &[]string{"T3"}, Type: entityPtr("")})
		if err != nil {
			t.Fatal(err)
		}
		if !cmp.Equal(e.Aliases, []string{"T3", "task tracker"}) || e.Type != "" {
			t.Fatalf("aliases replaced: %+v", e)
		}
		if _, err := agentmem.ResolveEntity(ctx, s, "alice", "TM"); agentmem.ErrorCode(err) != agentmem.ENOTFOUND {
			t.Fatalf("a replaced alias still resolves: %v", err)
		}
		_, err = s.UpdateEntity(ctx, "alice", tm.ID, agentmem.EntityUpdate{Name: entityPtr("crm")})
		wantCode(t, err, agentmem.ECONFLICT)
		_, err = s.UpdateEntity(ctx, "alice", tm.ID, agentmem.EntityUpdate{Name: entityPtr("")})
		wantCode(t, err, agentmem.EINVALID)
		_, err = s.UpdateEntity(ctx, "alice", "nope", agentmem.EntityUpdate{Name: entityPtr("x")})
		wantCode(t, err, agentmem.ENOTFOUND)
		_, err = s.UpdateEntity(ctx, "bob", tm.ID, agentmem.EntityUpdate{Name: entityPtr("x")})
		wantCode(t, err, agentmem.ENOTFOUND)
		mustResolve(t, s, "alice", "Task Tracker", "Task Tracker")
	})

	t.Run("Delete", func(t *testing.T) {
		wantCode(t, s.DeleteEntity(ctx, "bob", tm.ID), agentmem.ENOTFOUND)
		if err := s.DeleteEntity(ctx, "alice", tm.ID); err != nil {
			t.Fatal(err)
		}
		wantCode(t, s.DeleteEntity(ctx, "alice", tm.ID), agentmem.ENOTFOUND)
		_, err := s.FindEntityByID(ctx, "alice", tm.ID)
		wantCode(t, err, agentmem.ENOTFOUND)
		if _, err := agentmem.ResolveEntity(ctx, s, "alice", "Task Tracker"); agentmem.ErrorCode(err) != agentmem.ENOTFOUND {
			t.Fatalf("a deleted entity resolves: %v", err)
		}
		// Its name is free again.
		if e := MustPutEntity(t, s, "alice", &agentmem.Entity{Name: "Task Tracker"}); e.ID == tm.ID {
			t.Fatal("a new entity got the deleted one's ID")
		}
	})
}

func entityPtr[T any](v T) *T { return &v }

func testEntityRefs(t *testing.T, s agentmem.Store) {
	th1 := MustCreateThread(t, s, &agentmem.Thread{UserID: "alice"})
	th2 := MustCreateThread(t, s, &agentmem.Thread{UserID: "alice"})
	bobs := MustCreateThread(t, s, &agentmem.Thread{UserID: "bob"})
	tm := MustPutEntity(t, s, "alice", &agentmem.Entity{Name: "Task Management", Type: "workflow"})
	crm := MustPutEntity(t, s, "alice", &agentmem.Entity{Name: "CRM"})
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

	for name, c := range map[string]struct {
		ref  agentmem.EntityRef
		code string
	}{
		"no thread":     {agentmem.EntityRef{EntityID: tm.ID, ThreadID: "nope"}, agentmem.ENOTFOUND},
		"bob's thread":  {agentmem.EntityRef{EntityID: tm.ID, ThreadID: bobs.ID}, agentmem.ENOTFOUND},
		"no entity":     {agentmem.EntityRef{EntityID: "nope", ThreadID: th1.ID}, agentmem.ENOTFOUND},
		"action":        {agentmem.EntityRef{EntityID: tm.ID, ThreadID: th1.ID, Action: "deleted"}, agentmem.EINVALID},
		"negative seq":  {agentmem.EntityRef{EntityID: tm.ID, ThreadID: th1.ID, Seq: -1}, agentmem.EINVALID},
		"no entity ID":  {agentmem.EntityRef{ThreadID: th1.ID}, agentmem.EINVALID},
		"bad thread ID": {agentmem.EntityRef{EntityID: tm.ID, ThreadID: "a/b"}, agentmem.EINVALID},
	} {
		r := c.ref
		if err := s.PutEntityRefs(ctx, "alice", []*agentmem.EntityRef{&r}); agentmem.ErrorCode(err) != c.code {
			t.Errorf("PutEntityRefs(%s): %v, want %s", name, err, c.code)
		}
	}
	wantCode(t, s.PutEntityRefs(ctx, "bob", []*agentmem.EntityRef{{EntityID: tm.ID, ThreadID: bobs.ID}}), agentmem.ENOTFOUND)

	refs := []*agentmem.EntityRef{
		{EntityID: tm.ID, ThreadID: th1.ID, Action: agentmem.EntityCreated, Seq: 1, At: t0},
		{EntityID: tm.ID, ThreadID: th1.ID, Action: agentmem.EntityModified, Seq: 3, At: t0.Add(time.Minute)},
		{EntityID: tm.ID, ThreadID: th2.ID, Seq: 2, At: t0.Add(time.Hour)},
		{EntityID: crm.ID, ThreadID: th1.ID, Seq: 2, At: t0.Add(30 * time.Second)},
	}
	if err := s.PutEntityRefs(ctx, "alice", refs); err != nil {
		t.Fatal(err)
	}
	if refs[2].Action != agentmem.EntityDiscussed {
		t.Fatalf("default action %q, want discussed", refs[2].Action)
	}
	got := allEntityRefs(t, s, "alice", agentmem.EntityRefFilter{EntityID: tm.ID})
	want := []*agentmem.EntityRef{refs[2], refs[1], refs[0]}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("FindEntityRefs(entity) mismatch (-want +got):\n%s", diff)
	}
	if paged := allEntityRefs(t, s, "alice", agentmem.EntityRefFilter{EntityID: tm.ID, Limit: 1}); !cmp.Equal(want, paged) {
		t.Fatalf("paged refs differ: %v", paged)
	}
	created := allEntityRefs(t, s, "alice", agentmem.EntityRefFilter{EntityID: tm.ID, Action: entityPtr(agentmem.EntityCreated)})
	if len(created) != 1 || created[0].ThreadID != th1.ID {
		t.Fatalf("created refs: %v", created)
	}

	// A thread's references carry their entities.
	got = allEntityRefs(t, s, "alice", agentmem.EntityRefFilter{ThreadID: th1.ID, Limit: 2})
	if len(got) != 3 || got[0].EntityID != tm.ID || got[0].Action != agentmem.EntityModified || got[1].EntityID != crm.ID || got[2].Action != agentmem.EntityCreated {
		t.Fatalf("FindEntityRefs(thread) = %v", got)
	}
	for _, r := range got {
		if r.Entity == nil || r.Entity.ID != r.EntityID || r.Entity.Name == "" || r.Entity.Aliases == nil {
			t.Fatalf("ref %+v lacks its entity", r)
		}
	}
	if diff := cmp.Diff(tm, got[0].Entity); diff != "" {
		t.Fatalf("a ref's entity mismatch (-want +got):\n%s", diff)
	}

	// Recording a reference again moves it to a later message, never
	// back.
	again := []*agentmem.EntityRef{
		{EntityID: tm.ID, ThreadID: th1.ID, Action: agentmem.EntityCreated, Seq: 0, At: t0.Add(-time.Hour)},
		{EntityID: tm.ID, ThreadID: th2.ID, Seq: 9, At: t0.Add(2 * time.Hour)},
	}
	if err := s.PutEntityRefs(ctx, "alice", again); err != nil {
		t.Fatal(err)
	}
	got = allEntityRefs(t, s, "alice", agentmem.EntityRefFilter{EntityID: tm.ID})
	if len(got) != 3 || got[0].Seq != 9 || !got[0].At.Equal(t0.Add(2*time.Hour)) || got[2].Seq != 1 || !got[2].At.Equal(t0) {
		t.Fatalf("refs after a second put: %v", got)
	}

	// Errors of the listing.
	for name, f := range map[string]agentmem.EntityRefFilter{
		"neither": {},
		"both":    {EntityID: tm.ID, ThreadID: th1.ID},
		"action":  {EntityID: tm.ID, Action: entityPtr("x")},
		"cursor":  {EntityID: tm.ID, Cursor: "x"},
	} {
		if _, _, err := s.FindEntityRefs(ctx, "alice", f); agentmem.ErrorCode(err) != agentmem.EINVALID {
			t.Errorf("FindEntityRefs(%s): %v, want EINVALID", name, err)
		}
	}
	for name, f := range map[string]agentmem.EntityRefFilter{"entity": {EntityID: "nope"}, "thread": {ThreadID: "nope"}} {
		if _, _, err := s.FindEntityRefs(ctx, "alice", f); agentmem.ErrorCode(err) != agentmem.ENOTFOUND {
			t.Errorf("FindEntityRefs(no %s): %v, want ENOTFOUND", name, err)
		}
	}
	for name, f := range map[string]agentmem.EntityRefFilter{"entity": {EntityID: tm.ID}, "thread": {ThreadID: th1.ID}} {
		if _, _, err := s.FindEntityRefs(ctx, "bob", f); agentmem.ErrorCode(err) != agentmem.ENOTFOUND {
			t.Errorf("bob's FindEntityRefs(alice's %s): %v, want ENOTFOUND", name, err)
		}
	}

	// A soft-deleted thread leaves the entity's references, and its own
	// cannot be listed; a thread deleted permanently takes its references
	// with it, and leaves the entities.
	if err := s.DeleteThread(ctx, "alice", th2.ID, false); err != nil {
		t.Fatal(err)
	}
	if got := allEntityRefs(t, s, "alice", agentmem.EntityRefFilter{EntityID: tm.ID}); len(got) != 2 {
		t.Fatalf("refs with a soft-deleted thread: %v", got)
	}
	_, _, err := s.FindEntityRefs(ctx, "alice", agentmem.EntityRefFilter{ThreadID: th2.ID})
	wantCode(t, err, agentmem.ENOTFOUND)
	wantCode(t, s.PutEntityRefs(ctx, "alice", []*agentmem.EntityRef{{EntityID: tm.ID, ThreadID: th2.ID}}), agentmem.ENOTFOUND)
	if err := s.DeleteThread(ctx, "alice", th1.ID, true); err != nil {
		t.Fatal(err)
	}
	if got := allEntityRefs(t, s, "alice", agentmem.EntityRefFilter{EntityID: crm.ID}); len(got) != 0 {
		t.Fatalf("refs of a deleted thread: %v", got)
	}
	th1again := MustCreateThread(t, s, &agentmem.Thread{UserID: "alice", ID: th1.ID})
	if got := allEntityRefs(t, s, "alice", agentmem.EntityRefFilter{ThreadID: th1again.ID}); len(got) != 0 {
		t.Fatalf("a thread made again with a deleted one's ID has its refs: %v", got)
	}
	if _, err := s.FindEntityByID(ctx, "alice", crm.ID); err != nil {
		t.Fatalf("deleting a thread deleted its entity: %v", err)
	}

	// Deleting an entity deletes its references.
	if err := s.PutEntityRefs(ctx, "alice", []*agentmem.EntityRef{{EntityID: crm.ID, ThreadID: th1again.ID}, {EntityID: tm.ID, ThreadID: th1again.ID}}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteEntity(ctx, "alice", crm.ID); err != nil {
		t.Fatal(err)
	}
	got = allEntityRefs(t, s, "alice", agentmem.EntityRefFilter{ThreadID: th1again.ID})
	if len(got) != 1 || got[0].EntityID != tm.ID {
		t.Fatalf("refs after deleting an entity: %v", got)
	}
}

// testEntityErasure: DeleteUser erases the user's entities, their names
// and references, and no one else's.
func testEntityErasure(t *testing.T, s agentmem.Store) {
	for _, u := range []string{"alice", "bob"} {
		th := MustCreateThread(t, s, &agentmem.Thread{UserID: u, ID: "t"})
		e := MustPutEntity(t, s, u, &agentmem.Entity{ID: "e", Name: "Task Management", Type: "workflow"})
		if err := s.PutEntityRefs(ctx, u, []*agentmem.EntityRef{{EntityID: e.ID, ThreadID: th.ID}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.DeleteUser(ctx, "alice"); err != nil {
		t.Fatal(err)
	}
	_, err := s.FindEntityByID(ctx, "alice", "e")
	wantCode(t, err, agentmem.ENOTFOUND)
	if _, err := agentmem.ResolveEntity(ctx, s, "alice", "my task workflow"); agentmem.ErrorCode(err) != agentmem.ENOTFOUND {
		t.Fatalf("an erased user's entity resolves: %v", err)
	}
	mustResolve(t, s, "bob", "my task workflow", "Task Management")
	if got := allEntityRefs(t, s, "bob", agentmem.EntityRefFilter{EntityID: "e"}); len(got) != 1 {
		t.Fatalf("bob's refs: %v", got)
	}
	// Alice starts again from nothing, with the same IDs.
	th := MustCreateThread(t, s, &agentmem.Thread{UserID: "alice", ID: "t"})
	e := MustPutEntity(t, s, "alice", &agentmem.Entity{ID: "e", Name: "Other"})
	if !cmp.Equal(e.Aliases, []string{"other"}) {
		t.Fatalf("a new entity of an erased user's ID: %+v", e)
	}
	if got := allEntityRefs(t, s, "alice", agentmem.EntityRefFilter{ThreadID: th.ID}); len(got) != 0 {
		t.Fatalf("erased refs are back: %v", got)
	}
}

// testEntitiesConcurrent: concurrent puts of one name, in batches of
// several names in different orders, make one entity per name that has
// every alias put.
func testEntitiesConcurrent(t *testing.T, s agentmem.Store) {
	const n = 8
	ids := make([][]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			es := []*agentmem.Entity{
				{Name: "Task Management", Aliases: []string{fmt.Sprintf("alias %d", i)}},
				{Name: "CRM"},
			}
			if i%2 == 1 {
				es[0], es[1] = es[1], es[0]
			}
			if errs[i] = s.PutEntities(ctx, "alice", es); errs[i] == nil {
				ids[i] = []string{es[0].ID, es[1].ID}
				if i%2 == 1 {
					ids[i] = []string{es[1].ID, es[0].ID}
				}
			}
		}()
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("put %d: %v", i, errs[i])
		}
		if !cmp.Equal(ids[i], ids[0]) {
			t.Fatalf("put %d made entities %v, put 0 %v", i, ids[i], ids[0])
		}
	}
	all := allEntities(t, s, "alice", agentmem.EntityFilter{})
	if len(all) != 2 {
		t.Fatalf("entities: %q", entityNames(all))
	}
	for i := range n {
		mustResolve(t, s, "alice", fmt.Sprintf("alias %d", i), "Task Management")
	}
}
