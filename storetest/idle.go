package storetest

import (
	"testing"
	"time"

	"github.com/agentmem/agentmem"
)

func testFindIdleThreads(t *testing.T, s agentmem.Store) {
	before := time.Now().Add(-time.Hour)
	first := MustCreateThread(t, s, &agentmem.Thread{UserID: "alice"})
	MustAppend(t, s, "alice", first.ID, "user", "hello")
	empty := MustCreateThread(t, s, &agentmem.Thread{UserID: "alice"}) // no messages: nothing to reflect on
	ended := MustCreateThread(t, s, &agentmem.Thread{UserID: "alice"})
	MustAppend(t, s, "alice", ended.ID, "user", "bye")
	if _, err := s.EndThread(ctx, "alice", ended.ID); err != nil {
		t.Fatal(err)
	}
	deleted := MustCreateThread(t, s, &agentmem.Thread{UserID: "alice"})
	MustAppend(t, s, "alice", deleted.ID, "user", "gone")
	if err := s.DeleteThread(ctx, "alice", deleted.ID, false); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Millisecond)
	bob := MustCreateThread(t, s, &agentmem.Thread{UserID: "bob"})
	MustAppend(t, s, "bob", bob.ID, "user", "hi")

	ids := func(ts []*agentmem.Thread) []string {
		var out []string
		for _, th := range ts {
			out = append(out, th.UserID+"/"+th.ID)
		}
		return out
	}
	got, err := s.FindIdleThreads(ctx, time.Now().Add(time.Hour), 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"alice/" + first.ID, "bob/" + bob.ID}
	if g := ids(got); len(g) != 2 || g[0] != want[0] || g[1] != want[1] {
		t.Fatalf("idle threads %v, want %v (least recently updated first; not empty, ended or deleted ones: %s %s %s)", g, want, empty.ID, ended.ID, deleted.ID)
	}
	if got, err := s.FindIdleThreads(ctx, time.Now().Add(time.Hour), 1); err != nil || len(got) != 1 || got[0].ID != first.ID {
		t.Fatalf("limit 1: %v, %v", ids(got), err)
	}
	if got, err := s.FindIdleThreads(ctx, before, 0); err != nil || len(got) != 0 {
		t.Fatalf("idle since an hour ago: %v, %v", ids(got), err)
	}
	_, err = s.FindIdleThreads(ctx, time.Now(), -1)
	wantCode(t, err, agentmem.EINVALID)
	// Appending reopens an ended thread: idle again later.
	MustAppend(t, s, "alice", ended.ID, "user", "back")
	if got, err := s.FindIdleThreads(ctx, time.Now().Add(time.Hour), 0); err != nil || len(got) != 3 {
		t.Fatalf("after reopening: %v, %v", ids(got), err)
	}
}
