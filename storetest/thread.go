package storetest

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/google/go-cmp/cmp"
)

// MustCreateThread creates a thread for user with the given fields.
func MustCreateThread(tb testing.TB, s agentmem.Store, t *agentmem.Thread) *agentmem.Thread {
	tb.Helper()
	if err := s.CreateThread(ctx, t); err != nil {
		tb.Fatalf("CreateThread: %v", err)
	}
	return t
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
