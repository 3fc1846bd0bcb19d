package storetest

import (
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
)

// testCursorsBound: a cursor continues the list that issued it and no
// other. Every list of the store issues a cursor (pages of one), and each
// cursor is passed to every list: its own continues, every other answers
// EINVALID saying that the cursor belongs to another list, rather than
// reading it as a position of its own (a thread cursor read as a message
// cursor restarted the messages at seq 1). The same list of another user
// or thread, or in the other order, is another list.
func testCursorsBound(t *testing.T, s agentmem.Store) {
	th := MustCreateThread(t, s, &agentmem.Thread{UserID: "alice", AgentID: "a"})
	other := MustCreateThread(t, s, &agentmem.Thread{UserID: "alice", AgentID: "a"})
	MustCreateThread(t, s, &agentmem.Thread{UserID: "bob"})
	MustCreateThread(t, s, &agentmem.Thread{UserID: "bob"})
	MustAppend(t, s, "alice", th.ID, agentmem.RoleUser, "one", agentmem.RoleAssistant, "two")
	MustAppend(t, s, "alice", other.ID, agentmem.RoleUser, "one", agentmem.RoleAssistant, "two")
	for range 2 {
		if err := s.CreateElement(ctx, "alice", th.ID, &agentmem.Element{Name: "e"}); err != nil {
			t.Fatal(err)
		}
		MustCreateMemory(t, s, &agentmem.Memory{UserID: "alice", Text: "Alice likes tea."})
		MustEnqueueJob(t, s, &agentmem.Job{UserID: "alice", Kind: "index"})
		MustCreateKey(t, s, agentmem.Scope{Kind: agentmem.ScopeAdmin}, time.Now(), 0)
		if err := s.CreateAuditEvent(ctx, &agentmem.AuditEvent{Actor: "cli", Action: agentmem.AuditCleanup}); err != nil {
			t.Fatal(err)
		}
		MustPutNotes(t, s, "alice", "a", agentmem.NotesOp{Operation: agentmem.NotesAppend, Content: "note"})
	}
	e1 := MustPutEntity(t, s, "alice", &agentmem.Entity{Name: "Lisbon"})
	MustPutEntity(t, s, "alice", &agentmem.Entity{Name: "Porto"})
	if err := s.PutEntityRefs(ctx, "alice", []*agentmem.EntityRef{{EntityID: e1.ID, ThreadID: th.ID}, {EntityID: e1.ID, ThreadID: other.ID}}); err != nil {
		t.Fatal(err)
	}
	mustPutProfile(t, s, "alice", -1, "first")
	mustPutProfile(t, s, "alice", -1, "second")

	type list struct {
		name string
		find func(cursor string) (int, string, error) // a page of one: its length and next cursor
	}
	page := func(n int, next string, err error) (int, string, error) { return n, next, err }
	lists := []list{
		{"threads", func(c string) (int, string, error) {
			p, next, err := s.FindThreads(ctx, "alice", agentmem.ThreadFilter{Limit: 1, Cursor: c})
			return page(len(p), next, err)
		}},
		{"threads of bob", func(c string) (int, string, error) {
			p, next, err := s.FindThreads(ctx, "bob", agentmem.ThreadFilter{Limit: 1, Cursor: c})
			return page(len(p), next, err)
		}},
		{"messages", func(c string) (int, string, error) {
			p, next, err := s.FindMessages(ctx, "alice", th.ID, agentmem.MessageFilter{Limit: 1, Cursor: c})
			return page(len(p), next, err)
		}},
		{"messages newest first", func(c string) (int, string, error) {
			p, next, err := s.FindMessages(ctx, "alice", th.ID, agentmem.MessageFilter{Limit: 1, Cursor: c, Desc: true})
			return page(len(p), next, err)
		}},
		{"messages of another thread", func(c string) (int, string, error) {
			p, next, err := s.FindMessages(ctx, "alice", other.ID, agentmem.MessageFilter{Limit: 1, Cursor: c})
			return page(len(p), next, err)
		}},
		{"elements", func(c string) (int, string, error) {
			p, next, err := s.FindElements(ctx, "alice", th.ID, agentmem.ElementFilter{Limit: 1, Cursor: c})
			return page(len(p), next, err)
		}},
		{"memories", func(c string) (int, string, error) {
			p, next, err := s.FindMemories(ctx, "alice", agentmem.MemoryFilter{Limit: 1, Cursor: c})
			return page(len(p), next, err)
		}},
		{"entities", func(c string) (int, string, error) {
			p, next, err := s.FindEntities(ctx, "alice", agentmem.EntityFilter{Limit: 1, Cursor: c})
			return page(len(p), next, err)
		}},
		{"entity references", func(c string) (int, string, error) {
			p, next, err := s.FindEntityRefs(ctx, "alice", agentmem.EntityRefFilter{EntityID: e1.ID, Limit: 1, Cursor: c})
			return page(len(p), next, err)
		}},
		{"jobs", func(c string) (int, string, error) {
			p, next, err := s.FindJobs(ctx, agentmem.JobFilter{Limit: 1, Cursor: c})
			return page(len(p), next, err)
		}},
		{"keys", func(c string) (int, string, error) {
			p, next, err := s.FindKeys(ctx, agentmem.KeyFilter{Limit: 1, Cursor: c})
			return page(len(p), next, err)
		}},
		{"audit events", func(c string) (int, string, error) {
			p, next, err := s.FindAuditEvents(ctx, agentmem.AuditFilter{Limit: 1, Cursor: c})
			return page(len(p), next, err)
		}},
		{"notes history", func(c string) (int, string, error) {
			p, next, err := s.FindNotesHistory(ctx, "alice", "a", agentmem.NotesFilter{Limit: 1, Cursor: c})
			return page(len(p), next, err)
		}},
		{"profiles", func(c string) (int, string, error) {
			p, next, err := s.FindProfiles(ctx, "alice", 1, c)
			return page(len(p), next, err)
		}},
	}
	cursors := make([]string, len(lists))
	for i, l := range lists {
		n, next, err := l.find("")
		if err != nil || n != 1 || next == "" {
			t.Fatalf("%s: first page of %d, next %q, %v; want one item and a next cursor", l.name, n, next, err)
		}
		cursors[i] = next
	}
	for i, l := range lists {
		for j, c := range cursors {
			n, _, err := l.find(c)
			if i == j {
				if err != nil || n != 1 {
					t.Errorf("%s with its own cursor: %d items, %v; want the next page", l.name, n, err)
				}
				continue
			}
			if agentmem.ErrorCode(err) != agentmem.EINVALID || !strings.Contains(agentmem.ErrorMessage(err), "cursor belongs to another list") {
				t.Errorf("%s with a cursor of %s: %d items, %v; want EINVALID, the cursor belongs to another list", l.name, lists[j].name, n, err)
			}
		}
	}
}
