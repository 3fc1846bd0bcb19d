package storetest

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// richExport returns a user export holding one of every kind of record:
// two threads (one soft-deleted) with tool calls and an element, a
// session, two versions of an agent's notes, an invalidated memory with
// its history and sources and a live one, two profile versions, an entity with a
// reference, and a reflection.
func richExport() *agentmem.UserExport {
	at := time.Date(2026, 3, 4, 5, 6, 7, 8000, time.UTC)
	ended := at.Add(time.Hour)
	deleted := at.Add(2 * time.Hour)
	invalid := at.Add(3 * time.Hour)
	return &agentmem.UserExport{
		Version: agentmem.ExportVersion, UserID: "someone-else", ExportedAt: at,
		Threads: []*agentmem.ThreadExport{
			{Version: agentmem.ExportVersion,
				Thread: &agentmem.Thread{ID: "trip", AgentID: "planner", Title: "Lisbon", Status: agentmem.ThreadEnded, Tags: []string{"travel"},
					Metadata: json.RawMessage(`{"k":1}`), CreatedAt: at, UpdatedAt: ended, EndedAt: &ended},
				Messages: []*agentmem.Message{
					{ID: "m1", Role: agentmem.RoleUser, Content: "I live in Oslo and I am planning a trip to Lisbon.", CreatedAt: at},
					{ID: "m2", Role: agentmem.RoleAssistant, ToolCalls: []agentmem.ToolCall{{ID: "c1", Type: "function",
						Function: agentmem.FunctionCall{Name: "weather", Arguments: `{"city":"Lisbon"}`}}}, CreatedAt: at},
					{ID: "m3", Role: agentmem.RoleTool, ToolCallID: "c1", Content: "sunny", CreatedAt: at},
					{ID: "m4", Role: agentmem.RoleAssistant, Content: "Pack light.", CreatedAt: at},
				},
				Elements: []*agentmem.Element{{ID: "e1", Type: "text", Name: "Guide", Content: "guide.pdf", MessageID: "m4", CreatedAt: at}},
			},
			{Version: agentmem.ExportVersion,
				Thread:   &agentmem.Thread{ID: "old", Status: agentmem.ThreadActive, CreatedAt: at, UpdatedAt: at, DeletedAt: &deleted},
				Messages: []*agentmem.Message{{ID: "m5", Role: agentmem.RoleUser, Content: "Forget this.", CreatedAt: at}},
			},
		},
		Sessions: []*agentmem.Session{{AgentID: "planner", ThreadID: "trip", UpdatedAt: at}},
		Notes: []*agentmem.Notes{
			{AgentID: "planner", Version: 1, Operation: agentmem.NotesOverwrite, Content: "# Sam\n", UpdatedAt: at},
			{AgentID: "planner", Version: 2, Operation: agentmem.NotesAppend, Content: "# Sam\n\n## Trips\nLisbon.\n", UpdatedAt: ended},
		},
		Memories: []*agentmem.MemoryExport{
			{Memory: &agentmem.Memory{ID: "mem-old", Kind: agentmem.MemoryFact, Text: "User lives in Porto.", Category: "location", Confidence: 1, Importance: 0.5,
				ThreadID: "trip", SeqFrom: 1, SeqTo: 1, Source: agentmem.SourceExtracted, Metadata: json.RawMessage(`{}`), Version: 2,
				Sources:   []agentmem.ThreadRange{{ThreadID: "old", SeqFrom: 1, SeqTo: 1}, {ThreadID: "trip", SeqFrom: 1, SeqTo: 1}}, // moved by an update
				ValidFrom: at, InvalidAt: &invalid, SupersededBy: "mem-new", CreatedAt: at, UpdatedAt: invalid},
				History: []*agentmem.MemoryChange{
					{Version: 1, Op: agentmem.OpAdd, Text: "User lives in Porto.", Category: "location", Confidence: 1, Importance: 0.5, ThreadID: "trip", SeqFrom: 1, SeqTo: 1, At: at},
					{Version: 2, Op: agentmem.OpInvalidate, Text: "User lives in Porto.", Category: "location", Confidence: 1, Importance: 0.5, ThreadID: "trip", SeqFrom: 1, SeqTo: 1, Reason: "moved", At: invalid},
				}},
			{Memory: &agentmem.Memory{ID: "mem-new", Kind: agentmem.MemoryFact, Text: "User lives in Oslo.", Category: "location", Confidence: 0.9, Importance: 0.6,
				Source: agentmem.SourceAPI, Metadata: json.RawMessage(`{}`), Version: 1, ValidFrom: invalid, CreatedAt: invalid, UpdatedAt: invalid, ProcessedAt: &invalid}},
		},
		Profiles: []*agentmem.Profile{
			{Version: 2, Text: "Sam lives in Oslo.", Method: agentmem.ProfileAssembled, Sources: []string{"mem-new"}, CreatedAt: invalid},
			{Version: 1, Text: "Sam lives in Porto.", Method: agentmem.ProfileAssembled, Sources: []string{"mem-old"}, CreatedAt: at},
		},
		Entities: []*agentmem.EntityExport{
			{Entity: &agentmem.Entity{ID: "ent-lisbon", Name: "Lisbon", Type: "place", CreatedAt: at, UpdatedAt: at},
				References: []*agentmem.EntityRef{{ThreadID: "trip", Action: agentmem.EntityDiscussed, Seq: 1, At: at}}},
		},
		Reflections: []*agentmem.Reflection{{ThreadID: "trip", Status: agentmem.ReflectionNoInsight, ThroughSeq: 4, Topics: []string{"lisbon"},
			Insights: []string{}, Reason: "no model", UpdatedAt: ended}},
	}
}

// testImportUser: an import restores every kind of record as it was, for
// the importing user, in one transaction.
func testImportUser(t *testing.T, s agentmem.Store) {
	x := richExport()
	res, err := s.ImportUser(ctx, "bob", x, agentmem.ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := agentmem.ImportCounts{Threads: 2, Messages: 5, Sessions: 1, Notes: 2, Memories: 2, Profiles: 2, Entities: 1, Reflections: 1}
	if diff := cmp.Diff(want, res.Imported); diff != "" {
		t.Fatalf("imported counts mismatch (-want +got):\n%s", diff)
	}
	// Threads and messages as they were; the deleted thread stays deleted.
	th, err := s.FindThreadByID(ctx, "bob", "trip")
	if err != nil || th.Title != "Lisbon" || th.Status != agentmem.ThreadEnded || th.MessageCount != 4 || th.UserID != "bob" {
		t.Fatalf("imported thread %+v, %v", th, err)
	}
	if _, err := s.FindThreadByID(ctx, "bob", "old"); agentmem.ErrorCode(err) != agentmem.ENOTFOUND {
		t.Fatalf("the soft-deleted thread is live after the import: %v", err)
	}
	msgs, _, err := s.FindMessages(ctx, "bob", "trip", agentmem.MessageFilter{})
	if err != nil || len(msgs) != 4 || msgs[1].ToolCalls[0].Function.Name != "weather" || msgs[2].ToolCallID != "c1" {
		t.Fatalf("imported messages %+v, %v", msgs, err)
	}
	if sess, err := s.FindSession(ctx, "bob", "planner"); err != nil || sess.ThreadID != "trip" {
		t.Fatalf("session %+v, %v", sess, err)
	}
	notes, _, err := s.FindNotesHistory(ctx, "bob", "planner", agentmem.NotesFilter{})
	if err != nil || len(notes) != 2 || notes[0].Version != 2 || notes[0].Content != x.Notes[1].Content || notes[1].Operation != agentmem.NotesOverwrite {
		t.Fatalf("notes history %+v, %v", notes, err)
	}
	old, err := s.FindMemoryByID(ctx, "bob", "mem-old")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(x.Memories[0].Memory, old); diff != "" {
		t.Fatalf("invalidated memory mismatch (-want +got):\n%s", diff)
	}
	hist, err := s.FindMemoryHistory(ctx, "bob", "mem-old")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(x.Memories[0].History, hist); diff != "" {
		t.Fatalf("memory history mismatch (-want +got):\n%s", diff)
	}
	live, _, err := s.FindMemories(ctx, "bob", agentmem.MemoryFilter{})
	if err != nil || len(live) != 1 || live[0].ID != "mem-new" || live[0].ProcessedAt == nil {
		t.Fatalf("live memories %+v, %v: want mem-new, processed", live, err)
	}
	profiles, _, err := s.FindProfiles(ctx, "bob", 10, "")
	if err != nil || len(profiles) != 2 || profiles[0].Version != 2 || profiles[0].Text != "Sam lives in Oslo." {
		t.Fatalf("profiles %+v, %v", profiles, err)
	}
	ents, _, err := s.FindEntities(ctx, "bob", agentmem.EntityFilter{Keys: agentmem.QueryKeys("lisbon")})
	if err != nil || len(ents) != 1 || ents[0].ID != "ent-lisbon" {
		t.Fatalf("entity by name %+v, %v", ents, err)
	}
	refs, _, err := s.FindEntityRefs(ctx, "bob", agentmem.EntityRefFilter{EntityID: "ent-lisbon"})
	if err != nil || len(refs) != 1 || refs[0].ThreadID != "trip" || refs[0].Seq != 1 {
		t.Fatalf("entity references %+v, %v", refs, err)
	}
	ref, err := s.FindReflection(ctx, "bob", "trip")
	if err != nil || ref.Status != agentmem.ReflectionNoInsight || ref.ThroughSeq != 4 || ref.Reason != "no model" {
		t.Fatalf("reflection %+v, %v", ref, err)
	}
	// The imported records are searchable by full-text at once.
	hits, err := s.SearchText(ctx, "bob", agentmem.TextQuery{Query: "Oslo", Scopes: []string{agentmem.ScopeMemories, agentmem.ScopeMessages}, Limit: 10})
	if err != nil || len(hits) < 2 {
		t.Fatalf("full-text hits for Oslo: %+v, %v", hits, err)
	}
	// Nobody else got anything.
	if ts, _, err := s.FindThreads(ctx, "someone-else", agentmem.ThreadFilter{}); err != nil || len(ts) != 0 {
		t.Fatalf("the export's own user got threads: %+v, %v", ts, err)
	}
}

// testImportUserConflicts: an import clashing with what the user has
// writes nothing with fail, keeps the user's records with skip, and
// replaces them with replace.
func testImportUserConflicts(t *testing.T, s agentmem.Store) {
	if _, err := s.ImportUser(ctx, "bob", richExport(), agentmem.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	MustCreateThread(t, s, &agentmem.Thread{UserID: "bob", ID: "mine"})

	x := richExport()
	x.Memories[1].Text = "User lives in Bergen."
	x.Threads[0].Messages[0].Content = "I live in Bergen."
	x.Threads = append(x.Threads, &agentmem.ThreadExport{Version: agentmem.ExportVersion,
		Thread: &agentmem.Thread{ID: "new"}, Messages: []*agentmem.Message{{ID: "m9", Role: agentmem.RoleUser, Content: "New one."}}})
	_, err := s.ImportUser(ctx, "bob", x, agentmem.ImportOptions{OnConflict: agentmem.OnConflictFail})
	wantCode(t, err, agentmem.ECONFLICT)
	if msg := agentmem.ErrorMessage(err); !contains(msg, `thread "trip"`) || !contains(msg, "nothing was imported") {
		t.Fatalf("conflict message %q: want it to name thread trip", msg)
	}
	if _, err := s.FindThreadByID(ctx, "bob", "new"); agentmem.ErrorCode(err) != agentmem.ENOTFOUND {
		t.Fatalf("a failed import wrote thread new: %v", err)
	}

	res, err := s.ImportUser(ctx, "bob", richCopy(t, x), agentmem.ImportOptions{OnConflict: agentmem.OnConflictSkip})
	if err != nil || res.Imported.Threads != 1 || res.Skipped.Threads != 2 || res.Skipped.Memories != 2 || res.Imported.Memories != 0 {
		t.Fatalf("skip: %+v, %v", res, err)
	}
	if m, err := s.FindMemoryByID(ctx, "bob", "mem-new"); err != nil || m.Text != "User lives in Oslo." {
		t.Fatalf("skip changed a memory: %+v, %v", m, err)
	}
	if _, err := s.FindThreadByID(ctx, "bob", "new"); err != nil {
		t.Fatalf("skip did not import the new thread: %v", err)
	}

	res, err = s.ImportUser(ctx, "bob", richCopy(t, x), agentmem.ImportOptions{OnConflict: agentmem.OnConflictReplace})
	if err != nil || res.Replaced.Threads != 3 || res.Replaced.Memories != 2 || res.Imported.Threads != 3 {
		t.Fatalf("replace: %+v, %v", res, err)
	}
	if m, err := s.FindMemoryByID(ctx, "bob", "mem-new"); err != nil || m.Text != "User lives in Bergen." {
		t.Fatalf("replace kept the old memory: %+v, %v", m, err)
	}
	msgs, _, err := s.FindMessages(ctx, "bob", "trip", agentmem.MessageFilter{})
	if err != nil || len(msgs) != 4 || msgs[0].Content != "I live in Bergen." {
		t.Fatalf("replaced thread's messages %+v, %v", msgs, err)
	}
	if _, err := s.FindThreadByID(ctx, "bob", "mine"); err != nil {
		t.Fatalf("replace touched a thread the export does not have: %v", err)
	}
	notes, _, err := s.FindNotesHistory(ctx, "bob", "planner", agentmem.NotesFilter{})
	if err != nil || len(notes) != 2 {
		t.Fatalf("replaced notes: %d versions, %v; want the export's 2", len(notes), err)
	}
	_, err = s.ImportUser(ctx, "bob", richCopy(t, x), agentmem.ImportOptions{OnConflict: "merge"})
	wantCode(t, err, agentmem.EINVALID)
}

// richCopy returns a deep copy of x, since an import prepares what it is
// given.
func richCopy(tb testing.TB, x *agentmem.UserExport) *agentmem.UserExport {
	tb.Helper()
	var out agentmem.UserExport
	if err := json.Unmarshal(mustMarshal(tb, x), &out); err != nil {
		tb.Fatalf("copy a user's export: %v", err)
	}
	return &out
}

// testImportUserAtomic: an import that fails in the database after some
// of it was written leaves the user as it was; a bad record is refused,
// named, before anything.
func testImportUserAtomic(t *testing.T, s agentmem.Store) {
	MustCreateThread(t, s, &agentmem.Thread{UserID: "bob", ID: "mine"})
	x := richExport()
	x.Notes = append(x.Notes, &agentmem.Notes{AgentID: "planner", Version: 2, Content: "again"}) // version 2 twice: the insert fails
	_, err := s.ImportUser(ctx, "bob", x, agentmem.ImportOptions{})
	wantCode(t, err, agentmem.EINVALID)
	ts, _, err := s.FindThreads(ctx, "bob", agentmem.ThreadFilter{IncludeDeleted: true})
	if err != nil || len(ts) != 1 || ts[0].ID != "mine" {
		t.Fatalf("after a failed import bob has %+v, %v; want only his thread", ts, err)
	}
	if ms, _, err := s.FindMemories(ctx, "bob", agentmem.MemoryFilter{IncludeInvalid: true}); err != nil || len(ms) != 0 {
		t.Fatalf("after a failed import bob has memories %+v, %v", ms, err)
	}

	x = richExport()
	x.Memories[1].Text = ""
	_, err = s.ImportUser(ctx, "bob", x, agentmem.ImportOptions{})
	wantCode(t, err, agentmem.EINVALID)
	if msg := agentmem.ErrorMessage(err); !contains(msg, "memories[1]") {
		t.Fatalf("error %q does not name memories[1]", msg)
	}
}

// testImportUserVersion1: an export of version 1 (memories without
// history, entities without references) still imports.
func testImportUserVersion1(t *testing.T, s agentmem.Store) {
	v1 := `{"version":1,"user_id":"alice","exported_at":"2026-01-02T03:04:05Z",
	  "threads":[{"version":1,"thread":{"id":"t1","user_id":"alice","title":"Hi","status":"active","created_at":"2026-01-02T03:04:05Z","updated_at":"2026-01-02T03:04:05Z"},
	    "messages":[{"id":"a1","thread_id":"t1","seq":1,"role":"user","content":"I like tea.","created_at":"2026-01-02T03:04:05Z"}],"elements":[]}],
	  "sessions":[],"notes":[{"user_id":"alice","agent_id":"bot","content":"# Notes","version":3,"operation":"overwrite","updated_at":"2026-01-02T03:04:05Z"}],
	  "memories":[{"id":"x1","user_id":"alice","kind":"fact","text":"User likes tea.","category":"preference","confidence":1,"importance":0.5,"source":"api",
	    "metadata":{},"version":1,"valid_from":"2026-01-02T03:04:05Z","created_at":"2026-01-02T03:04:05Z","updated_at":"2026-01-02T03:04:05Z"}],
	  "profiles":[],"entities":[{"id":"n1","user_id":"alice","name":"Tea","type":"","aliases":[],"created_at":"2026-01-02T03:04:05Z","updated_at":"2026-01-02T03:04:05Z"}]}`
	var x agentmem.UserExport
	if err := json.Unmarshal([]byte(v1), &x); err != nil {
		t.Fatal(err)
	}
	res, err := s.ImportUser(ctx, "carol", &x, agentmem.ImportOptions{})
	if err != nil || res.Imported.Threads != 1 || res.Imported.Memories != 1 || res.Imported.Entities != 1 || res.Imported.Notes != 1 {
		t.Fatalf("version 1 import: %+v, %v", res, err)
	}
	hist, err := s.FindMemoryHistory(ctx, "carol", "x1")
	if err != nil || len(hist) != 1 || hist[0].Op != agentmem.OpAdd {
		t.Fatalf("history of a version 1 memory: %+v, %v; want its add", hist, err)
	}
	if n, err := s.FindNotes(ctx, "carol", "bot"); err != nil || n.Version != 3 || n.Content != "# Notes" {
		t.Fatalf("notes %+v, %v", n, err)
	}
	agents, err := s.FindAgentIDs(ctx, "carol")
	if diff := cmp.Diff([]string{"bot"}, agents, cmpopts.EquateEmpty()); diff != "" || err != nil {
		t.Fatalf("agents mismatch (-want +got):\n%s%v", diff, err)
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

// testImportUserJobs: the jobs an import asks for (ImportOptions.Jobs) are
// stored in its transaction: all of them with a successful import, none
// with a refused one.
func testImportUserJobs(t *testing.T, s agentmem.Store) {
	var got *agentmem.ImportResult
	jobs := func(res *agentmem.ImportResult) [][]*agentmem.Job {
		got = res
		var out [][]*agentmem.Job
		for _, id := range res.ThreadIDs {
			out = append(out, []*agentmem.Job{{Kind: "index", Key: id}})
		}
		return out
	}
	if _, err := s.ImportUser(ctx, "joe", richExport(), agentmem.ImportOptions{Jobs: jobs}); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, j := range AllJobs(t, s, agentmem.JobFilter{UserID: ptr("joe")}) {
		if j.Kind == "index" && j.Status == agentmem.JobQueued {
			keys = append(keys, j.Key)
		}
	}
	if got == nil || !cmp.Equal(keys, got.ThreadIDs, cmpopts.SortSlices(func(a, b string) bool { return a < b })) || len(keys) != 2 {
		t.Fatalf("queued index jobs %v, want one per imported thread %v", keys, got)
	}

	// A refused import stores no job.
	x := richExport()
	x.Threads = append(x.Threads, &agentmem.ThreadExport{Version: agentmem.ExportVersion, Thread: &agentmem.Thread{ID: "fresh"}})
	if _, err := s.ImportUser(ctx, "joe", x, agentmem.ImportOptions{Jobs: jobs}); agentmem.ErrorCode(err) != agentmem.ECONFLICT {
		t.Fatalf("import again: %v, want a conflict", err)
	}
	for _, j := range AllJobs(t, s, agentmem.JobFilter{UserID: ptr("joe")}) {
		if j.Key == "fresh" {
			t.Fatalf("a refused import stored job %+v", j)
		}
	}
}
