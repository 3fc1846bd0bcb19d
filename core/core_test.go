package core_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/core"
	"github.com/agentmem/agentmem/index"
	"github.com/agentmem/agentmem/internal/testutil"
	"github.com/agentmem/agentmem/llm/lexical"
	"github.com/agentmem/agentmem/reflection"
	"github.com/agentmem/agentmem/window"
)

var ctx = context.Background()

// fixture is a service over a real store with an indexer and a reflector
// that queue jobs (no workers run them).
type fixture struct {
	store agentmem.Store
	svc   *core.Service
	opt   core.Options // svc's: another service over the store may share them
}

func newFixture(t *testing.T, store agentmem.Store) *fixture {
	t.Helper()
	emb := lexical.New(0)
	ix := &index.Indexer{Store: store, Jobs: store, Emb: emb, Space: emb.Space()}
	sm := &window.Summarizer{Store: store}
	rf := &reflection.Reflector{Store: store, Summarize: sm.SummarizeThrough, Embed: ix.EmbedMemory}
	opt := core.Options{Indexer: ix, Reflector: rf}
	return &fixture{store: store, svc: core.New(store, opt), opt: opt}
}

// backends runs fn on SQLite, and on PostgreSQL when AGENTMEM_TEST_POSTGRES
// is set (CI sets it; it fails there rather than skip). The test and both
// runs are parallel to other tests: each run has a store of its own.
func backends(t *testing.T, fn func(t *testing.T, f *fixture)) {
	t.Parallel()
	t.Run("SQLite", func(t *testing.T) {
		t.Parallel()
		fn(t, newFixture(t, testutil.MustOpenSQLite(t)))
	})
	t.Run("PostgreSQL", func(t *testing.T) {
		t.Parallel()
		fn(t, newFixture(t, testutil.MustOpenPostgres(t)))
	})
}

// jobs counts the user's jobs of a kind, in any state.
func (f *fixture) jobs(t *testing.T, userID, kind string) int {
	t.Helper()
	js, _, err := f.store.FindJobs(ctx, agentmem.JobFilter{UserID: &userID, Kind: &kind, Limit: agentmem.MaxPageSize})
	if err != nil {
		t.Fatal(err)
	}
	return len(js)
}

func (f *fixture) talk(t *testing.T, userID, threadID string, turns ...string) {
	t.Helper()
	if err := f.svc.CreateThread(ctx, userID, &agentmem.Thread{ID: threadID}); err != nil && agentmem.ErrorCode(err) != agentmem.ECONFLICT {
		t.Fatal(err)
	}
	var msgs []*agentmem.Message
	for _, c := range turns {
		msgs = append(msgs, &agentmem.Message{Role: agentmem.RoleUser, Content: c})
	}
	if _, err := f.svc.AppendMessages(ctx, userID, threadID, msgs, ""); err != nil {
		t.Fatal(err)
	}
}

// TestService_EndThread: ending queues the thread's reflection once;
// ending it again with no new turns queues nothing; new turns reopen it,
// and the next end queues again.
func TestService_EndThread(t *testing.T) {
	backends(t, func(t *testing.T, f *fixture) {
		f.talk(t, "alice", "t1", "I live in Oslo.")
		th, err := f.svc.EndThread(ctx, "alice", "t1")
		if err != nil || th.Status != agentmem.ThreadEnded {
			t.Fatalf("EndThread: %+v, %v", th, err)
		}
		if n := f.jobs(t, "alice", reflection.JobKind); n != 1 {
			t.Fatalf("reflect jobs after the end: %d, want 1", n)
		}
		// Mark the job done, as a worker would, so that a second request
		// would make a new one rather than share the queued one.
		f.finishJobs(t, "alice")
		for range 3 {
			if _, err := f.svc.EndThread(ctx, "alice", "t1"); err != nil {
				t.Fatal(err)
			}
		}
		ended := agentmem.ThreadEnded
		if _, err := f.svc.UpdateThread(ctx, "alice", "t1", agentmem.ThreadUpdate{Status: &ended}); err != nil {
			t.Fatal(err)
		}
		if n := f.jobs(t, "alice", reflection.JobKind); n != 1 {
			t.Fatalf("reflect jobs after ending an ended thread: %d, want still 1", n)
		}
		f.talk(t, "alice", "t1", "I moved to Bergen.")
		if _, err := f.svc.EndThread(ctx, "alice", "t1"); err != nil {
			t.Fatal(err)
		}
		if n := f.jobs(t, "alice", reflection.JobKind); n != 2 {
			t.Fatalf("reflect jobs after new turns and an end: %d, want 2", n)
		}
		_, err = f.svc.EndThread(ctx, "alice", "nope")
		if agentmem.ErrorCode(err) != agentmem.ENOTFOUND {
			t.Fatalf("EndThread of a missing thread: %v, want ENOTFOUND", err)
		}
	})
}

// finishJobs claims and completes every queued job of the store.
func (f *fixture) finishJobs(t *testing.T, userID string) {
	t.Helper()
	js, err := f.store.ClaimJobs(ctx, "test", nil, 1000, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range js {
		if err := f.store.CompleteJob(ctx, j.UserID, j.ID, "test"); err != nil {
			t.Fatal(err)
		}
	}
}

// TestService_EndIdleThreads: threads idle for long enough end and are
// queued for reflection; others stay.
func TestService_EndIdleThreads(t *testing.T) {
	backends(t, func(t *testing.T, f *fixture) {
		f.talk(t, "alice", "t1", "hi")
		if n, err := f.svc.EndIdleThreads(ctx, time.Now().Add(-time.Hour)); err != nil || n != 0 {
			t.Fatalf("a fresh thread ended: %d, %v", n, err)
		}
		if n, err := f.svc.EndIdleThreads(ctx, time.Now().Add(time.Second)); err != nil || n != 1 {
			t.Fatalf("idle threads ended: %d, %v", n, err)
		}
		if th, err := f.svc.FindThreadByID(ctx, "alice", "t1"); err != nil || th.Status != agentmem.ThreadEnded {
			t.Fatalf("thread %+v, %v", th, err)
		}
		if n := f.jobs(t, "alice", reflection.JobKind); n != 1 {
			t.Fatalf("reflect jobs: %d, want 1", n)
		}
		user := agentmem.NewContextWithIdentity(ctx, &agentmem.Identity{Scope: agentmem.Scope{Kind: agentmem.ScopeUser, UserID: "alice"}, Via: "apikey"})
		if _, err := f.svc.EndIdleThreads(user, time.Now()); agentmem.ErrorCode(err) != agentmem.EFORBIDDEN {
			t.Fatalf("EndIdleThreads by a user: %v, want EFORBIDDEN", err)
		}
	})
}

// staleStore is a store whose FindThreadByID runs hook, once, after it
// has read the thread: what another replica does between a call's read
// of a thread and its write.
type staleStore struct {
	agentmem.Store
	hook func()
}

func (s *staleStore) FindThreadByID(ctx context.Context, userID, id string) (*agentmem.Thread, error) {
	th, err := s.Store.FindThreadByID(ctx, userID, id)
	if h := s.hook; h != nil {
		s.hook = nil
		h()
	}
	return th, err
}

// TestService_EndThreadConcurrently: of two calls that end a thread at
// once, through two services on one store (two replicas), only the one
// that ended it queues its index job and its reflection. The other read
// the thread active, but the first ended it (and its jobs ran) before the
// other wrote: it used to queue them again, so that the thread was
// reflected on twice, or its reflection, done, marked pending again with
// its job still running (the fault suite's TestReplicas found it). The
// idle sweeps of two replicas likewise end a thread once, and count it
// once.
func TestService_EndThreadConcurrently(t *testing.T) {
	backends(t, func(t *testing.T, f *fixture) {
		stale := &staleStore{Store: f.store}
		other := core.New(stale, f.opt)
		for _, c := range []struct {
			name string
			end  func(svc *core.Service) (ended bool)
		}{
			{"EndThread", func(svc *core.Service) bool {
				th, err := svc.EndThread(ctx, "alice", "t1")
				if err != nil || th.Status != agentmem.ThreadEnded {
					t.Fatalf("EndThread: %+v, %v", th, err)
				}
				return th.JustEnded
			}},
			{"EndIdleThreads", func(svc *core.Service) bool {
				n, err := svc.EndIdleThreads(ctx, time.Now().Add(time.Second))
				if err != nil {
					t.Fatal(err)
				}
				return n == 1
			}},
		} {
			f.talk(t, "alice", "t1", "I live in Oslo.") // (re)opens it
			f.finishJobs(t, "alice")
			index0, reflect0 := f.jobs(t, "alice", index.JobKind), f.jobs(t, "alice", reflection.JobKind)
			stale.hook = func() {
				if !c.end(f.svc) {
					t.Errorf("%s: the first call did not end the thread", c.name)
				}
				js, err := f.store.ClaimJobs(ctx, "test", nil, 1000, time.Minute)
				if err != nil {
					t.Fatal(err)
				}
				for _, j := range js {
					if j.Kind == reflection.JobKind {
						if err := f.opt.Reflector.Run(ctx, j); err != nil {
							t.Fatal(err)
						}
					}
					if err := f.store.CompleteJob(ctx, j.UserID, j.ID, "test"); err != nil {
						t.Fatal(err)
					}
				}
				// The first end's reflection is done before the second
				// end marks it pending: the race TestReplicas once lost.
				if r, err := f.store.FindReflection(ctx, "alice", "t1"); err != nil || r.Status == agentmem.ReflectionPending {
					t.Fatalf("%s: reflection after the first end's jobs ran: %+v, %v", c.name, r, err)
				}
			}
			if c.end(other) {
				t.Errorf("%s: the second call says it ended the thread that the first ended", c.name)
			}
			if stale.hook != nil {
				t.Fatalf("%s: the thread was not read", c.name)
			}
			f.finishJobs(t, "alice")
			if r, err := f.store.FindReflection(ctx, "alice", "t1"); err != nil || r.Status == agentmem.ReflectionPending {
				t.Errorf("%s: reflection after both ends and every job: %+v, %v; want it done", c.name, r, err)
			}
			if n := f.jobs(t, "alice", index.JobKind) - index0; n != 1 {
				t.Errorf("%s: %d index jobs for one end, want 1", c.name, n)
			}
			if n := f.jobs(t, "alice", reflection.JobKind) - reflect0; n != 1 {
				t.Errorf("%s: %d reflect jobs for one end, want 1", c.name, n)
			}
		}
	})
}

// TestService_OpenSession: eight concurrent calls make one thread.
func TestService_OpenSession(t *testing.T) {
	backends(t, func(t *testing.T, f *fixture) {
		var wg sync.WaitGroup
		ids := make([]string, 8)
		created := make([]bool, 8)
		for i := range ids {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s, c, err := f.svc.OpenSession(ctx, "alice", "planner")
				if err != nil {
					t.Error(err)
					return
				}
				ids[i], created[i] = s.ThreadID, c
			}()
		}
		wg.Wait()
		n := 0
		for i := range ids {
			if ids[i] != ids[0] {
				t.Fatalf("sessions %v: want one thread", ids)
			}
			if created[i] {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("%d calls said they created the session, want 1", n)
		}
		ts, _, err := f.svc.FindThreads(ctx, "alice", agentmem.ThreadFilter{})
		if err != nil || len(ts) != 1 || ts[0].AgentID != "planner" {
			t.Fatalf("threads %+v, %v: want one thread of planner", ts, err)
		}
	})
}

func identity(kind, tenant, user string) context.Context {
	return agentmem.NewContextWithIdentity(ctx, &agentmem.Identity{Scope: agentmem.Scope{Kind: kind, TenantID: tenant, UserID: user}, Via: "apikey", KeyID: "k"})
}

// TestService_Identity: the identity in ctx decides whose data a call
// reaches; user IDs come back as the caller names them; an admin reaches
// a tenant's users as tenant:T/user:U.
func TestService_Identity(t *testing.T) {
	backends(t, func(t *testing.T, f *fixture) {
		acme := identity(agentmem.ScopeTenant, "acme", "")
		if err := f.svc.CreateThread(acme, "alice", &agentmem.Thread{ID: "t1"}); err != nil {
			t.Fatal(err)
		}
		th, err := f.svc.FindThreadByID(acme, "alice", "t1")
		if err != nil || th.UserID != "alice" {
			t.Fatalf("tenant's thread: %+v, %v; want user_id alice", th, err)
		}
		// The acme user's key sees the same thread, named alice.
		acmeAlice := identity(agentmem.ScopeUser, "acme", "alice")
		if th, err := f.svc.FindThreadByID(acmeAlice, "alice", "t1"); err != nil || th.UserID != "alice" {
			t.Fatalf("tenant user's thread: %+v, %v", th, err)
		}
		// Not the alice of no tenant, nor of another tenant.
		for name, c := range map[string]context.Context{
			"owner":  ctx,
			"globex": identity(agentmem.ScopeTenant, "globex", ""),
			"alice":  identity(agentmem.ScopeUser, "", "alice"),
		} {
			if _, err := f.svc.FindThreadByID(c, "alice", "t1"); agentmem.ErrorCode(err) != agentmem.ENOTFOUND {
				t.Errorf("%s reached acme's alice: %v", name, err)
			}
		}
		// A user key reaches no other user, with the answer of a missing one.
		_, _, err = f.svc.FindThreads(acmeAlice, "bob", agentmem.ThreadFilter{})
		if agentmem.ErrorCode(err) != agentmem.ENOTFOUND || agentmem.ErrorMessage(err) != `User "bob" not found.` {
			t.Fatalf("another user: %v", err)
		}
		// An admin addresses acme's alice as tenant:acme/user:alice.
		admin := identity(agentmem.ScopeAdmin, "", "")
		ts, _, err := f.svc.FindThreads(admin, "tenant:acme/user:alice", agentmem.ThreadFilter{})
		if err != nil || len(ts) != 1 || ts[0].UserID != "tenant:acme/user:alice" {
			t.Fatalf("admin's view of acme's alice: %+v, %v", ts, err)
		}
		for _, bad := range []string{"tenant:acme", "tenant:acme/alice", "tenant:/user:alice", "tenant:acme/user:", "acme/alice"} {
			if _, _, err := f.svc.FindThreads(admin, bad, agentmem.ThreadFilter{}); agentmem.ErrorCode(err) != agentmem.EINVALID {
				t.Errorf("user %q: %v, want EINVALID", bad, err)
			}
		}
		// Errors name the user as the caller does, never as stored.
		_, err = f.svc.FindProfile(acme, "alice")
		if agentmem.ErrorCode(err) != agentmem.ENOTFOUND || agentmem.ErrorMessage(err) == "" || contains(agentmem.ErrorMessage(err), "acme/") {
			t.Fatalf("profile error %q shows the stored ID or is not ENOTFOUND", agentmem.ErrorMessage(err))
		}
		// Operators' use cases need an admin.
		if _, err := f.svc.Stats(acme); agentmem.ErrorCode(err) != agentmem.EFORBIDDEN {
			t.Fatalf("Stats by a tenant: %v, want EFORBIDDEN", err)
		}
		// Erasing: a tenant may erase its user; the user's own key may not.
		if _, err := f.svc.EraseUser(acmeAlice, "alice"); agentmem.ErrorCode(err) != agentmem.EFORBIDDEN {
			t.Fatalf("EraseUser by the user: %v, want EFORBIDDEN", err)
		}
		if c, err := f.svc.EraseUser(acme, "alice"); err != nil || c.Threads != 1 {
			t.Fatalf("EraseUser by the tenant: %+v, %v", c, err)
		}
		evs, _, err := f.svc.FindAuditEvents(admin, agentmem.AuditFilter{})
		if err != nil || len(evs) == 0 || evs[0].Action != agentmem.AuditUserErase || evs[0].TenantID != "acme" || evs[0].UserID != "alice" {
			t.Fatalf("audit %+v, %v: want the erasure of acme's alice", evs, err)
		}
	})
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

// downEmbedder is an embedder whose server is down.
type downEmbedder struct{}

func (downEmbedder) Embed(context.Context, []string) ([][]float32, error) {
	return nil, agentmem.Errorf(agentmem.EUNAVAILABLE, "The embedding model does not answer.")
}

// TestCreateMemory_EmbedderDown: a memory that cannot be embedded is not
// created (the client is told to try again), so that its retry, once the
// embedder is back, makes one memory, not two.
func TestCreateMemory_EmbedderDown(t *testing.T) {
	backends(t, func(t *testing.T, f *fixture) {
		ix := &index.Indexer{Store: f.store, Jobs: f.store, Emb: downEmbedder{}, Space: "down"}
		down := core.New(f.store, core.Options{Indexer: ix})
		_, err := down.CreateMemory(ctx, "alice", agentmem.MemoryInput{Text: "User likes tea."})
		if agentmem.ErrorCode(err) != agentmem.EUNAVAILABLE {
			t.Fatalf("CreateMemory with the embedder down: %v, want EUNAVAILABLE", err)
		}
		if _, err := f.svc.CreateMemory(ctx, "alice", agentmem.MemoryInput{Text: "User likes tea."}); err != nil {
			t.Fatal(err)
		}
		if ms, _, err := f.svc.FindMemories(ctx, "alice", agentmem.MemoryFilter{}); err != nil || len(ms) != 1 {
			t.Errorf("after the failed create and its retry: %d memories (%v), want 1", len(ms), err)
		}
	})
}
