package storetest

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/google/go-cmp/cmp"
)

// userRowCounter is a store that counts a user's rows in every table of
// its schema with a user_id column, read from the schema (both backends'
// UserRows): what an erasure must leave at zero, whatever table a
// migration adds.
type userRowCounter interface {
	UserRows(ctx context.Context, userID string) (map[string]int64, error)
}

// userRows returns the user's rows in each table of s that holds any.
func userRows(tb testing.TB, s agentmem.Store, user string) map[string]int64 {
	tb.Helper()
	c, ok := s.(userRowCounter)
	if !ok {
		tb.Skipf("%T cannot count a user's rows (no UserRows method)", s)
	}
	counts, err := c.UserRows(ctx, user)
	if err != nil {
		tb.Fatalf("UserRows(%s): %v", user, err)
	}
	if len(counts) < 10 {
		tb.Fatalf("UserRows found %d tables with a user_id column, want at least 10: %v", len(counts), counts)
	}
	maps.DeleteFunc(counts, func(_ string, n int64) bool { return n == 0 })
	return counts
}

// jobWrites are the writes a job makes (index, summarize, reflect,
// profile, entities, notes…), each with new IDs, on the user's thread t1
// and its first message; run returns the error of each, by name.
func jobWrites(s agentmem.Store, user, firstMsg string) map[string]func(ctx context.Context) error {
	space := "test/2"
	id := func(p string) string { return p + "-" + agentmem.NewID() }
	at := time.Now()
	return map[string]func(ctx context.Context) error{
		"PutVectors/messages": func(ctx context.Context) error {
			return s.PutVectors(ctx, user, []agentmem.Vector{{Scope: agentmem.ScopeMessages, ID: firstMsg, Space: space, Vec: []float32{1, 0}}})
		},
		"PutVectors/memories": func(ctx context.Context) error {
			return s.PutVectors(ctx, user, []agentmem.Vector{{Scope: agentmem.ScopeMemories, ID: id("m"), Space: space, Vec: []float32{0, 1}}})
		},
		"PutVectors/summaries": func(ctx context.Context) error {
			return s.PutVectors(ctx, user, []agentmem.Vector{{Scope: agentmem.ScopeSummaries, ID: "t1", Space: space, Vec: []float32{1, 1}}})
		},
		"PutMessageWindows": func(ctx context.Context) error {
			return s.PutMessageWindows(ctx, user, "t1", []agentmem.MessageWindow{{Seq: 1, Turns: []int64{1}}})
		},
		"PutChunks": func(ctx context.Context) error {
			return s.PutChunks(ctx, user, []*agentmem.Chunk{{ThreadID: "t1", SeqFrom: 1, SeqTo: 2, Turns: 1, Text: "a chunk", CreatedAt: at}})
		},
		"WriteMemories": func(ctx context.Context) error {
			_, err := s.WriteMemories(ctx, user, []agentmem.MemoryWrite{{Create: &agentmem.Memory{UserID: user, ID: id("m"), Text: "User likes tea.", ThreadID: "t1", SeqFrom: 1, SeqTo: 1}}})
			return err
		},
		"CreateMemory": func(ctx context.Context) error {
			return s.CreateMemory(ctx, &agentmem.Memory{UserID: user, ID: id("m"), Text: "User lives in Porto."})
		},
		"PutEntities+Refs": func(ctx context.Context) error {
			e := &agentmem.Entity{ID: id("e"), Name: "Project " + agentmem.NewID()}
			if err := s.PutEntities(ctx, user, []*agentmem.Entity{e}); err != nil {
				return err
			}
			return s.PutEntityRefs(ctx, user, []*agentmem.EntityRef{{EntityID: e.ID, ThreadID: "t1", Action: agentmem.EntityDiscussed, Seq: 1, At: at}})
		},
		"PutSummary": func(ctx context.Context) error {
			_, err := s.PutSummary(ctx, &agentmem.Summary{UserID: user, ThreadID: "t1", ThroughSeq: 2, Text: "They said hi.", Method: agentmem.SummaryExtractive})
			return err
		},
		"PutReflections": func(ctx context.Context) error {
			return s.PutReflections(ctx, user, []*agentmem.Reflection{{UserID: user, ThreadID: "t1", Status: agentmem.ReflectionPending, ThroughSeq: 2}}, nil)
		},
		"PutProfile": func(ctx context.Context) error {
			return s.PutProfile(ctx, &agentmem.Profile{UserID: user, Text: "Likes tea.", Method: agentmem.ProfileAssembled}, -1, nil)
		},
		"PutNotes": func(ctx context.Context) error {
			_, err := s.PutNotes(ctx, user, "helper", agentmem.NotesOp{Operation: agentmem.NotesAppend, Content: "a note"})
			return err
		},
		"EnqueueJob": func(ctx context.Context) error {
			_, err := s.EnqueueJob(ctx, &agentmem.Job{UserID: user, Kind: "profile"})
			return err
		},
		"CreateThread": func(ctx context.Context) error {
			return s.CreateThread(ctx, &agentmem.Thread{UserID: user, ID: id("t")})
		},
	}
}

// runWrites runs each write with ctx and returns the names of those that
// failed, with their errors' codes.
func runWrites(writes map[string]func(ctx context.Context) error, ctx context.Context) map[string]string {
	failed := map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(writes)) {
		if err := writes[name](ctx); err != nil {
			failed[name] = agentmem.ErrorCode(err)
			if failed[name] == agentmem.EINTERNAL {
				failed[name] += ": " + err.Error()
			}
		}
	}
	return failed
}

// testErasureJobsInFlight (issue 28): a job that was running when its
// user was erased stores nothing after the erasure, whatever it writes
// (windows, vectors, chunks, memories, entities, summaries, reflections,
// the profile, notes, jobs, even a thread): every such write fails with
// ENOTFOUND and every table with a user_id column is left without a row
// of the user. The user may start again under the same ID at once, and
// the old job's writes are refused then too, while a new job's succeed.
// A run whose lease passed to another worker (handed back and claimed
// again) is refused with ECONFLICT.
func testErasureJobsInFlight(t *testing.T, s agentmem.Store) {
	fill := func() string {
		t.Helper()
		MustCreateThread(t, s, &agentmem.Thread{UserID: "alice", ID: "t1", AgentID: "helper"})
		msgs := MustAppend(t, s, "alice", "t1", "user", "hi, I like tea", "assistant", "noted")
		return msgs[0].ID
	}
	claim := func(owner string) context.Context {
		t.Helper()
		j := MustEnqueueJob(t, s, &agentmem.Job{UserID: "alice", Kind: "index"})
		got := MustClaimJobs(t, s, owner, []string{"index"}, 1, time.Minute)
		if len(got) != 1 || got[0].ID != j.ID {
			t.Fatalf("claimed %v, want job %s", jobIDs(got), j.ID)
		}
		return agentmem.WithJob(agentmem.WithBackground(ctx), got[0])
	}
	first := fill()
	MustCreateThread(t, s, &agentmem.Thread{UserID: "bob", ID: "t1"})
	MustAppend(t, s, "bob", "t1", "user", "bob's")
	bobBefore := userRows(t, s, "bob")

	// While the job runs, its writes are stored.
	running := claim("w1")
	if failed := runWrites(jobWrites(s, "alice", first), running); len(failed) > 0 {
		t.Fatalf("a running job's writes failed: %v", failed)
	}
	if _, err := s.DeleteUser(ctx, "alice"); err != nil {
		t.Fatal(err)
	}
	writes := jobWrites(s, "alice", first)
	want := map[string]string{}
	for name := range writes {
		want[name] = agentmem.ENOTFOUND
	}
	if diff := cmp.Diff(want, runWrites(writes, running)); diff != "" {
		t.Errorf("writes of a job whose user was erased: codes mismatch (-want +got):\n%s", diff)
	}
	if left := userRows(t, s, "alice"); len(left) > 0 {
		t.Errorf("rows of the erased user after her job's writes: %s", formatRows(left))
	}
	if diff := cmp.Diff(bobBefore, userRows(t, s, "bob")); diff != "" {
		t.Errorf("bob's rows changed by alice's erasure (-before +after):\n%s", diff)
	}

	t.Run("UserAgain", func(t *testing.T) {
		// Alice starts again with the same IDs: the old run still stores
		// nothing, a new job's run stores its writes.
		first := fill()
		before := userRows(t, s, "alice")
		if diff := cmp.Diff(want, runWrites(jobWrites(s, "alice", first), running)); diff != "" {
			t.Errorf("writes of a job of the erased user, after she started again: codes mismatch (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(before, userRows(t, s, "alice")); diff != "" {
			t.Errorf("rows changed by the old job's writes (-before +after):\n%s", diff)
		}
		if failed := runWrites(jobWrites(s, "alice", first), claim("w1")); len(failed) > 0 {
			t.Fatalf("a new job's writes failed: %v", failed)
		}
	})

	t.Run("LeaseLost", func(t *testing.T) {
		j := MustEnqueueJob(t, s, &agentmem.Job{UserID: "alice", Kind: "reflect"})
		got := MustClaimJobs(t, s, "w1", []string{"reflect"}, 1, time.Minute)
		if len(got) != 1 || got[0].ID != j.ID {
			t.Fatalf("claimed %v, want job %s", jobIDs(got), j.ID)
		}
		old := agentmem.WithJob(ctx, got[0])
		if err := s.ReleaseJob(ctx, "alice", j.ID, "w1"); err != nil {
			t.Fatal(err)
		}
		got = MustClaimJobs(t, s, "w2", []string{"reflect"}, 1, time.Minute)
		if len(got) != 1 || got[0].ID != j.ID {
			t.Fatalf("claimed %v again, want job %s", jobIDs(got), j.ID)
		}
		wantCode(t, s.CreateMemory(old, &agentmem.Memory{UserID: "alice", Text: "From a lost lease."}), agentmem.ECONFLICT)
		if err := s.CreateMemory(agentmem.WithJob(ctx, got[0]), &agentmem.Memory{UserID: "alice", Text: "From the lease holder."}); err != nil {
			t.Fatalf("the lease holder's write: %v", err)
		}
	})
}

// formatRows lists counts as "table=n" in table order.
func formatRows(counts map[string]int64) string {
	var parts []string
	for _, t := range slices.Sorted(maps.Keys(counts)) {
		parts = append(parts, fmt.Sprintf("%s=%d", t, counts[t]))
	}
	return strings.Join(parts, " ")
}

// testErasureRequestsInFlight (issue 28): a request's write that depends
// on what an earlier transaction of the request stored or read (a
// memory's vector, a thread's summary job: agentmem.WithRequired) is
// stored while the memory and thread exist, and not once the user was
// erased in between: ENOTFOUND, and no row of the user left.
func testErasureRequestsInFlight(t *testing.T, s agentmem.Store) {
	MustCreateThread(t, s, &agentmem.Thread{UserID: "alice", ID: "t1"})
	m := MustCreateMemory(t, s, &agentmem.Memory{UserID: "alice", Text: "User likes tea."})
	thread := agentmem.WithRequired(ctx, agentmem.Required{UserID: "alice", ThreadID: "t1"})
	memory := agentmem.WithRequired(ctx, agentmem.Required{UserID: "alice", MemoryID: m.ID})
	writes := func() (enqueue, put error) {
		_, enqueue = s.EnqueueJob(thread, &agentmem.Job{UserID: "alice", Kind: "summarize", Key: "t1-" + agentmem.NewID()})
		put = s.PutVectors(memory, "alice", []agentmem.Vector{{Scope: agentmem.ScopeMemories, ID: m.ID, Space: "test/2", Vec: []float32{1, 0}}})
		return enqueue, put
	}
	if enqueue, put := writes(); enqueue != nil || put != nil {
		t.Fatalf("writes whose thread and memory exist: enqueue %v, put vectors %v", enqueue, put)
	}
	if _, err := s.DeleteUser(ctx, "alice"); err != nil {
		t.Fatal(err)
	}
	enqueue, put := writes()
	wantCode(t, enqueue, agentmem.ENOTFOUND)
	wantCode(t, put, agentmem.ENOTFOUND)
	if left := userRows(t, s, "alice"); len(left) > 0 {
		t.Errorf("rows of the erased user after the requests' writes: %s", formatRows(left))
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
