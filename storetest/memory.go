package storetest

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/google/go-cmp/cmp"
)

// MustCreateMemory creates m and returns it as stored.
func MustCreateMemory(tb testing.TB, s agentmem.MemoryStore, m *agentmem.Memory) *agentmem.Memory {
	tb.Helper()
	if err := s.CreateMemory(ctx, m); err != nil {
		tb.Fatalf("CreateMemory: %v", err)
	}
	return m
}

// AllMemories pages through FindMemories with f (its Limit per page) and
// returns every memory listed.
func AllMemories(tb testing.TB, s agentmem.MemoryStore, user string, f agentmem.MemoryFilter) []*agentmem.Memory {
	tb.Helper()
	all := []*agentmem.Memory{}
	for {
		page, next, err := s.FindMemories(ctx, user, f)
		if err != nil {
			tb.Fatalf("FindMemories: %v", err)
		}
		if page == nil || f.Limit > 0 && len(page) > f.Limit {
			tb.Fatalf("page of %d memories (nil: %v), limit %d", len(page), page == nil, f.Limit)
		}
		all = append(all, page...)
		if f.Cursor = next; next == "" {
			return all
		}
	}
}

func memoryIDs(mems []*agentmem.Memory) []string {
	ids := make([]string, len(mems))
	for i, m := range mems {
		ids[i] = m.ID
	}
	return ids
}

// mustFindMemory returns a user's memory, failing tb if it cannot.
func mustFindMemory(tb testing.TB, s agentmem.MemoryStore, user, id string) *agentmem.Memory {
	tb.Helper()
	m, err := s.FindMemoryByID(ctx, user, id)
	if err != nil {
		tb.Fatalf("FindMemoryByID(%q, %q): %v", user, id, err)
	}
	return m
}

// mustHistory returns the memory's history and checks its versions run
// 1, 2, 3… with the ops given.
func mustHistory(tb testing.TB, s agentmem.MemoryStore, user, id string, ops ...string) []*agentmem.MemoryChange {
	tb.Helper()
	h, err := s.FindMemoryHistory(ctx, user, id)
	if err != nil {
		tb.Fatalf("FindMemoryHistory: %v", err)
	}
	var got []string
	for i, c := range h {
		if c.Version != i+1 || c.MemoryID != id {
			tb.Fatalf("history[%d] = %+v, want version %d of %s", i, c, i+1, id)
		}
		got = append(got, c.Op)
	}
	if diff := cmp.Diff(ops, got); diff != "" {
		tb.Fatalf("history ops mismatch (-want +got):\n%s", diff)
	}
	return h
}

func testCreateMemory(t *testing.T, s agentmem.Store) {
	before := time.Now().Truncate(time.Microsecond)
	in := &agentmem.Memory{UserID: "alice", Text: "Alice is vegetarian.", Category: "preference", Confidence: 0.9, Importance: 0.5,
		AgentID: "chef", ThreadID: "t1", SeqFrom: 3, SeqTo: 4, Metadata: json.RawMessage(` {"slot": "diet"} `)}
	m := MustCreateMemory(t, s, in)
	if m.ID == "" || m.Kind != agentmem.MemoryFact || m.Source != agentmem.SourceAPI || m.Version != 1 || !m.Valid() ||
		m.CreatedAt.Before(before) || !m.CreatedAt.Equal(m.UpdatedAt) || !m.ValidFrom.Equal(m.CreatedAt) || m.CreatedAt.Location() != time.UTC {
		t.Fatalf("created memory = %+v", m)
	}
	got, err := s.FindMemoryByID(ctx, "alice", m.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(m, got, jsonEqual()); diff != "" {
		t.Fatalf("FindMemoryByID mismatch (-want +got):\n%s", diff)
	}
	h := mustHistory(t, s, "alice", m.ID, agentmem.OpAdd)
	want := &agentmem.MemoryChange{MemoryID: m.ID, Version: 1, Op: agentmem.OpAdd, Text: m.Text, Category: "preference", Confidence: 0.9,
		Importance: 0.5, ThreadID: "t1", SeqFrom: 3, SeqTo: 4, At: m.CreatedAt}
	if diff := cmp.Diff(want, h[0]); diff != "" {
		t.Fatalf("history entry mismatch (-want +got):\n%s", diff)
	}
	// A user with memories only is a user: listed, so exports and erasures find them.
	if ids, err := s.FindUserIDs(ctx, "", 10); err != nil || !cmp.Equal(ids, []string{"alice"}) {
		t.Fatalf("FindUserIDs = %v, %v; want [alice]", ids, err)
	}

	t.Run("ClientID", func(t *testing.T) {
		validFrom := time.Date(2024, 5, 1, 12, 0, 0, 123456789, time.FixedZone("x", 3600))
		m := MustCreateMemory(t, s, &agentmem.Memory{UserID: "alice", ID: "diet", Kind: agentmem.MemoryInsight, Text: "x", ValidFrom: validFrom,
			Source: agentmem.SourceExtracted})
		if got := mustFindMemory(t, s, "alice", "diet"); !got.ValidFrom.Equal(validFrom.Truncate(time.Microsecond)) ||
			got.Kind != agentmem.MemoryInsight || got.Source != agentmem.SourceExtracted || !got.ValidFrom.Equal(m.ValidFrom) {
			t.Fatalf("memory with a client ID = %+v", got)
		}
		wantCode(t, s.CreateMemory(ctx, &agentmem.Memory{UserID: "alice", ID: "diet", Text: "again"}), agentmem.ECONFLICT)
		// IDs are per user: bob may use the same one.
		MustCreateMemory(t, s, &agentmem.Memory{UserID: "bob", ID: "diet", Text: "Bob eats fish."})
		if got := mustFindMemory(t, s, "alice", "diet"); got.Text != "x" {
			t.Fatalf("alice's memory became %q", got.Text)
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		for _, bad := range []*agentmem.Memory{
			{UserID: "", Text: "x"},
			{UserID: "alice", Text: ""},
			{UserID: "alice", Text: "   "},
			{UserID: "alice", Text: "bad \xff"},
			{UserID: "alice", Text: "nul \x00"},
			{UserID: "alice", ID: "a/b", Text: "x"},
			{UserID: "alice", Kind: "rumour", Text: "x"},
			{UserID: "alice", Text: "x", Confidence: 1.5},
			{UserID: "alice", Text: "x", Importance: -0.1},
			{UserID: "alice", Text: "x", Confidence: math.NaN()},
			{UserID: "alice", Text: "x", Category: strings.Repeat("c", agentmem.MaxCategory+1)},
			{UserID: "alice", Text: "x", AgentID: "a b"},
			{UserID: "alice", Text: "x", SeqFrom: 5, SeqTo: 4},
			{UserID: "alice", Text: "x", Metadata: json.RawMessage(`[1]`)},
			{UserID: "alice", Text: "x", ValidFrom: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)},
		} {
			wantCode(t, s.CreateMemory(ctx, bad), agentmem.EINVALID)
		}
		wantCode(t, s.CreateMemory(ctx, &agentmem.Memory{UserID: "alice", Text: strings.Repeat("x", agentmem.MaxMemoryBytes+1)}), agentmem.ETOOLARGE)
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		_, err := s.FindMemoryByID(ctx, "bob", m.ID)
		wantCode(t, err, agentmem.ENOTFOUND)
		_, err = s.FindMemoryByID(ctx, "alice", "nope")
		wantCode(t, err, agentmem.ENOTFOUND)
		_, err = s.FindMemoryHistory(ctx, "bob", m.ID)
		wantCode(t, err, agentmem.ENOTFOUND)
	})
}

func testUpdateMemory(t *testing.T, s agentmem.Store) {
	m := MustCreateMemory(t, s, &agentmem.Memory{UserID: "alice", Text: "Alice lives in Lyon.", Category: "identity", Confidence: 0.5,
		Metadata: json.RawMessage(`{"k":1}`), ThreadID: "t1", SeqFrom: 1, SeqTo: 1})
	time.Sleep(2 * time.Millisecond)
	text, conf := "Alice lives in Paris.", 0.8
	got, err := s.UpdateMemory(ctx, "alice", m.ID, agentmem.MemoryUpdate{Text: &text, Confidence: &conf, ThreadID: "t2", SeqFrom: 7, SeqTo: 9, Reason: "she moved"})
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != 2 || got.Text != text || got.Confidence != conf || got.Category != "identity" || got.ThreadID != "t2" || got.SeqFrom != 7 ||
		got.SeqTo != 9 || !got.UpdatedAt.After(m.UpdatedAt) || !got.CreatedAt.Equal(m.CreatedAt) || !got.ValidFrom.Equal(m.ValidFrom) || string(got.Metadata) != `{"k":1}` {
		t.Fatalf("updated memory = %+v", got)
	}
	if stored := mustFindMemory(t, s, "alice", m.ID); !cmp.Equal(got, stored, jsonEqual()) {
		t.Fatalf("stored memory mismatch (-returned +stored):\n%s", cmp.Diff(got, stored, jsonEqual()))
	}
	h := mustHistory(t, s, "alice", m.ID, agentmem.OpAdd, agentmem.OpUpdate)
	want := &agentmem.MemoryChange{MemoryID: m.ID, Version: 2, Op: agentmem.OpUpdate, Text: text, Category: "identity", Confidence: conf,
		ThreadID: "t2", SeqFrom: 7, SeqTo: 9, Reason: "she moved", At: got.UpdatedAt}
	if diff := cmp.Diff(want, h[1]); diff != "" {
		t.Fatalf("history entry mismatch (-want +got):\n%s", diff)
	}
	if h[0].Text != "Alice lives in Lyon." || h[0].ThreadID != "t1" {
		t.Fatalf("the first version changed: %+v", h[0])
	}

	t.Run("NoThread", func(t *testing.T) {
		// An update from the API keeps the memory's provenance.
		cat, meta := "", json.RawMessage(` {"k": 2} `)
		got, err := s.UpdateMemory(ctx, "alice", m.ID, agentmem.MemoryUpdate{Category: &cat, Metadata: &meta})
		if err != nil {
			t.Fatal(err)
		}
		if got.Version != 3 || got.Category != "" || got.ThreadID != "t2" || got.Text != text || !cmp.Equal(got.Metadata, json.RawMessage(`{"k":2}`), jsonEqual()) {
			t.Fatalf("updated memory = %+v", got)
		}
		mustHistory(t, s, "alice", m.ID, agentmem.OpAdd, agentmem.OpUpdate, agentmem.OpUpdate)
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		empty, big, bad := "", 2.0, json.RawMessage(`"x"`)
		for _, upd := range []agentmem.MemoryUpdate{
			{Text: &empty},
			{Confidence: &big},
			{Importance: &big},
			{Metadata: &bad},
			{ThreadID: "a/b"},
			{SeqFrom: 3, SeqTo: 2},
			{Reason: "nul \x00"},
		} {
			_, err := s.UpdateMemory(ctx, "alice", m.ID, upd)
			wantCode(t, err, agentmem.EINVALID)
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		_, err := s.UpdateMemory(ctx, "bob", m.ID, agentmem.MemoryUpdate{Text: &text})
		wantCode(t, err, agentmem.ENOTFOUND)
		_, err = s.UpdateMemory(ctx, "alice", "nope", agentmem.MemoryUpdate{Text: &text})
		wantCode(t, err, agentmem.ENOTFOUND)
	})
}

func testInvalidateMemory(t *testing.T, s agentmem.Store) {
	old := MustCreateMemory(t, s, &agentmem.Memory{UserID: "alice", Text: "Alice works at Acme.", Category: "work"})
	time.Sleep(2 * time.Millisecond)
	newer := MustCreateMemory(t, s, &agentmem.Memory{UserID: "alice", Text: "Alice works at Globex.", Category: "work"})
	got, err := s.InvalidateMemory(ctx, "alice", old.ID, newer.ID, "she changed jobs")
	if err != nil {
		t.Fatal(err)
	}
	if got.Valid() || got.SupersededBy != newer.ID || got.Version != 2 || !got.InvalidAt.Equal(got.UpdatedAt) || got.InvalidAt.Before(newer.CreatedAt) ||
		got.Text != old.Text {
		t.Fatalf("invalidated memory = %+v", got)
	}
	stored, err := s.FindMemoryByID(ctx, "alice", old.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(got, stored, jsonEqual()); diff != "" {
		t.Fatalf("stored memory mismatch (-returned +stored):\n%s", diff)
	}
	h := mustHistory(t, s, "alice", old.ID, agentmem.OpAdd, agentmem.OpInvalidate)
	if h[1].Reason != "she changed jobs" || !h[1].At.Equal(*got.InvalidAt) || h[1].Text != old.Text {
		t.Fatalf("invalidation entry = %+v", h[1])
	}

	t.Run("Again", func(t *testing.T) {
		// Invalidating again changes nothing.
		again, err := s.InvalidateMemory(ctx, "alice", old.ID, "", "twice")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(got, again, jsonEqual()); diff != "" {
			t.Fatalf("second invalidation changed the memory (-first +second):\n%s", diff)
		}
		mustHistory(t, s, "alice", old.ID, agentmem.OpAdd, agentmem.OpInvalidate)
	})
	t.Run("Listed", func(t *testing.T) {
		if ids := memoryIDs(AllMemories(t, s, "alice", agentmem.MemoryFilter{})); !cmp.Equal(ids, []string{newer.ID}) {
			t.Fatalf("valid memories = %v, want only %s", ids, newer.ID)
		}
		if ids := memoryIDs(AllMemories(t, s, "alice", agentmem.MemoryFilter{IncludeInvalid: true})); !cmp.Equal(ids, []string{old.ID, newer.ID}) {
			t.Fatalf("all memories = %v, want the invalidated one (updated last) first", ids)
		}
	})
	t.Run("ErrConflict", func(t *testing.T) {
		text := "Alice works at Initech."
		_, err := s.UpdateMemory(ctx, "alice", old.ID, agentmem.MemoryUpdate{Text: &text})
		wantCode(t, err, agentmem.ECONFLICT)
	})
	t.Run("NoSuccessor", func(t *testing.T) {
		got, err := s.InvalidateMemory(ctx, "alice", newer.ID, "", "")
		if err != nil || got.Valid() || got.SupersededBy != "" {
			t.Fatalf("InvalidateMemory without successor = %+v, %v", got, err)
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		for _, args := range [][2]string{{old.ID, ""}, {"a b", ""}, {"", "nul \x00"}} {
			_, err := s.InvalidateMemory(ctx, "alice", old.ID, args[0], args[1])
			wantCode(t, err, agentmem.EINVALID)
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		_, err := s.InvalidateMemory(ctx, "bob", old.ID, "", "")
		wantCode(t, err, agentmem.ENOTFOUND)
		_, err = s.InvalidateMemory(ctx, "alice", "nope", "", "")
		wantCode(t, err, agentmem.ENOTFOUND)
	})
}

func testDeleteMemory(t *testing.T, s agentmem.Store) {
	const space = "test/4"
	for _, user := range []string{"alice", "bob"} {
		MustCreateMemory(t, s, &agentmem.Memory{UserID: user, ID: "m1", Text: "The cat is called Tom."})
		MustCreateMemory(t, s, &agentmem.Memory{UserID: user, ID: "m2", Text: "The dog is called Rex."})
		mustPutVectors(t, s, user,
			agentmem.Vector{Scope: agentmem.ScopeMemories, ID: "m1", Space: space, Vec: []float32{1, 0, 0, 0}},
			agentmem.Vector{Scope: agentmem.ScopeMemories, ID: "m1", Space: "other/2", Vec: []float32{1, 0}},
			agentmem.Vector{Scope: agentmem.ScopeMemories, ID: "m2", Space: space, Vec: []float32{0, 1, 0, 0}},
			// A message's vector under the same ID is another item's.
			agentmem.Vector{Scope: agentmem.ScopeMessages, ID: "m1", Space: space, Vec: []float32{0, 0, 1, 0}})
	}
	text := "Tom is now called Thomas."
	if _, err := s.UpdateMemory(ctx, "alice", "m1", agentmem.MemoryUpdate{Text: &text}); err != nil {
		t.Fatal(err)
	}
	version := mustVectorsVersion(t, s, "alice", space)
	bobVersion := mustVectorsVersion(t, s, "bob", space)

	if err := s.DeleteMemory(ctx, "alice", "m1"); err != nil {
		t.Fatal(err)
	}
	_, err := s.FindMemoryByID(ctx, "alice", "m1")
	wantCode(t, err, agentmem.ENOTFOUND)
	_, err = s.FindMemoryHistory(ctx, "alice", "m1")
	wantCode(t, err, agentmem.ENOTFOUND)
	wantVectorKeys(t, s, "alice", space, "memories/m2", "messages/m1")
	wantVectorKeys(t, s, "alice", "other/2")
	if v := mustVectorsVersion(t, s, "alice", space); v == version {
		t.Fatal("VectorsVersion did not change when DeleteMemory deleted vectors")
	}
	if hits := mustSearch(t, s, "alice", agentmem.TextQuery{Query: "Thomas Tom cat"}); len(hits) != 0 {
		t.Fatalf("search finds the deleted memory: %+v", hits)
	}
	wantCode(t, s.DeleteMemory(ctx, "alice", "m1"), agentmem.ENOTFOUND)

	// Bob's memory of the same ID is untouched.
	if _, err := s.FindMemoryByID(ctx, "bob", "m1"); err != nil {
		t.Fatalf("bob's memory: %v", err)
	}
	mustHistory(t, s, "bob", "m1", agentmem.OpAdd)
	wantVectorKeys(t, s, "bob", space, "memories/m1", "memories/m2", "messages/m1")
	if v := mustVectorsVersion(t, s, "bob", space); v != bobVersion {
		t.Fatal("deleting alice's memory changed bob's VectorsVersion")
	}
	wantCode(t, s.DeleteMemory(ctx, "alice", "nope"), agentmem.ENOTFOUND)

	// The ID is free again, with a history of its own.
	MustCreateMemory(t, s, &agentmem.Memory{UserID: "alice", ID: "m1", Text: "A new memory."})
	mustHistory(t, s, "alice", "m1", agentmem.OpAdd)
}

func testFindMemories(t *testing.T, s agentmem.Store) {
	var ids []string
	for i := range 25 {
		m := &agentmem.Memory{UserID: "alice", Text: fmt.Sprintf("Memory %d.", i), Category: "plan", AgentID: "a", ThreadID: "t1"}
		if i%5 == 0 {
			m.Category, m.AgentID, m.ThreadID, m.Kind = "family", "b", "t2", agentmem.MemoryInsight
		}
		ids = append(ids, MustCreateMemory(t, s, m).ID)
	}
	MustCreateMemory(t, s, &agentmem.Memory{UserID: "bob", Text: "Bob's memory.", Category: "plan"})
	time.Sleep(2 * time.Millisecond)
	since := time.Now()
	time.Sleep(2 * time.Millisecond)
	// Updating the oldest memory makes it the newest.
	text := "Memory 0, updated."
	if _, err := s.UpdateMemory(ctx, "alice", ids[0], agentmem.MemoryUpdate{Text: &text}); err != nil {
		t.Fatal(err)
	}

	seen := AllMemories(t, s, "alice", agentmem.MemoryFilter{Limit: 7})
	if len(seen) != 25 || seen[0].ID != ids[0] {
		t.Fatalf("listed %d memories, first %s; want 25, first %s", len(seen), seen[0].ID, ids[0])
	}
	unique := map[string]bool{}
	for i, m := range seen {
		if m.UserID != "alice" {
			t.Fatalf("listed a memory of %q", m.UserID)
		}
		unique[m.ID] = true
		if i > 0 {
			p := seen[i-1]
			if m.UpdatedAt.After(p.UpdatedAt) || (m.UpdatedAt.Equal(p.UpdatedAt) && m.ID > p.ID) {
				t.Fatalf("memories %d and %d out of order", i-1, i)
			}
		}
	}
	if len(unique) != 25 {
		t.Fatalf("%d distinct memories, want 25", len(unique))
	}

	t.Run("Filters", func(t *testing.T) {
		insight := agentmem.MemoryInsight
		for _, tt := range []struct {
			name string
			f    agentmem.MemoryFilter
			want int
		}{
			{"Kind", agentmem.MemoryFilter{Kind: &insight}, 5},
			{"Category", agentmem.MemoryFilter{Category: ptr("family")}, 5},
			{"Agent", agentmem.MemoryFilter{AgentID: ptr("a")}, 20},
			{"Thread", agentmem.MemoryFilter{ThreadID: ptr("t2")}, 5},
			{"Combined", agentmem.MemoryFilter{Category: ptr("plan"), AgentID: ptr("b")}, 0},
			{"UpdatedAfter", agentmem.MemoryFilter{UpdatedAfter: &since}, 1},
		} {
			t.Run(tt.name, func(t *testing.T) {
				tt.f.Limit = 3
				got := AllMemories(t, s, "alice", tt.f)
				if len(got) != tt.want {
					t.Fatalf("%d memories, want %d", len(got), tt.want)
				}
				for _, m := range got {
					if tt.f.Kind != nil && m.Kind != *tt.f.Kind || tt.f.Category != nil && m.Category != *tt.f.Category ||
						tt.f.AgentID != nil && m.AgentID != *tt.f.AgentID || tt.f.ThreadID != nil && m.ThreadID != *tt.f.ThreadID ||
						tt.f.UpdatedAfter != nil && !m.UpdatedAt.After(*tt.f.UpdatedAfter) {
						t.Fatalf("filter %+v returned %+v", tt.f, m)
					}
				}
			})
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		for _, f := range []agentmem.MemoryFilter{{Cursor: "garbage!"}, {Limit: -1}, {Limit: agentmem.MaxPageSize + 1}, {Kind: ptr("rumour")}} {
			_, _, err := s.FindMemories(ctx, "alice", f)
			wantCode(t, err, agentmem.EINVALID)
		}
	})
	t.Run("Empty", func(t *testing.T) {
		page, next, err := s.FindMemories(ctx, "nobody", agentmem.MemoryFilter{})
		if err != nil || page == nil || len(page) != 0 || next != "" {
			t.Fatalf("FindMemories(nobody) = %v, %q, %v; want an empty page", page, next, err)
		}
	})
}

// testMemoryErasure: deleting a thread, even permanently, leaves the
// memories drawn from it; DeleteUser erases memories, their history and
// vectors, and nothing of another user's.
func testMemoryErasure(t *testing.T, s agentmem.Store) {
	const space = "test/2"
	for _, user := range []string{"alice", "bob"} {
		th := MustCreateThread(t, s, &agentmem.Thread{UserID: user, ID: "t1"})
		msgs := MustAppend(t, s, user, th.ID, agentmem.RoleUser, "I love sailing.")
		m := MustCreateMemory(t, s, &agentmem.Memory{UserID: user, ID: "sailing", Text: user + " loves sailing.", ThreadID: th.ID, SeqFrom: 1, SeqTo: 1})
		if _, err := s.InvalidateMemory(ctx, user, m.ID, "", "test"); err != nil {
			t.Fatal(err)
		}
		MustCreateMemory(t, s, &agentmem.Memory{UserID: user, ID: "boat", Text: user + " owns a boat.", ThreadID: th.ID})
		mustPutVectors(t, s, user,
			agentmem.Vector{Scope: agentmem.ScopeMemories, ID: "boat", Space: space, Vec: []float32{1, 0}},
			agentmem.Vector{Scope: agentmem.ScopeMessages, ID: msgs[0].ID, Space: space, Vec: []float32{0, 1}})
	}
	if err := s.DeleteThread(ctx, "alice", "t1", true); err != nil {
		t.Fatal(err)
	}
	if got := AllMemories(t, s, "alice", agentmem.MemoryFilter{IncludeInvalid: true}); len(got) != 2 {
		t.Fatalf("%d memories after deleting their thread, want 2", len(got))
	}
	mustHistory(t, s, "alice", "sailing", agentmem.OpAdd, agentmem.OpInvalidate)
	wantVectorKeys(t, s, "alice", space, "memories/boat")
	if hits := mustSearch(t, s, "alice", agentmem.TextQuery{Query: "boat"}); len(hits) != 1 || hits[0].ID != "boat" {
		t.Fatalf("search after deleting the thread = %+v, want the memory", hits)
	}

	version := mustVectorsVersion(t, s, "alice", space)
	bobVersion := mustVectorsVersion(t, s, "bob", space)
	if _, err := s.DeleteUser(ctx, "alice"); err != nil {
		t.Fatal(err)
	}
	if got := AllMemories(t, s, "alice", agentmem.MemoryFilter{IncludeInvalid: true}); len(got) != 0 {
		t.Fatalf("%d memories after DeleteUser", len(got))
	}
	_, err := s.FindMemoryHistory(ctx, "alice", "sailing")
	wantCode(t, err, agentmem.ENOTFOUND)
	wantVectorKeys(t, s, "alice", space)
	if v := mustVectorsVersion(t, s, "alice", space); v == version {
		t.Fatal("VectorsVersion did not change when DeleteUser erased the vectors")
	}
	if hits := mustSearch(t, s, "alice", agentmem.TextQuery{Query: "boat sailing"}); len(hits) != 0 {
		t.Fatalf("search after DeleteUser = %+v", hits)
	}
	if ids := mustFindUserIDs(t, s, "", 10); !cmp.Equal(ids, []string{"bob"}) {
		t.Fatalf("FindUserIDs after DeleteUser = %v", ids)
	}

	// Bob keeps everything.
	if got := AllMemories(t, s, "bob", agentmem.MemoryFilter{IncludeInvalid: true}); len(got) != 2 {
		t.Fatalf("bob has %d memories, want 2", len(got))
	}
	mustHistory(t, s, "bob", "sailing", agentmem.OpAdd, agentmem.OpInvalidate)
	if len(mustFindVectors(t, s, "bob", space)) != 2 || mustVectorsVersion(t, s, "bob", space) != bobVersion {
		t.Fatal("bob's vectors changed when alice was erased")
	}
	// Alice starts again from nothing, with the same IDs.
	MustCreateMemory(t, s, &agentmem.Memory{UserID: "alice", ID: "sailing", Text: "Alice loves sailing again."})
	mustHistory(t, s, "alice", "sailing", agentmem.OpAdd)
}

// testMemoriesConcurrent: changes of one memory racing each other number
// their versions one after the other; writers of memories, vectors and
// threads racing each other and the user's erasure never fail but for
// what the erasure removed (ENOTFOUND), and never deadlock.
func testMemoriesConcurrent(t *testing.T, s agentmem.Store) {
	const n = 20
	m := MustCreateMemory(t, s, &agentmem.Memory{UserID: "alice", Text: "version 1"})
	var wg sync.WaitGroup
	errs := make(chan error, 4*n)
	for i := range n {
		wg.Go(func() {
			text := fmt.Sprintf("update %d", i)
			_, err := s.UpdateMemory(ctx, "alice", m.ID, agentmem.MemoryUpdate{Text: &text})
			errs <- err
		})
	}
	wg.Wait()
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	ops := []string{agentmem.OpAdd}
	for range n {
		ops = append(ops, agentmem.OpUpdate)
	}
	h := mustHistory(t, s, "alice", m.ID, ops...)
	if got := mustFindMemory(t, s, "alice", m.ID); got.Version != n+1 || got.Text != h[n].Text {
		t.Fatalf("memory after %d racing updates = %+v, want version %d with the last entry's text", n, got, n+1)
	}

	for w := range 4 {
		wg.Go(func() {
			for i := range 10 {
				id := fmt.Sprintf("w%d-%d", w, i)
				err := s.CreateMemory(ctx, &agentmem.Memory{UserID: "alice", ID: id, Text: "racing " + id})
				if err == nil {
					// Both spaces in one put, in either order.
					vs := []agentmem.Vector{{Scope: agentmem.ScopeMemories, ID: id, Space: "a/1", Vec: []float32{1}}, {Scope: agentmem.ScopeMemories, ID: id, Space: "b/1", Vec: []float32{1}}}
					if i%2 == 1 {
						vs[0], vs[1] = vs[1], vs[0]
					}
					err = s.PutVectors(ctx, "alice", vs)
				}
				if err == nil && i%3 == 0 {
					err = s.DeleteMemory(ctx, "alice", id)
				}
				if err != nil && agentmem.ErrorCode(err) != agentmem.ENOTFOUND {
					errs <- err
					return
				}
			}
		})
	}
	wg.Go(func() {
		for i := range 10 {
			th := &agentmem.Thread{UserID: "alice", ID: fmt.Sprintf("t%d", i)}
			err := s.CreateThread(ctx, th)
			var msgs []*agentmem.Message
			if err == nil {
				msgs, err = s.AppendMessages(ctx, "alice", th.ID, []*agentmem.Message{{Role: agentmem.RoleUser, Content: "racing"}}, agentmem.AppendOptions{})
			}
			if err == nil {
				err = s.PutVectors(ctx, "alice", []agentmem.Vector{{Scope: agentmem.ScopeMessages, ID: msgs[0].ID, Space: "b/1", Vec: []float32{1}},
					{Scope: agentmem.ScopeMessages, ID: msgs[0].ID, Space: "a/1", Vec: []float32{1}}})
			}
			if err == nil {
				err = s.DeleteThread(ctx, "alice", th.ID, true)
			}
			if err != nil && agentmem.ErrorCode(err) != agentmem.ENOTFOUND {
				errs <- err
				return
			}
		}
	})
	wg.Go(func() {
		for range 3 {
			time.Sleep(time.Millisecond)
			if _, err := s.DeleteUser(ctx, "alice"); err != nil {
				errs <- err
				return
			}
		}
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// testFindMemorySources: for the ranges of turns that an invalidated
// memory was drawn from, every memory drawn from them, valid or not, with
// its text and the superseding memory's text; nothing for ranges no invalidated memory
// overlaps (another thread, other seqs of its thread, another user); an
// empty slice when there is nothing; bad ranges refused.
func testFindMemorySources(t *testing.T, s agentmem.Store) {
	mk := func(user, thread string, from, to int64, text string) *agentmem.Memory {
		return MustCreateMemory(t, s, &agentmem.Memory{UserID: user, Text: text, ThreadID: thread, SeqFrom: from, SeqTo: to})
	}
	rg := func(thread string, from, to int64) agentmem.ThreadRange {
		return agentmem.ThreadRange{ThreadID: thread, SeqFrom: from, SeqTo: to}
	}
	porto := mk("alice", "t1", 1, 1, "User lives in Porto.")
	dog := mk("alice", "t1", 1, 2, "User has a dog.")
	mk("alice", "t1", 3, 3, "User likes tea.") // overlaps a range without invalidated memories
	lisbon := mk("alice", "t2", 1, 1, "User lives in Lisbon.")
	gone := mk("alice", "t4", 2, 4, "User works at Acme.")
	left := mk("alice", "t4", 5, 5, "User plays chess.")
	mk("alice", "t4", 0, 0, "User is tall.") // a thread without seqs
	bob := mk("bob", "t1", 1, 1, "User lives in Oslo.")
	for _, inv := range []struct{ user, id, by string }{{"alice", porto.ID, lisbon.ID}, {"alice", gone.ID, ""}, {"alice", left.ID, "no-such-memory"}, {"bob", bob.ID, ""}} {
		if _, err := s.InvalidateMemory(ctx, inv.user, inv.id, inv.by, ""); err != nil {
			t.Fatal(err)
		}
	}

	got, err := s.FindMemorySources(ctx, "alice", []agentmem.ThreadRange{rg("t1", 1, 1), rg("t1", 2, 2), rg("t1", 3, 3), rg("t2", 1, 1), rg("t4", 3, 6), rg("t1", 1, 1), rg("nope", 1, 1)})
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]agentmem.MemorySource{}
	for _, src := range got {
		if (src.InvalidAt != nil) != (src.ID != dog.ID) || src.InvalidAt != nil && src.InvalidAt.IsZero() {
			t.Errorf("%s: invalid_at %v", src.ID, src.InvalidAt)
		}
		src.InvalidAt = nil
		byID[src.ID] = src
	}
	want := map[string]agentmem.MemorySource{
		porto.ID: {ID: porto.ID, ThreadID: "t1", SeqFrom: 1, SeqTo: 1, SupersededBy: lisbon.ID, SupersededText: "User lives in Lisbon.", Text: "User lives in Porto."},
		dog.ID:   {ID: dog.ID, ThreadID: "t1", SeqFrom: 1, SeqTo: 2, Text: "User has a dog."},
		gone.ID:  {ID: gone.ID, ThreadID: "t4", SeqFrom: 2, SeqTo: 4, Text: "User works at Acme."},
		left.ID:  {ID: left.ID, ThreadID: "t4", SeqFrom: 5, SeqTo: 5, SupersededBy: "no-such-memory", Text: "User plays chess."},
	}
	if diff := cmp.Diff(want, byID); diff != "" || len(got) != len(want) {
		t.Fatalf("sources (-want +got, %d rows):\n%s", len(got), diff)
	}

	for _, ranges := range [][]agentmem.ThreadRange{nil, {rg("t1", 2, 3)}, {rg("t1", 3, 9), rg("t2", 1, 1), rg("t4", 6, 9), rg("nope", 1, 1)}} {
		got, err := s.FindMemorySources(ctx, "alice", ranges)
		if err != nil || got == nil || len(got) != 0 {
			t.Fatalf("ranges %v: %v, %v (want an empty slice)", ranges, got, err)
		}
	}
	if got, err := s.FindMemorySources(ctx, "carol", []agentmem.ThreadRange{rg("t1", 1, 1)}); err != nil || len(got) != 0 {
		t.Fatalf("another user: %v, %v", got, err)
	}
	many := make([]agentmem.ThreadRange, agentmem.MaxPageSize+1)
	for i := range many {
		many[i] = agentmem.ThreadRange{ThreadID: fmt.Sprint("t", i), SeqFrom: 1, SeqTo: 1}
	}
	for _, bad := range [][]agentmem.ThreadRange{many, {rg("", 1, 1)}, {rg("t1", 2, 1)}, {rg("t1", -1, 1)}} {
		if _, err := s.FindMemorySources(ctx, "alice", bad); agentmem.ErrorCode(err) != agentmem.EINVALID {
			t.Fatalf("%d ranges (%v…): %v", len(bad), bad[0], err)
		}
	}
}

// testWriteMemories: a batch of memory writes does what the single calls
// would, in order (a write may name a memory the batch creates), and
// stores nothing when one of them fails.
func testWriteMemories(t *testing.T, s agentmem.Store) {
	old := MustCreateMemory(t, s, &agentmem.Memory{UserID: "alice", Text: "Alice lives in Porto.", Category: "place"})
	fresh := &agentmem.Memory{UserID: "alice", ID: "m-berlin", Text: "Alice lives in Berlin.", Category: "place"}
	text := "Alice lives in Berlin, Kreuzberg."
	got, err := s.WriteMemories(ctx, "alice", []agentmem.MemoryWrite{
		{Create: fresh},
		{ID: old.ID, Invalidate: &agentmem.MemoryInvalidation{SupersededBy: fresh.ID, Reason: "she moved"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != fresh.ID || got[1].ID != old.ID || got[1].Valid() || got[1].SupersededBy != fresh.ID {
		t.Fatalf("WriteMemories returned %+v and %+v (new %q)", *got[0], *got[1], fresh.ID)
	}
	got, err = s.WriteMemories(ctx, "alice", []agentmem.MemoryWrite{{ID: fresh.ID, Update: &agentmem.MemoryUpdate{Text: &text, Reason: "more precise"}}})
	if err != nil || len(got) != 1 || got[0].Text != text || got[0].Version != 2 {
		t.Fatalf("update in a batch: %+v, %v", got, err)
	}
	stored, err := s.FindMemoryByID(ctx, "alice", fresh.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(got[0], stored, jsonEqual()); diff != "" {
		t.Fatalf("stored memory mismatch (-returned +stored):\n%s", diff)
	}
	mustHistory(t, s, "alice", fresh.ID, agentmem.OpAdd, agentmem.OpUpdate)
	mustHistory(t, s, "alice", old.ID, agentmem.OpAdd, agentmem.OpInvalidate)

	// One write fails (no such memory): the others of the batch are not
	// stored.
	other := &agentmem.Memory{UserID: "alice", ID: "m-cello", Text: "Alice plays the cello.", Category: "hobby"}
	_, err = s.WriteMemories(ctx, "alice", []agentmem.MemoryWrite{
		{Create: other},
		{ID: fresh.ID, Invalidate: &agentmem.MemoryInvalidation{SupersededBy: other.ID, Reason: "x"}},
		{ID: "no-such-memory", Update: &agentmem.MemoryUpdate{Text: &text}},
	})
	wantCode(t, err, agentmem.ENOTFOUND)
	if _, err := s.FindMemoryByID(ctx, "alice", other.ID); agentmem.ErrorCode(err) != agentmem.ENOTFOUND {
		t.Fatalf("a failed batch stored its new memory: %v", err)
	}
	if m, err := s.FindMemoryByID(ctx, "alice", fresh.ID); err != nil || !m.Valid() {
		t.Fatalf("a failed batch invalidated a memory: %+v, %v", m, err)
	}

	// Bad writes are refused before anything is written.
	_, err = s.WriteMemories(ctx, "alice", []agentmem.MemoryWrite{{ID: fresh.ID}})
	wantCode(t, err, agentmem.EINVALID)
	_, err = s.WriteMemories(ctx, "alice", []agentmem.MemoryWrite{{Create: &agentmem.Memory{UserID: "bob", Text: "Bob is tall."}}})
	wantCode(t, err, agentmem.EINVALID)
	if got, err := s.WriteMemories(ctx, "alice", nil); err != nil || len(got) != 0 {
		t.Fatalf("an empty batch: %v, %v", got, err)
	}
}

// testMemorySources: a memory's sources are every range of turns it was
// drawn from, in order, each once: its provenance first; a range added by
// AddSource (a repeat) without a new version, history entry or update
// time; an update from a thread adds its range. Every read returns them,
// FindMemorySources finds an invalidated memory by any of them (the turn
// that only repeated it too), and a thread's permanent deletion removes
// its ranges while the memory stays. Bad or missing sources are refused,
// with the batch's other writes.
func testMemorySources(t *testing.T, s agentmem.Store) {
	rg := func(thread string, from, to int64) agentmem.ThreadRange {
		return agentmem.ThreadRange{ThreadID: thread, SeqFrom: from, SeqTo: to}
	}
	for _, id := range []string{"t1", "t2", "t3"} {
		MustCreateThread(t, s, &agentmem.Thread{UserID: "alice", ID: id})
		MustAppend(t, s, "alice", id, agentmem.RoleUser, "I live in Hull.", agentmem.RoleUser, "Hull, yes.", agentmem.RoleUser, "Still Hull.")
	}
	hull := MustCreateMemory(t, s, &agentmem.Memory{UserID: "alice", Text: "User lives in Hull.", ThreadID: "t1", SeqFrom: 1, SeqTo: 1})
	plain := MustCreateMemory(t, s, &agentmem.Memory{UserID: "alice", Text: "User likes tea."})
	wantSources := func(id string, want ...agentmem.ThreadRange) *agentmem.Memory {
		t.Helper()
		m, err := s.FindMemoryByID(ctx, "alice", id)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, m.Sources); diff != "" {
			t.Fatalf("sources of %q (-want +got):\n%s", m.Text, diff)
		}
		for _, l := range AllMemories(t, s, "alice", agentmem.MemoryFilter{IncludeInvalid: true}) {
			if l.ID == id {
				if diff := cmp.Diff(want, l.Sources); diff != "" {
					t.Fatalf("sources of %q as listed (-want +got):\n%s", m.Text, diff)
				}
			}
		}
		return m
	}
	if diff := cmp.Diff([]agentmem.ThreadRange{rg("t1", 1, 1)}, hull.Sources); diff != "" {
		t.Fatalf("created memory's sources (-want +got):\n%s", diff)
	}
	wantSources(hull.ID, rg("t1", 1, 1))
	wantSources(plain.ID)

	// A repeat in another thread, twice, and one of a memory the batch
	// creates.
	fresh := &agentmem.Memory{UserID: "alice", ID: "tea-fresh", Text: "User drinks green tea.", ThreadID: "t3", SeqFrom: 1, SeqTo: 1}
	out, err := s.WriteMemories(ctx, "alice", []agentmem.MemoryWrite{
		{ID: hull.ID, AddSource: &agentmem.ThreadRange{ThreadID: "t2", SeqFrom: 2, SeqTo: 2}},
		{ID: hull.ID, AddSource: &agentmem.ThreadRange{ThreadID: "t2", SeqFrom: 2, SeqTo: 2}},
		{Create: fresh},
		{ID: fresh.ID, AddSource: &agentmem.ThreadRange{ThreadID: "t3", SeqFrom: 3, SeqTo: 3}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]agentmem.ThreadRange{rg("t1", 1, 1), rg("t2", 2, 2)}, out[1].Sources); diff != "" {
		t.Fatalf("WriteMemories returned sources (-want +got):\n%s", diff)
	}
	m := wantSources(hull.ID, rg("t1", 1, 1), rg("t2", 2, 2))
	if m.Version != 1 || !m.UpdatedAt.Equal(hull.UpdatedAt) || m.ThreadID != "t1" || m.SeqFrom != 1 {
		t.Fatalf("a repeat changed the memory: version %d, updated %v (was %v), provenance %s %d", m.Version, m.UpdatedAt, hull.UpdatedAt, m.ThreadID, m.SeqFrom)
	}
	mustHistory(t, s, "alice", hull.ID, agentmem.OpAdd)
	wantSources(fresh.ID, rg("t3", 1, 1), rg("t3", 3, 3))

	// An update from a thread moves the provenance and adds its range;
	// one without a thread leaves the sources.
	text := "User lives in Hull, in the old town."
	if _, err := s.UpdateMemory(ctx, "alice", hull.ID, agentmem.MemoryUpdate{Text: &text, ThreadID: "t3", SeqFrom: 2, SeqTo: 3}); err != nil {
		t.Fatal(err)
	}
	conf := 0.5
	upd, err := s.UpdateMemory(ctx, "alice", hull.ID, agentmem.MemoryUpdate{Confidence: &conf})
	if err != nil {
		t.Fatal(err)
	}
	all := []agentmem.ThreadRange{rg("t1", 1, 1), rg("t2", 2, 2), rg("t3", 2, 3)}
	if diff := cmp.Diff(all, upd.Sources); diff != "" {
		t.Fatalf("UpdateMemory returned sources (-want +got):\n%s", diff)
	}
	if m := wantSources(hull.ID, all...); m.ThreadID != "t3" || m.SeqFrom != 2 || m.SeqTo != 3 {
		t.Fatalf("provenance after the update: %s %d–%d", m.ThreadID, m.SeqFrom, m.SeqTo)
	}

	// Refused: a source without a thread, or of a memory that does not
	// exist; the batch stores nothing.
	for _, ws := range [][]agentmem.MemoryWrite{
		{{ID: plain.ID, AddSource: &agentmem.ThreadRange{ThreadID: "t1", SeqFrom: 1, SeqTo: 1}}, {ID: plain.ID, AddSource: &agentmem.ThreadRange{SeqFrom: 1, SeqTo: 1}}},
		{{ID: plain.ID, AddSource: &agentmem.ThreadRange{ThreadID: "t1", SeqFrom: 2, SeqTo: 1}}},
		{{ID: plain.ID, AddSource: &agentmem.ThreadRange{ThreadID: "t1", SeqFrom: 1, SeqTo: 1}, Invalidate: &agentmem.MemoryInvalidation{}}},
	} {
		_, err := s.WriteMemories(ctx, "alice", ws)
		wantCode(t, err, agentmem.EINVALID)
	}
	_, err = s.WriteMemories(ctx, "alice", []agentmem.MemoryWrite{
		{ID: plain.ID, AddSource: &agentmem.ThreadRange{ThreadID: "t1", SeqFrom: 1, SeqTo: 1}},
		{ID: "no-such-memory", AddSource: &agentmem.ThreadRange{ThreadID: "t1", SeqFrom: 1, SeqTo: 1}},
	})
	wantCode(t, err, agentmem.ENOTFOUND)
	_, err = s.WriteMemories(ctx, "bob", []agentmem.MemoryWrite{{ID: hull.ID, AddSource: &agentmem.ThreadRange{ThreadID: "t1", SeqFrom: 3, SeqTo: 3}}})
	wantCode(t, err, agentmem.ENOTFOUND)
	wantSources(plain.ID)

	// Once the memory is invalidated, the turn that only repeated it is
	// one it was drawn from; so is one added after the invalidation.
	leeds := MustCreateMemory(t, s, &agentmem.Memory{UserID: "alice", Text: "User moved to Leeds.", ThreadID: "t3", SeqFrom: 3, SeqTo: 3})
	if _, err := s.InvalidateMemory(ctx, "alice", hull.ID, leeds.ID, "moved"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.WriteMemories(ctx, "alice", []agentmem.MemoryWrite{{ID: hull.ID, AddSource: &agentmem.ThreadRange{ThreadID: "t1", SeqFrom: 3, SeqTo: 3}}}); err != nil {
		t.Fatal(err)
	}
	for _, r := range []agentmem.ThreadRange{rg("t2", 2, 2), rg("t1", 3, 3)} {
		got, err := s.FindMemorySources(ctx, "alice", []agentmem.ThreadRange{r})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].ID != hull.ID || got[0].ThreadID != r.ThreadID || got[0].SeqFrom != r.SeqFrom || got[0].InvalidAt == nil ||
			got[0].SupersededBy != leeds.ID || got[0].SupersededText != leeds.Text {
			t.Fatalf("FindMemorySources(%v) = %+v, want the Hull memory by that source, superseded by Leeds", r, got)
		}
	}
	// A turn of the superseding memory and a superseded one: both.
	got, err := s.FindMemorySources(ctx, "alice", []agentmem.ThreadRange{rg("t3", 3, 3)})
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, src := range got {
		ids[src.ID] = src.InvalidAt == nil
	}
	if len(ids) != 3 || !ids[leeds.ID] || !ids[fresh.ID] || ids[hull.ID] {
		t.Fatalf("FindMemorySources(t3:3) = %+v, want Hull (invalidated), Leeds and the tea memory", got)
	}

	// A thread's permanent deletion removes its ranges; the memory stays.
	if err := s.DeleteThread(ctx, "alice", "t2", true); err != nil {
		t.Fatal(err)
	}
	wantSources(hull.ID, rg("t1", 1, 1), rg("t3", 2, 3), rg("t1", 3, 3))
	if got, err := s.FindMemorySources(ctx, "alice", []agentmem.ThreadRange{rg("t2", 2, 2)}); err != nil || len(got) != 0 {
		t.Fatalf("FindMemorySources of a deleted thread's turn = %+v, %v", got, err)
	}
	// A soft deletion keeps them.
	if err := s.DeleteThread(ctx, "alice", "t1", false); err != nil {
		t.Fatal(err)
	}
	wantSources(hull.ID, rg("t1", 1, 1), rg("t3", 2, 3), rg("t1", 3, 3))

	// A deleted memory leaves no source behind.
	if err := s.DeleteMemory(ctx, "alice", hull.ID); err != nil {
		t.Fatal(err)
	}
	if got, err := s.FindMemorySources(ctx, "alice", []agentmem.ThreadRange{rg("t1", 1, 3)}); err != nil || len(got) != 0 {
		t.Fatalf("FindMemorySources after the deletion = %+v, %v", got, err)
	}
	if err := s.CreateMemory(ctx, &agentmem.Memory{UserID: "alice", ID: hull.ID, Text: "User lives in York."}); err != nil {
		t.Fatal(err)
	}
	wantSources(hull.ID)
}
