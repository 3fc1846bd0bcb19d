package storetest

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/google/go-cmp/cmp"
)

// MustPutNotes applies op to the notes of user and agent and returns the
// new version.
func MustPutNotes(tb testing.TB, s agentmem.NotesStore, user, agent string, op agentmem.NotesOp) *agentmem.Notes {
	tb.Helper()
	n, err := s.PutNotes(ctx, user, agent, op)
	if err != nil {
		tb.Fatalf("PutNotes(%s): %v", op.Operation, err)
	}
	return n
}

// AllNotesHistory pages through FindNotesHistory, limit versions a page,
// and returns every version listed.
func AllNotesHistory(tb testing.TB, s agentmem.NotesStore, user, agent string, limit int) []*agentmem.Notes {
	tb.Helper()
	all := []*agentmem.Notes{}
	for cursor := ""; ; {
		page, next, err := s.FindNotesHistory(ctx, user, agent, agentmem.NotesFilter{Limit: limit, Cursor: cursor})
		if err != nil {
			tb.Fatalf("FindNotesHistory: %v", err)
		}
		if page == nil || limit > 0 && len(page) > limit {
			tb.Fatalf("page of %d versions (nil: %v), limit %d", len(page), page == nil, limit)
		}
		all = append(all, page...)
		if cursor = next; cursor == "" {
			return all
		}
	}
}

// mustFindNotes returns an agent's notes on a user, failing tb if it
// cannot.
func mustFindNotes(tb testing.TB, s agentmem.NotesStore, user, agent string) *agentmem.Notes {
	tb.Helper()
	n, err := s.FindNotes(ctx, user, agent)
	if err != nil {
		tb.Fatalf("FindNotes(%q, %q): %v", user, agent, err)
	}
	return n
}

// wantNotesVersions fails unless history lists versions n, n-1, …, 1.
func wantNotesVersions(tb testing.TB, history []*agentmem.Notes, n int64) {
	tb.Helper()
	if len(history) != int(n) {
		tb.Fatalf("history has %d versions, want %d", len(history), n)
	}
	for i, v := range history {
		if v.Version != n-int64(i) {
			tb.Fatalf("history[%d].Version=%d, want %d", i, v.Version, n-int64(i))
		}
	}
}

func testNotes(t *testing.T, s agentmem.Store) {
	got, err := s.FindNotes(ctx, "alice", "planner")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&agentmem.Notes{UserID: "alice", AgentID: "planner"}, got); diff != "" {
		t.Fatalf("FindNotes before any write mismatch (-want +got):\n%s", diff)
	}
	if h := AllNotesHistory(t, s, "alice", "planner", 0); len(h) != 0 {
		t.Fatalf("history before any write = %v", h)
	}

	before := time.Now().Truncate(time.Microsecond)
	first := MustPutNotes(t, s, "alice", "planner", agentmem.NotesOp{Operation: agentmem.NotesOverwrite,
		Content: "# Alice\n\n## Goals\n- Marathon\n\n## Travel\nLisbon.\n", ExpectedVersion: new(int64(0))})
	if first.Version != 1 || first.Operation != agentmem.NotesOverwrite || first.UserID != "alice" || first.AgentID != "planner" ||
		first.UpdatedAt.Before(before) || first.UpdatedAt.After(time.Now()) {
		t.Fatalf("first version = %+v", first)
	}
	got, err = s.FindNotes(ctx, "alice", "planner")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(first, got); diff != "" {
		t.Fatalf("FindNotes mismatch (-want +got):\n%s", diff)
	}
	second := MustPutNotes(t, s, "alice", "planner", agentmem.NotesOp{Operation: agentmem.NotesReplaceSection, SectionHeader: "Goals",
		Content: "- Swim\n", ExpectedVersion: new(int64(1))})
	if want := "# Alice\n\n## Goals\n- Swim\n\n## Travel\nLisbon.\n"; second.Version != 2 || second.Content != want {
		t.Fatalf("second version = %+v, want content %q", second, want)
	}
	third := MustPutNotes(t, s, "alice", "planner", agentmem.NotesOp{Operation: agentmem.NotesAppend, Content: "## Food\nTea."})
	if third.Version != 3 || !strings.HasSuffix(third.Content, "Lisbon.\n\n## Food\nTea.") {
		t.Fatalf("third version = %+v", third)
	}

	t.Run("Refused", func(t *testing.T) {
		for _, tc := range []struct {
			name string
			user string
			op   agentmem.NotesOp
			code string
		}{
			{"StaleVersion", "alice", agentmem.NotesOp{Operation: agentmem.NotesAppend, Content: "x", ExpectedVersion: new(int64(2))}, agentmem.ECONFLICT},
			{"NotNew", "alice", agentmem.NotesOp{Operation: agentmem.NotesOverwrite, ExpectedVersion: new(int64(0))}, agentmem.ECONFLICT},
			{"FutureVersion", "alice", agentmem.NotesOp{Operation: agentmem.NotesOverwrite, ExpectedVersion: new(int64(9))}, agentmem.ECONFLICT},
			{"MissingSection", "alice", agentmem.NotesOp{Operation: agentmem.NotesDeleteSection, SectionHeader: "## Hobbies"}, agentmem.EUNPROCESSABLE},
			{"TooLarge", "alice", agentmem.NotesOp{Operation: agentmem.NotesAppend, Content: strings.Repeat("x", agentmem.MaxNotesBytes-10)}, agentmem.ETOOLARGE},
			{"Read", "alice", agentmem.NotesOp{Operation: agentmem.NotesRead}, agentmem.EINVALID},
			{"UnknownOp", "alice", agentmem.NotesOp{Operation: "rewrite"}, agentmem.EINVALID},
			{"BadUser", "", agentmem.NotesOp{Operation: agentmem.NotesOverwrite}, agentmem.EINVALID},
		} {
			t.Run(tc.name, func(t *testing.T) {
				_, err := s.PutNotes(ctx, tc.user, "planner", tc.op)
				wantCode(t, err, tc.code)
			})
		}
		_, err := s.PutNotes(ctx, "alice", "", agentmem.NotesOp{Operation: agentmem.NotesOverwrite})
		wantCode(t, err, agentmem.EINVALID)
		_, err = s.PutNotes(ctx, "alice", "planner", agentmem.NotesOp{Operation: agentmem.NotesAppend, Content: "x", ExpectedVersion: new(int64(1))})
		if msg := agentmem.ErrorMessage(err); !strings.Contains(msg, "version 3") || !strings.Contains(msg, "version 1") {
			t.Fatalf("conflict message %q does not name both versions", msg)
		}
		if got := mustFindNotes(t, s, "alice", "planner"); !cmp.Equal(third, got) {
			t.Fatalf("refused puts changed the notes: %+v", got)
		}
	})

	t.Run("History", func(t *testing.T) {
		h := AllNotesHistory(t, s, "alice", "planner", 2) // two pages
		wantNotesVersions(t, h, 3)
		if diff := cmp.Diff([]*agentmem.Notes{third, second, first}, h); diff != "" {
			t.Fatalf("history mismatch (-want +got):\n%s", diff)
		}
		if _, _, err := s.FindNotesHistory(ctx, "alice", "planner", agentmem.NotesFilter{Cursor: "nope"}); agentmem.ErrorCode(err) != agentmem.EINVALID {
			t.Fatalf("bad cursor: %v", err)
		}
		if _, _, err := s.FindNotesHistory(ctx, "alice", "planner", agentmem.NotesFilter{Limit: -1}); agentmem.ErrorCode(err) != agentmem.EINVALID {
			t.Fatalf("bad limit: %v", err)
		}
	})

	t.Run("DeleteAll", func(t *testing.T) {
		n := MustPutNotes(t, s, "alice", "planner", agentmem.NotesOp{Operation: agentmem.NotesDeleteAll, ExpectedVersion: new(int64(3))})
		if n.Version != 4 || n.Content != "" || n.Operation != agentmem.NotesDeleteAll {
			t.Fatalf("after delete_all_notes: %+v", n)
		}
		// The history keeps what was deleted.
		if h := AllNotesHistory(t, s, "alice", "planner", 0); len(h) != 4 || h[1].Content != third.Content {
			t.Fatalf("history after delete_all_notes: %+v", h)
		}
	})

	t.Run("Scoped", func(t *testing.T) {
		// Each (user, agent) has notes of its own.
		MustPutNotes(t, s, "alice", "coach", agentmem.NotesOp{Operation: agentmem.NotesAppend, Content: "Coach notes."})
		MustPutNotes(t, s, "bob", "planner", agentmem.NotesOp{Operation: agentmem.NotesAppend, Content: "Bob's notes."})
		for _, tc := range []struct {
			user, agent, content string
			version              int64
		}{{"alice", "planner", "", 4}, {"alice", "coach", "Coach notes.", 1}, {"bob", "planner", "Bob's notes.", 1}, {"bob", "coach", "", 0}} {
			got, err := s.FindNotes(ctx, tc.user, tc.agent)
			if err != nil || got.Content != tc.content || got.Version != tc.version || got.UserID != tc.user || got.AgentID != tc.agent {
				t.Fatalf("FindNotes(%s, %s) = %+v, %v; want version %d %q", tc.user, tc.agent, got, err, tc.version, tc.content)
			}
		}
		wantNotesVersions(t, AllNotesHistory(t, s, "bob", "planner", 0), 1)
	})
}

// testNotesConcurrent: puts racing on one version end with exactly one
// winner and conflicts for the rest; puts that expect no version take
// turns and none is lost.
func testNotesConcurrent(t *testing.T, s agentmem.Store) {
	const n = 8
	MustPutNotes(t, s, "alice", "planner", agentmem.NotesOp{Operation: agentmem.NotesOverwrite, Content: "# Log\n"})
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			_, err := s.PutNotes(ctx, "alice", "planner", agentmem.NotesOp{Operation: agentmem.NotesAppend,
				Content: fmt.Sprintf("racer %d", i), ExpectedVersion: new(int64(1))})
			errs <- err
		})
	}
	wg.Wait()
	won := 0
	for range n {
		switch err := <-errs; agentmem.ErrorCode(err) {
		case "":
			won++
		case agentmem.ECONFLICT:
		default:
			t.Fatalf("racing put: %v", err)
		}
	}
	if won != 1 {
		t.Fatalf("%d puts expecting version 1 succeeded, want exactly 1", won)
	}

	for i := range n {
		wg.Go(func() {
			_, err := s.PutNotes(ctx, "alice", "planner", agentmem.NotesOp{Operation: agentmem.NotesAppend, Content: fmt.Sprintf("line %d", i)})
			errs <- err
		})
	}
	wg.Wait()
	for range n {
		if err := <-errs; err != nil {
			t.Fatalf("append without an expected version: %v", err)
		}
	}
	got, err := s.FindNotes(ctx, "alice", "planner")
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != 2+n {
		t.Fatalf("version=%d after %d appends, want %d", got.Version, n, 2+n)
	}
	for i := range n {
		if c := strings.Count(got.Content, fmt.Sprintf("line %d", i)); c != 1 {
			t.Fatalf("line %d is in the notes %d times, want once: %q", i, c, got.Content)
		}
	}
	wantNotesVersions(t, AllNotesHistory(t, s, "alice", "planner", 0), 2+n)
}

func testNotesErasure(t *testing.T, s agentmem.Store) {
	for _, user := range []string{"alice", "bob"} {
		MustPutNotes(t, s, user, "planner", agentmem.NotesOp{Operation: agentmem.NotesOverwrite, Content: "# " + user})
		MustPutNotes(t, s, user, "planner", agentmem.NotesOp{Operation: agentmem.NotesAppend, Content: "More."})
		MustPutNotes(t, s, user, "coach", agentmem.NotesOp{Operation: agentmem.NotesAppend, Content: "Coaching."})
	}
	// Notes alone make a user.
	if ids := mustFindUserIDs(t, s, "", 10); !cmp.Equal(ids, []string{"alice", "bob"}) {
		t.Fatalf("FindUserIDs = %v, want the users with notes", ids)
	}
	if _, err := s.DeleteUser(ctx, "alice"); err != nil {
		t.Fatal(err)
	}
	for _, agent := range []string{"planner", "coach"} {
		if got, err := s.FindNotes(ctx, "alice", agent); err != nil || got.Version != 0 || got.Content != "" {
			t.Fatalf("alice's %s notes after DeleteUser = %+v, %v", agent, got, err)
		}
		if h := AllNotesHistory(t, s, "alice", agent, 0); len(h) != 0 {
			t.Fatalf("alice's %s history after DeleteUser has %d versions", agent, len(h))
		}
	}
	if ids := mustFindUserIDs(t, s, "", 10); !cmp.Equal(ids, []string{"bob"}) {
		t.Fatalf("FindUserIDs after DeleteUser = %v", ids)
	}
	// Bob keeps everything.
	if got := mustFindNotes(t, s, "bob", "planner"); got.Version != 2 || got.Content != "# bob\n\nMore." {
		t.Fatalf("bob's notes after alice's erasure = %+v", got)
	}
	wantNotesVersions(t, AllNotesHistory(t, s, "bob", "planner", 0), 2)
	// Alice starts again from version 1.
	if n := MustPutNotes(t, s, "alice", "planner", agentmem.NotesOp{Operation: agentmem.NotesAppend, Content: "Again.", ExpectedVersion: new(int64(0))}); n.Version != 1 {
		t.Fatalf("alice's first notes after erasure: version %d", n.Version)
	}
}
