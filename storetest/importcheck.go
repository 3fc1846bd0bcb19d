package storetest

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/google/go-cmp/cmp"
)

// testImportUserChecks: an import refuses, with EINVALID naming the
// record and the field and writing nothing, every field out of its range
// (a version that the next write would wrap, a seq past the thread's
// end, a time in the future or past year 9999, an unknown operation…),
// every record that points at nothing (a reflection, session or
// reference of a thread that neither the export nor the user has, a
// memory superseded by a memory that does not exist, an element of a
// message the thread lacks), and records that the export holds twice
// with different contents — all of them the file's fault, not a clash
// with what the user has.
func testImportUserChecks(t *testing.T, s agentmem.Store) {
	future := time.Now().Add(time.Hour)
	year10000 := time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, c := range []struct {
		name   string
		mutate func(x *agentmem.UserExport)
		want   []string // in the error's message
	}{
		// Item 7: ranges.
		{"NotesVersionHuge", func(x *agentmem.UserExport) { x.Notes[1].Version = math.MaxInt64 }, []string{"notes[1].version"}},
		{"NotesVersionZero", func(x *agentmem.UserExport) { x.Notes[0].Version = 0 }, []string{"notes[0].version"}},
		{"NotesOperation", func(x *agentmem.UserExport) { x.Notes[0].Operation = "read" }, []string{"notes[0].operation"}},
		{"NotesUpdatedFuture", func(x *agentmem.UserExport) { x.Notes[0].UpdatedAt = future }, []string{"notes[0].updated_at"}},
		{"MemoryVersionHuge", func(x *agentmem.UserExport) { x.Memories[0].Version = math.MaxInt64 }, []string{"memories[0].version"}},
		{"MemoryVersionNegative", func(x *agentmem.UserExport) { x.Memories[1].Version = -1 }, []string{"memories[1].version"}},
		{"MemoryVersionNotHistory", func(x *agentmem.UserExport) { x.Memories[0].Version = 3 }, []string{"memories[0].version"}},
		{"ProfileVersionHuge", func(x *agentmem.UserExport) { x.Profiles[0].Version = math.MaxInt64 }, []string{"profiles[0].version"}},
		{"ProfileVersionInt32", func(x *agentmem.UserExport) { x.Profiles[1].Version = math.MaxInt32 + 1 }, []string{"profiles[1].version"}},
		{"HistoryVersionTwice", func(x *agentmem.UserExport) { x.Memories[0].History[1].Version = 1 }, []string{"memories[0].history[1].version"}},
		{"HistoryOp", func(x *agentmem.UserExport) { x.Memories[0].History[0].Op = "merge" }, []string{"memories[0].history[0].op"}},
		{"HistoryConfidence", func(x *agentmem.UserExport) { x.Memories[0].History[0].Confidence = 7 }, []string{"memories[0].history[0].confidence"}},
		{"HistoryAtFuture", func(x *agentmem.UserExport) { x.Memories[0].History[1].At = future }, []string{"memories[0].history[1].at"}},
		{"MemoryConfidence", func(x *agentmem.UserExport) { x.Memories[1].Confidence = 1.5 }, []string{"memories[1]", "confidence"}},
		{"MemorySource", func(x *agentmem.UserExport) { x.Memories[1].Source = "rumour" }, []string{"memories[1].source"}},
		{"MemorySourceSeqs", func(x *agentmem.UserExport) { x.Memories[0].Sources[1].SeqFrom = 5 }, []string{"memories[0]", "sources[1].seq_from"}},
		{"MemorySourceWithoutThread", func(x *agentmem.UserExport) { x.Memories[0].Sources[0].ThreadID = "" }, []string{"memories[0]", "sources[0].thread_id"}},
		{"MemorySeqsWithoutThread", func(x *agentmem.UserExport) { x.Memories[1].SeqFrom, x.Memories[1].SeqTo = 3, 4 }, []string{"memories[1].seq_from"}},
		{"MemoryCreatedFuture", func(x *agentmem.UserExport) { x.Memories[0].CreatedAt = future }, []string{"memories[0].created_at"}},
		{"MemoryInvalidYear10000", func(x *agentmem.UserExport) { x.Memories[0].InvalidAt = &year10000 }, []string{"memories[0].invalid_at"}},
		{"MemorySupersededButValid", func(x *agentmem.UserExport) { x.Memories[1].SupersededBy = "mem-old" }, []string{"memories[1].superseded_by"}},
		{"ThreadDeletedYear10000", func(x *agentmem.UserExport) { x.Threads[1].Thread.DeletedAt = &year10000 }, []string{"threads[1]", "thread.deleted_at"}},
		{"ThreadCreatedFuture", func(x *agentmem.UserExport) { x.Threads[0].Thread.CreatedAt = future }, []string{"threads[0]", "thread.created_at"}},
		{"ThreadMessageCount", func(x *agentmem.UserExport) { x.Threads[0].Thread.MessageCount = -5 }, []string{"threads[0]", "thread.message_count"}},
		{"MessageSeqNegative", func(x *agentmem.UserExport) { x.Threads[0].Messages[0].Seq = -1 }, []string{"threads[0]", "messages[0].seq"}},
		{"MessageTokenCount", func(x *agentmem.UserExport) { x.Threads[0].Messages[1].TokenCount = -1 }, []string{"threads[0]", "messages[1].token_count"}},
		{"ElementCreatedYear10000", func(x *agentmem.UserExport) { x.Threads[0].Elements[0].CreatedAt = year10000 }, []string{"threads[0]", "elements[0]", "created_at"}},
		{"SessionUpdatedFuture", func(x *agentmem.UserExport) { x.Sessions[0].UpdatedAt = future }, []string{"sessions[0].updated_at"}},
		{"ProfileCreatedFuture", func(x *agentmem.UserExport) { x.Profiles[1].CreatedAt = future }, []string{"profiles[1].created_at"}},
		{"EntityCreatedFuture", func(x *agentmem.UserExport) { x.Entities[0].CreatedAt = future }, []string{"entities[0].created_at"}},
		{"ReflectionThroughSeqHuge", func(x *agentmem.UserExport) { x.Reflections[0].ThroughSeq = math.MaxInt64 }, []string{"reflections[0].through_seq"}},
		{"ReflectionUpdatedYear10000", func(x *agentmem.UserExport) { x.Reflections[0].UpdatedAt = year10000 }, []string{"reflections[0].updated_at"}},

		// Item 8: records that point at nothing.
		{"ReflectionOfNoThread", func(x *agentmem.UserExport) { x.Reflections[0].ThreadID = "ghost" }, []string{"reflections[0].thread_id", `"ghost"`}},
		{"SessionOfNoThread", func(x *agentmem.UserExport) { x.Sessions[0].ThreadID = "ghost" }, []string{"sessions[0].thread_id", `"ghost"`}},
		{"ReferenceToNoThread", func(x *agentmem.UserExport) { x.Entities[0].References[0].ThreadID = "ghost" }, []string{"entities[0].references[0].thread_id"}},
		{"MemoryOfNoThread", func(x *agentmem.UserExport) { x.Memories[0].ThreadID = "ghost" }, []string{"memories[0].thread_id", `"ghost"`}},
		{"MemorySourceOfNoThread", func(x *agentmem.UserExport) {
			x.Memories[0].Sources = append(x.Memories[0].Sources, agentmem.ThreadRange{ThreadID: "ghost", SeqFrom: 1, SeqTo: 1})
		}, []string{"memories[0].sources[2].thread_id", `"ghost"`}},
		{"SupersededByNoMemory", func(x *agentmem.UserExport) { x.Memories[0].SupersededBy = "ghost" }, []string{"memories[0].superseded_by", `"ghost"`}},
		{"ElementOfNoMessage", func(x *agentmem.UserExport) { x.Threads[0].Elements[0].MessageID = "ghost" }, []string{"threads[0]", "elements[0].message_id"}},

		// Item 8: the same record twice, different.
		{"MessageInTwoThreads", func(x *agentmem.UserExport) { x.Threads[1].Messages[0].ID = "m1" }, []string{"threads[1].messages[0].id", `"m1"`}},
		{"ElementInTwoThreads", func(x *agentmem.UserExport) {
			x.Threads[1].Elements = []*agentmem.Element{{ID: "e1", Name: "again"}}
		}, []string{"threads[1].elements[0].id", `"e1"`}},
		{"MemoryTwice", func(x *agentmem.UserExport) {
			m := *x.Memories[1].Memory
			m.Text = "User lives in Bergen."
			x.Memories = append(x.Memories, &agentmem.MemoryExport{Memory: &m})
		}, []string{"memories[2].id", `"mem-new"`}},
		{"EntityNameTwice", func(x *agentmem.UserExport) {
			x.Entities = append(x.Entities, &agentmem.EntityExport{Entity: &agentmem.Entity{ID: "ent-2", Name: "lisbon"}})
		}, []string{"entities[1]", "Lisbon"}},
		{"EntityTwice", func(x *agentmem.UserExport) {
			x.Entities = append(x.Entities, &agentmem.EntityExport{Entity: &agentmem.Entity{ID: "ent-lisbon", Name: "Porto"}})
		}, []string{"entities[1].id", `"ent-lisbon"`}},
		{"SessionTwice", func(x *agentmem.UserExport) {
			x.Sessions = append(x.Sessions, &agentmem.Session{AgentID: "planner", ThreadID: "old"})
		}, []string{"sessions[1].agent_id", `"planner"`}},
		{"ReflectionTwice", func(x *agentmem.UserExport) {
			x.Reflections = append(x.Reflections, &agentmem.Reflection{ThreadID: "trip", Status: agentmem.ReflectionPending})
		}, []string{"reflections[1].thread_id", `"trip"`}},
		{"NotesVersionTwice", func(x *agentmem.UserExport) {
			x.Notes = append(x.Notes, &agentmem.Notes{AgentID: "planner", Version: 2, Content: "other"})
		}, []string{"notes[2].version"}},
		{"ProfileVersionTwice", func(x *agentmem.UserExport) {
			x.Profiles = append(x.Profiles, &agentmem.Profile{Version: 2, Text: "other", Method: agentmem.ProfileAssembled})
		}, []string{"profiles[2].version"}},
		{"ReferenceTwice", func(x *agentmem.UserExport) {
			r := *x.Entities[0].References[0]
			r.Seq = 2
			x.Entities[0].References = append(x.Entities[0].References, &r)
		}, []string{"entities[0].references[1]"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			user := fmt.Sprintf("u%d", i)
			x := richExport()
			c.mutate(x)
			res, err := s.ImportUser(ctx, user, x, agentmem.ImportOptions{})
			if agentmem.ErrorCode(err) != agentmem.EINVALID {
				t.Fatalf("import: %+v, %v (%s); want EINVALID", res, err, agentmem.ErrorCode(err))
			}
			for _, w := range c.want {
				if msg := agentmem.ErrorMessage(err); !strings.Contains(msg, w) {
					t.Fatalf("error %q does not name %s", msg, w)
				}
			}
			if ts, _, err := s.FindThreads(ctx, user, agentmem.ThreadFilter{IncludeDeleted: true}); err != nil || len(ts) != 0 {
				t.Fatalf("a refused import wrote threads %+v, %v", ts, err)
			}
		})
	}
}

// testImportUserMaxVersion: versions up to agentmem.MaxVersion import,
// and the next write makes the next version of them: nothing wraps.
func testImportUserMaxVersion(t *testing.T, s agentmem.Store) {
	const max = 1 << 30 // agentmem.MaxVersion
	x := richExport()
	x.Notes = x.Notes[1:]
	x.Notes[0].Version = max
	x.Profiles = x.Profiles[:1]
	x.Profiles[0].Version = max
	x.Memories = x.Memories[1:]
	x.Memories[0].Version = max
	res, err := s.ImportUser(ctx, "max", x, agentmem.ImportOptions{})
	if err != nil {
		t.Fatalf("import at version %d: %+v, %v", max, res, err)
	}
	n, err := s.PutNotes(ctx, "max", "planner", agentmem.NotesOp{Operation: agentmem.NotesOverwrite, Content: "new"})
	if err != nil || n.Version != max+1 {
		t.Fatalf("notes after the import: %+v, %v; want version %d", n, err, max+1)
	}
	if n, err := s.FindNotes(ctx, "max", "planner"); err != nil || n.Content != "new" {
		t.Fatalf("notes read back: %+v, %v; want the new content", n, err)
	}
	m, err := s.UpdateMemory(ctx, "max", "mem-new", agentmem.MemoryUpdate{Text: ptr("User lives in Bergen.")})
	if err != nil || m.Version != max+1 {
		t.Fatalf("memory after the import: %+v, %v; want version %d", m, err, max+1)
	}
}

// testImportUserDuplicates: a record the export holds twice, identical,
// is imported once; the repeat is counted as a duplicate, not as
// imported.
func testImportUserDuplicates(t *testing.T, s agentmem.Store) {
	x := richExport()
	again := richCopy(t, x)
	x.Threads = append(x.Threads, again.Threads[0])
	x.Sessions = append(x.Sessions, again.Sessions[0])
	x.Notes = append(x.Notes, again.Notes[0])
	x.Memories = append(x.Memories, again.Memories[1])
	x.Profiles = append(x.Profiles, again.Profiles[0])
	x.Entities = append(x.Entities, again.Entities[0])
	x.Reflections = append(x.Reflections, again.Reflections[0])
	res, err := s.ImportUser(ctx, "dup", x, agentmem.ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := agentmem.ImportCounts{Threads: 2, Messages: 5, Sessions: 1, Notes: 2, Memories: 2, Profiles: 2, Entities: 1, Reflections: 1}
	if diff := cmp.Diff(want, res.Imported); diff != "" {
		t.Fatalf("imported counts mismatch (-want +got):\n%s", diff)
	}
	dups := agentmem.ImportCounts{Threads: 1, Messages: 4, Sessions: 1, Notes: 1, Memories: 1, Profiles: 1, Entities: 1, Reflections: 1}
	if diff := cmp.Diff(dups, res.Duplicates); diff != "" {
		t.Fatalf("duplicate counts mismatch (-want +got):\n%s", diff)
	}
	if len(res.ThreadIDs) != 2 || len(res.MemoryIDs) != 2 {
		t.Fatalf("thread IDs %v, memory IDs %v: want each once", res.ThreadIDs, res.MemoryIDs)
	}
	if msgs, _, err := s.FindMessages(ctx, "dup", "trip", agentmem.MessageFilter{}); err != nil || len(msgs) != 4 {
		t.Fatalf("trip has %d messages, %v; want 4", len(msgs), err)
	}
}

// testImportUserStoredRefs: an import's records may point at records
// the user already has (a thread, a memory), within their range.
func testImportUserStoredRefs(t *testing.T, s agentmem.Store) {
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	MustCreateThread(t, s, &agentmem.Thread{UserID: "ann", ID: "kept"})
	if _, err := s.AppendMessages(ctx, "ann", "kept", []*agentmem.Message{
		{Role: agentmem.RoleUser, Content: "one"}, {Role: agentmem.RoleAssistant, Content: "two"}, {Role: agentmem.RoleUser, Content: "three"},
	}, agentmem.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateMemory(ctx, &agentmem.Memory{UserID: "ann", ID: "mine", Text: "User counts."}); err != nil {
		t.Fatal(err)
	}
	build := func(seq int64) *agentmem.UserExport {
		return &agentmem.UserExport{Version: agentmem.ExportVersion,
			Sessions: []*agentmem.Session{{AgentID: "bot", ThreadID: "kept", UpdatedAt: at}},
			Memories: []*agentmem.MemoryExport{{Memory: &agentmem.Memory{ID: "old", Text: "User counted.", Confidence: 1, ThreadID: "kept", SeqFrom: 1, SeqTo: seq,
				Version: 2, InvalidAt: &at, SupersededBy: "mine", CreatedAt: at, UpdatedAt: at},
				History: []*agentmem.MemoryChange{{Version: 1, Op: agentmem.OpAdd, Text: "User counted.", At: at}, {Version: 2, Op: agentmem.OpInvalidate, Text: "User counted.", At: at}}}},
			Entities: []*agentmem.EntityExport{{Entity: &agentmem.Entity{ID: "n", Name: "Numbers"},
				References: []*agentmem.EntityRef{{ThreadID: "kept", Seq: seq, At: at}}}},
			Reflections: []*agentmem.Reflection{{ThreadID: "kept", Status: agentmem.ReflectionNoInsight, ThroughSeq: seq, UpdatedAt: at}},
		}
	}
	_, err := s.ImportUser(ctx, "ann", build(4), agentmem.ImportOptions{})
	wantCode(t, err, agentmem.EINVALID)
	if msg := agentmem.ErrorMessage(err); !strings.Contains(msg, "seq") || !strings.Contains(msg, `"kept"`) {
		t.Fatalf("error %q: want it to name a seq past thread kept's end", msg)
	}
	res, err := s.ImportUser(ctx, "ann", build(3), agentmem.ImportOptions{})
	if err != nil || res.Imported.Memories != 1 || res.Imported.Reflections != 1 || res.Imported.Sessions != 1 {
		t.Fatalf("import pointing at the user's records: %+v, %v", res, err)
	}
	if r, err := s.FindReflection(ctx, "ann", "kept"); err != nil || r.ThroughSeq != 3 {
		t.Fatalf("reflection %+v, %v", r, err)
	}
}

// testImportUserStoredClashes: what an import clashes with is found
// before anything is written, whatever record it is: an element ID the
// user has in another thread (like a message ID), the reflection of a
// thread of the user's that the export does not hold.
func testImportUserStoredClashes(t *testing.T, s agentmem.Store) {
	MustCreateThread(t, s, &agentmem.Thread{UserID: "eve", ID: "other"})
	if err := s.CreateElement(ctx, "eve", "other", &agentmem.Element{ID: "e1", Name: "mine"}); err != nil {
		t.Fatal(err)
	}
	_, err := s.ImportUser(ctx, "eve", richExport(), agentmem.ImportOptions{})
	wantCode(t, err, agentmem.ECONFLICT)
	if msg := agentmem.ErrorMessage(err); !strings.Contains(msg, `thread "trip"`) {
		t.Fatalf("conflict %q: want it to name thread trip, whose element e1 the user has", msg)
	}
	res, err := s.ImportUser(ctx, "eve", richExport(), agentmem.ImportOptions{OnConflict: agentmem.OnConflictSkip})
	if err != nil || res.Skipped.Threads != 1 || res.Imported.Threads != 1 {
		t.Fatalf("skip: %+v, %v; want trip skipped, old imported", res, err)
	}
	if els, _, err := s.FindElements(ctx, "eve", "other", agentmem.ElementFilter{}); err != nil || len(els) != 1 || els[0].Name != "mine" {
		t.Fatalf("skip changed the user's element: %+v, %v", els, err)
	}

	// A reflection of a thread the user has, with one already.
	MustCreateThread(t, s, &agentmem.Thread{UserID: "fay", ID: "done"})
	if err := s.PutReflections(ctx, "fay", []*agentmem.Reflection{{ThreadID: "done", Status: agentmem.ReflectionProcessed, Reason: "mine"}}, nil); err != nil {
		t.Fatal(err)
	}
	x := &agentmem.UserExport{Version: agentmem.ExportVersion,
		Reflections: []*agentmem.Reflection{{ThreadID: "done", Status: agentmem.ReflectionNoInsight, Reason: "theirs"}}}
	_, err = s.ImportUser(ctx, "fay", richCopy(t, x), agentmem.ImportOptions{})
	wantCode(t, err, agentmem.ECONFLICT)
	if r, err := s.FindReflection(ctx, "fay", "done"); err != nil || r.Reason != "mine" {
		t.Fatalf("a refused import changed the reflection: %+v, %v", r, err)
	}
	res, err = s.ImportUser(ctx, "fay", richCopy(t, x), agentmem.ImportOptions{OnConflict: agentmem.OnConflictSkip})
	if err != nil || res.Skipped.Reflections != 1 || res.Imported.Reflections != 0 {
		t.Fatalf("skip: %+v, %v", res, err)
	}
	res, err = s.ImportUser(ctx, "fay", richCopy(t, x), agentmem.ImportOptions{OnConflict: agentmem.OnConflictReplace})
	if err != nil || res.Replaced.Reflections != 1 {
		t.Fatalf("replace: %+v, %v", res, err)
	}
	if r, err := s.FindReflection(ctx, "fay", "done"); err != nil || r.Reason != "theirs" {
		t.Fatalf("replace kept the reflection: %+v, %v", r, err)
	}
}

// testImportUserLongThread: a thread of more messages than an append
// takes at once imports whole.
func testImportUserLongThread(t *testing.T, s agentmem.Store) {
	x := &agentmem.UserExport{Version: agentmem.ExportVersion, Threads: []*agentmem.ThreadExport{{Version: agentmem.ExportVersion, Thread: &agentmem.Thread{ID: "long"}}}}
	for i := range agentmem.MaxBatchMessages + 1 {
		x.Threads[0].Messages = append(x.Threads[0].Messages, &agentmem.Message{Role: agentmem.RoleUser, Content: fmt.Sprint(i)})
	}
	res, err := s.ImportUser(ctx, "long", x, agentmem.ImportOptions{})
	if err != nil || res.Imported.Messages != agentmem.MaxBatchMessages+1 {
		t.Fatalf("import: %+v, %v", res, err)
	}
}

// testExportDeletedThread: what an export reads of a soft-deleted thread
// besides its messages: its reflection (FindThreadReflections) and the
// references to it (EntityRefFilter.IncludeDeleted), which the usual
// reads leave out.
func testExportDeletedThread(t *testing.T, s agentmem.Store) {
	for _, id := range []string{"live", "soft"} {
		MustCreateThread(t, s, &agentmem.Thread{UserID: "gil", ID: id})
		if err := s.PutReflections(ctx, "gil", []*agentmem.Reflection{{ThreadID: id, Status: agentmem.ReflectionNoInsight, Reason: id}}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.PutEntities(ctx, "gil", []*agentmem.Entity{{ID: "tea", Name: "Tea"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutEntityRefs(ctx, "gil", []*agentmem.EntityRef{{EntityID: "tea", ThreadID: "live"}, {EntityID: "tea", ThreadID: "soft"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteThread(ctx, "gil", "soft", false); err != nil {
		t.Fatal(err)
	}
	if _, err := s.FindReflection(ctx, "gil", "soft"); agentmem.ErrorCode(err) != agentmem.ENOTFOUND {
		t.Fatalf("FindReflection of a soft-deleted thread: %v, want ENOTFOUND", err)
	}
	rs, err := s.FindThreadReflections(ctx, "gil", []string{"soft", "live", "none"})
	if err != nil || len(rs) != 2 {
		t.Fatalf("FindThreadReflections: %+v, %v; want the live and the soft-deleted thread's", rs, err)
	}
	for _, r := range rs {
		if r.UserID != "gil" || r.Reason != r.ThreadID {
			t.Fatalf("reflection %+v", r)
		}
	}
	if rs, err := s.FindThreadReflections(ctx, "other", []string{"soft", "live"}); err != nil || len(rs) != 0 {
		t.Fatalf("another user's FindThreadReflections: %+v, %v; want none", rs, err)
	}
	_, err = s.FindThreadReflections(ctx, "gil", make([]string, agentmem.MaxPageSize+1))
	wantCode(t, err, agentmem.EINVALID)

	for _, c := range []struct {
		includeDeleted bool
		want           int
	}{{false, 1}, {true, 2}} {
		refs, _, err := s.FindEntityRefs(ctx, "gil", agentmem.EntityRefFilter{EntityID: "tea", IncludeDeleted: c.includeDeleted})
		if err != nil || len(refs) != c.want {
			t.Fatalf("references with IncludeDeleted=%v: %+v, %v; want %d", c.includeDeleted, refs, err, c.want)
		}
	}
}
