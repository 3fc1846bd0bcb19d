package storetest

import (
	"fmt"
	"sync"
	"testing"

	"github.com/agentmem/agentmem"
	"github.com/google/go-cmp/cmp"
)

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
