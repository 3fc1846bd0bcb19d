package httpapi_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/core"
	"github.com/agentmem/agentmem/httpapi"
	"github.com/agentmem/agentmem/index"
	"github.com/agentmem/agentmem/internal/testutil"
	"github.com/agentmem/agentmem/llm/lexical"
	"github.com/agentmem/agentmem/llm/llmtest"
	"github.com/agentmem/agentmem/profile"
	"github.com/agentmem/agentmem/reflection"
	"github.com/agentmem/agentmem/window"
)

// jobsFixture serves the API over a service that queues index, reflect
// and profile jobs, which run only when the test says so (runJobs), as a
// worker would run them.
type jobsFixture struct {
	store agentmem.Store
	srv   *httptest.Server
	rf    *reflection.Reflector
	run   map[string]func(context.Context, *agentmem.Job) error
}

func newJobsFixture(t *testing.T, store agentmem.Store, chat agentmem.Chat) *jobsFixture {
	t.Helper()
	emb := lexical.New(0)
	ix := &index.Indexer{Store: store, Jobs: store, Emb: emb, Space: emb.Space()}
	sm := &window.Summarizer{Store: store}
	rf := &reflection.Reflector{Store: store, Chat: chat, Summarize: sm.SummarizeThrough, Embed: ix.EmbedMemory}
	ix.MemoriesChanged = rf.EnqueueProfile
	pr := &profile.Profiler{Store: store}
	srv := MustServeCore(t, store, core.Options{Indexer: ix, Reflector: rf, Profiler: pr}, httpapi.Options{})
	return &jobsFixture{store: store, srv: srv, rf: rf, run: map[string]func(context.Context, *agentmem.Job) error{
		index.JobKind:      ix.Run,
		reflection.JobKind: rf.Run,
		profile.JobKind:    pr.Run,
	}}
}

// runJobs runs the due jobs, retrying a failed one at once, until none is
// due (a dead letter is not), and returns how many runs failed.
func (f *jobsFixture) runJobs(t *testing.T) int {
	t.Helper()
	failed := 0
	for range 100 {
		jobs, err := f.store.ClaimJobs(context.Background(), "test", nil, 10, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if len(jobs) == 0 {
			return failed
		}
		for _, j := range jobs {
			if err := f.run[j.Kind](context.Background(), j); err != nil {
				failed++
				if err := f.store.FailJob(context.Background(), j.UserID, j.ID, "test", err.Error(), time.Now()); err != nil {
					t.Fatal(err)
				}
				continue
			}
			if err := f.store.CompleteJob(context.Background(), j.UserID, j.ID, "test"); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Fatal("jobs kept coming")
	return 0
}

// jobs lists the user's jobs of a kind, in any state, through GET /v1/jobs.
func (f *jobsFixture) jobs(t *testing.T, user, kind string) []*agentmem.Job {
	t.Helper()
	resp, body := Do(t, "GET", f.srv.URL+"/v1/jobs?limit=1000&user_id="+user+"&kind="+kind, nil, "")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("list jobs: %d %s", resp.StatusCode, body)
	}
	return MustDecode[list[*agentmem.Job]](t, body).Data
}

// do sends a request that must be answered with status want, and returns
// the body.
func (f *jobsFixture) do(t *testing.T, method, path, body string, want int) []byte {
	t.Helper()
	var h http.Header
	if body != "" {
		h = jsonBody
	}
	resp, b := Do(t, method, f.srv.URL+path, h, body)
	if resp.StatusCode != want {
		t.Fatalf("%s %s: status %d, want %d; body %s", method, path, resp.StatusCode, want, b)
	}
	return b
}

// TestHandler_EndThreadIdempotent: ending a thread eleven times, with no
// turn added, queues one reflection and, once it ran, one profile
// refresh; the jobs are done between the calls, so no deduplication of
// queued jobs hides a second one.
func TestHandler_EndThreadIdempotent(t *testing.T) {
	testutil.Backends(t, func(t *testing.T, s agentmem.Store) {
		f := newJobsFixture(t, s, nil)
		f.do(t, "POST", "/v1/users/alice/threads", `{"id":"t"}`, http.StatusCreated)
		f.do(t, "POST", "/v1/users/alice/threads/t/messages", `{"messages":[{"role":"user","content":"I live in Oslo."},{"role":"assistant","content":"Nice."}]}`, http.StatusCreated)
		f.do(t, "POST", "/v1/users/alice/threads/t/end", "", http.StatusOK)
		if n := f.runJobs(t); n != 0 {
			t.Fatalf("%d job runs failed", n)
		}
		profiles := len(f.jobs(t, "alice", profile.JobKind))
		if profiles == 0 {
			t.Fatal("the reflection queued no profile refresh")
		}
		for range 10 {
			f.do(t, "POST", "/v1/users/alice/threads/t/end", "", http.StatusOK)
			if n := f.runJobs(t); n != 0 {
				t.Fatalf("%d job runs failed", n)
			}
		}
		if n := len(f.jobs(t, "alice", reflection.JobKind)); n != 1 {
			t.Fatalf("reflect jobs after 11 ends: %d, want 1", n)
		}
		if n := len(f.jobs(t, "alice", profile.JobKind)); n != profiles {
			t.Fatalf("profile jobs after 11 ends: %d, want %d as after the first", n, profiles)
		}
		// A new turn reopens the thread: its next end reflects again.
		f.do(t, "POST", "/v1/users/alice/threads/t/messages", `{"messages":[{"role":"user","content":"I moved to Bergen."}]}`, http.StatusCreated)
		f.do(t, "POST", "/v1/users/alice/threads/t/end", "", http.StatusOK)
		f.runJobs(t)
		if n := len(f.jobs(t, "alice", reflection.JobKind)); n != 2 {
			t.Fatalf("reflect jobs after a new turn and an end: %d, want 2", n)
		}
	})
}

// TestHandler_DeletedThreads: soft-deleted threads are listed with
// ?deleted=true (only them, a page at a time), hold their IDs (409,
// saying so and how to free it) and come back with POST …/restore.
func TestHandler_DeletedThreads(t *testing.T) {
	testutil.Backends(t, func(t *testing.T, s agentmem.Store) {
		f := newJobsFixture(t, s, nil)
		for _, id := range []string{"t1", "t2", "t3"} {
			f.do(t, "POST", "/v1/users/alice/threads", `{"id":"`+id+`"}`, http.StatusCreated)
		}
		f.do(t, "POST", "/v1/users/alice/threads/t1/messages", `{"messages":[{"role":"user","content":"I live in Oslo."}]}`, http.StatusCreated)
		f.do(t, "DELETE", "/v1/users/alice/threads/t1", "", http.StatusNoContent)
		f.do(t, "DELETE", "/v1/users/alice/threads/t2", "", http.StatusNoContent)
		f.do(t, "GET", "/v1/users/alice/threads/t1", "", http.StatusNotFound)

		var deleted []*agentmem.Thread
		for cursor, pages := "", 0; ; pages++ {
			if pages > 3 {
				t.Fatal("more than 3 pages of 2 deleted threads")
			}
			page := MustDecode[list[*agentmem.Thread]](t, f.do(t, "GET", "/v1/users/alice/threads?deleted=true&limit=1&cursor="+cursor, "", http.StatusOK))
			deleted = append(deleted, page.Data...)
			if cursor = page.NextCursor; cursor == "" {
				break
			}
		}
		if len(deleted) != 2 || deleted[0].DeletedAt == nil || deleted[1].DeletedAt == nil ||
			deleted[0].ID == deleted[1].ID || deleted[0].ID == "t3" || deleted[1].ID == "t3" {
			t.Fatalf("deleted threads: %+v; want t1 and t2 with deleted_at", deleted)
		}
		live := MustDecode[list[*agentmem.Thread]](t, f.do(t, "GET", "/v1/users/alice/threads?deleted=false", "", http.StatusOK))
		if len(live.Data) != 1 || live.Data[0].ID != "t3" {
			t.Fatalf("live threads: %+v; want t3", live.Data)
		}
		if b := f.do(t, "GET", "/v1/users/alice/threads?deleted=yes", "", http.StatusBadRequest); !bytes.Contains(b, []byte("deleted must be true or false")) {
			t.Fatalf("bad deleted: %s", b)
		}

		b := f.do(t, "POST", "/v1/users/alice/threads", `{"id":"t1"}`, http.StatusConflict)
		for _, want := range []string{`"code":"conflict"`, "deleted", "t1/restore", "permanent=true"} {
			if !bytes.Contains(b, []byte(want)) {
				t.Fatalf("creating a thread whose ID a deleted thread holds: %s; want %s in it", b, want)
			}
		}

		f.do(t, "POST", "/v1/users/alice/threads/nope/restore", "", http.StatusNotFound)
		f.do(t, "POST", "/v1/users/bob/threads/t1/restore", "", http.StatusNotFound)
		th := MustDecode[agentmem.Thread](t, f.do(t, "POST", "/v1/users/alice/threads/t1/restore", "", http.StatusOK))
		if th.ID != "t1" || th.UserID != "alice" || th.DeletedAt != nil || th.LastSeq != 1 {
			t.Fatalf("restored thread %+v", th)
		}
		f.do(t, "GET", "/v1/users/alice/threads/t1", "", http.StatusOK)
		msgs := MustDecode[list[*agentmem.Message]](t, f.do(t, "GET", "/v1/users/alice/threads/t1/messages", "", http.StatusOK))
		if len(msgs.Data) != 1 {
			t.Fatalf("restored thread's messages: %+v", msgs.Data)
		}
		// Restoring a thread that is not deleted answers it as it is.
		f.do(t, "POST", "/v1/users/alice/threads/t1/restore", "", http.StatusOK)
		deleted = MustDecode[list[*agentmem.Thread]](t, f.do(t, "GET", "/v1/users/alice/threads?deleted=true", "", http.StatusOK)).Data
		if len(deleted) != 1 || deleted[0].ID != "t2" {
			t.Fatalf("deleted threads after restoring t1: %+v; want t2", deleted)
		}
	})
}

// TestHandler_ReflectionFailed: while the model is down, a thread's
// reflection is retried, and once its job is dead-lettered it says
// failed, and why, without the provider's text; POST …/reflection/retry
// and the next end of the thread queue it again. A reflection whose job
// died without its handler knowing (dead-lettered in the store) says
// failed too.
func TestHandler_ReflectionFailed(t *testing.T) {
	testutil.Backends(t, func(t *testing.T, s agentmem.Store) {
		model := llmtest.NewServer(t)
		var down atomic.Bool
		down.Store(true)
		model.Script(func(req llmtest.ChatCompletionRequest) llmtest.Reply {
			if down.Load() {
				return llmtest.Reply{Status: http.StatusServiceUnavailable, Body: `{"error":{"message":"upstream sk-secret-key exploded","type":"server_error"}}`}
			}
			return llmtest.Text(`{"reflection_flag": "no-insight", "insights": [], "topics": ["oslo"]}`)
		})
		f := newJobsFixture(t, s, testutil.NewChat(t, model.BaseURL()))
		reflectJobs := func() int { return len(f.jobs(t, "alice", reflection.JobKind)) }
		get := func(thread string) agentmem.Reflection {
			t.Helper()
			return MustDecode[agentmem.Reflection](t, f.do(t, "GET", "/v1/users/alice/threads/"+thread+"/reflection", "", http.StatusOK))
		}
		wantFailed := func(thread string) {
			t.Helper()
			r := get(thread)
			if r.Status != agentmem.ReflectionFailed || r.Reason == "" || strings.Contains(r.Reason, "sk-secret") || strings.Contains(r.Reason, "exploded") {
				t.Fatalf("reflection of %s: %+v; want failed with a reason that shows no provider text", thread, r)
			}
		}

		f.do(t, "POST", "/v1/users/alice/threads", `{"id":"t1"}`, http.StatusCreated)
		f.do(t, "POST", "/v1/users/alice/threads/t1/messages", `{"messages":[{"role":"user","content":"I live in Oslo."},{"role":"assistant","content":"Nice."}]}`, http.StatusCreated)
		f.do(t, "POST", "/v1/users/alice/threads/t1/end", "", http.StatusOK)
		if n := f.runJobs(t); n != agentmem.DefaultJobAttempts {
			t.Fatalf("%d failed runs, want %d", n, agentmem.DefaultJobAttempts)
		}
		wantFailed("t1")
		if r := get("t1"); !strings.Contains(r.Reason, "unavailable") {
			t.Fatalf("reason %q does not say the model was unavailable", r.Reason)
		}

		// Retried on request: queued again, then reflected once the model
		// is back.
		r := MustDecode[agentmem.Reflection](t, f.do(t, "POST", "/v1/users/alice/threads/t1/reflection/retry", "", http.StatusAccepted))
		if r.Status != agentmem.ReflectionPending || get("t1").Status != agentmem.ReflectionPending {
			t.Fatalf("reflection after a retry: %+v; want pending", r)
		}
		if n := reflectJobs(); n != 2 {
			t.Fatalf("reflect jobs after a retry: %d, want 2", n)
		}
		if b := f.do(t, "POST", "/v1/users/alice/threads/t1/reflection/retry", "", http.StatusConflict); !bytes.Contains(b, []byte("queued")) {
			t.Fatalf("retrying a queued reflection: %s", b)
		}
		down.Store(false)
		if n := f.runJobs(t); n != 0 {
			t.Fatalf("%d failed runs with the model back", n)
		}
		if r := get("t1"); r.Status != agentmem.ReflectionNoInsight || r.ThroughSeq != 2 {
			t.Fatalf("reflection with the model back: %+v", r)
		}
		if b := f.do(t, "POST", "/v1/users/alice/threads/t1/reflection/retry", "", http.StatusConflict); !bytes.Contains(b, []byte("no-insight")) {
			t.Fatalf("retrying a done reflection: %s", b)
		}

		// Retried by the next end: failed again, ending the ended thread
		// queues it again (and only then).
		f.do(t, "POST", "/v1/users/alice/threads/t1/messages", `{"messages":[{"role":"user","content":"I moved to Bergen."}]}`, http.StatusCreated)
		down.Store(true)
		f.do(t, "POST", "/v1/users/alice/threads/t1/end", "", http.StatusOK)
		f.runJobs(t)
		wantFailed("t1")
		jobs := reflectJobs()
		f.do(t, "POST", "/v1/users/alice/threads/t1/end", "", http.StatusOK)
		if n := reflectJobs(); n != jobs+1 || get("t1").Status != agentmem.ReflectionPending {
			t.Fatalf("ending a thread whose reflection failed: %d reflect jobs (want %d), reflection %+v", n, jobs+1, get("t1"))
		}
		f.do(t, "POST", "/v1/users/alice/threads/t1/end", "", http.StatusOK)
		if n := reflectJobs(); n != jobs+1 {
			t.Fatalf("ending it again with the reflection queued: %d reflect jobs, want %d", n, jobs+1)
		}
		down.Store(false)
		f.runJobs(t)
		if r := get("t1"); r.Status != agentmem.ReflectionNoInsight || r.ThroughSeq != 3 {
			t.Fatalf("reflection after the end with the model back: %+v", r)
		}

		// A job dead-lettered behind its handler's back (its worker died
		// on each attempt): the pending reflection says failed.
		f.do(t, "POST", "/v1/users/alice/threads", `{"id":"t2"}`, http.StatusCreated)
		f.do(t, "POST", "/v1/users/alice/threads/t2/messages", `{"messages":[{"role":"user","content":"hello"}]}`, http.StatusCreated)
		f.do(t, "POST", "/v1/users/alice/threads/t2/end", "", http.StatusOK)
		if r := get("t2"); r.Status != agentmem.ReflectionPending {
			t.Fatalf("reflection of t2 before its job ran: %+v", r)
		}
		for range agentmem.DefaultJobAttempts {
			js, err := s.ClaimJobs(context.Background(), "test", []string{reflection.JobKind}, 10, time.Minute)
			if err != nil || len(js) != 1 {
				t.Fatalf("claim t2's reflect job: %v, %v", js, err)
			}
			if err := s.FailJob(context.Background(), "alice", js[0].ID, "test", "internal: password=hunter2", time.Now()); err != nil {
				t.Fatal(err)
			}
		}
		wantFailed("t2")
		if r := get("t2"); strings.Contains(r.Reason, "hunter2") {
			t.Fatalf("reason shows the job's internal error: %q", r.Reason)
		}
		f.do(t, "POST", "/v1/users/alice/threads/t2/reflection/retry", "", http.StatusAccepted)
		if r := get("t2"); r.Status != agentmem.ReflectionPending {
			t.Fatalf("reflection of t2 after a retry: %+v; want pending", r)
		}

		// What cannot be retried.
		f.do(t, "POST", "/v1/users/alice/threads", `{"id":"t3"}`, http.StatusCreated)
		if b := f.do(t, "POST", "/v1/users/alice/threads/t3/reflection/retry", "", http.StatusConflict); !bytes.Contains(b, []byte("active")) {
			t.Fatalf("retrying the reflection of an active thread: %s", b)
		}
		f.do(t, "POST", "/v1/users/alice/threads/nope/reflection/retry", "", http.StatusNotFound)
		f.do(t, "POST", "/v1/users/bob/threads/t1/reflection/retry", "", http.StatusNotFound)
	})
}
