package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/app"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestExportImport_RoundTrip: a user exported from one database and
// imported into an empty one has the same threads, messages, sessions,
// notes (every version), memories (with history and validity), profile
// versions, entities (with references) and reflections: exporting it
// again gives the same export. The imported messages are indexed again:
// a search by vector alone finds them.
func TestExportImport_RoundTrip(t *testing.T) {
	for name, db := range backends {
		t.Run(name, func(t *testing.T) { testRoundTrip(t, db(t), db(t)) })
	}
}

func testRoundTrip(t *testing.T, fromDB, toDB string) {
	ctx := context.Background()
	from := mustOpen(t, fromDB)
	fillUser(t, from, "alice")
	want := exportUser(t, from, "alice")
	if len(want.Threads) != 2 || len(want.Memories) < 3 || len(want.Notes) < 2 || len(want.Profiles) == 0 ||
		len(want.Entities) == 0 || len(want.Reflections) == 0 || len(want.Sessions) == 0 {
		t.Fatalf("the source export is thin: %d threads, %d memories, %d notes, %d profiles, %d entities, %d reflections, %d sessions",
			len(want.Threads), len(want.Memories), len(want.Notes), len(want.Profiles), len(want.Entities), len(want.Reflections), len(want.Sessions))
	}

	to := mustOpen(t, toDB)
	res, err := to.ImportUser(ctx, "alice", want, agentmem.ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Imported.Threads != 2 || res.Imported.Memories != len(want.Memories) {
		t.Fatalf("imported %+v, want 2 threads and %d memories", res.Imported, len(want.Memories))
	}
	waitIdle(t, to) // the imported threads are indexed again
	got := exportUser(t, to, "alice")
	opts := cmp.Options{
		cmpopts.IgnoreFields(agentmem.UserExport{}, "ExportedAt"),
		cmpopts.EquateEmpty(),
		cmpopts.EquateApproxTime(time.Microsecond), // PostgreSQL keeps microseconds
	}
	if diff := cmp.Diff(want, got, opts...); diff != "" {
		t.Fatalf("export → import → export differs (-exported +re-exported):\n%s", diff)
	}

	// Importing it again clashes before anything is written.
	if _, err := to.ImportUser(ctx, "alice", want, agentmem.ImportOptions{}); agentmem.ErrorCode(err) != agentmem.ECONFLICT {
		t.Fatalf("second import: %v, want a conflict", err)
	}
	if again := exportUser(t, to, "alice"); cmp.Diff(want, again, opts...) != "" {
		t.Fatal("a refused import changed the user")
	}

	// The imported messages have vectors again: the vector signal alone
	// finds the turn about the cat.
	resp, err := to.Search(ctx, "alice", agentmem.SearchRequest{Query: "my cat Miso is sick", Scopes: []string{"messages"}, Signals: []string{"vector"}})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range resp.Results {
		found = found || (r.Kind == "message" && r.Text == "My cat Miso is sick again.")
	}
	if !found {
		t.Fatalf("vector search over the imported messages did not find the turn: %+v", resp.Results)
	}
}

func mustOpen(t *testing.T, db string) *app.App {
	t.Helper()
	mem, err := app.Open(context.Background(), app.Config{DB: db})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mem.Close() })
	return mem
}

// fillUser gives user a bit of everything an export holds: two threads
// (one ended: reflection, profile), a session, notes in two versions, a
// memory edited and one invalidated, an entity with a reference.
func fillUser(t *testing.T, mem *app.App, user string) {
	t.Helper()
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	turn := func(thread, input, reply string) {
		t.Helper()
		_, err := mem.Before(ctx, user, thread, input, agentmem.ContextRequest{})
		must(err)
		must(mem.After(ctx, user, thread, input, &agentmem.Message{Content: reply}))
	}
	turn("t1", "I live in Oslo and I love skiing.", "Noted!")
	turn("t1", "My cat Miso is sick again.", "I am sorry to hear that.")
	_, err := mem.EndThread(ctx, user, "t1")
	must(err)
	s, _, err := mem.OpenSession(ctx, user, "helper")
	must(err)
	_, err = mem.AppendMessages(ctx, user, s.ThreadID, []*agentmem.Message{{Role: agentmem.RoleUser, Content: "Plan a trip to Bergen."}}, "")
	must(err)

	m, err := mem.CreateMemory(ctx, user, agentmem.MemoryInput{Text: "User's sister is Ana.", Category: "relationship"})
	must(err)
	text := "User's sister Ana lives in Porto."
	_, err = mem.UpdateMemory(ctx, user, m.ID, agentmem.MemoryUpdate{Text: &text, Reason: "more precise"})
	must(err)
	gone, err := mem.CreateMemory(ctx, user, agentmem.MemoryInput{Text: "User drinks coffee."})
	must(err)
	must(mem.DeleteMemory(ctx, user, gone.ID))
	_, err = mem.EditNotes(ctx, user, "helper", agentmem.NotesOp{Operation: agentmem.NotesAppend, Content: "## Trips\nOslo in May."})
	must(err)
	_, err = mem.EditNotes(ctx, user, "helper", agentmem.NotesOp{Operation: agentmem.NotesAppend, Content: "Bergen in June."})
	must(err)
	_, err = mem.PutEntity(ctx, user, agentmem.EntityInput{Name: "Bergen trip", Type: "project", ThreadID: s.ThreadID, Action: "created", Seq: 1})
	must(err)
	waitIdle(t, mem)
}

// exportUser exports user as JSON and decodes it, as an import reads it.
func exportUser(t *testing.T, mem *app.App, user string) *agentmem.UserExport {
	t.Helper()
	var buf bytes.Buffer
	if err := mem.ExportUser(context.Background(), user, agentmem.ExportOptions{}, &buf); err != nil {
		t.Fatal(err)
	}
	var x agentmem.UserExport
	if err := json.Unmarshal(buf.Bytes(), &x); err != nil {
		t.Fatalf("decode export: %v\n%s", err, buf.Bytes())
	}
	return &x
}
