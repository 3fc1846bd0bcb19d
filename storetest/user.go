package storetest

import (
	"testing"

	"github.com/agentmem/agentmem"
	"github.com/google/go-cmp/cmp"
)

func testFindUsers(t *testing.T, s agentmem.Store) {
	// alice: a thread with two messages, a deleted one with one, two
	// memories of which one is invalidated; bob: a memory; a tenant's
	// carol: an empty thread.
	MustCreateThread(t, s, &agentmem.Thread{UserID: "alice", ID: "t1"})
	MustAppend(t, s, "alice", "t1", "user", "a", "assistant", "b")
	MustCreateThread(t, s, &agentmem.Thread{UserID: "alice", ID: "gone"})
	MustAppend(t, s, "alice", "gone", "user", "c")
	if err := s.DeleteThread(ctx, "alice", "gone", false); err != nil {
		t.Fatal(err)
	}
	MustCreateMemory(t, s, &agentmem.Memory{UserID: "alice", ID: "m1", Text: "User likes tea."})
	MustCreateMemory(t, s, &agentmem.Memory{UserID: "alice", ID: "m2", Text: "User lives in Lisbon."})
	if _, err := s.InvalidateMemory(ctx, "alice", "m2", "", "moved"); err != nil {
		t.Fatal(err)
	}
	MustCreateMemory(t, s, &agentmem.Memory{UserID: "bob", Text: "User likes coffee."})
	carols := MustCreateThread(t, s, &agentmem.Thread{UserID: "acme/carol", ID: "t1"})
	alices, err := s.FindThreadByID(ctx, "alice", "t1")
	if err != nil {
		t.Fatal(err)
	}
	want := []*agentmem.UserSummary{ // in user ID order, bytewise
		{UserID: "acme/carol", Threads: 1, LastActiveAt: &carols.UpdatedAt},
		{UserID: "alice", Threads: 1, Messages: 2, Memories: 1, LastActiveAt: &alices.UpdatedAt},
		{UserID: "bob", Memories: 1},
	}
	got, next, err := s.FindUsers(ctx, agentmem.UserFilter{})
	if err != nil || next != "" {
		t.Fatalf("FindUsers: next %q, %v", next, err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("FindUsers mismatch (-want +got):\n%s", diff)
	}

	t.Run("Pages", func(t *testing.T) {
		var all []*agentmem.UserSummary
		f := agentmem.UserFilter{Limit: 1}
		for {
			page, next, err := s.FindUsers(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			if len(page) != 1 {
				t.Fatalf("page of %d users, want 1", len(page))
			}
			all = append(all, page...)
			if f.Cursor = next; next == "" {
				break
			}
		}
		if diff := cmp.Diff(want, all); diff != "" {
			t.Fatalf("pages mismatch (-want +got):\n%s", diff)
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		_, _, err := s.FindUsers(ctx, agentmem.UserFilter{Cursor: "nonsense"})
		wantCode(t, err, agentmem.EINVALID)
		_, next, err := s.FindThreads(ctx, "alice", agentmem.ThreadFilter{Limit: 1, IncludeDeleted: true})
		if err != nil || next == "" {
			t.Fatalf("FindThreads: next %q, %v", next, err)
		}
		_, _, err = s.FindUsers(ctx, agentmem.UserFilter{Cursor: next}) // a cursor of another list
		wantCode(t, err, agentmem.EINVALID)
		_, _, err = s.FindUsers(ctx, agentmem.UserFilter{Limit: agentmem.MaxPageSize + 1})
		wantCode(t, err, agentmem.EINVALID)
	})
	t.Run("ByUserID", func(t *testing.T) {
		for _, id := range []string{"alice", "acme/carol", "bob"} {
			got, next, err := s.FindUsers(ctx, agentmem.UserFilter{UserID: &id})
			if err != nil || next != "" || len(got) != 1 || got[0].UserID != id {
				t.Fatalf("FindUsers of %s: %+v, next %q, %v; want %s alone", id, got, next, err, id)
			}
		}
		for _, id := range []string{"ghost", "carol", "alic", ""} {
			got, next, err := s.FindUsers(ctx, agentmem.UserFilter{UserID: &id})
			if err != nil || next != "" || got == nil || len(got) != 0 {
				t.Fatalf("FindUsers of %q, who does not exist: %+v (nil: %v), next %q, %v; want an empty page", id, got, got == nil, next, err)
			}
		}
	})
	t.Run("Erased", func(t *testing.T) {
		// An erased user leaves the list, also between two pages.
		_, next, err := s.FindUsers(ctx, agentmem.UserFilter{Limit: 2}) // acme/carol, alice
		if err != nil || next == "" {
			t.Fatalf("FindUsers: next %q, %v", next, err)
		}
		if _, err := s.DeleteUser(ctx, "bob"); err != nil {
			t.Fatal(err)
		}
		got, next, err := s.FindUsers(ctx, agentmem.UserFilter{Limit: 2, Cursor: next})
		if err != nil || got == nil || len(got) != 0 || next != "" {
			t.Fatalf("FindUsers after alice=%v (nil: %v), %q, %v; want an empty last page", got, got == nil, next, err)
		}
	})
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
