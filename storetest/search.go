package storetest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func mustPutVectors(tb testing.TB, s agentmem.VectorStore, user string, vs ...agentmem.Vector) {
	tb.Helper()
	if err := s.PutVectors(ctx, user, vs); err != nil {
		tb.Fatalf("PutVectors: %v", err)
	}
}

func mustFindVectors(tb testing.TB, s agentmem.VectorStore, user, space string, scopes ...string) []agentmem.Vector {
	tb.Helper()
	vs, err := s.FindVectors(ctx, user, space, scopes)
	if err != nil {
		tb.Fatalf("FindVectors: %v", err)
	}
	if vs == nil {
		tb.Fatal("FindVectors returned nil, want an empty slice")
	}
	return vs
}

func mustVectorsVersion(tb testing.TB, s agentmem.VectorStore, user, space string) string {
	tb.Helper()
	v, err := s.VectorsVersion(ctx, user, space)
	if err != nil {
		tb.Fatalf("VectorsVersion: %v", err)
	}
	return v
}

// wantVectorKeys fails unless the user's vectors of space are those of
// the keys ("scope/id"), in any order.
func wantVectorKeys(tb testing.TB, s agentmem.VectorStore, user, space string, keys ...string) {
	tb.Helper()
	var got []string
	for _, v := range mustFindVectors(tb, s, user, space) {
		if v.Space != space {
			tb.Fatalf("FindVectors(%s) returned a vector of space %s", space, v.Space)
		}
		got = append(got, v.Scope+"/"+v.ID)
	}
	slices.Sort(got)
	slices.Sort(keys)
	if diff := cmp.Diff(keys, got, cmpopts.EquateEmpty()); diff != "" {
		tb.Fatalf("%s's vectors of %s mismatch (-want +got):\n%s", user, space, diff)
	}
}

// quantised reports whether got is want as PutVectors stores it: each
// dimension within half a step of 8 bits (max|want|/254), and finite.
func quantised(got, want []float32) bool {
	var peak float64
	for _, x := range want {
		peak = max(peak, math.Abs(float64(x)))
	}
	return slices.EqualFunc(got, want, func(g, w float32) bool {
		return !math.IsInf(float64(g), 0) && math.Abs(float64(g)-float64(w)) <= peak/254*1.0001
	})
}

func testVectors(t *testing.T, s agentmem.Store) {
	const space = "test/8"
	tricky := []float32{0, float32(math.Copysign(0, -1)), math.SmallestNonzeroFloat32, math.MaxFloat32, -math.MaxFloat32, 1.0 / 3, float32(math.Pi), 1e-40}
	in := []agentmem.Vector{
		{Scope: agentmem.ScopeMemories, ID: "m1", Space: space, Vec: tricky},
		{Scope: agentmem.ScopeMemories, ID: "m2", Space: space, Vec: []float32{1, 2, 3, 4, 5, 6, 7, 8}},
		{Scope: agentmem.ScopeMessages, ID: "m1", Space: space, Vec: []float32{-1, -2, -3, -4, -5, -6, -7, -8}},
	}
	if v1, v2 := mustVectorsVersion(t, s, "alice", space), mustVectorsVersion(t, s, "alice", space); v1 == v2 {
		t.Fatalf("VectorsVersion of a user without vectors repeated %q; want a new value each time", v1)
	}
	mustPutVectors(t, s, "alice", in...)
	got := mustFindVectors(t, s, "alice", space)
	if len(got) != len(in) {
		t.Fatalf("FindVectors returned %d vectors, want %d", len(got), len(in))
	}
	for _, want := range in {
		i := slices.IndexFunc(got, func(v agentmem.Vector) bool { return v.Scope == want.Scope && v.ID == want.ID })
		if i < 0 || got[i].Space != space || !quantised(got[i].Vec, want.Vec) {
			t.Fatalf("vector %s/%s: got %+v, want %v within max|v|/254", want.Scope, want.ID, got, want.Vec)
		}
	}
	version := mustVectorsVersion(t, s, "alice", space)
	if again := mustVectorsVersion(t, s, "alice", space); again != version {
		t.Fatalf("VectorsVersion changed from %q to %q with no change", version, again)
	}

	t.Run("Scopes", func(t *testing.T) {
		if n := len(mustFindVectors(t, s, "alice", space, agentmem.ScopeMemories)); n != 2 {
			t.Fatalf("%d memory vectors, want 2", n)
		}
		if n := len(mustFindVectors(t, s, "alice", space, agentmem.ScopeMemories, agentmem.ScopeMessages)); n != 3 {
			t.Fatalf("%d memory and message vectors, want 3", n)
		}
		if n := len(mustFindVectors(t, s, "alice", space, agentmem.ScopeChunks)); n != 0 {
			t.Fatalf("%d chunk vectors, want 0", n)
		}
	})
	t.Run("Replace", func(t *testing.T) {
		mustPutVectors(t, s, "alice",
			agentmem.Vector{Scope: agentmem.ScopeMemories, ID: "m2", Space: space, Vec: []float32{8, 7, 6, 5, 4, 3, 2, 1}},
			// Within a batch, the last of a key wins.
			agentmem.Vector{Scope: agentmem.ScopeMemories, ID: "m3", Space: space, Vec: []float32{1, 1, 1, 1, 1, 1, 1, 1}},
			agentmem.Vector{Scope: agentmem.ScopeMemories, ID: "m3", Space: space, Vec: []float32{2, 2, 2, 2, 2, 2, 2, 2}})
		for _, v := range mustFindVectors(t, s, "alice", space, agentmem.ScopeMemories) {
			switch v.ID {
			case "m2":
				if v.Vec[0] != 8 {
					t.Fatalf("m2 not replaced: %v", v.Vec)
				}
			case "m3":
				if v.Vec[0] != 2 {
					t.Fatalf("m3 = %v, want the batch's last", v.Vec)
				}
			}
		}
		wantVectorKeys(t, s, "alice", space, "memories/m1", "memories/m2", "memories/m3", "messages/m1")
		if v := mustVectorsVersion(t, s, "alice", space); v == version {
			t.Fatal("VectorsVersion did not change on put")
		}
		version = mustVectorsVersion(t, s, "alice", space)
	})
	t.Run("Spaces", func(t *testing.T) {
		mustPutVectors(t, s, "alice", agentmem.Vector{Scope: agentmem.ScopeMemories, ID: "m1", Space: "other/2", Vec: []float32{0.6, 0.8}})
		wantVectorKeys(t, s, "alice", "other/2", "memories/m1")
		wantVectorKeys(t, s, "alice", space, "memories/m1", "memories/m2", "memories/m3", "messages/m1")
		if v := mustVectorsVersion(t, s, "alice", space); v != version {
			t.Fatal("a put to another space changed the VectorsVersion of this one")
		}
		// Dimensions belong to a space: 2 here is fine, 2 in space is not.
		err := s.PutVectors(ctx, "alice", []agentmem.Vector{{Scope: agentmem.ScopeMemories, ID: "m4", Space: space, Vec: []float32{1, 2}}})
		wantCode(t, err, agentmem.EINVALID)
	})
	t.Run("Users", func(t *testing.T) {
		wantVectorKeys(t, s, "bob", space)
		mustPutVectors(t, s, "bob", agentmem.Vector{Scope: agentmem.ScopeMemories, ID: "m1", Space: space, Vec: []float32{9, 9, 9, 9, 9, 9, 9, 9}})
		wantVectorKeys(t, s, "bob", space, "memories/m1")
		if v := mustVectorsVersion(t, s, "alice", space); v != version {
			t.Fatal("bob's put changed alice's VectorsVersion")
		}
		for _, v := range mustFindVectors(t, s, "alice", space) {
			if v.Vec[0] == 9 {
				t.Fatalf("alice's vector %s/%s is bob's", v.Scope, v.ID)
			}
		}
		// Another user may use another dimension in a space of the same name.
		mustPutVectors(t, s, "carol", agentmem.Vector{Scope: agentmem.ScopeMemories, ID: "m1", Space: space, Vec: []float32{1}})
	})
	t.Run("ThreadDeletion", func(t *testing.T) {
		for _, permanent := range []bool{false, true} {
			th := MustCreateThread(t, s, &agentmem.Thread{UserID: "alice"})
			msgs := MustAppend(t, s, "alice", th.ID, agentmem.RoleUser, "hello", agentmem.RoleAssistant, "hi")
			mustPutVectors(t, s, "alice",
				agentmem.Vector{Scope: agentmem.ScopeMessages, ID: msgs[0].ID, Space: space, Vec: []float32{1, 0, 0, 0, 0, 0, 0, 0}},
				agentmem.Vector{Scope: agentmem.ScopeMessages, ID: msgs[1].ID, Space: space, Vec: []float32{0, 1, 0, 0, 0, 0, 0, 0}})
			before, n := mustVectorsVersion(t, s, "alice", space), len(mustFindVectors(t, s, "alice", space))
			if err := s.DeleteThread(ctx, "alice", th.ID, permanent); err != nil {
				t.Fatal(err)
			}
			after, m := mustVectorsVersion(t, s, "alice", space), len(mustFindVectors(t, s, "alice", space))
			if permanent && (after == before || m != n-2) {
				t.Fatalf("permanent deletion: %d vectors left of %d, version changed: %v; want 2 fewer and a new version", m, n, after != before)
			}
			if !permanent && (after != before || m != n) {
				t.Fatalf("soft deletion: %d vectors left of %d, version changed: %v; want both unchanged", m, n, after != before)
			}
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		ok := []float32{1, 0, 0, 0, 0, 0, 0, 0}
		for _, bad := range [][]agentmem.Vector{
			{{Scope: agentmem.ScopeMemories, ID: "m1", Space: "", Vec: ok}},
			{{Scope: agentmem.ScopeMemories, ID: "m1", Space: "bad\x00", Vec: ok}},
			{{Scope: agentmem.ScopeMemories, ID: "m1", Space: space, Vec: nil}},
			{{Scope: agentmem.ScopeMemories, ID: "m1", Space: space, Vec: []float32{float32(math.NaN()), 0, 0, 0, 0, 0, 0, 0}}},
			{{Scope: agentmem.ScopeMemories, ID: "m1", Space: space, Vec: []float32{float32(math.Inf(1)), 0, 0, 0, 0, 0, 0, 0}}},
			{{Scope: "nope", ID: "m1", Space: space, Vec: ok}},
			{{Scope: agentmem.ScopeMemories, ID: "", Space: space, Vec: ok}},
			{{Scope: agentmem.ScopeMemories, ID: "m1", Space: "x/9000", Vec: make([]float32, agentmem.MaxVectorDimensions+1)}},
			{{Scope: agentmem.ScopeMemories, ID: "m1", Space: "new/2", Vec: []float32{1, 0}}, {Scope: agentmem.ScopeMemories, ID: "m2", Space: "new/2", Vec: []float32{1, 0, 0}}},
		} {
			wantCode(t, s.PutVectors(ctx, "alice", bad), agentmem.EINVALID)
		}
		wantVectorKeys(t, s, "alice", "new/2")
		_, err := s.FindVectors(ctx, "alice", "", nil)
		wantCode(t, err, agentmem.EINVALID)
		if err := s.PutVectors(ctx, "alice", nil); err != nil {
			t.Fatalf("PutVectors(nil): %v", err)
		}
	})
}

// mustSearch runs SearchText and checks what every answer must satisfy:
// a non-nil list of at most the limit, best first, each hit passing the
// filter.
func mustSearch(tb testing.TB, s agentmem.TextSearcher, user string, q agentmem.TextQuery) []agentmem.TextHit {
	tb.Helper()
	hits, err := s.SearchText(ctx, user, q)
	if err != nil {
		tb.Fatalf("SearchText(%q): %v", q.Query, err)
	}
	limit := q.Limit
	if limit == 0 {
		limit = agentmem.DefaultPageSize
	}
	if hits == nil || len(hits) > limit {
		tb.Fatalf("SearchText(%q) returned %d hits (nil: %v), limit %d", q.Query, len(hits), hits == nil, limit)
	}
	for i, h := range hits {
		if !q.Filter.Match(h) {
			tb.Fatalf("SearchText(%q) hit %+v does not pass the filter %+v", q.Query, h, q.Filter)
		}
		if i > 0 && h.Score > hits[i-1].Score {
			tb.Fatalf("SearchText(%q): hit %d scores %v, above hit %d (%v)", q.Query, i, h.Score, i-1, hits[i-1].Score)
		}
		if h.Score <= 0 {
			tb.Fatalf("SearchText(%q): hit %+v scores %v, want > 0", q.Query, h, h.Score)
		}
	}
	return hits
}

func hitKeys(hits []agentmem.TextHit) []string {
	keys := make([]string, len(hits))
	for i, h := range hits {
		keys[i] = h.Scope + "/" + h.ID
	}
	return keys
}

// wantHits fails unless hits are the keys ("scope/id"), in any order.
func wantHits(tb testing.TB, hits []agentmem.TextHit, keys ...string) {
	tb.Helper()
	got := hitKeys(hits)
	slices.Sort(got)
	slices.Sort(keys)
	if diff := cmp.Diff(keys, got, cmpopts.EquateEmpty()); diff != "" {
		tb.Fatalf("hits mismatch (-want +got):\n%s", diff)
	}
}

// searchFixture is a user's searchable data: two threads of two agents
// with messages of every role, and memories, one of them invalidated.
type searchFixture struct {
	run, food   *agentmem.Thread
	runMsgs     []*agentmem.Message // user, assistant, user, tool, system
	foodMsgs    []*agentmem.Message // user, assistant
	oldMsg      *agentmem.Message   // in run, dated 2020
	memRun      *agentmem.Memory
	memFood     *agentmem.Memory
	memOld      *agentmem.Memory // invalidated
	memCategory *agentmem.Memory
}

func key(scope, id string) string { return scope + "/" + id }

func newSearchFixture(tb testing.TB, s agentmem.Store, user string) *searchFixture {
	tb.Helper()
	f := &searchFixture{}
	f.run = MustCreateThread(tb, s, &agentmem.Thread{UserID: user, AgentID: "coach"})
	f.food = MustCreateThread(tb, s, &agentmem.Thread{UserID: user, AgentID: "chef"})
	msgs, err := s.AppendMessages(ctx, user, f.run.ID, []*agentmem.Message{
		{Role: agentmem.RoleUser, Content: "I went running in the park yesterday morning."},
		{Role: agentmem.RoleAssistant, Content: "Great! How far did you run?"},
		{Role: agentmem.RoleUser, Name: "Alice Smith", Content: "About five kilometres, then I swam in the lake."},
		{Role: agentmem.RoleTool, ToolCallID: "c1", Content: "zebra running statistics"},
		{Role: agentmem.RoleSystem, Content: "zebra running instructions"},
	}, agentmem.AppendOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	f.runMsgs = msgs
	old, err := s.AppendMessages(ctx, user, f.run.ID, []*agentmem.Message{
		{Role: agentmem.RoleUser, Content: "An old note about marathon training.", CreatedAt: time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)},
	}, agentmem.AppendOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	f.oldMsg = old[0]
	f.foodMsgs = MustAppend(tb, s, user, f.food.ID,
		agentmem.RoleUser, "My favourite dish is a mushroom risotto with parmesan.",
		agentmem.RoleAssistant, "A mushroom risotto needs good rice.")
	f.memRun = MustCreateMemory(tb, s, &agentmem.Memory{UserID: user, Text: "The user runs in the park every morning.", Category: "habit",
		AgentID: "coach", ThreadID: f.run.ID, SeqFrom: 1, SeqTo: 3})
	f.memFood = MustCreateMemory(tb, s, &agentmem.Memory{UserID: user, Text: "The user loves mushroom risotto.", Category: "preference",
		AgentID: "chef", ThreadID: f.food.ID, SeqFrom: 1, SeqTo: 1})
	f.memOld = MustCreateMemory(tb, s, &agentmem.Memory{UserID: user, Text: "The user hated running.", Category: "habit", AgentID: "coach"})
	if _, err := s.InvalidateMemory(ctx, user, f.memOld.ID, f.memRun.ID, "contradicted"); err != nil {
		tb.Fatal(err)
	}
	f.memCategory = MustCreateMemory(tb, s, &agentmem.Memory{UserID: user, Text: "The user's sister is called Zoe.", Category: "family"})
	return f
}

func testSearchText(t *testing.T, s agentmem.Store) {
	a := newSearchFixture(t, s, "alice")
	b := newSearchFixture(t, s, "bob")
	// Bob's own words, which alice's searches must never find.
	MustAppend(t, s, "bob", b.run.ID, agentmem.RoleUser, "Kilimanjaro was hard, running uphill.")
	MustCreateMemory(t, s, &agentmem.Memory{UserID: "bob", Text: "Bob climbed Kilimanjaro."})

	t.Run("Stemming", func(t *testing.T) {
		hits := mustSearch(t, s, "alice", agentmem.TextQuery{Query: "running"})
		// "running" finds "runs" and "run" as well as "running".
		wantHits(t, hits, key("messages", a.runMsgs[0].ID), key("messages", a.runMsgs[1].ID), key("memories", a.memRun.ID))
	})
	t.Run("Or", func(t *testing.T) {
		// Most of the question's words are in no message ("swam" is not a
		// stem of "swimming"): they must not keep "lake" from finding the
		// message that holds it.
		hits := mustSearch(t, s, "alice", agentmem.TextQuery{Query: "Where did I go swimming last summer, in which lake?", Scopes: []string{agentmem.ScopeMessages}})
		wantHits(t, hits, key("messages", a.runMsgs[2].ID))
		hits = mustSearch(t, s, "alice", agentmem.TextQuery{Query: "What did I say about jogging in a park?"})
		wantHits(t, hits, key("messages", a.runMsgs[0].ID), key("memories", a.memRun.ID))
	})
	t.Run("Ranking", func(t *testing.T) {
		hits := mustSearch(t, s, "alice", agentmem.TextQuery{Query: "mushroom risotto parmesan", Scopes: []string{agentmem.ScopeMessages}})
		if got := hitKeys(hits); !cmp.Equal(got, []string{key("messages", a.foodMsgs[0].ID), key("messages", a.foodMsgs[1].ID)}) {
			t.Fatalf("hits %v (scores %v), want the message with all three words first", got, hits)
		}
		if hits[0].Score <= hits[1].Score {
			t.Fatalf("scores %v and %v, want the first higher", hits[0].Score, hits[1].Score)
		}
	})
	t.Run("Fields", func(t *testing.T) {
		hits := mustSearch(t, s, "alice", agentmem.TextQuery{Query: "swam kilometres", Scopes: []string{agentmem.ScopeMessages}})
		m := a.runMsgs[2]
		want := agentmem.TextHit{Scope: agentmem.ScopeMessages, ID: m.ID, Text: m.Content, ThreadID: a.run.ID, SeqFrom: 3, SeqTo: 3,
			CreatedAt: m.CreatedAt, AgentID: "coach", Role: agentmem.RoleUser, Name: "Alice Smith"}
		if len(hits) != 1 {
			t.Fatalf("hits = %+v", hits)
		}
		if diff := cmp.Diff(want, hits[0], cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Score" }, cmp.Ignore())); diff != "" {
			t.Fatalf("message hit mismatch (-want +got):\n%s", diff)
		}
		hits = mustSearch(t, s, "alice", agentmem.TextQuery{Query: "risotto", Scopes: []string{agentmem.ScopeMemories}})
		mem := a.memFood
		want = agentmem.TextHit{Scope: agentmem.ScopeMemories, ID: mem.ID, Text: mem.Text, ThreadID: a.food.ID, SeqFrom: 1, SeqTo: 1,
			CreatedAt: mem.CreatedAt, AgentID: "chef", Category: "preference", MemoryKind: agentmem.MemoryFact}
		if len(hits) != 1 {
			t.Fatalf("hits = %+v", hits)
		}
		if diff := cmp.Diff(want, hits[0], cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Score" }, cmp.Ignore())); diff != "" {
			t.Fatalf("memory hit mismatch (-want +got):\n%s", diff)
		}
	})
	t.Run("Scopes", func(t *testing.T) {
		q := "running risotto"
		for _, h := range mustSearch(t, s, "alice", agentmem.TextQuery{Query: q, Scopes: []string{agentmem.ScopeMemories}}) {
			if h.Scope != agentmem.ScopeMemories {
				t.Fatalf("memories-only search returned %+v", h)
			}
		}
		for _, h := range mustSearch(t, s, "alice", agentmem.TextQuery{Query: q, Scopes: []string{agentmem.ScopeMessages, agentmem.ScopeMessages}}) {
			if h.Scope != agentmem.ScopeMessages {
				t.Fatalf("messages-only search returned %+v", h)
			}
		}
	})
	t.Run("Filters", func(t *testing.T) {
		q := "running risotto swam Zoe marathon"
		future, past := time.Now().Add(time.Hour), time.Date(2021, 1, 1, 0, 0, 0, 0, time.UTC)
		for _, tt := range []struct {
			name string
			f    agentmem.SearchFilter
			want []string
		}{
			{"None", agentmem.SearchFilter{}, []string{key("messages", a.runMsgs[0].ID), key("messages", a.runMsgs[1].ID), key("messages", a.runMsgs[2].ID),
				key("messages", a.oldMsg.ID), key("messages", a.foodMsgs[0].ID), key("messages", a.foodMsgs[1].ID),
				key("memories", a.memRun.ID), key("memories", a.memFood.ID), key("memories", a.memCategory.ID)}},
			{"Agent", agentmem.SearchFilter{AgentID: ptr("chef")}, []string{key("messages", a.foodMsgs[0].ID), key("messages", a.foodMsgs[1].ID), key("memories", a.memFood.ID)}},
			{"Thread", agentmem.SearchFilter{ThreadID: ptr(a.food.ID)}, []string{key("messages", a.foodMsgs[0].ID), key("messages", a.foodMsgs[1].ID), key("memories", a.memFood.ID)}},
			{"Category", agentmem.SearchFilter{Category: ptr("habit")}, []string{key("memories", a.memRun.ID)}},
			{"IncludeInvalid", agentmem.SearchFilter{Category: ptr("habit"), IncludeInvalid: true}, []string{key("memories", a.memRun.ID), key("memories", a.memOld.ID)}},
			{"Until", agentmem.SearchFilter{Until: &past}, []string{key("messages", a.oldMsg.ID)}},
			{"Since", agentmem.SearchFilter{Since: &future}, nil},
			{"Range", agentmem.SearchFilter{Since: &past, Until: &future, AgentID: ptr("coach")}, []string{key("messages", a.runMsgs[0].ID),
				key("messages", a.runMsgs[1].ID), key("messages", a.runMsgs[2].ID), key("memories", a.memRun.ID)}},
		} {
			t.Run(tt.name, func(t *testing.T) {
				wantHits(t, mustSearch(t, s, "alice", agentmem.TextQuery{Query: q, Filter: tt.f}), tt.want...)
			})
		}
	})
	t.Run("Isolation", func(t *testing.T) {
		if hits := mustSearch(t, s, "alice", agentmem.TextQuery{Query: "Kilimanjaro uphill climbed"}); len(hits) != 0 {
			t.Fatalf("alice finds bob's words: %+v", hits)
		}
		hits := mustSearch(t, s, "bob", agentmem.TextQuery{Query: "running Kilimanjaro"})
		if len(hits) != 5 {
			t.Fatalf("bob's search = %v, want his 3 messages and 2 memories", hitKeys(hits))
		}
		for _, h := range mustSearch(t, s, "alice", agentmem.TextQuery{Query: "running risotto swam Zoe marathon", Filter: agentmem.SearchFilter{IncludeInvalid: true}}) {
			if h.ThreadID == b.run.ID || h.ThreadID == b.food.ID || h.ID == b.memRun.ID || h.ID == b.memFood.ID {
				t.Fatalf("alice's search returned bob's %+v", h)
			}
		}
	})
	t.Run("Limit", func(t *testing.T) {
		hits := mustSearch(t, s, "alice", agentmem.TextQuery{Query: "running risotto", Limit: 2})
		if len(hits) != 2 {
			t.Fatalf("%d hits with limit 2", len(hits))
		}
		all := mustSearch(t, s, "alice", agentmem.TextQuery{Query: "running risotto"})
		if diff := cmp.Diff(hitKeys(all[:2]), hitKeys(hits)); diff != "" {
			t.Fatalf("limited hits are not the best ones (-best +limited):\n%s", diff)
		}
	})
	t.Run("NotIndexed", func(t *testing.T) {
		// Tool and system messages are not searched.
		if hits := mustSearch(t, s, "alice", agentmem.TextQuery{Query: "zebra statistics instructions"}); len(hits) != 0 {
			t.Fatalf("tool or system messages found: %+v", hits)
		}
	})
	t.Run("Empty", func(t *testing.T) {
		for _, q := range []string{"", "   ", "the and of what is it", "?!…", "a b c", "'s"} {
			if hits := mustSearch(t, s, "alice", agentmem.TextQuery{Query: q}); len(hits) != 0 {
				t.Fatalf("query %q found %+v, want nothing", q, hits)
			}
		}
	})
	t.Run("Syntax", func(t *testing.T) {
		// Nothing a user types is read as query syntax, of FTS5 or tsquery.
		for _, q := range []string{
			`"running`, `running"`, `"""`, `'running'`, `''`, `(running`, `running)`, `()`, `((risotto OR running)`,
			`NEAR(running risotto)`, `running NEAR risotto`, `NEAR`, `AND`, `OR`, `NOT`, `running AND`, `OR running`, `NOT running`,
			`run*`, `*`, `-running`, `running -park`, `-`, `content:running`, `text:risotto`, `:`, `running:*`, `^running`,
			`running & park`, `!running`, `running <-> park`, `running | park`, `\`, `\'`, `{running}`, `running; DROP TABLE messages; --`,
			"running\x00park", "\xff\xfe running", strings.Repeat("(", 1000), strings.Repeat("running ", 500), strings.Repeat("x", 10_000),
		} {
			if _, err := s.SearchText(ctx, "alice", agentmem.TextQuery{Query: q}); err != nil {
				t.Fatalf("SearchText(%q): %v", q, err)
			}
		}
		hits := mustSearch(t, s, "alice", agentmem.TextQuery{Query: `NEAR("running" -park*): risotto^`})
		if len(hits) < 3 {
			t.Fatalf("the words of a query full of syntax found %v", hitKeys(hits))
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		for _, q := range []agentmem.TextQuery{
			{Query: "x", Scopes: []string{"nope"}},
			{Query: "x", Limit: -1},
			{Query: "x", Limit: agentmem.MaxPageSize + 1},
		} {
			_, err := s.SearchText(ctx, "alice", q)
			wantCode(t, err, agentmem.EINVALID)
		}
	})
	t.Run("Appended", func(t *testing.T) {
		// What is appended is found at once.
		msgs := MustAppend(t, s, "alice", a.run.ID, agentmem.RoleUser, "I bought new trainers.")
		wantHits(t, mustSearch(t, s, "alice", agentmem.TextQuery{Query: "trainers"}), key("messages", msgs[0].ID))
		text := "The user buys trainers every spring."
		if _, err := s.UpdateMemory(ctx, "alice", a.memCategory.ID, agentmem.MemoryUpdate{Text: &text}); err != nil {
			t.Fatal(err)
		}
		wantHits(t, mustSearch(t, s, "alice", agentmem.TextQuery{Query: "trainers spring"}), key("messages", msgs[0].ID), key("memories", a.memCategory.ID))
		if hits := mustSearch(t, s, "alice", agentmem.TextQuery{Query: "sister Zoe"}); len(hits) != 0 {
			t.Fatalf("the memory's old text is still found: %+v", hits)
		}
	})
	t.Run("LargeMessage", func(t *testing.T) {
		// A message of distinct words up to the size limit is stored and
		// found by its first words (PostgreSQL's tsvector holds 1 MB).
		var b strings.Builder
		b.WriteString("Albatross ")
		for i := 0; b.Len() < agentmem.DefaultMaxMessageBytes-100; i++ {
			fmt.Fprintf(&b, "%06x ", i*7919)
		}
		th := MustCreateThread(t, s, &agentmem.Thread{UserID: "alice"})
		msgs := MustAppend(t, s, "alice", th.ID, agentmem.RoleUser, b.String())
		wantHits(t, mustSearch(t, s, "alice", agentmem.TextQuery{Query: "albatross"}), key("messages", msgs[0].ID))
	})
	t.Run("ThreadDeletion", func(t *testing.T) {
		if err := s.DeleteThread(ctx, "alice", a.run.ID, false); err != nil {
			t.Fatal(err)
		}
		// Soft-deleted: its messages are left out; memories drawn from it stay.
		wantHits(t, mustSearch(t, s, "alice", agentmem.TextQuery{Query: "running"}), key("memories", a.memRun.ID))
		if err := s.DeleteThread(ctx, "alice", a.food.ID, true); err != nil {
			t.Fatal(err)
		}
		wantHits(t, mustSearch(t, s, "alice", agentmem.TextQuery{Query: "risotto parmesan"}), key("memories", a.memFood.ID))
		// A new thread under the same ID does not bring the old messages back.
		MustCreateThread(t, s, &agentmem.Thread{UserID: "alice", ID: a.food.ID})
		wantHits(t, mustSearch(t, s, "alice", agentmem.TextQuery{Query: "risotto parmesan"}), key("memories", a.memFood.ID))
		// Bob's are untouched.
		if hits := mustSearch(t, s, "bob", agentmem.TextQuery{Query: "risotto parmesan running", Scopes: []string{agentmem.ScopeMessages}}); len(hits) != 5 {
			t.Fatalf("bob's messages found: %v, want 5", hitKeys(hits))
		}
	})
}

func testFindItems(t *testing.T, s agentmem.Store) {
	a := newSearchFixture(t, s, "alice")
	b := newSearchFixture(t, s, "bob")
	find := func(scope string, ids []string, f agentmem.SearchFilter) []agentmem.TextHit {
		t.Helper()
		items, err := s.FindItems(ctx, "alice", scope, ids, f)
		if err != nil {
			t.Fatalf("FindItems: %v", err)
		}
		if items == nil {
			t.Fatal("FindItems returned nil, want an empty slice")
		}
		for _, h := range items {
			if h.Score != 0 || h.Scope != scope || !f.Match(h) {
				t.Fatalf("FindItems returned %+v", h)
			}
		}
		return items
	}
	ids := func(items []agentmem.TextHit) []string {
		out := make([]string, len(items))
		for i, h := range items {
			out[i] = h.ID
		}
		return out
	}

	t.Run("Memories", func(t *testing.T) {
		in := []string{a.memFood.ID, "unknown", a.memOld.ID, b.memRun.ID, a.memRun.ID, a.memFood.ID}
		if got := ids(find(agentmem.ScopeMemories, in, agentmem.SearchFilter{})); !cmp.Equal(got, []string{a.memFood.ID, a.memRun.ID}) {
			t.Fatalf("FindItems = %v, want alice's valid memories in the order asked", got)
		}
		got := find(agentmem.ScopeMemories, in, agentmem.SearchFilter{IncludeInvalid: true})
		if !cmp.Equal(ids(got), []string{a.memFood.ID, a.memOld.ID, a.memRun.ID}) || got[1].InvalidAt == nil {
			t.Fatalf("FindItems with invalid = %+v", got)
		}
		want := agentmem.TextHit{Scope: agentmem.ScopeMemories, ID: a.memFood.ID, Text: a.memFood.Text, ThreadID: a.food.ID, SeqFrom: 1, SeqTo: 1,
			CreatedAt: a.memFood.CreatedAt, AgentID: "chef", Category: "preference", MemoryKind: agentmem.MemoryFact}
		if diff := cmp.Diff(want, got[0]); diff != "" {
			t.Fatalf("item mismatch (-want +got):\n%s", diff)
		}
		if got := ids(find(agentmem.ScopeMemories, in, agentmem.SearchFilter{Category: ptr("habit"), AgentID: ptr("coach")})); !cmp.Equal(got, []string{a.memRun.ID}) {
			t.Fatalf("filtered FindItems = %v", got)
		}
	})
	t.Run("Messages", func(t *testing.T) {
		var in []string
		for _, m := range slices.Concat(a.foodMsgs, a.runMsgs, b.runMsgs) {
			in = append(in, m.ID)
		}
		got := find(agentmem.ScopeMessages, in, agentmem.SearchFilter{})
		// Not the tool or system message, nor bob's.
		want := []string{a.foodMsgs[0].ID, a.foodMsgs[1].ID, a.runMsgs[0].ID, a.runMsgs[1].ID, a.runMsgs[2].ID}
		if !cmp.Equal(ids(got), want) {
			t.Fatalf("FindItems = %v, want %v", ids(got), want)
		}
		m := a.runMsgs[2]
		wantHit := agentmem.TextHit{Scope: agentmem.ScopeMessages, ID: m.ID, Text: m.Content, ThreadID: a.run.ID, SeqFrom: 3, SeqTo: 3, CreatedAt: m.CreatedAt,
			AgentID: "coach", Role: agentmem.RoleUser, Name: "Alice Smith"}
		if diff := cmp.Diff(wantHit, got[4]); diff != "" {
			t.Fatalf("item mismatch (-want +got):\n%s", diff)
		}
		past := time.Date(2021, 1, 1, 0, 0, 0, 0, time.UTC)
		if got := ids(find(agentmem.ScopeMessages, append(in, a.oldMsg.ID), agentmem.SearchFilter{Until: &past})); !cmp.Equal(got, []string{a.oldMsg.ID}) {
			t.Fatalf("FindItems until 2021 = %v", got)
		}
		if got := find(agentmem.ScopeMessages, in, agentmem.SearchFilter{Category: ptr("habit")}); len(got) != 0 {
			t.Fatalf("FindItems of messages with a category = %v", ids(got))
		}
		if err := s.DeleteThread(ctx, "alice", a.food.ID, false); err != nil {
			t.Fatal(err)
		}
		if got := ids(find(agentmem.ScopeMessages, in, agentmem.SearchFilter{})); !cmp.Equal(got, want[2:]) {
			t.Fatalf("FindItems after soft deletion = %v, want %v", got, want[2:])
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		for _, scope := range []string{"", "nope"} {
			_, err := s.FindItems(ctx, "alice", scope, []string{"x"}, agentmem.SearchFilter{})
			wantCode(t, err, agentmem.EINVALID)
		}
		many := make([]string, agentmem.MaxPageSize+1)
		for i := range many {
			many[i] = fmt.Sprint(i)
		}
		_, err := s.FindItems(ctx, "alice", agentmem.ScopeMemories, many, agentmem.SearchFilter{})
		wantCode(t, err, agentmem.EINVALID)
		if got := find(agentmem.ScopeMemories, nil, agentmem.SearchFilter{}); len(got) != 0 {
			t.Fatalf("FindItems(nil) = %v", got)
		}
	})
}

// benchSearch measures what a hybrid search reads from the store at the
// sizes of DESIGN.md's target (one user's 100,000 memories): the user's
// vectors (dimension 256, the built-in embedder's) and their version, and
// a full-text search of the memories.
func benchSearch(b *testing.B, open func(tb testing.TB) agentmem.Store) {
	const n, dim, space = 100_000, 256, "bench/256"
	b.Run(fmt.Sprintf("Vectors%dx%d", n, dim), func(b *testing.B) {
		s := open(b)
		rng := rand.New(rand.NewPCG(1, 2))
		for done := 0; done < n; done += 1000 {
			vs := make([]agentmem.Vector, 1000)
			for i := range vs {
				vec := make([]float32, dim)
				for j := range vec {
					vec[j] = float32(rng.NormFloat64()) / 16
				}
				vs[i] = agentmem.Vector{Scope: agentmem.ScopeMemories, ID: fmt.Sprintf("m%06d", done+i), Space: space, Vec: vec}
			}
			mustPutVectors(b, s, "u", vs...)
		}
		analyze(b, s)
		b.Run("FindVectors", func(b *testing.B) {
			b.ReportAllocs()
			var lat latencies
			for b.Loop() {
				start := time.Now()
				if vs := mustFindVectors(b, s, "u", space); len(vs) != n {
					b.Fatalf("%d vectors, want %d", len(vs), n)
				}
				lat.add(start)
			}
			lat.report(b)
		})
		b.Run("VectorsVersion", func(b *testing.B) {
			var lat latencies
			for b.Loop() {
				start := time.Now()
				mustVectorsVersion(b, s, "u", space)
				lat.add(start)
			}
			lat.report(b)
		})
	})
	b.Run(fmt.Sprintf("SearchText/Memories%d", n), func(b *testing.B) {
		s := open(b)
		// Memories of 8 words each from a vocabulary of 2,000: each word
		// is in about 400 of them, so a query of five words has some 2,000
		// candidates to rank.
		const workers = 32
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				rng := rand.New(rand.NewPCG(uint64(w), 3))
				for i := w; i < n; i += workers {
					words := make([]string, 8)
					for j := range words {
						words[j] = benchWord(rng.IntN(2000))
					}
					if err := s.CreateMemory(ctx, &agentmem.Memory{UserID: "u", Text: "The user " + strings.Join(words, " ") + "."}); err != nil {
						b.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		analyze(b, s)
		q := agentmem.TextQuery{Query: "What did I tell you about " + strings.Join([]string{benchWord(1), benchWord(50), benchWord(300), benchWord(1000), benchWord(1999)}, " ") + "?",
			Scopes: []string{agentmem.ScopeMemories}}
		b.ReportAllocs()
		var lat latencies
		for b.Loop() {
			start := time.Now()
			if hits := mustSearch(b, s, "u", q); len(hits) != agentmem.DefaultPageSize {
				b.Fatalf("%d hits, want %d", len(hits), agentmem.DefaultPageSize)
			}
			lat.add(start)
		}
		lat.report(b)
	})
}

// benchWord returns the i-th word of the benchmark's vocabulary: letters
// only, distinct after stemming.
func benchWord(i int) string {
	const letters = "bcdfghjklmnpqrstvwxz"
	return "w" + string(letters[i/400]) + string(letters[i/20%20]) + string(letters[i%20]) + "o"
}

// testSearchMemoryKind: SearchFilter.MemoryKind keeps the memories of one
// kind (facts or insights) and lets the other scopes' items pass, in
// SearchText and FindItems; a memory's hit says its kind.
func testSearchMemoryKind(t *testing.T, s agentmem.Store) {
	th := MustCreateThread(t, s, &agentmem.Thread{UserID: "alice"})
	msg := MustAppend(t, s, "alice", th.ID, agentmem.RoleUser, "I keep thinking about retirement.")[0]
	fact := MustCreateMemory(t, s, &agentmem.Memory{UserID: "alice", Text: "User plans an early retirement."})
	insight := MustCreateMemory(t, s, &agentmem.Memory{UserID: "alice", Kind: agentmem.MemoryInsight, Text: "User worries about retirement savings."})
	scopes := []string{agentmem.ScopeMemories, agentmem.ScopeMessages}
	for _, tt := range []struct {
		kind *string
		want []string
	}{
		{nil, []string{key(agentmem.ScopeMemories, fact.ID), key(agentmem.ScopeMemories, insight.ID), key(agentmem.ScopeMessages, msg.ID)}},
		{ptr(agentmem.MemoryFact), []string{key(agentmem.ScopeMemories, fact.ID), key(agentmem.ScopeMessages, msg.ID)}},
		{ptr(agentmem.MemoryInsight), []string{key(agentmem.ScopeMemories, insight.ID), key(agentmem.ScopeMessages, msg.ID)}},
	} {
		f := agentmem.SearchFilter{MemoryKind: tt.kind}
		hits := mustSearch(t, s, "alice", agentmem.TextQuery{Query: "retirement", Scopes: scopes, Filter: f})
		wantHits(t, hits, tt.want...)
		for _, h := range hits {
			if h.Scope == agentmem.ScopeMemories && h.MemoryKind != map[string]string{fact.ID: agentmem.MemoryFact, insight.ID: agentmem.MemoryInsight}[h.ID] {
				t.Fatalf("hit %s has memory kind %q", h.ID, h.MemoryKind)
			}
		}
		items, err := s.FindItems(ctx, "alice", agentmem.ScopeMemories, []string{fact.ID, insight.ID}, f)
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, k := range tt.want {
			if strings.HasPrefix(k, agentmem.ScopeMemories+"/") {
				want = append(want, k)
			}
		}
		wantHits(t, items, want...)
		items, err = s.FindItems(ctx, "alice", agentmem.ScopeMessages, []string{msg.ID}, f)
		if err != nil {
			t.Fatal(err)
		}
		wantHits(t, items, key(agentmem.ScopeMessages, msg.ID))
	}
}
