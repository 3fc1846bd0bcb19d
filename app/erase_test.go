package app_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/app"
	"github.com/agentmem/agentmem/internal/testutil"
)

// TestEraseUser_UnderLoad (issue 28, item 4): erasing a user while
// writers append to the user's threads and the workers index them leaves
// nothing of the user once the jobs in flight have stopped, in any table
// with a user_id column (testutil.MustUserRows reads the list from the
// schema). The jobs' writes are held at a gate while the erasure runs, so
// that every job in flight writes after it: a job that began before an
// erasure must not store anything after it. Another user's data stays,
// and the erased user can start again afterwards under the same ID.
func TestEraseUser_UnderLoad(t *testing.T) {
	onBackends(t, testEraseUnderLoad)
}

func testEraseUnderLoad(t *testing.T, db string) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	g := &gatedStore{}
	mem, err := app.Open(ctx, app.Config{DB: db, ChunkTurns: 4, JobPoll: 20 * time.Millisecond,
		WrapStore: func(s agentmem.Store) agentmem.Store { g.Store = s; return g }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mem.Close() })
	raw := g.Store

	facts := []string{"I love hiking in the Alps.", "My daughter is Maria.", "I have a dog named Rex.", "I play the violin.", "I work as a nurse in Porto."}
	threads := map[string][]string{"alice": {"t0", "t1", "t2"}, "bob": {"t0"}}
	for user, ids := range threads {
		for _, id := range ids {
			if err := mem.CreateThread(ctx, user, &agentmem.Thread{ID: id, AgentID: "helper"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Four writers on alice's threads, one on bob's, until they are
	// stopped or alice's thread is gone.
	stop := make(chan struct{})
	var appended atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	writer := func(user string, w int) {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			th := threads[user][(w+i)%len(threads[user])]
			msgs := []*agentmem.Message{
				{Role: agentmem.RoleUser, Content: fmt.Sprintf("%s (w%d #%d)", facts[(w+i)%len(facts)], w, i)},
				{Role: agentmem.RoleAssistant, Content: fmt.Sprintf("Noted, %s: turn %d of writer %d.", user, i, w)},
			}
			_, err := mem.AppendMessages(ctx, user, th, msgs, "")
			if user == "alice" && agentmem.ErrorCode(err) == agentmem.ENOTFOUND {
				return // erased
			}
			if err != nil {
				errs <- fmt.Errorf("%s append: %w", user, err)
				return
			}
			appended.Add(1)
			if i%10 == 9 && user == "alice" && w == 0 {
				// End and reopen a thread now and then: reflection, summaries, the profile.
				if _, err := mem.EndThread(ctx, user, th); err != nil && agentmem.ErrorCode(err) != agentmem.ENOTFOUND {
					errs <- fmt.Errorf("end: %w", err)
					return
				}
			}
		}
	}
	for w := range 4 {
		wg.Add(1)
		go writer("alice", w)
	}
	wg.Add(1)
	go writer("bob", 0)

	waitFor(ctx, t, "60 batches appended", func() bool { return appended.Load() >= 60 })
	// Hold alice's jobs' writes that do not depend on her thread (those
	// of windows, chunks, summaries and reflections check it), and erase
	// her once one of her jobs waits at the gate with work in hand.
	g.watch = "alice"
	g.arm()
	waitFor(ctx, t, "a job's write held at the gate", func() bool { return g.held.Load() >= 1 })
	c, err := mem.EraseUser(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if c.Messages == 0 {
		t.Fatalf("EraseUser counts %+v: no messages erased", c)
	}
	g.release()
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	// The workers go quiet: nothing queued or running, and every job
	// claimed has its outcome recorded (its handler has returned).
	waitFor(ctx, t, "the workers to go quiet", func() bool {
		backlog, err := raw.FindJobBacklog(ctx)
		return err == nil && len(backlog) == 0 && g.running.Load() == 0
	})
	if left := testutil.MustUserRows(t, raw, "alice"); len(left) > 0 {
		t.Errorf("erased user's rows left after the jobs in flight finished: %s", testutil.FormatRows(left))
	}
	if kept := testutil.MustUserRows(t, raw, "bob"); kept["messages"] == 0 || kept["vectors"] == 0 {
		t.Errorf("bob's rows after alice's erasure: %s; want his messages and vectors", testutil.FormatRows(kept))
	}
	// The erased user can start again under the same ID, and is indexed.
	if err := mem.CreateThread(ctx, "alice", &agentmem.Thread{ID: "t0"}); err != nil {
		t.Fatalf("alice again: %v", err)
	}
	if _, err := mem.AppendMessages(ctx, "alice", "t0", []*agentmem.Message{{Role: agentmem.RoleUser, Content: "I play the cello."}}, ""); err != nil {
		t.Fatalf("alice again: %v", err)
	}
	waitFor(ctx, t, "alice's new message indexed", func() bool {
		return testutil.MustUserRows(t, raw, "alice")["vectors"] > 0
	})
}

// waitFor polls cond every few milliseconds until it holds, failing t
// when ctx ends first.
func waitFor(ctx context.Context, t *testing.T, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s", what)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// gatedStore holds the background jobs' writes while armed, as a slow
// model or embedder would hold a job between its reads and its writes,
// and counts the jobs claimed whose outcome is not yet recorded.
type gatedStore struct {
	agentmem.Store
	mu      sync.Mutex
	gate    chan struct{} // nil: open
	held    atomic.Int64  // writes that waited at the gate
	watch   string        // the user whose writes the gate holds
	running atomic.Int64  // jobs claimed, outcome not recorded
}

func (g *gatedStore) arm() {
	g.mu.Lock()
	g.gate = make(chan struct{})
	g.mu.Unlock()
}

func (g *gatedStore) release() {
	g.mu.Lock()
	close(g.gate)
	g.gate = nil
	g.mu.Unlock()
}

// hold waits while the gate is armed, if ctx is a job's and user the
// one watched.
func (g *gatedStore) hold(ctx context.Context, user string) {
	if !agentmem.IsBackground(ctx) || user != g.watch {
		return
	}
	g.mu.Lock()
	gate := g.gate
	g.mu.Unlock()
	if gate == nil {
		return
	}
	g.held.Add(1)
	select {
	case <-gate:
	case <-ctx.Done():
	}
}

func (g *gatedStore) ClaimJobs(ctx context.Context, owner string, kinds []string, n int, lease time.Duration) ([]*agentmem.Job, error) {
	jobs, err := g.Store.ClaimJobs(ctx, owner, kinds, n, lease)
	g.running.Add(int64(len(jobs)))
	return jobs, err
}

func (g *gatedStore) CompleteJob(ctx context.Context, userID, id, owner string) error {
	defer g.running.Add(-1)
	return g.Store.CompleteJob(ctx, userID, id, owner)
}

func (g *gatedStore) FailJob(ctx context.Context, userID, id, owner, msg string, at time.Time) error {
	defer g.running.Add(-1)
	return g.Store.FailJob(ctx, userID, id, owner, msg, at)
}

func (g *gatedStore) ReleaseJob(ctx context.Context, userID, id, owner string) error {
	defer g.running.Add(-1)
	return g.Store.ReleaseJob(ctx, userID, id, owner)
}

func (g *gatedStore) PutVectors(ctx context.Context, userID string, vs []agentmem.Vector) error {
	g.hold(ctx, userID)
	return g.Store.PutVectors(ctx, userID, vs)
}

func (g *gatedStore) WriteMemories(ctx context.Context, userID string, ws []agentmem.MemoryWrite) ([]*agentmem.Memory, error) {
	g.hold(ctx, userID)
	return g.Store.WriteMemories(ctx, userID, ws)
}

func (g *gatedStore) PutEntities(ctx context.Context, userID string, es []*agentmem.Entity) error {
	g.hold(ctx, userID)
	return g.Store.PutEntities(ctx, userID, es)
}

func (g *gatedStore) PutProfile(ctx context.Context, p *agentmem.Profile, after int, processed []string) error {
	g.hold(ctx, p.UserID)
	return g.Store.PutProfile(ctx, p, after, processed)
}

func (g *gatedStore) EnqueueJob(ctx context.Context, j *agentmem.Job) (*agentmem.Job, error) {
	g.hold(ctx, j.UserID)
	return g.Store.EnqueueJob(ctx, j)
}
