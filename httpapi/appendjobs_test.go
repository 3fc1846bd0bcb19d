package httpapi_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agentmem/agentmem/core"
	"github.com/agentmem/agentmem/internal/testutil"
	"github.com/agentmem/agentmem/worker"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/httpapi"
	"github.com/agentmem/agentmem/index"
	"github.com/agentmem/agentmem/llm/lexical"
)

// deadJobs is a JobStore whose EnqueueJob fails as a process that died
// right after an append committed would: nothing is enqueued after the
// append's transaction.
type deadJobs struct {
	agentmem.JobStore
	calls atomic.Int64
}

func (d *deadJobs) EnqueueJob(ctx context.Context, j *agentmem.Job) (*agentmem.Job, error) {
	d.calls.Add(1)
	return nil, agentmem.Errorf(agentmem.EUNAVAILABLE, "the process died")
}

// TestHandler_AppendIndexJob: an append that was answered has the index
// job covering its messages, stored in its own transaction (even if the
// process dies right after answering, simulated by a job store that
// fails every enqueue), and the appends to a busy thread share it.
func TestHandler_AppendIndexJob(t *testing.T) {
	store := testutil.MustOpenSQLite(t)
	emb := lexical.New(0)
	jobs := &deadJobs{JobStore: store}
	var wakes atomic.Int64
	ix := &index.Indexer{Store: store, Jobs: jobs, Emb: emb, Space: emb.Space()}
	// The service appends through a store that counts the wake-ups of the
	// workers, as app wires it.
	srv := MustServeCore(t, worker.Notifying(store, func() { wakes.Add(1) }), core.Options{Indexer: ix}, httpapi.Options{})
	u := srv.URL + "/v1/users/alice/threads"
	MustCreateThread(t, store, &agentmem.Thread{UserID: "alice", ID: "t"})
	indexJobs := func() []*agentmem.Job {
		t.Helper()
		kind := index.JobKind
		page, _, err := store.FindJobs(context.Background(), agentmem.JobFilter{Kind: &kind, Limit: agentmem.MaxPageSize})
		if err != nil {
			t.Fatal(err)
		}
		return page
	}

	if resp, body := Do(t, "POST", u+"/t/messages", nil, `{"messages":[{"role":"user","content":"I live in Lisbon."}]}`); resp.StatusCode != 201 {
		t.Fatalf("append: %d %s", resp.StatusCode, body)
	}
	got := indexJobs()
	if len(got) != 1 || got[0].Status != agentmem.JobQueued || got[0].UserID != "alice" || got[0].Key != "t#a" {
		t.Fatalf("index jobs after an append: %+v, want one queued job of thread t", got)
	}
	if n := jobs.calls.Load(); n != 0 {
		t.Fatalf("EnqueueJob called %d times after the append: the job is not stored with the messages", n)
	}

	// 30 more appends, 10 at a time, share the queued job.
	var wg sync.WaitGroup
	for i := range 30 {
		wg.Go(func() {
			body := fmt.Sprintf(`{"messages":[{"role":"user","content":"message %d"}]}`, i)
			if resp, b := Do(t, "POST", u+"/t/messages", nil, body); resp.StatusCode != 201 {
				t.Errorf("append %d: %d %s", i, resp.StatusCode, b)
			}
		})
		if i%10 == 9 {
			wg.Wait()
		}
	}
	if got := indexJobs(); len(got) != 1 || wakes.Load() != 1 {
		t.Fatalf("31 appends to a thread made %d index jobs and %d wake-ups, want 1 and 1", len(got), wakes.Load())
	}
	// A retry stores nothing, and asks for no job.
	for range 2 {
		h := map[string][]string{"Idempotency-Key": {"same"}}
		if resp, body := Do(t, "POST", u+"/t/messages", h, `{"messages":[{"role":"user","content":"again"}]}`); resp.StatusCode != 201 {
			t.Fatalf("append: %d %s", resp.StatusCode, body)
		}
	}
	if got := indexJobs(); len(got) != 1 {
		t.Fatalf("%d index jobs after retries, want 1", len(got))
	}
}
