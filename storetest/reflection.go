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

// mustPutReflections puts reflections of the user's threads and their
// insights.
func mustPutReflections(tb testing.TB, s agentmem.ReflectionStore, user string, rs []*agentmem.Reflection, insights ...*agentmem.Memory) {
	tb.Helper()
	if err := s.PutReflections(ctx, user, rs, insights); err != nil {
		tb.Fatalf("PutReflections: %v", err)
	}
}

// mustFindReflection returns a thread's reflection.
func mustFindReflection(tb testing.TB, s agentmem.ReflectionStore, user, thread string) *agentmem.Reflection {
	tb.Helper()
	r, err := s.FindReflection(ctx, user, thread)
	if err != nil {
		tb.Fatalf("FindReflection(%s): %v", thread, err)
	}
	return r
}

// wantReflections fails unless FindReflections of status lists the
// threads, in that order.
func wantReflections(tb testing.TB, s agentmem.ReflectionStore, user, status string, limit int, threads ...string) {
	tb.Helper()
	rs, err := s.FindReflections(ctx, user, status, limit)
	if err != nil {
		tb.Fatalf("FindReflections(%s): %v", status, err)
	}
	if rs == nil {
		tb.Fatalf("FindReflections(%s) = nil, want a list", status)
	}
	got := []string{}
	for _, r := range rs {
		if r.UserID != user || r.Status != status {
			tb.Fatalf("FindReflections(%s, %s) listed %+v", user, status, r)
		}
		got = append(got, r.ThreadID)
	}
	if threads == nil {
		threads = []string{}
	}
	if diff := cmp.Diff(threads, got); diff != "" {
		tb.Fatalf("FindReflections(%s) mismatch (-want +got):\n%s", status, diff)
	}
}

// mustPutProfile puts a profile of the user built on version after and
// returns it.
func mustPutProfile(tb testing.TB, s agentmem.ProfileStore, user string, after int, text string, processed ...string) *agentmem.Profile {
	tb.Helper()
	p := &agentmem.Profile{UserID: user, Text: text, Method: agentmem.ProfileLLM, Model: "m", Sources: processed}
	if err := s.PutProfile(ctx, p, after, processed); err != nil {
		tb.Fatalf("PutProfile(after %d): %v", after, err)
	}
	return p
}

// mustFindProfile returns a user's profile, failing tb if it cannot.
func mustFindProfile(tb testing.TB, s agentmem.ProfileStore, user string) *agentmem.Profile {
	tb.Helper()
	p, err := s.FindProfile(ctx, user)
	if err != nil {
		tb.Fatalf("FindProfile(%q): %v", user, err)
	}
	return p
}

// allProfiles pages through FindProfiles, limit per page, and returns the
// versions listed.
func allProfiles(tb testing.TB, s agentmem.ProfileStore, user string, limit int) []int {
	tb.Helper()
	versions := []int{}
	for cursor := ""; ; {
		page, next, err := s.FindProfiles(ctx, user, limit, cursor)
		if err != nil {
			tb.Fatalf("FindProfiles: %v", err)
		}
		if page == nil || limit > 0 && len(page) > limit {
			tb.Fatalf("page of %d profiles (nil: %v), limit %d", len(page), page == nil, limit)
		}
		for _, p := range page {
			if p.UserID != user {
				tb.Fatalf("FindProfiles(%s) listed %+v", user, p)
			}
			versions = append(versions, p.Version)
		}
		if cursor = next; cursor == "" {
			return versions
		}
	}
}

func testPutReflections(t *testing.T, s agentmem.Store) {
	th := MustCreateThread(t, s, &agentmem.Thread{UserID: "alice", ID: "t1"})
	mustAppendN(t, s, "alice", th.ID, 4)
	_, err := s.FindReflection(ctx, "alice", th.ID)
	wantCode(t, err, agentmem.ENOTFOUND)

	before := time.Now().Truncate(time.Microsecond)
	pending := &agentmem.Reflection{Status: agentmem.ReflectionPending, ThreadID: th.ID, ThroughSeq: 4}
	mustPutReflections(t, s, "alice", []*agentmem.Reflection{pending})
	if pending.UserID != "alice" || pending.UpdatedAt.Before(before) || pending.UpdatedAt.After(time.Now()) || pending.Topics == nil || pending.Insights == nil {
		t.Fatalf("put reflection = %+v", pending)
	}
	if diff := cmp.Diff(pending, mustFindReflection(t, s, "alice", th.ID)); diff != "" {
		t.Fatalf("FindReflection mismatch (-want +got):\n%s", diff)
	}

	t.Run("Replace", func(t *testing.T) {
		insights := []*agentmem.Memory{
			{ID: "i1", Kind: agentmem.MemoryInsight, Text: "Alice plans her trips by train.", Category: "plan", Confidence: 0.8, Importance: 0.7,
				ThreadID: th.ID, SeqFrom: 1, SeqTo: 4, Source: agentmem.SourceExtracted},
			{Kind: agentmem.MemoryInsight, Text: "Alice prefers quiet carriages."},
		}
		r := &agentmem.Reflection{ThreadID: th.ID, Status: agentmem.ReflectionProcessed, ThroughSeq: 4, Topics: []string{"trains", "travel"},
			Insights: []string{"i1"}, Reason: "two insights"}
		time.Sleep(time.Millisecond)
		mustPutReflections(t, s, "alice", []*agentmem.Reflection{r}, insights...)
		got := mustFindReflection(t, s, "alice", th.ID)
		if diff := cmp.Diff(r, got); diff != "" {
			t.Fatalf("replaced reflection mismatch (-want +got):\n%s", diff)
		}
		if !got.UpdatedAt.After(pending.UpdatedAt) {
			t.Fatalf("UpdatedAt %v, not after the previous put's %v", got.UpdatedAt, pending.UpdatedAt)
		}
		// The insights are memories, created as CreateMemory creates them.
		if insights[1].ID == "" {
			t.Fatal("an insight without an ID got none")
		}
		for _, in := range insights {
			m, err := s.FindMemoryByID(ctx, "alice", in.ID)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(in, m, jsonEqual()); diff != "" {
				t.Fatalf("insight mismatch (-put +found):\n%s", diff)
			}
			if m.UserID != "alice" || m.Kind != agentmem.MemoryInsight || m.Version != 1 || !m.Valid() || m.ProcessedAt != nil ||
				!m.CreatedAt.Equal(got.UpdatedAt) || !m.ValidFrom.Equal(m.CreatedAt) {
				t.Fatalf("insight = %+v", m)
			}
			mustHistory(t, s, "alice", m.ID, agentmem.OpAdd)
		}
		if got := AllMemories(t, s, "alice", agentmem.MemoryFilter{Kind: ptr(agentmem.MemoryInsight)}); len(got) != 2 {
			t.Fatalf("%d insights listed, want 2", len(got))
		}
		// The memories' full-text index has them.
		wantHits(t, mustSearch(t, s, "alice", agentmem.TextQuery{Query: "carriages", Scopes: []string{agentmem.ScopeMemories}}),
			key(agentmem.ScopeMemories, insights[1].ID))
		if b := mustMarshal(t, insights[0]); strings.Contains(string(b), "processed_at") {
			t.Fatalf("an unprocessed insight's JSON has processed_at: %s", b)
		}
		// An insight ID is taken like any memory's.
		err := s.PutReflections(ctx, "alice", nil, []*agentmem.Memory{{ID: "i1", Kind: agentmem.MemoryInsight, Text: "again"}})
		wantCode(t, err, agentmem.ECONFLICT)
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		ok := func() *agentmem.Reflection {
			return &agentmem.Reflection{ThreadID: th.ID, Status: agentmem.ReflectionNoInsight, ThroughSeq: 4}
		}
		for _, tt := range []struct {
			name     string
			user     string
			rs       []*agentmem.Reflection
			insights []*agentmem.Memory
		}{
			{"User", "", []*agentmem.Reflection{ok()}, nil},
			{"Status", "alice", []*agentmem.Reflection{{ThreadID: th.ID, Status: "done", ThroughSeq: 4}}, nil},
			{"ThroughSeq", "alice", []*agentmem.Reflection{{ThreadID: th.ID, Status: agentmem.ReflectionPending, ThroughSeq: -1}}, nil},
			{"ThreadID", "alice", []*agentmem.Reflection{{ThreadID: "a/b", Status: agentmem.ReflectionPending}}, nil},
			{"Topic", "alice", []*agentmem.Reflection{{ThreadID: th.ID, Status: agentmem.ReflectionPending, Topics: []string{"nul \x00"}}}, nil},
			{"InsightID", "alice", []*agentmem.Reflection{{ThreadID: th.ID, Status: agentmem.ReflectionPending, Insights: []string{"a b"}}}, nil},
			{"Reason", "alice", []*agentmem.Reflection{{ThreadID: th.ID, Status: agentmem.ReflectionPending, Reason: strings.Repeat("r", 5<<10)}}, nil},
			{"Fact", "alice", []*agentmem.Reflection{ok()}, []*agentmem.Memory{{Kind: agentmem.MemoryFact, Text: "a fact"}}},
			{"NoKind", "alice", []*agentmem.Reflection{ok()}, []*agentmem.Memory{{Text: "a fact by default"}}},
			{"InsightText", "alice", []*agentmem.Reflection{ok()}, []*agentmem.Memory{{Kind: agentmem.MemoryInsight, Text: " "}}},
			{"InsightConfidence", "alice", []*agentmem.Reflection{ok()}, []*agentmem.Memory{{Kind: agentmem.MemoryInsight, Text: "x", Confidence: 2}}},
		} {
			t.Run(tt.name, func(t *testing.T) {
				wantCode(t, s.PutReflections(ctx, tt.user, tt.rs, tt.insights), agentmem.EINVALID)
			})
		}
		if got := mustFindReflection(t, s, "alice", th.ID); got.Status != agentmem.ReflectionProcessed {
			t.Fatalf("a refused put changed the reflection: %+v", got)
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		bobs := MustCreateThread(t, s, &agentmem.Thread{UserID: "bob", ID: "b1"})
		gone := MustCreateThread(t, s, &agentmem.Thread{UserID: "alice", ID: "gone"})
		mustPutReflections(t, s, "alice", []*agentmem.Reflection{{ThreadID: gone.ID, Status: agentmem.ReflectionPending}})
		if err := s.DeleteThread(ctx, "alice", gone.ID, false); err != nil {
			t.Fatal(err)
		}
		for _, thread := range []string{"nope", bobs.ID, gone.ID} {
			r := &agentmem.Reflection{ThreadID: thread, Status: agentmem.ReflectionPending}
			wantCode(t, s.PutReflections(ctx, "alice", []*agentmem.Reflection{r}, nil), agentmem.ENOTFOUND)
			_, err := s.FindReflection(ctx, "alice", thread)
			wantCode(t, err, agentmem.ENOTFOUND)
		}
		_, err := s.FindReflection(ctx, "bob", th.ID)
		wantCode(t, err, agentmem.ENOTFOUND)
		_, err = s.FindReflection(ctx, "bob", bobs.ID) // exists, never reflected on
		wantCode(t, err, agentmem.ENOTFOUND)
	})
	t.Run("Atomic", func(t *testing.T) {
		t2 := MustCreateThread(t, s, &agentmem.Thread{UserID: "alice", ID: "t2"})
		wantNothing := func(t *testing.T) {
			t.Helper()
			if _, err := s.FindReflection(ctx, "alice", t2.ID); agentmem.ErrorCode(err) != agentmem.ENOTFOUND {
				t.Fatalf("FindReflection after a failed put = %v, want ENOTFOUND", err)
			}
			if got := mustFindReflection(t, s, "alice", th.ID); got.Status != agentmem.ReflectionProcessed {
				t.Fatalf("a failed put changed the reflection: %+v", got)
			}
			_, err := s.FindMemoryByID(ctx, "alice", "new")
			wantCode(t, err, agentmem.ENOTFOUND)
		}
		rs := func() []*agentmem.Reflection {
			return []*agentmem.Reflection{
				{ThreadID: t2.ID, Status: agentmem.ReflectionProcessed, Insights: []string{"new"}},
				{ThreadID: th.ID, Status: agentmem.ReflectionNoInsight},
			}
		}
		// An invalid insight after a valid one.
		err := s.PutReflections(ctx, "alice", rs(), []*agentmem.Memory{
			{ID: "new", Kind: agentmem.MemoryInsight, Text: "valid"},
			{ID: "bad", Kind: agentmem.MemoryFact, Text: "not an insight"},
		})
		wantCode(t, err, agentmem.EINVALID)
		wantNothing(t)
		// An insight whose ID is taken, after a new one.
		err = s.PutReflections(ctx, "alice", rs(), []*agentmem.Memory{
			{ID: "new", Kind: agentmem.MemoryInsight, Text: "valid"},
			{ID: "i1", Kind: agentmem.MemoryInsight, Text: "taken"},
		})
		wantCode(t, err, agentmem.ECONFLICT)
		wantNothing(t)
		// A missing thread after the others.
		err = s.PutReflections(ctx, "alice", append(rs(), &agentmem.Reflection{ThreadID: "nope", Status: agentmem.ReflectionPending}),
			[]*agentmem.Memory{{ID: "new", Kind: agentmem.MemoryInsight, Text: "valid"}})
		wantCode(t, err, agentmem.ENOTFOUND)
		wantNothing(t)
		if got := AllMemories(t, s, "alice", agentmem.MemoryFilter{IncludeInvalid: true}); len(got) != 2 {
			t.Fatalf("%d memories after failed puts, want the 2 insights", len(got))
		}
	})
}

func testFindReflections(t *testing.T, s agentmem.Store) {
	for _, id := range []string{"a", "b", "c", "d", "e"} {
		MustCreateThread(t, s, &agentmem.Thread{UserID: "alice", ID: id})
	}
	MustCreateThread(t, s, &agentmem.Thread{UserID: "bob", ID: "a"})
	put := func(user, thread, status string) {
		t.Helper()
		time.Sleep(time.Millisecond) // distinct times, whatever the clock's resolution
		mustPutReflections(t, s, user, []*agentmem.Reflection{{ThreadID: thread, Status: status}})
	}
	put("alice", "c", agentmem.ReflectionPending)
	put("alice", "a", agentmem.ReflectionPending)
	put("bob", "a", agentmem.ReflectionPending)
	put("alice", "b", agentmem.ReflectionNoInsight)
	put("alice", "d", agentmem.ReflectionPending)
	put("alice", "e", agentmem.ReflectionNoInsight)

	wantReflections(t, s, "alice", agentmem.ReflectionPending, 0, "c", "a", "d")
	wantReflections(t, s, "alice", agentmem.ReflectionNoInsight, 0, "b", "e")
	wantReflections(t, s, "alice", agentmem.ReflectionProcessed, 0)
	wantReflections(t, s, "bob", agentmem.ReflectionPending, 0, "a")
	wantReflections(t, s, "nobody", agentmem.ReflectionPending, 0)
	wantReflections(t, s, "alice", agentmem.ReflectionPending, 2, "c", "a")

	// Putting a reflection again makes it the newest; changing its status
	// moves it to the other list.
	put("alice", "c", agentmem.ReflectionPending)
	put("alice", "b", agentmem.ReflectionProcessed)
	wantReflections(t, s, "alice", agentmem.ReflectionPending, 0, "a", "d", "c")
	wantReflections(t, s, "alice", agentmem.ReflectionNoInsight, 0, "e")
	wantReflections(t, s, "alice", agentmem.ReflectionProcessed, 0, "b")

	// A failed reflection (its job a dead letter) is a status of its own,
	// and a retry makes it pending again.
	put("alice", "c", agentmem.ReflectionFailed)
	wantReflections(t, s, "alice", agentmem.ReflectionFailed, 0, "c")
	wantReflections(t, s, "alice", agentmem.ReflectionPending, 0, "a", "d")
	put("alice", "c", agentmem.ReflectionPending)
	wantReflections(t, s, "alice", agentmem.ReflectionFailed, 0)

	// One put stores reflections of several threads at one time.
	mustPutReflections(t, s, "alice", []*agentmem.Reflection{
		{ThreadID: "d", Status: agentmem.ReflectionProcessed, Reason: "aggregated"},
		{ThreadID: "e", Status: agentmem.ReflectionProcessed, Reason: "aggregated"},
	})
	rs, err := s.FindReflections(ctx, "alice", agentmem.ReflectionProcessed, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 3 || !rs[1].UpdatedAt.Equal(rs[2].UpdatedAt) || rs[1].ThreadID != "d" || rs[2].ThreadID != "e" {
		t.Fatalf("processed reflections = %+v, want b, then d and e of one put", rs)
	}

	// A soft-deleted thread's reflection is left out.
	if err := s.DeleteThread(ctx, "alice", "a", false); err != nil {
		t.Fatal(err)
	}
	wantReflections(t, s, "alice", agentmem.ReflectionPending, 0, "c")

	t.Run("ErrInvalid", func(t *testing.T) {
		for _, tt := range []struct {
			status string
			limit  int
		}{{"", 0}, {"done", 0}, {agentmem.ReflectionPending, -1}, {agentmem.ReflectionPending, agentmem.MaxPageSize + 1}} {
			_, err := s.FindReflections(ctx, "alice", tt.status, tt.limit)
			wantCode(t, err, agentmem.EINVALID)
		}
	})
}

func testProfiles(t *testing.T, s agentmem.Store) {
	_, err := s.FindProfile(ctx, "alice")
	wantCode(t, err, agentmem.ENOTFOUND)
	if got := allProfiles(t, s, "alice", 0); len(got) != 0 {
		t.Fatalf("profiles of a new user = %v", got)
	}

	before := time.Now().Truncate(time.Microsecond)
	in := &agentmem.Profile{UserID: "alice", Text: "Alice travels by train.", Method: agentmem.ProfileAssembled, Sources: []string{"m1", "m2"}}
	if err := s.PutProfile(ctx, in, 0, nil); err != nil {
		t.Fatal(err)
	}
	if in.Version != 1 || in.CreatedAt.Before(before) || in.CreatedAt.After(time.Now()) || in.CreatedAt.Location() != time.UTC {
		t.Fatalf("first profile = %+v", in)
	}
	got, err := s.FindProfile(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(in, got); diff != "" {
		t.Fatalf("FindProfile mismatch (-want +got):\n%s", diff)
	}
	if p := mustPutProfile(t, s, "alice", -1, "second"); p.Version != 2 || p.Sources == nil {
		t.Fatalf("second profile (after -1) = %+v", p)
	}
	third := mustPutProfile(t, s, "alice", 2, "third")
	if third.Version != 3 {
		t.Fatalf("third profile = %+v", third)
	}
	if got := mustFindProfile(t, s, "alice"); got.Version != 3 || got.Text != "third" || got.Method != agentmem.ProfileLLM || got.Model != "m" {
		t.Fatalf("newest profile = %+v", got)
	}
	// Another user's profiles are their own, numbered from 1.
	if p := mustPutProfile(t, s, "bob", 0, "Bob's"); p.Version != 1 {
		t.Fatalf("bob's first profile = %+v", p)
	}

	t.Run("ErrConflict", func(t *testing.T) {
		for _, after := range []int{0, 1, 2, 4} {
			err := s.PutProfile(ctx, &agentmem.Profile{UserID: "alice", Text: "stale", Method: agentmem.ProfileLLM}, after, nil)
			wantCode(t, err, agentmem.ECONFLICT)
			// The message names the newest version and the one built on.
			if msg := agentmem.ErrorMessage(err); !strings.Contains(msg, "3") || !strings.Contains(msg, fmt.Sprint(after)) {
				t.Fatalf("conflict message %q does not name versions 3 and %d", msg, after)
			}
		}
		if got := mustFindProfile(t, s, "alice"); got.Version != 3 {
			t.Fatalf("after conflicts the newest profile is %+v", got)
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		for _, tt := range []struct {
			p     agentmem.Profile
			after int
		}{
			{agentmem.Profile{UserID: "", Text: "x", Method: agentmem.ProfileLLM}, -1},
			{agentmem.Profile{UserID: "alice", Text: "x", Method: "magic"}, -1},
			{agentmem.Profile{UserID: "alice", Text: "bad \xff", Method: agentmem.ProfileLLM}, -1},
			{agentmem.Profile{UserID: "alice", Text: "x", Method: agentmem.ProfileLLM, Sources: []string{"a b"}}, -1},
			{agentmem.Profile{UserID: "alice", Text: "x", Method: agentmem.ProfileLLM}, -2},
		} {
			wantCode(t, s.PutProfile(ctx, &tt.p, tt.after, nil), agentmem.EINVALID)
		}
		big := &agentmem.Profile{UserID: "alice", Text: strings.Repeat("x", agentmem.MaxProfileBytes+1), Method: agentmem.ProfileLLM}
		wantCode(t, s.PutProfile(ctx, big, -1, nil), agentmem.ETOOLARGE)
		if got := mustFindProfile(t, s, "alice"); got.Version != 3 {
			t.Fatalf("after refused puts the newest profile is %+v", got)
		}
	})
	t.Run("FindProfiles", func(t *testing.T) {
		for _, limit := range []int{0, 1, 2, 3} {
			if got := allProfiles(t, s, "alice", limit); !cmp.Equal(got, []int{3, 2, 1}) {
				t.Fatalf("profiles, %d a page = %v, want [3 2 1]", limit, got)
			}
		}
		page, next, err := s.FindProfiles(ctx, "alice", 2, "")
		if err != nil || len(page) != 2 || next == "" {
			t.Fatalf("first page = %d profiles, %q, %v", len(page), next, err)
		}
		if diff := cmp.Diff(third, page[0]); diff != "" {
			t.Fatalf("listed profile mismatch (-put +listed):\n%s", diff)
		}
		for _, tt := range []struct {
			limit  int
			cursor string
		}{{-1, ""}, {agentmem.MaxPageSize + 1, ""}, {0, "garbage!"}} {
			_, _, err := s.FindProfiles(ctx, "alice", tt.limit, tt.cursor)
			wantCode(t, err, agentmem.EINVALID)
		}
	})
}

// testProfileProcessed: PutProfile marks the memories among processed
// (insights and facts), the user's only, leaving their versions, times
// and history as they were; FindMemories filters on it.
func testProfileProcessed(t *testing.T, s agentmem.Store) {
	th := MustCreateThread(t, s, &agentmem.Thread{UserID: "alice", ID: "t1"})
	mustPutReflections(t, s, "alice", []*agentmem.Reflection{{ThreadID: th.ID, Status: agentmem.ReflectionProcessed, Insights: []string{"i1", "i2"}}},
		&agentmem.Memory{ID: "i1", Kind: agentmem.MemoryInsight, Text: "Alice travels light."},
		&agentmem.Memory{ID: "i2", Kind: agentmem.MemoryInsight, Text: "Alice books early."})
	fact := MustCreateMemory(t, s, &agentmem.Memory{UserID: "alice", ID: "f1", Text: "Alice lives in Lyon."})
	bobs := MustCreateMemory(t, s, &agentmem.Memory{UserID: "bob", ID: "i1", Kind: agentmem.MemoryInsight, Text: "Bob's insight."})
	i1 := mustFindMemory(t, s, "alice", "i1")

	unprocessed := AllMemories(t, s, "alice", agentmem.MemoryFilter{Processed: ptr(false)})
	if len(unprocessed) != 3 {
		t.Fatalf("%d unprocessed memories, want 3", len(unprocessed))
	}
	p := mustPutProfile(t, s, "alice", 0, "Alice travels light.", "i1", "f1", "unknown")

	got, err := s.FindMemoryByID(ctx, "alice", "i1")
	if err != nil {
		t.Fatal(err)
	}
	if got.ProcessedAt == nil || !got.ProcessedAt.Equal(p.CreatedAt) {
		t.Fatalf("processed insight's ProcessedAt = %v, want the profile's time %v", got.ProcessedAt, p.CreatedAt)
	}
	// Only ProcessedAt changed: not the version, the times or the history.
	got.ProcessedAt = nil
	if diff := cmp.Diff(i1, got, jsonEqual()); diff != "" {
		t.Fatalf("processed insight changed (-before +after):\n%s", diff)
	}
	mustHistory(t, s, "alice", "i1", agentmem.OpAdd)
	if got := mustFindMemory(t, s, "alice", fact.ID); got.ProcessedAt == nil {
		t.Fatalf("the fact among processed was not marked")
	}
	if got := mustFindMemory(t, s, "bob", bobs.ID); got.ProcessedAt != nil {
		t.Fatalf("another user's memory of the same ID was marked processed")
	}
	if got := memoryIDs(AllMemories(t, s, "alice", agentmem.MemoryFilter{Processed: ptr(true)})); len(got) != 2 {
		t.Fatalf("processed memories = %v, want i1 and f1", got)
	}
	insight := agentmem.MemoryInsight
	if got := memoryIDs(AllMemories(t, s, "alice", agentmem.MemoryFilter{Processed: ptr(false), Kind: &insight})); !cmp.Equal(got, []string{"i2"}) {
		t.Fatalf("unprocessed insights = %v, want [i2]", got)
	}
	if got := AllMemories(t, s, "alice", agentmem.MemoryFilter{}); len(got) != 3 {
		t.Fatalf("%d memories without the filter, want 3", len(got))
	}
	processed := mustFindMemory(t, s, "alice", "i1")
	if b := mustMarshal(t, processed); !strings.Contains(string(b), `"processed_at":`) {
		t.Fatalf("a processed insight's JSON lacks processed_at: %s", b)
	}
	// Invalidation keeps the mark; an update is a new version, not yet in
	// the profile.
	if m, err := s.InvalidateMemory(ctx, "alice", "f1", "", "moved"); err != nil {
		t.Fatal(err)
	} else if m.ProcessedAt == nil {
		t.Fatalf("invalidated fact lost its mark")
	}
	text := "Alice travels very light."
	if m, err := s.UpdateMemory(ctx, "alice", "i1", agentmem.MemoryUpdate{Text: &text}); err != nil {
		t.Fatal(err)
	} else if m.ProcessedAt != nil {
		t.Fatalf("updated insight's ProcessedAt = %v, want none", m.ProcessedAt)
	}
	if got := mustFindMemory(t, s, "alice", "i1"); got.ProcessedAt != nil {
		t.Fatalf("stored updated insight's ProcessedAt = %v, want none", got.ProcessedAt)
	}
	// A put that fails marks nothing.
	err = s.PutProfile(ctx, &agentmem.Profile{UserID: "alice", Text: "stale", Method: agentmem.ProfileLLM}, 0, []string{"i2"})
	wantCode(t, err, agentmem.ECONFLICT)
	if got := mustFindMemory(t, s, "alice", "i2"); got.ProcessedAt != nil {
		t.Fatal("a refused PutProfile marked an insight processed")
	}
}

// testPutProfileConcurrent: of refreshes racing to build on the same
// version, exactly one stores the next version; the others get ECONFLICT
// and mark nothing.
func testPutProfileConcurrent(t *testing.T, s agentmem.Store) {
	const n = 8
	var ids []string // n for each round
	for i := range 2 * n {
		m := MustCreateMemory(t, s, &agentmem.Memory{UserID: "alice", ID: fmt.Sprintf("i%d", i), Kind: agentmem.MemoryInsight, Text: fmt.Sprintf("insight %d", i)})
		ids = append(ids, m.ID)
	}
	for round, after := range []int{0, 1} {
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range n {
			wg.Go(func() {
				p := &agentmem.Profile{UserID: "alice", Text: fmt.Sprintf("round %d, refresh %d", round, i), Method: agentmem.ProfileLLM}
				errs[i] = s.PutProfile(ctx, p, after, []string{ids[round*n+i]})
			})
		}
		wg.Wait()
		winner := -1
		for i, err := range errs {
			switch agentmem.ErrorCode(err) {
			case "":
				if winner != -1 {
					t.Fatalf("round %d: refreshes %d and %d both built on version %d", round, winner, i, after)
				}
				winner = i
			case agentmem.ECONFLICT:
			default:
				t.Fatalf("round %d, refresh %d: %v", round, i, err)
			}
		}
		if winner == -1 {
			t.Fatalf("round %d: no refresh succeeded", round)
		}
		got, err := s.FindProfile(ctx, "alice")
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf("round %d, refresh %d", round, winner); got.Version != after+1 || got.Text != want {
			t.Fatalf("round %d: newest profile = %+v, want version %d, %q", round, got, after+1, want)
		}
		m := mustFindMemory(t, s, "alice", ids[round*n+winner])
		if m.ProcessedAt == nil || !m.ProcessedAt.Equal(got.CreatedAt) {
			t.Fatalf("round %d: the winner's insight = %+v", round, m)
		}
	}
	if got := AllMemories(t, s, "alice", agentmem.MemoryFilter{Processed: ptr(true)}); len(got) != 2 {
		t.Fatalf("%d insights processed, want the 2 winners'", len(got))
	}
	if got := allProfiles(t, s, "alice", 0); !cmp.Equal(got, []int{2, 1}) {
		t.Fatalf("profiles = %v, want [2 1]", got)
	}
}

// testReflectionErasure: permanent thread deletion, clean-up and user
// erasure remove reflections (not the insights drawn, which are the
// user's memories); user erasure removes profiles; another user's stay.
func testReflectionErasure(t *testing.T, s agentmem.Store) {
	fill := func(user, thread string) {
		t.Helper()
		MustCreateThread(t, s, &agentmem.Thread{UserID: user, ID: thread})
		mustPutReflections(t, s, user, []*agentmem.Reflection{{ThreadID: thread, Status: agentmem.ReflectionProcessed, Insights: []string{thread + "-i"}}},
			&agentmem.Memory{ID: thread + "-i", Kind: agentmem.MemoryInsight, Text: "insight of " + thread})
	}
	for _, user := range []string{"alice", "bob"} {
		fill(user, "t1")
		fill(user, "t2")
		mustPutProfile(t, s, user, 0, "first")
		mustPutProfile(t, s, user, 1, "second", "t1-i")
	}

	if err := s.DeleteThread(ctx, "alice", "t1", true); err != nil {
		t.Fatal(err)
	}
	MustCreateThread(t, s, &agentmem.Thread{UserID: "alice", ID: "t1"})
	_, err := s.FindReflection(ctx, "alice", "t1")
	wantCode(t, err, agentmem.ENOTFOUND)
	if _, err := s.FindMemoryByID(ctx, "alice", "t1-i"); err != nil {
		t.Fatalf("the insight drawn from a deleted thread: %v", err)
	}
	wantReflections(t, s, "alice", agentmem.ReflectionProcessed, 0, "t2")

	if _, err := s.DeleteThreadsBefore(ctx, "alice", time.Now().Add(time.Hour), false); err != nil {
		t.Fatal(err)
	}
	MustCreateThread(t, s, &agentmem.Thread{UserID: "alice", ID: "t2"})
	_, err = s.FindReflection(ctx, "alice", "t2")
	wantCode(t, err, agentmem.ENOTFOUND)
	wantReflections(t, s, "alice", agentmem.ReflectionProcessed, 0)

	fill("alice", "t3")
	if _, err := s.DeleteUser(ctx, "alice"); err != nil {
		t.Fatal(err)
	}
	_, err = s.FindProfile(ctx, "alice")
	wantCode(t, err, agentmem.ENOTFOUND)
	if got := allProfiles(t, s, "alice", 0); len(got) != 0 {
		t.Fatalf("profiles after DeleteUser = %v", got)
	}
	MustCreateThread(t, s, &agentmem.Thread{UserID: "alice", ID: "t3"})
	_, err = s.FindReflection(ctx, "alice", "t3")
	wantCode(t, err, agentmem.ENOTFOUND)
	if got := AllMemories(t, s, "alice", agentmem.MemoryFilter{IncludeInvalid: true}); len(got) != 0 {
		t.Fatalf("%d memories after DeleteUser", len(got))
	}
	// Alice starts again from version 1.
	if p := mustPutProfile(t, s, "alice", 0, "anew"); p.Version != 1 {
		t.Fatalf("first profile after DeleteUser = %+v", p)
	}

	// Bob keeps everything.
	wantReflections(t, s, "bob", agentmem.ReflectionProcessed, 0, "t1", "t2")
	if got := allProfiles(t, s, "bob", 0); !cmp.Equal(got, []int{2, 1}) {
		t.Fatalf("bob's profiles = %v", got)
	}
	if m := mustFindMemory(t, s, "bob", "t1-i"); m == nil || m.ProcessedAt == nil {
		t.Fatalf("bob's processed insight = %+v", m)
	}
}
