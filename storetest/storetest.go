// Package storetest is the conformance suite of agentmem.Store: every
// backend runs it against a fresh, migrated store of its own.
package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// Run exercises the agentmem.Store contract. open returns an empty,
// migrated store that the suite may close; each call returns a new one.
// The cases run in parallel, each on a store of its own, so open must be
// safe to call from several goroutines.
func Run(t *testing.T, open func(tb testing.TB) agentmem.Store) {
	for _, c := range []struct {
		name string
		test func(*testing.T, agentmem.Store)
	}{
		{"CreateThread", testCreateThread},
		{"FindThreads", testFindThreads},
		{"FindThreads/Filters", testFindThreadsFilters},
		{"FindThreads/Title", testFindThreadsTitle},
		{"Cursors", testCursorsBound},
		{"Filters/Text", testFilterText},
		{"IDs/Dots", testDotIDs},
		{"UpdateThread", testUpdateThread},
		{"DeleteThread", testDeleteThread},
		{"RestoreThread", testRestoreThread},
		{"FindThreads/Deleted", testFindDeletedThreads},
		{"AppendMessages", testAppendMessages},
		{"AppendMessages/Invalid", testAppendInvalid},
		{"AppendMessages/Idempotency", testIdempotency},
		{"AppendMessages/ClientIDs", testClientIDs},
		{"AppendMessages/Concurrent", testConcurrentAppends},
		{"AppendMessages/ConcurrentRetries", testConcurrentRetries},
		{"AppendMessages/Jobs", testAppendJobs},
		{"AppendMessages/JobsCoverage", testAppendJobsCoverage},
		{"FindMessages", testFindMessages},
		{"Elements", testElements},
		{"Sessions", testSessions},
		{"Sessions/Open", testOpenSession},
		{"Sessions/SetWhileOpening", testSetSessionWhileOpening},
		{"ImportExport", testImportExport},
		{"ImportUser", testImportUser},
		{"ImportUser/Conflicts", testImportUserConflicts},
		{"ImportUser/Atomic", testImportUserAtomic},
		{"ImportUser/Version1", testImportUserVersion1},
		{"ImportUser/Jobs", testImportUserJobs},
		{"ImportUser/Checks", testImportUserChecks},
		{"ImportUser/MaxVersion", testImportUserMaxVersion},
		{"ImportUser/Duplicates", testImportUserDuplicates},
		{"ImportUser/StoredRefs", testImportUserStoredRefs},
		{"ImportUser/StoredClashes", testImportUserStoredClashes},
		{"ImportUser/LongThread", testImportUserLongThread},
		{"Export/DeletedThread", testExportDeletedThread},
		{"DeleteUser", testDeleteUser},
		{"DeleteUser/JobsInFlight", testErasureJobsInFlight},
		{"DeleteUser/RequestsInFlight", testErasureRequestsInFlight},
		{"DeleteThreadsBefore", testDeleteThreadsBefore},
		{"Stats", testStats},
		{"FindUsers", testFindUsers},
		{"Keys", testKeys},
		{"Keys/Find", testFindKeys},
		{"Audit", testAudit},
		{"EnqueueJob", testEnqueueJob},
		{"EnqueueJob/Concurrent", testEnqueueJobConcurrent},
		{"ClaimJobs", testClaimJobs},
		{"ClaimJobs/Lease", testClaimJobsLease},
		{"ClaimJobs/Concurrent", testClaimJobsConcurrent},
		{"ClaimJobs/Serial", testClaimJobsSerial},
		{"JobBacklog", testJobBacklog},
		{"ActiveJobs", testActiveJobs},
		{"DeleteDoneJobs", testDeleteDoneJobs},
		{"ClaimJobs/SerialConcurrent", testClaimJobsSerialConcurrent},
		{"CompleteJob", testCompleteJob},
		{"ReleaseJob", testReleaseJob},
		{"FailJob", testFailJob},
		{"RetryJob", testRetryJob},
		{"FindJobs", testFindJobs},
		{"Jobs/Erasure", testJobErasure},
		{"PutSummary", testPutSummary},
		{"PutSummary/Concurrent", testPutSummaryConcurrent},
		{"Summaries/Erasure", testSummaryErasure},
		{"PutReflections", testPutReflections},
		{"FindReflections", testFindReflections},
		{"Profiles", testProfiles},
		{"Profiles/Processed", testProfileProcessed},
		{"PutProfile/Concurrent", testPutProfileConcurrent},
		{"Reflections/Erasure", testReflectionErasure},
		{"CreateMemory", testCreateMemory},
		{"UpdateMemory", testUpdateMemory},
		{"InvalidateMemory", testInvalidateMemory},
		{"WriteMemories", testWriteMemories},
		{"DeleteMemory", testDeleteMemory},
		{"FindMemories", testFindMemories},
		{"FindMemorySources", testFindMemorySources},
		{"Memories/Sources", testMemorySources},
		{"Memories/Erasure", testMemoryErasure},
		{"Memories/Concurrent", testMemoriesConcurrent},
		{"Entities", testEntities},
		{"EntityRefs", testEntityRefs},
		{"Entities/Erasure", testEntityErasure},
		{"Entities/Concurrent", testEntitiesConcurrent},
		{"Vectors", testVectors},
		{"VectorSpaces", testVectorSpaces},
		{"SearchText", testSearchText},
		{"FindItems", testFindItems},
		{"SearchText/MemoryKind", testSearchMemoryKind},
		{"Chunks", testChunks},
		{"Chunks/Labels", testChunkLabels},
		{"Chunks/Text", testChunkText},
		{"MessageWindows", testMessageWindows},
		{"SummarySearch", testSummarySearch},
		{"VectorsState", testVectorsState},
		{"Notes", testNotes},
		{"Notes/Concurrent", testNotesConcurrent},
		{"Notes/Erasure", testNotesErasure},
		{"FindIdleThreads", testFindIdleThreads},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.test(t, open(t))
		})
	}
}

var ctx = context.Background()

// wantCode fails unless err carries the agentmem error code.
func wantCode(tb testing.TB, err error, code string) {
	tb.Helper()
	if got := agentmem.ErrorCode(err); got != code {
		tb.Fatalf("error code=%q (%v), want %q", got, err, code)
	}
}

// MustCreateThread creates a thread for user with the given fields.
func MustCreateThread(tb testing.TB, s agentmem.Store, t *agentmem.Thread) *agentmem.Thread {
	tb.Helper()
	if err := s.CreateThread(ctx, t); err != nil {
		tb.Fatalf("CreateThread: %v", err)
	}
	return t
}

// MustAppend appends messages built from role/content pairs.
func MustAppend(tb testing.TB, s agentmem.Store, user, thread string, pairs ...string) []*agentmem.Message {
	tb.Helper()
	var msgs []*agentmem.Message
	for i := 0; i+1 < len(pairs); i += 2 {
		msgs = append(msgs, &agentmem.Message{Role: pairs[i], Content: pairs[i+1]})
	}
	out, err := s.AppendMessages(ctx, user, thread, msgs, agentmem.AppendOptions{})
	if err != nil {
		tb.Fatalf("AppendMessages: %v", err)
	}
	return out
}

func allMessages(tb testing.TB, s agentmem.Store, user, thread string) []*agentmem.Message {
	tb.Helper()
	var all []*agentmem.Message
	for cursor := ""; ; {
		page, next, err := s.FindMessages(ctx, user, thread, agentmem.MessageFilter{Limit: agentmem.MaxPageSize, Cursor: cursor})
		if err != nil {
			tb.Fatalf("FindMessages: %v", err)
		}
		all = append(all, page...)
		if cursor = next; cursor == "" {
			return all
		}
	}
}

func wantSeqs(tb testing.TB, msgs []*agentmem.Message, n int) {
	tb.Helper()
	if len(msgs) != n {
		tb.Fatalf("len(messages)=%d, want %d", len(msgs), n)
	}
	for i, m := range msgs {
		if m.Seq != int64(i+1) {
			tb.Fatalf("messages[%d].Seq=%d, want %d", i, m.Seq, i+1)
		}
	}
}

// mustFindThread returns a user's thread, failing tb if it cannot.
func mustFindThread(tb testing.TB, s agentmem.ThreadStore, user, id string) *agentmem.Thread {
	tb.Helper()
	th, err := s.FindThreadByID(ctx, user, id)
	if err != nil {
		tb.Fatalf("FindThreadByID(%q, %q): %v", user, id, err)
	}
	return th
}

// mustFindThreads returns the first page of a user's threads, failing tb
// if it cannot.
func mustFindThreads(tb testing.TB, s agentmem.ThreadStore, user string, f agentmem.ThreadFilter) []*agentmem.Thread {
	tb.Helper()
	page, _, err := s.FindThreads(ctx, user, f)
	if err != nil {
		tb.Fatalf("FindThreads(%q, %+v): %v", user, f, err)
	}
	return page
}

// mustFindUserIDs returns up to limit user IDs after after, failing tb if
// it cannot.
func mustFindUserIDs(tb testing.TB, s agentmem.UserStore, after string, limit int) []string {
	tb.Helper()
	ids, err := s.FindUserIDs(ctx, after, limit)
	if err != nil {
		tb.Fatalf("FindUserIDs(%q, %d): %v", after, limit, err)
	}
	return ids
}

// mustMarshal returns v's JSON, failing tb if it cannot.
func mustMarshal(tb testing.TB, v any) []byte {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatalf("json.Marshal(%T): %v", v, err)
	}
	return b
}

func testCreateThread(t *testing.T, s agentmem.Store) {
	th := MustCreateThread(t, s, &agentmem.Thread{UserID: "alice", AgentID: "helper", Metadata: json.RawMessage(` {"k": [1, 2]} `), Tags: []string{"a", "b", "a"}})
	if th.ID == "" || th.Status != agentmem.ThreadActive || th.CreatedAt.IsZero() || !th.CreatedAt.Equal(th.UpdatedAt) {
		t.Fatalf("created thread = %+v", th)
	}
	got, err := s.FindThreadByID(ctx, "alice", th.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(th, got, jsonEqual()); diff != "" {
		t.Fatalf("FindThreadByID mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"a", "b"}, got.Tags); diff != "" {
		t.Fatalf("tags mismatch (-want +got):\n%s", diff)
	}

	t.Run("ClientID", func(t *testing.T) {
		MustCreateThread(t, s, &agentmem.Thread{UserID: "alice", ID: "my-thread"})
		wantCode(t, s.CreateThread(ctx, &agentmem.Thread{UserID: "alice", ID: "my-thread"}), agentmem.ECONFLICT)
		// IDs are per user: bob may use the same one.
		MustCreateThread(t, s, &agentmem.Thread{UserID: "bob", ID: "my-thread"})
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		_, err := s.FindThreadByID(ctx, "bob", th.ID)
		wantCode(t, err, agentmem.ENOTFOUND)
		_, err = s.FindThreadByID(ctx, "alice", "nope")
		wantCode(t, err, agentmem.ENOTFOUND)
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		for _, bad := range []*agentmem.Thread{
			{UserID: ""},
			{UserID: "alice", ID: "a/b"},
			{UserID: "alice", ID: strings.Repeat("x", agentmem.MaxIDBytes+1)},
			{UserID: "alice", Status: "paused"},
			{UserID: "alice", Metadata: json.RawMessage(`[1]`)},
			{UserID: "alice", Metadata: json.RawMessage(`{"a":`)},
			{UserID: "alice", Title: "bad \xff"},
			{UserID: "alice", Tags: []string{""}},
		} {
			wantCode(t, s.CreateThread(ctx, bad), agentmem.EINVALID)
		}
	})
}

// jsonEqual compares json.RawMessage values by meaning, not bytes (a
// backend may store JSON in a normalised form).
func jsonEqual() cmp.Option {
	return cmp.Comparer(func(a, b json.RawMessage) bool {
		var x, y any
		if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
			return string(a) == string(b)
		}
		return cmp.Equal(x, y)
	})
}

func testFindThreads(t *testing.T, s agentmem.Store) {
	var ids []string
	for i := range 25 {
		agent := "a"
		if i%5 == 0 {
			agent = "b"
		}
		th := MustCreateThread(t, s, &agentmem.Thread{UserID: "alice", AgentID: agent})
		ids = append(ids, th.ID)
	}
	MustCreateThread(t, s, &agentmem.Thread{UserID: "bob"})
	// Touching the oldest thread makes it the newest.
	time.Sleep(2 * time.Millisecond)
	MustAppend(t, s, "alice", ids[0], agentmem.RoleUser, "hello")

	var seen []*agentmem.Thread
	pages := 0
	for cursor := ""; ; pages++ {
		page, next, err := s.FindThreads(ctx, "alice", agentmem.ThreadFilter{Limit: 7, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		if len(page) > 7 {
			t.Fatalf("page of %d threads, limit 7", len(page))
		}
		seen = append(seen, page...)
		if cursor = next; cursor == "" {
			break
		}
	}
	if len(seen) != 25 || pages != 3 {
		t.Fatalf("listed %d threads in %d pages, want 25 in 4", len(seen), pages+1)
	}
	if seen[0].ID != ids[0] {
		t.Fatalf("first thread=%s, want the one just appended to (%s)", seen[0].ID, ids[0])
	}
	unique := map[string]bool{}
	for i, th := range seen {
		if th.UserID != "alice" {
			t.Fatalf("listed a thread of %q", th.UserID)
		}
		unique[th.ID] = true
		if i > 0 {
			p := seen[i-1]
			if th.UpdatedAt.After(p.UpdatedAt) || (th.UpdatedAt.Equal(p.UpdatedAt) && th.ID > p.ID) {
				t.Fatalf("threads %d and %d out of order", i-1, i)
			}
		}
	}
	if len(unique) != 25 {
		t.Fatalf("%d distinct threads, want 25", len(unique))
	}

	t.Run("AgentFilter", func(t *testing.T) {
		b := "b"
		page, next, err := s.FindThreads(ctx, "alice", agentmem.ThreadFilter{AgentID: &b})
		if err != nil {
			t.Fatal(err)
		}
		if len(page) != 5 || next != "" {
			t.Fatalf("agent b: %d threads, next %q; want 5 and no next page", len(page), next)
		}
		for _, th := range page {
			if th.AgentID != "b" {
				t.Fatalf("agent filter returned agent %q", th.AgentID)
			}
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		_, _, err := s.FindThreads(ctx, "alice", agentmem.ThreadFilter{Cursor: "garbage!"})
		wantCode(t, err, agentmem.EINVALID)
		_, _, err = s.FindThreads(ctx, "alice", agentmem.ThreadFilter{Limit: -1})
		wantCode(t, err, agentmem.EINVALID)
		_, _, err = s.FindThreads(ctx, "alice", agentmem.ThreadFilter{Limit: agentmem.MaxPageSize + 1})
		wantCode(t, err, agentmem.EINVALID)
	})
	t.Run("Empty", func(t *testing.T) {
		page, next, err := s.FindThreads(ctx, "nobody", agentmem.ThreadFilter{})
		if err != nil || page == nil || len(page) != 0 || next != "" {
			t.Fatalf("FindThreads(nobody) = %v, %q, %v; want an empty non-nil page", page, next, err)
		}
	})
}

func testUpdateThread(t *testing.T, s agentmem.Store) {
	th := MustCreateThread(t, s, &agentmem.Thread{UserID: "alice", Title: "old"})
	time.Sleep(time.Millisecond)
	title, meta, tags := "new", json.RawMessage(`{"x":1}`), []string{"t"}
	got, err := s.UpdateThread(ctx, "alice", th.ID, agentmem.ThreadUpdate{Title: &title, Metadata: &meta, Tags: &tags})
	if err != nil {
		t.Fatal(err)
	}
	if got.Title != "new" || string(got.Metadata) != `{"x":1}` || len(got.Tags) != 1 || !got.UpdatedAt.After(th.UpdatedAt) {
		t.Fatalf("updated thread = %+v", got)
	}
	found := mustFindThread(t, s, "alice", th.ID)
	if diff := cmp.Diff(got, found, jsonEqual()); diff != "" {
		t.Fatalf("stored update mismatch (-want +got):\n%s", diff)
	}
	_, err = s.UpdateThread(ctx, "bob", th.ID, agentmem.ThreadUpdate{Title: &title})
	wantCode(t, err, agentmem.ENOTFOUND)
	bad := "paused"
	_, err = s.UpdateThread(ctx, "alice", th.ID, agentmem.ThreadUpdate{Status: &bad})
	wantCode(t, err, agentmem.EINVALID)

	t.Run("EndAndReopen", func(t *testing.T) {
		ended, err := s.EndThread(ctx, "alice", th.ID)
		if err != nil {
			t.Fatal(err)
		}
		if ended.Status != agentmem.ThreadEnded || ended.EndedAt == nil || !ended.JustEnded {
			t.Fatalf("ended thread = %+v, want ended, with EndedAt, and JustEnded", ended)
		}
		// Ending it again changes nothing: the end that queues its jobs is
		// the first (see agentmem.Thread.JustEnded).
		again, err := s.EndThread(ctx, "alice", th.ID)
		if err != nil || again.Status != agentmem.ThreadEnded || again.JustEnded || !again.EndedAt.Equal(*ended.EndedAt) {
			t.Fatalf("thread ended again = %+v, %v; want ended at %v, not JustEnded", again, err, ended.EndedAt)
		}
		if read := mustFindThread(t, s, "alice", th.ID); read.JustEnded {
			t.Fatal("a thread read has JustEnded")
		}
		MustAppend(t, s, "alice", th.ID, agentmem.RoleUser, "back again")
		got := mustFindThread(t, s, "alice", th.ID)
		if got.Status != agentmem.ThreadActive || got.EndedAt != nil {
			t.Fatalf("after append to ended thread: status %q ended_at %v, want active and nil", got.Status, got.EndedAt)
		}
		if got.Title != "new" {
			t.Fatalf("title=%q; an explicit title must not be replaced by the auto-title", got.Title)
		}
		_, err = s.EndThread(ctx, "alice", "nope")
		wantCode(t, err, agentmem.ENOTFOUND)
	})

	// The jobs of an end are stored with it, in its transaction, and only
	// by the update that ended the thread.
	t.Run("EndJobs", func(t *testing.T) {
		th := MustCreateThread(t, s, &agentmem.Thread{UserID: "alice"})
		MustAppend(t, s, "alice", th.ID, agentmem.RoleUser, "to be ended")
		ended := agentmem.ThreadEnded
		var saw *agentmem.Thread
		endJobs := func(t *agentmem.Thread) [][]*agentmem.Job {
			saw = t
			return [][]*agentmem.Job{
				{{Kind: "end-index", Key: t.ID + "#a"}, {Kind: "end-index", Key: t.ID + "#b"}},
				{{Kind: "end-reflect", Key: t.ID}},
			}
		}
		kindJobs := func(kind string) []*agentmem.Job {
			js, _, err := s.FindJobs(ctx, agentmem.JobFilter{UserID: ptr("alice"), Kind: &kind})
			if err != nil {
				t.Fatal(err)
			}
			return js
		}
		title := "renamed"
		if _, err := s.UpdateThread(ctx, "alice", th.ID, agentmem.ThreadUpdate{Title: &title, EndJobs: endJobs}); err != nil || saw != nil {
			t.Fatalf("an update that does not end the thread asked for its end's jobs (%v)", err)
		}
		got, err := s.UpdateThread(ctx, "alice", th.ID, agentmem.ThreadUpdate{Status: &ended, EndJobs: endJobs})
		if err != nil || !got.JustEnded || saw == nil || saw.ID != th.ID || saw.Status != agentmem.ThreadEnded {
			t.Fatalf("end: %+v, %v; EndJobs saw %+v", got, err, saw)
		}
		idx, refl := kindJobs("end-index"), kindJobs("end-reflect")
		if len(idx) != 1 || idx[0].Key != th.ID+"#a" || idx[0].Status != agentmem.JobQueued || len(refl) != 1 || refl[0].Key != th.ID {
			t.Fatalf("the end's jobs: index %+v, reflect %+v; want one of each, queued (the first alternative)", idx, refl)
		}
		saw = nil
		if _, err := s.UpdateThread(ctx, "alice", th.ID, agentmem.ThreadUpdate{Status: &ended, EndJobs: endJobs}); err != nil || saw != nil {
			t.Fatalf("ending an ended thread asked for its end's jobs again (%v)", err)
		}
		if len(kindJobs("end-index")) != 1 || len(kindJobs("end-reflect")) != 1 {
			t.Fatal("ending an ended thread queued more jobs")
		}
	})
}

func testDeleteThread(t *testing.T, s agentmem.Store) {
	soft := MustCreateThread(t, s, &agentmem.Thread{UserID: "alice", AgentID: "x"})
	MustAppend(t, s, "alice", soft.ID, agentmem.RoleUser, "hi")
	if _, err := s.SetSession(ctx, "alice", "x", soft.ID); err != nil {
		t.Fatal(err)
	}
	wantCode(t, s.DeleteThread(ctx, "bob", soft.ID, false), agentmem.ENOTFOUND)
	if err := s.DeleteThread(ctx, "alice", soft.ID, false); err != nil {
		t.Fatal(err)
	}
	_, err := s.FindThreadByID(ctx, "alice", soft.ID)
	wantCode(t, err, agentmem.ENOTFOUND)
	_, _, err = s.FindMessages(ctx, "alice", soft.ID, agentmem.MessageFilter{})
	wantCode(t, err, agentmem.ENOTFOUND)
	_, _, err = s.FindElements(ctx, "alice", soft.ID, agentmem.ElementFilter{})
	wantCode(t, err, agentmem.ENOTFOUND)
	// Exports read a soft-deleted thread's messages and elements.
	if msgs, _, err := s.FindMessages(ctx, "alice", soft.ID, agentmem.MessageFilter{IncludeDeleted: true}); err != nil || len(msgs) != 1 {
		t.Fatalf("IncludeDeleted messages: %v, %v; want the one message", msgs, err)
	}
	if _, _, err := s.FindElements(ctx, "alice", soft.ID, agentmem.ElementFilter{IncludeDeleted: true}); err != nil {
		t.Fatalf("IncludeDeleted elements: %v", err)
	}
	_, _, err = s.FindMessages(ctx, "bob", soft.ID, agentmem.MessageFilter{IncludeDeleted: true})
	wantCode(t, err, agentmem.ENOTFOUND)
	_, err = s.AppendMessages(ctx, "alice", soft.ID, []*agentmem.Message{{Role: "user", Content: "x"}}, agentmem.AppendOptions{})
	wantCode(t, err, agentmem.ENOTFOUND)
	_, err = s.FindSession(ctx, "alice", "x")
	wantCode(t, err, agentmem.ENOTFOUND)
	wantCode(t, s.DeleteThread(ctx, "alice", soft.ID, false), agentmem.ENOTFOUND)
	wantCode(t, s.CreateThread(ctx, &agentmem.Thread{UserID: "alice", ID: soft.ID}), agentmem.ECONFLICT)
	page := mustFindThreads(t, s, "alice", agentmem.ThreadFilter{})
	if len(page) != 0 {
		t.Fatalf("soft-deleted thread still listed")
	}
	page = mustFindThreads(t, s, "alice", agentmem.ThreadFilter{IncludeDeleted: true})
	if len(page) != 1 || page[0].DeletedAt == nil {
		t.Fatalf("IncludeDeleted listed %v, want the soft-deleted thread with deleted_at", page)
	}

	// Permanent deletion removes a soft-deleted thread and frees its IDs.
	if err := s.DeleteThread(ctx, "alice", soft.ID, true); err != nil {
		t.Fatal(err)
	}
	wantCode(t, s.DeleteThread(ctx, "alice", soft.ID, true), agentmem.ENOTFOUND)
	MustCreateThread(t, s, &agentmem.Thread{UserID: "alice", ID: soft.ID})
	if msgs := allMessages(t, s, "alice", soft.ID); len(msgs) != 0 {
		t.Fatalf("recreated thread has %d messages of the deleted one", len(msgs))
	}
	st, err := s.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Messages != 0 {
		t.Fatalf("stats count %d messages after permanent delete", st.Messages)
	}
}

// testRestoreThread: a soft-deleted thread holds its ID (creating it
// again is ECONFLICT, saying so) until it is restored, with its messages,
// or deleted permanently; restoring a thread that is not deleted returns
// it as it is.
func testRestoreThread(t *testing.T, s agentmem.Store) {
	th := MustCreateThread(t, s, &agentmem.Thread{UserID: "alice", ID: "t1", AgentID: "x", Title: "Trip"})
	MustAppend(t, s, "alice", th.ID, agentmem.RoleUser, "hi", agentmem.RoleAssistant, "hello")
	MustCreateThread(t, s, &agentmem.Thread{UserID: "alice", ID: "live"})
	if err := s.DeleteThread(ctx, "alice", th.ID, false); err != nil {
		t.Fatal(err)
	}

	err := s.CreateThread(ctx, &agentmem.Thread{UserID: "alice", ID: th.ID})
	wantCode(t, err, agentmem.ECONFLICT)
	if msg := agentmem.ErrorMessage(err); !strings.Contains(msg, "deleted") || !strings.Contains(msg, "restore") || !strings.Contains(msg, "permanent") {
		t.Fatalf("conflict with a deleted thread says %q; want it to say a deleted thread holds the ID, and how to restore or delete it", msg)
	}
	err = s.CreateThread(ctx, &agentmem.Thread{UserID: "alice", ID: "live"})
	wantCode(t, err, agentmem.ECONFLICT)
	if msg := agentmem.ErrorMessage(err); strings.Contains(msg, "deleted") {
		t.Fatalf("conflict with a live thread says %q, which speaks of a deleted one", msg)
	}

	_, err = s.RestoreThread(ctx, "bob", th.ID)
	wantCode(t, err, agentmem.ENOTFOUND)
	_, err = s.RestoreThread(ctx, "alice", "nope")
	wantCode(t, err, agentmem.ENOTFOUND)
	_, err = s.RestoreThread(ctx, "alice", "a/b")
	wantCode(t, err, agentmem.EINVALID)

	got, err := s.RestoreThread(ctx, "alice", th.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.DeletedAt != nil || got.Title != "Trip" || got.AgentID != "x" || got.LastSeq != 2 || got.MessageCount != 2 {
		t.Fatalf("restored thread = %+v", got)
	}
	found, err := s.FindThreadByID(ctx, "alice", th.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(got, found, jsonEqual()); diff != "" {
		t.Fatalf("restored thread as found mismatch (-want +got):\n%s", diff)
	}
	if msgs := allMessages(t, s, "alice", th.ID); len(msgs) != 2 {
		t.Fatalf("restored thread has %d messages, want 2", len(msgs))
	}
	MustAppend(t, s, "alice", th.ID, agentmem.RoleUser, "back")
	page, _, err := s.FindThreads(ctx, "alice", agentmem.ThreadFilter{Deleted: true})
	if err != nil || len(page) != 0 {
		t.Fatalf("deleted threads after the restore: %v, %v; want none", page, err)
	}

	again, err := s.RestoreThread(ctx, "alice", th.ID)
	if err != nil {
		t.Fatalf("restoring a thread that is not deleted: %v, want it as it is", err)
	}
	if again.DeletedAt != nil || again.LastSeq != 3 {
		t.Fatalf("thread restored twice = %+v", again)
	}
}

// testFindDeletedThreads: ThreadFilter.Deleted lists the soft-deleted
// threads only, newest updated first, a page at a time, with the other
// filters.
func testFindDeletedThreads(t *testing.T, s agentmem.Store) {
	deleted := map[string]bool{}
	for i := range 9 {
		agent := "a"
		if i%3 == 0 {
			agent = "b"
		}
		th := MustCreateThread(t, s, &agentmem.Thread{UserID: "alice", ID: fmt.Sprintf("t%d", i), AgentID: agent})
		if i%4 != 0 { // t1, t2, t3, t5, t6, t7
			if err := s.DeleteThread(ctx, "alice", th.ID, false); err != nil {
				t.Fatal(err)
			}
			deleted[th.ID] = true
		}
	}
	MustCreateThread(t, s, &agentmem.Thread{UserID: "bob", ID: "t1"})
	if err := s.DeleteThread(ctx, "bob", "t1", false); err != nil {
		t.Fatal(err)
	}

	for _, include := range []bool{false, true} {
		var seen []*agentmem.Thread
		for cursor, pages := "", 0; ; pages++ {
			if pages > 10 {
				t.Fatal("more than 10 pages")
			}
			page, next, err := s.FindThreads(ctx, "alice", agentmem.ThreadFilter{Deleted: true, IncludeDeleted: include, Limit: 4, Cursor: cursor})
			if err != nil {
				t.Fatal(err)
			}
			if len(page) > 4 {
				t.Fatalf("page of %d, limit 4", len(page))
			}
			seen = append(seen, page...)
			if cursor = next; cursor == "" {
				break
			}
		}
		got := map[string]bool{}
		for i, th := range seen {
			if !deleted[th.ID] || th.DeletedAt == nil || th.UserID != "alice" || got[th.ID] {
				t.Fatalf("IncludeDeleted %v: listed %s of %s (deleted_at %v) twice or not deleted", include, th.ID, th.UserID, th.DeletedAt)
			}
			got[th.ID] = true
			if i > 0 {
				p := seen[i-1]
				if th.UpdatedAt.After(p.UpdatedAt) || (th.UpdatedAt.Equal(p.UpdatedAt) && th.ID > p.ID) {
					t.Fatalf("deleted threads %d and %d out of order", i-1, i)
				}
			}
		}
		if len(got) != len(deleted) {
			t.Fatalf("IncludeDeleted %v: listed %d deleted threads, want %d", include, len(got), len(deleted))
		}
	}
	b := "b"
	page, _, err := s.FindThreads(ctx, "alice", agentmem.ThreadFilter{Deleted: true, AgentID: &b})
	if err != nil || len(page) != 2 {
		t.Fatalf("deleted threads of agent b: %v, %v; want t3 and t6", page, err)
	}
	page, _, err = s.FindThreads(ctx, "alice", agentmem.ThreadFilter{})
	if err != nil || len(page) != 3 {
		t.Fatalf("live threads: %v, %v; want t0, t4 and t8", page, err)
	}
}

func testAppendMessages(t *testing.T, s agentmem.Store) {
	th := MustCreateThread(t, s, &agentmem.Thread{UserID: "alice"})
	long := strings.Repeat("abcdefghijk ", 8) + "\n\n  tail"
	in := []*agentmem.Message{
		{Role: agentmem.RoleSystem, Content: "You are helpful."},
		{Role: agentmem.RoleUser, Content: long, Name: "al", Metadata: json.RawMessage(`{"lang":"en"}`)},
		{Role: agentmem.RoleAssistant, Content: "", ToolCalls: []agentmem.ToolCall{{ID: "call_1", Function: agentmem.FunctionCall{Name: "lookup", Arguments: `{"q":"x"}`}}}},
		{Role: agentmem.RoleTool, Content: `{"answer":42}`, ToolCallID: "call_1"},
	}
	out, err := s.AppendMessages(ctx, "alice", th.ID, in, agentmem.AppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantSeqs(t, out, 4)
	for _, m := range out {
		if m.ID == "" || m.ThreadID != th.ID || m.CreatedAt.IsZero() {
			t.Fatalf("appended message = %+v", m)
		}
		if m.TokenCount <= 0 && m.Content != "" {
			t.Fatalf("message %d has token_count %d", m.Seq, m.TokenCount)
		}
	}
	stored := allMessages(t, s, "alice", th.ID)
	if diff := cmp.Diff(out, stored, jsonEqual()); diff != "" {
		t.Fatalf("stored messages mismatch (-want +got):\n%s", diff)
	}
	if stored[2].ToolCalls[0].Type != "function" || stored[3].ToolCallID != "call_1" {
		t.Fatalf("tool call fields not kept: %+v %+v", stored[2], stored[3])
	}

	got := mustFindThread(t, s, "alice", th.ID)
	if want := agentmem.AutoTitle(long); got.Title != want || len([]rune(want)) != agentmem.AutoTitleRunes {
		t.Fatalf("auto title=%q, want %q (80 characters)", got.Title, want)
	}
	if got.MessageCount != 4 || got.LastSeq != 4 || !got.UpdatedAt.After(th.UpdatedAt) && !got.UpdatedAt.Equal(th.UpdatedAt) {
		t.Fatalf("thread after append = %+v", got)
	}
	next := MustAppend(t, s, "alice", th.ID, agentmem.RoleUser, "second question")
	if next[0].Seq != 5 {
		t.Fatalf("next seq=%d, want 5", next[0].Seq)
	}
	if got := mustFindThread(t, s, "alice", th.ID); got.Title != agentmem.AutoTitle(long) {
		t.Fatalf("title changed to %q by a later message", got.Title)
	}

	t.Run("ClientCreatedAt", func(t *testing.T) {
		at := time.Date(2023, 5, 8, 13, 56, 0, 123456789, time.FixedZone("x", 3600))
		out, err := s.AppendMessages(ctx, "alice", th.ID, []*agentmem.Message{{Role: "user", Content: "dated", CreatedAt: at}}, agentmem.AppendOptions{})
		if err != nil {
			t.Fatal(err)
		}
		stored := allMessages(t, s, "alice", th.ID)
		if last := stored[len(stored)-1]; !last.CreatedAt.Equal(at.Truncate(time.Microsecond)) || !out[0].CreatedAt.Equal(last.CreatedAt) {
			t.Fatalf("created_at=%v, want %v", last.CreatedAt, at)
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		_, err := s.AppendMessages(ctx, "bob", th.ID, []*agentmem.Message{{Role: "user", Content: "x"}}, agentmem.AppendOptions{})
		wantCode(t, err, agentmem.ENOTFOUND)
	})
}

func testAppendInvalid(t *testing.T, s agentmem.Store) {
	th := MustCreateThread(t, s, &agentmem.Thread{UserID: "alice"})
	MustAppend(t, s, "alice", th.ID, agentmem.RoleUser, "kept")
	for _, tt := range []struct {
		name string
		msgs []*agentmem.Message
		code string
		want string // in the message
	}{
		{"Empty", nil, agentmem.EINVALID, "at least one"},
		{"UnknownRole", []*agentmem.Message{{Role: "robot", Content: "x"}}, agentmem.EINVALID, "messages[0].role"},
		{"MissingRole", []*agentmem.Message{{Content: "x"}}, agentmem.EINVALID, "messages[0].role"},
		{"BadUTF8", []*agentmem.Message{{Role: "user", Content: "ok"}, {Role: "user", Content: "bad \xff"}}, agentmem.EINVALID, "messages[1].content"},
		{"TooLarge", []*agentmem.Message{{Role: "user", Content: strings.Repeat("x", agentmem.DefaultMaxMessageBytes+1)}}, agentmem.ETOOLARGE, "1048576"},
		{"ToolWithoutCallID", []*agentmem.Message{{Role: "tool", Content: "x"}}, agentmem.EINVALID, "tool_call_id"},
		{"DuplicateID", []*agentmem.Message{{ID: "m", Role: "user"}, {ID: "m", Role: "user"}}, agentmem.EINVALID, "twice"},
		{"BadMetadata", []*agentmem.Message{{Role: "user", Metadata: json.RawMessage(`"s"`)}}, agentmem.EINVALID, "messages[0].metadata"},
		{"BadKey", []*agentmem.Message{{Role: "user"}}, agentmem.EINVALID, "Idempotency-Key"},
		{"NUL", []*agentmem.Message{{Role: "user", Content: "a\x00b"}}, agentmem.EINVALID, "messages[0].content"},
		{"NULMetadata", []*agentmem.Message{{Role: "user", Metadata: json.RawMessage(`{"k":"\u0000"}`)}}, agentmem.EINVALID, "messages[0].metadata"},
		{"TimeOutOfRange", []*agentmem.Message{{Role: "user", CreatedAt: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}}, agentmem.EINVALID, "messages[0].created_at"},
		{"TimeInYear9999", []*agentmem.Message{{Role: "user"}, {Role: "user", CreatedAt: time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)}}, agentmem.EINVALID,
			"messages[1].created_at 9999-01-01T00:00:00Z is in the future; it may be at most 5 minutes ahead of the server's clock."},
		{"TimeAnHourAhead", []*agentmem.Message{{Role: "user", CreatedAt: time.Now().Add(time.Hour)}}, agentmem.EINVALID, "messages[0].created_at"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			opt := agentmem.AppendOptions{}
			if tt.name == "BadKey" {
				opt.IdempotencyKey = "has space"
			}
			_, err := s.AppendMessages(ctx, "alice", th.ID, tt.msgs, opt)
			wantCode(t, err, tt.code)
			if msg := agentmem.ErrorMessage(err); !strings.Contains(msg, tt.want) {
				t.Fatalf("message %q does not name %q", msg, tt.want)
			}
		})
	}
	// A batch that fails in the database writes none of its messages.
	MustAppend(t, s, "alice", th.ID, agentmem.RoleUser, "second")
	msgs := allMessages(t, s, "alice", th.ID)
	taken := msgs[0].ID
	_, err := s.AppendMessages(ctx, "alice", th.ID, []*agentmem.Message{{ID: "fresh", Role: "user", Content: "a"}, {ID: taken, Role: "user", Content: "different"}}, agentmem.AppendOptions{})
	wantCode(t, err, agentmem.ECONFLICT)
	wantSeqs(t, allMessages(t, s, "alice", th.ID), 2)
	if got := allMessages(t, s, "alice", th.ID); got[0].Content != "kept" {
		t.Fatalf("stored message changed to %q", got[0].Content)
	}
}

func testIdempotency(t *testing.T, s agentmem.Store) {
	th := MustCreateThread(t, s, &agentmem.Thread{UserID: "alice"})
	batch := func(content string) []*agentmem.Message {
		return []*agentmem.Message{{Role: "user", Content: content}, {Role: "assistant", Content: "reply"}}
	}
	opt := agentmem.AppendOptions{IdempotencyKey: "req-1"}
	first, err := s.AppendMessages(ctx, "alice", th.ID, batch("q"), opt)
	if err != nil {
		t.Fatal(err)
	}
	again, err := s.AppendMessages(ctx, "alice", th.ID, batch("q"), opt)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(first, again, jsonEqual()); diff != "" {
		t.Fatalf("retry returned different messages (-first +retry):\n%s", diff)
	}
	wantSeqs(t, allMessages(t, s, "alice", th.ID), 2)
	_, err = s.AppendMessages(ctx, "alice", th.ID, batch("other"), opt)
	wantCode(t, err, agentmem.ECONFLICT)
	// The same key on another thread is another request.
	th2 := MustCreateThread(t, s, &agentmem.Thread{UserID: "alice"})
	if _, err := s.AppendMessages(ctx, "alice", th2.ID, batch("q"), opt); err != nil {
		t.Fatal(err)
	}
	wantSeqs(t, allMessages(t, s, "alice", th2.ID), 2)
	wantSeqs(t, allMessages(t, s, "alice", th.ID), 2)
}

func testClientIDs(t *testing.T, s agentmem.Store) {
	th := MustCreateThread(t, s, &agentmem.Thread{UserID: "alice"})
	batch := func() []*agentmem.Message {
		return []*agentmem.Message{{ID: "m1", Role: "user", Content: "q"}, {ID: "m2", Role: "assistant", Content: "a"}}
	}
	first, err := s.AppendMessages(ctx, "alice", th.ID, batch(), agentmem.AppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	again, err := s.AppendMessages(ctx, "alice", th.ID, batch(), agentmem.AppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(first, again, jsonEqual()); diff != "" {
		t.Fatalf("retry by message ids mismatch (-first +retry):\n%s", diff)
	}
	wantSeqs(t, allMessages(t, s, "alice", th.ID), 2)
	for _, bad := range [][]*agentmem.Message{
		{{ID: "m1", Role: "user", Content: "changed"}, {ID: "m2", Role: "assistant", Content: "a"}},
		{{ID: "m1", Role: "user", Content: "q"}, {ID: "m3", Role: "assistant", Content: "a"}},
		{{ID: "m2", Role: "assistant", Content: "a"}, {ID: "m1", Role: "user", Content: "q"}},
	} {
		_, err := s.AppendMessages(ctx, "alice", th.ID, bad, agentmem.AppendOptions{})
		wantCode(t, err, agentmem.ECONFLICT)
	}
	other := MustCreateThread(t, s, &agentmem.Thread{UserID: "alice"})
	_, err = s.AppendMessages(ctx, "alice", other.ID, batch(), agentmem.AppendOptions{})
	wantCode(t, err, agentmem.ECONFLICT)
	// Message IDs are per user.
	bobs := MustCreateThread(t, s, &agentmem.Thread{UserID: "bob"})
	if _, err := s.AppendMessages(ctx, "bob", bobs.ID, batch(), agentmem.AppendOptions{}); err != nil {
		t.Fatalf("bob reusing alice's message ids: %v", err)
	}
	wantSeqs(t, allMessages(t, s, "alice", th.ID), 2)
}

// testConcurrentAppends: 50 writers × 100 single appends to one thread
// must end with seqs 1..5000, each message exactly once.
func testConcurrentAppends(t *testing.T, s agentmem.Store) {
	const writers, each = 50, 100
	th := MustCreateThread(t, s, &agentmem.Thread{UserID: "alice"})
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				msg := &agentmem.Message{Role: "user", Content: fmt.Sprintf("w%d-%d", w, i)}
				if _, err := s.AppendMessages(ctx, "alice", th.ID, []*agentmem.Message{msg}, agentmem.AppendOptions{}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	msgs := allMessages(t, s, "alice", th.ID)
	wantSeqs(t, msgs, writers*each)
	seen := map[string]bool{}
	for _, m := range msgs {
		if seen[m.Content] {
			t.Fatalf("message %q stored twice", m.Content)
		}
		seen[m.Content] = true
	}
	got := mustFindThread(t, s, "alice", th.ID)
	if got.MessageCount != writers*each || got.LastSeq != writers*each {
		t.Fatalf("thread count=%d last_seq=%d, want %d", got.MessageCount, got.LastSeq, writers*each)
	}
}

// testConcurrentRetries: many clients retrying the same keyed batches at
// once store each batch once and all get the same answer.
func testConcurrentRetries(t *testing.T, s agentmem.Store) {
	const keys, retries = 20, 5
	th := MustCreateThread(t, s, &agentmem.Thread{UserID: "alice"})
	results := make([][][]*agentmem.Message, keys)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for k := range keys {
		results[k] = make([][]*agentmem.Message, retries)
		for r := range retries {
			wg.Add(1)
			go func() {
				defer wg.Done()
				msgs := []*agentmem.Message{{Role: "user", Content: fmt.Sprintf("k%d", k)}, {Role: "assistant", Content: "ok"}}
				out, err := s.AppendMessages(ctx, "alice", th.ID, msgs, agentmem.AppendOptions{IdempotencyKey: fmt.Sprintf("key-%d", k)})
				mu.Lock()
				defer mu.Unlock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				results[k][r] = out
			}()
		}
	}
	wg.Wait()
	if firstErr != nil {
		t.Fatal(firstErr)
	}
	wantSeqs(t, allMessages(t, s, "alice", th.ID), 2*keys)
	for k := range keys {
		for r := 1; r < retries; r++ {
			if results[k][r][0].ID != results[k][0][0].ID || results[k][r][0].Seq != results[k][0][0].Seq {
				t.Fatalf("key %d: retries got different messages", k)
			}
		}
	}
}

func testFindMessages(t *testing.T, s agentmem.Store) {
	th := MustCreateThread(t, s, &agentmem.Thread{UserID: "alice"})
	var msgs []*agentmem.Message
	for i := range 30 {
		msgs = append(msgs, &agentmem.Message{Role: "user", Content: fmt.Sprint(i + 1)})
	}
	if _, err := s.AppendMessages(ctx, "alice", th.ID, msgs, agentmem.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	seqs := func(f agentmem.MessageFilter) ([]int64, string) {
		t.Helper()
		page, next, err := s.FindMessages(ctx, "alice", th.ID, f)
		if err != nil {
			t.Fatal(err)
		}
		var out []int64
		for _, m := range page {
			out = append(out, m.Seq)
		}
		return out, next
	}
	for _, tt := range []struct {
		name     string
		f        agentmem.MessageFilter
		want     []int64
		wantNext bool
	}{
		{"AfterSeq", agentmem.MessageFilter{AfterSeq: 27}, []int64{28, 29, 30}, false},
		{"BeforeSeq", agentmem.MessageFilter{BeforeSeq: 3}, []int64{1, 2}, false},
		{"Between", agentmem.MessageFilter{AfterSeq: 10, BeforeSeq: 14}, []int64{11, 12, 13}, false},
		{"Limit", agentmem.MessageFilter{Limit: 2}, []int64{1, 2}, true},
		{"Newest", agentmem.MessageFilter{Desc: true, Limit: 3}, []int64{30, 29, 28}, true},
		{"NewestBefore", agentmem.MessageFilter{Desc: true, Limit: 2, BeforeSeq: 10}, []int64{9, 8}, true},
		{"ExactPage", agentmem.MessageFilter{AfterSeq: 25, Limit: 5}, []int64{26, 27, 28, 29, 30}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, next := seqs(tt.f)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Fatalf("seqs mismatch (-want +got):\n%s", diff)
			}
			if (next != "") != tt.wantNext {
				t.Fatalf("next cursor %q, want one: %v", next, tt.wantNext)
			}
		})
	}
	t.Run("CursorBothWays", func(t *testing.T) {
		for _, desc := range []bool{false, true} {
			var all []int64
			for cursor := ""; ; {
				page, next := seqs(agentmem.MessageFilter{Limit: 7, Cursor: cursor, Desc: desc})
				all = append(all, page...)
				if cursor = next; cursor == "" {
					break
				}
			}
			if len(all) != 30 {
				t.Fatalf("desc=%v: paged through %d messages, want 30", desc, len(all))
			}
			for i := 1; i < len(all); i++ {
				if (all[i] > all[i-1]) == desc {
					t.Fatalf("desc=%v: order broken at %d: %v", desc, i, all)
				}
			}
		}
	})
	t.Run("Errors", func(t *testing.T) {
		_, _, err := s.FindMessages(ctx, "alice", th.ID, agentmem.MessageFilter{Cursor: "%%%"})
		wantCode(t, err, agentmem.EINVALID)
		_, _, err = s.FindMessages(ctx, "alice", th.ID, agentmem.MessageFilter{AfterSeq: -1})
		wantCode(t, err, agentmem.EINVALID)
		_, _, err = s.FindMessages(ctx, "bob", th.ID, agentmem.MessageFilter{})
		wantCode(t, err, agentmem.ENOTFOUND)
	})
}

func testElements(t *testing.T, s agentmem.Store) {
	th := MustCreateThread(t, s, &agentmem.Thread{UserID: "alice"})
	msgs := MustAppend(t, s, "alice", th.ID, agentmem.RoleUser, "q", agentmem.RoleAssistant, "a [1]")
	ref := &agentmem.Element{Type: "text", Name: "Ref #1", Content: "### Ref #1 — Article", Display: "side", MessageID: msgs[1].ID, Metadata: json.RawMessage(`{"score":0.9}`)}
	if err := s.CreateElement(ctx, "alice", th.ID, ref); err != nil {
		t.Fatal(err)
	}
	file := &agentmem.Element{ID: "el-file", Type: "file", Name: "report.pdf", URL: "https://example.com/r.pdf", MimeType: "application/pdf"}
	if err := s.CreateElement(ctx, "alice", th.ID, file); err != nil {
		t.Fatal(err)
	}
	if ref.ID == "" || ref.ThreadID != th.ID || ref.CreatedAt.IsZero() {
		t.Fatalf("created element = %+v", ref)
	}
	wantCode(t, s.CreateElement(ctx, "alice", th.ID, &agentmem.Element{ID: "el-file"}), agentmem.ECONFLICT)
	wantCode(t, s.CreateElement(ctx, "alice", th.ID, &agentmem.Element{MessageID: "nope"}), agentmem.ENOTFOUND)
	wantCode(t, s.CreateElement(ctx, "bob", th.ID, &agentmem.Element{}), agentmem.ENOTFOUND)
	wantCode(t, s.CreateElement(ctx, "alice", th.ID, &agentmem.Element{Name: "\xff"}), agentmem.EINVALID)

	page, next, err := s.FindElements(ctx, "alice", th.ID, agentmem.ElementFilter{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	rest, last, err := s.FindElements(ctx, "alice", th.ID, agentmem.ElementFilter{Limit: 1, Cursor: next})
	if err != nil {
		t.Fatal(err)
	}
	if next == "" || last != "" || len(page)+len(rest) != 2 {
		t.Fatalf("element pages: %d (next %q), %d (next %q)", len(page), next, len(rest), last)
	}
	if diff := cmp.Diff([]*agentmem.Element{ref, file}, append(page, rest...), jsonEqual()); diff != "" {
		t.Fatalf("elements mismatch (-want +got):\n%s", diff)
	}
	onMsg, _, err := s.FindElements(ctx, "alice", th.ID, agentmem.ElementFilter{MessageID: &msgs[1].ID})
	if err != nil || len(onMsg) != 1 || onMsg[0].ID != ref.ID {
		t.Fatalf("elements of message: %v, %v", onMsg, err)
	}
	_, _, err = s.FindElements(ctx, "bob", th.ID, agentmem.ElementFilter{})
	wantCode(t, err, agentmem.ENOTFOUND)
}

func testSessions(t *testing.T, s agentmem.Store) {
	_, err := s.FindSession(ctx, "alice", "helper")
	wantCode(t, err, agentmem.ENOTFOUND)
	a := MustCreateThread(t, s, &agentmem.Thread{UserID: "alice", AgentID: "helper"})
	b := MustCreateThread(t, s, &agentmem.Thread{UserID: "alice", AgentID: "helper"})
	if _, err := s.SetSession(ctx, "alice", "helper", a.ID); err != nil {
		t.Fatal(err)
	}
	sess, err := s.SetSession(ctx, "alice", "helper", b.ID)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.FindSession(ctx, "alice", "helper")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(sess, got); diff != "" || got.ThreadID != b.ID {
		t.Fatalf("session mismatch (-want +got):\n%s", diff)
	}
	// Sessions are per (user, agent).
	_, err = s.FindSession(ctx, "alice", "other")
	wantCode(t, err, agentmem.ENOTFOUND)
	_, err = s.FindSession(ctx, "bob", "helper")
	wantCode(t, err, agentmem.ENOTFOUND)
	// Another user's thread cannot become one's session.
	bobs := MustCreateThread(t, s, &agentmem.Thread{UserID: "bob"})
	_, err = s.SetSession(ctx, "alice", "helper", bobs.ID)
	wantCode(t, err, agentmem.ENOTFOUND)
	_, err = s.SetSession(ctx, "alice", "bad agent", a.ID)
	wantCode(t, err, agentmem.EINVALID)
}

// testOpenSession: OpenSession finds or creates, and concurrent calls for
// one user and agent create a single thread.
func testOpenSession(t *testing.T, s agentmem.Store) {
	sess, created, err := s.OpenSession(ctx, "alice", "helper", &agentmem.Thread{Title: "new"})
	if err != nil || !created {
		t.Fatalf("OpenSession: created=%v, err=%v; want a new session", created, err)
	}
	th, err := s.FindThreadByID(ctx, "alice", sess.ThreadID)
	if err != nil || th.AgentID != "helper" || th.Title != "new" {
		t.Fatalf("session thread = %+v, %v; want a thread of agent helper titled new", th, err)
	}
	again, created, err := s.OpenSession(ctx, "alice", "helper", &agentmem.Thread{})
	if err != nil || created || again.ThreadID != sess.ThreadID {
		t.Fatalf("second OpenSession: %+v created=%v err=%v; want the first session", again, created, err)
	}
	// A session whose thread is deleted is replaced.
	if err := s.DeleteThread(ctx, "alice", sess.ThreadID, false); err != nil {
		t.Fatal(err)
	}
	next, created, err := s.OpenSession(ctx, "alice", "helper", &agentmem.Thread{})
	if err != nil || !created || next.ThreadID == sess.ThreadID {
		t.Fatalf("OpenSession after deletion: %+v created=%v err=%v; want a new thread", next, created, err)
	}
	_, _, err = s.OpenSession(ctx, "alice", "bad agent", &agentmem.Thread{})
	wantCode(t, err, agentmem.EINVALID)

	// Eight concurrent calls for a new pair make one thread.
	const n = 8
	ids := make(chan string, n)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sess, _, err := s.OpenSession(ctx, "bob", "planner", &agentmem.Thread{})
			if err != nil {
				errs <- err
				return
			}
			ids <- sess.ThreadID
		}()
	}
	wg.Wait()
	close(ids)
	close(errs)
	for err := range errs {
		t.Fatalf("concurrent OpenSession: %v", err)
	}
	seen := map[string]bool{}
	for id := range ids {
		seen[id] = true
	}
	threads, _, err := s.FindThreads(ctx, "bob", agentmem.ThreadFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != 1 || len(threads) != 1 {
		t.Fatalf("concurrent OpenSession answered %d threads and stored %d; want 1 and 1", len(seen), len(threads))
	}
}

// testSetSessionWhileOpening: a SetSession racing with OpenSession calls
// of the same user and agent is never undone by them. Whichever comes
// first, the active session ends up the thread SetSession named: an
// OpenSession before it made a session that it replaced, one after it
// found its session. Rounds of one agent each give the race its chances.
func testSetSessionWhileOpening(t *testing.T, s agentmem.Store) {
	const rounds, opens = 20, 4
	for r := range rounds {
		agent := fmt.Sprintf("a%d", r)
		mine := MustCreateThread(t, s, &agentmem.Thread{UserID: "alice", ID: "mine-" + agent, AgentID: agent})
		var wg sync.WaitGroup
		errs := make(chan error, opens+1)
		wg.Go(func() {
			if _, err := s.SetSession(ctx, "alice", agent, mine.ID); err != nil {
				errs <- err
			}
		})
		for range opens {
			wg.Go(func() {
				if _, _, err := s.OpenSession(ctx, "alice", agent, &agentmem.Thread{}); err != nil {
					errs <- err
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		sess, err := s.FindSession(ctx, "alice", agent)
		if err != nil {
			t.Fatal(err)
		}
		if sess.ThreadID != mine.ID {
			t.Fatalf("round %d: the session is %q, want %q, which SetSession set", r, sess.ThreadID, mine.ID)
		}
	}
}

func testImportExport(t *testing.T, s agentmem.Store) {
	th := MustCreateThread(t, s, &agentmem.Thread{UserID: "alice", AgentID: "helper", Title: "Trip", Metadata: json.RawMessage(`{"n":12345678901234567890}`), Tags: []string{"travel"}})
	in := []*agentmem.Message{
		{ID: "m-1", Role: "system", Content: "Be brief."},
		{Role: "user", Content: "Plan a trip ✈️", Name: "alice", Metadata: json.RawMessage(`{"lang":"en"}`)},
		{Role: "assistant", ToolCalls: []agentmem.ToolCall{{ID: "c1", Type: "function", Function: agentmem.FunctionCall{Name: "search", Arguments: `{"q":"Lisbon"}`}}}},
		{Role: "tool", Content: "sunny", ToolCallID: "c1"},
		{Role: "assistant", Content: "Go to Lisbon."},
	}
	if _, err := s.AppendMessages(ctx, "alice", th.ID, in, agentmem.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateElement(ctx, "alice", th.ID, &agentmem.Element{Name: "Ref", Content: "guide", MessageID: in[4].ID}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.EndThread(ctx, "alice", th.ID); err != nil {
		t.Fatal(err)
	}
	x, err := agentmem.ExportThread(ctx, s, "alice", th.ID)
	if err != nil {
		t.Fatal(err)
	}
	b := mustMarshal(t, x)
	var copyX agentmem.ThreadExport
	if err := json.Unmarshal(b, &copyX); err != nil {
		t.Fatal(err)
	}
	imported, err := s.ImportThread(ctx, "bob", &copyX)
	if err != nil {
		t.Fatal(err)
	}
	y, err := agentmem.ExportThread(ctx, s, "bob", imported.ID)
	if err != nil {
		t.Fatal(err)
	}
	ignoreUser := cmpopts.IgnoreFields(agentmem.Thread{}, "UserID")
	if diff := cmp.Diff(x, y, jsonEqual(), ignoreUser); diff != "" {
		t.Fatalf("import of export mismatch (-exported +reimported):\n%s", diff)
	}
	if y.Thread.UserID != "bob" {
		t.Fatalf("imported thread belongs to %q", y.Thread.UserID)
	}
	// The same export again conflicts on the thread id, and writes nothing.
	_, err = s.ImportThread(ctx, "bob", &copyX)
	wantCode(t, err, agentmem.ECONFLICT)
	copyX.Thread.ID = "other"
	_, err = s.ImportThread(ctx, "bob", &copyX) // message ids are taken in bob's store
	wantCode(t, err, agentmem.ECONFLICT)
	_, err = s.FindThreadByID(ctx, "bob", "other")
	wantCode(t, err, agentmem.ENOTFOUND)

	bad := &agentmem.ThreadExport{Version: 99, Thread: &agentmem.Thread{}}
	_, err = s.ImportThread(ctx, "bob", bad)
	wantCode(t, err, agentmem.EINVALID)
	_, err = s.ImportThread(ctx, "bob", &agentmem.ThreadExport{Version: 1, Thread: &agentmem.Thread{}, Messages: []*agentmem.Message{{Role: "wizard"}}})
	wantCode(t, err, agentmem.EINVALID)
	future := &agentmem.ThreadExport{Version: 1, Thread: &agentmem.Thread{}, Messages: []*agentmem.Message{{Role: "user", CreatedAt: time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)}}}
	_, err = s.ImportThread(ctx, "bob", future)
	wantCode(t, err, agentmem.EINVALID)
	if msg := agentmem.ErrorMessage(err); !strings.Contains(msg, "messages[0].created_at 9999-01-01T00:00:00Z is in the future") {
		t.Fatalf("import of a message from year 9999: %q", msg)
	}

	md := x.Markdown()
	for _, want := range []string{"# Trip\n", "**Thread ID**: " + th.ID, "## 👤 User (alice)\n\nPlan a trip ✈️\n\n---", "## 🤖 Assistant", "Tool call `search`"} {
		if !strings.Contains(md, want) {
			t.Fatalf("markdown lacks %q:\n%s", want, md)
		}
	}
}

func testDeleteUser(t *testing.T, s agentmem.Store) {
	fill := func(user string) {
		th := MustCreateThread(t, s, &agentmem.Thread{UserID: user, ID: "shared-id", AgentID: "helper"})
		msgs := MustAppend(t, s, user, th.ID, "user", "hi "+user, "assistant", "hello")
		if err := s.CreateElement(ctx, user, th.ID, &agentmem.Element{MessageID: msgs[1].ID, Name: "ref"}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.SetSession(ctx, user, "helper", th.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := s.AppendMessages(ctx, user, th.ID, []*agentmem.Message{{Role: "user", Content: "k"}}, agentmem.AppendOptions{IdempotencyKey: "k"}); err != nil {
			t.Fatal(err)
		}
	}
	fill("alice")
	fill("bob")
	before, err := agentmem.ExportThread(ctx, s, "bob", "shared-id")
	if err != nil {
		t.Fatalf("ExportThread: %v", err)
	}

	c, err := s.DeleteUser(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if want := (agentmem.Counts{Users: 1, Threads: 1, Messages: 3, Elements: 1, Sessions: 1}); c != want {
		t.Fatalf("DeleteUser counts=%+v, want %+v", c, want)
	}
	_, err = s.FindThreadByID(ctx, "alice", "shared-id")
	wantCode(t, err, agentmem.ENOTFOUND)
	_, err = s.FindSession(ctx, "alice", "helper")
	wantCode(t, err, agentmem.ENOTFOUND)
	after, err := agentmem.ExportThread(ctx, s, "bob", "shared-id")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, after, jsonEqual()); diff != "" {
		t.Fatalf("bob's thread changed by erasing alice (-before +after):\n%s", diff)
	}
	if _, err := s.FindSession(ctx, "bob", "helper"); err != nil {
		t.Fatalf("bob's session: %v", err)
	}
	// Alice can start again from nothing, with the same ids and keys.
	fill("alice")
	wantSeqs(t, allMessages(t, s, "alice", "shared-id"), 3)
	if c, err := s.DeleteUser(ctx, "nobody"); err != nil || c != (agentmem.Counts{}) {
		t.Fatalf("DeleteUser(nobody) = %+v, %v", c, err)
	}
	ids, err := s.FindUserIDs(ctx, "", 10)
	if err != nil || !cmp.Equal(ids, []string{"alice", "bob"}) {
		t.Fatalf("FindUserIDs = %v, %v", ids, err)
	}
	ids = mustFindUserIDs(t, s, "alice", 10)
	if !cmp.Equal(ids, []string{"bob"}) {
		t.Fatalf("FindUserIDs after alice = %v", ids)
	}
}

func testDeleteThreadsBefore(t *testing.T, s agentmem.Store) {
	old := MustCreateThread(t, s, &agentmem.Thread{UserID: "alice", AgentID: "helper"})
	MustAppend(t, s, "alice", old.ID, "user", "old", "assistant", "news")
	if _, err := s.SetSession(ctx, "alice", "helper", old.ID); err != nil {
		t.Fatal(err)
	}
	bobs := MustCreateThread(t, s, &agentmem.Thread{UserID: "bob"})
	time.Sleep(2 * time.Millisecond)
	cutoff := time.Now()
	time.Sleep(2 * time.Millisecond)
	fresh := MustCreateThread(t, s, &agentmem.Thread{UserID: "alice"})
	MustAppend(t, s, "alice", fresh.ID, "user", "new")

	want := agentmem.Counts{Threads: 1, Messages: 2, Sessions: 1}
	dry, err := s.DeleteThreadsBefore(ctx, "alice", cutoff, true)
	if err != nil || dry != want {
		t.Fatalf("dry run = %+v, %v; want %+v", dry, err, want)
	}
	if _, err := s.FindThreadByID(ctx, "alice", old.ID); err != nil {
		t.Fatalf("dry run deleted: %v", err)
	}
	got, err := s.DeleteThreadsBefore(ctx, "alice", cutoff, false)
	if err != nil || got != want {
		t.Fatalf("DeleteThreadsBefore = %+v, %v; want %+v", got, err, want)
	}
	_, err = s.FindThreadByID(ctx, "alice", old.ID)
	wantCode(t, err, agentmem.ENOTFOUND)
	if _, err := s.FindThreadByID(ctx, "alice", fresh.ID); err != nil {
		t.Fatalf("fresh thread: %v", err)
	}
	if _, err := s.FindThreadByID(ctx, "bob", bobs.ID); err != nil {
		t.Fatalf("bob's old thread is another user's: %v", err)
	}
}

func testStats(t *testing.T, s agentmem.Store) {
	for _, user := range []string{"alice", "bob"} {
		th := MustCreateThread(t, s, &agentmem.Thread{UserID: user})
		MustAppend(t, s, user, th.ID, "user", "a", "assistant", "b")
	}
	st, err := s.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Users != 2 || st.Threads != 2 || st.Messages != 4 || st.StoreBytes <= 0 {
		t.Fatalf("stats = %+v", st)
	}
	// Per table, largest first, the messages among them.
	bytes := map[string]int64{}
	for i, tb := range st.Tables {
		bytes[tb.Table] = tb.Bytes
		if tb.Bytes < 0 || i > 0 && tb.Bytes > st.Tables[i-1].Bytes {
			t.Fatalf("tables %+v, want bytes largest first", st.Tables)
		}
	}
	if bytes["messages"] <= 0 || bytes["threads"] <= 0 {
		t.Fatalf("tables %+v, want the messages and the threads measured", st.Tables)
	}
	if err := s.Ping(ctx); err != nil {
		t.Fatal(err)
	}
}
