package httpapi_test

import (
	"context"
	"testing"
	"time"

	"github.com/agentmem/agentmem/core"
	"github.com/agentmem/agentmem/internal/testutil"

	"github.com/agentmem/agentmem/httpapi"
	"github.com/agentmem/agentmem/index"
	"github.com/agentmem/agentmem/llm/lexical"
	"github.com/agentmem/agentmem/retrieve"
)

// TestHandler_EndThreadFlushesChunks: a thread's last turns, fewer than a
// chunk's, become a chunk when the thread ends, and search finds it in
// scope chunks.
func TestHandler_EndThreadFlushesChunks(t *testing.T) {
	store := testutil.MustOpenSQLite(t)
	emb := lexical.New(0)
	ix := &index.Indexer{Store: store, Jobs: store, Emb: emb, Space: emb.Space()}
	srv := MustServeCore(t, store, core.Options{Indexer: ix, Searcher: retrieve.New(store, emb, emb.Space(), retrieve.Options{})}, httpapi.Options{})
	u := srv.URL + "/v1/users/alice/threads/t"
	runJobs := func() int {
		t.Helper()
		jobs, err := store.ClaimJobs(context.Background(), "test", []string{index.JobKind}, 100, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range jobs {
			if err := ix.Run(context.Background(), j); err != nil {
				t.Fatal(err)
			}
			if err := store.CompleteJob(context.Background(), j.UserID, j.ID, "test"); err != nil {
				t.Fatal(err)
			}
		}
		return len(jobs)
	}
	search := func() searchResponse {
		t.Helper()
		resp, body := Do(t, "POST", srv.URL+"/v1/users/alice/search", nil, `{"query":"kayak","scopes":["chunks"]}`)
		if resp.StatusCode != 200 {
			t.Fatalf("search: %d %s", resp.StatusCode, body)
		}
		return decodeJSON[searchResponse](t, body)
	}

	if resp, body := Do(t, "POST", srv.URL+"/v1/users/alice/threads", nil, `{"id":"t"}`); resp.StatusCode != 201 {
		t.Fatalf("create thread: %d %s", resp.StatusCode, body)
	}
	if resp, body := Do(t, "POST", u+"/messages", nil, `{"messages":[{"role":"user","content":"I bought a kayak"},{"role":"assistant","content":"Where will you paddle?"},{"role":"user","content":"On the Tagus"}]}`); resp.StatusCode != 201 {
		t.Fatalf("append: %d %s", resp.StatusCode, body)
	}
	if runJobs() == 0 {
		t.Fatal("the append enqueued no index job")
	}
	if got := search(); len(got.Results) != 0 {
		t.Fatalf("three turns made a chunk before the thread ended: %+v", got.Results)
	}
	if resp, body := Do(t, "POST", u+"/end", nil, ""); resp.StatusCode != 200 {
		t.Fatalf("end: %d %s", resp.StatusCode, body)
	}
	if runJobs() == 0 {
		t.Fatal("ending the thread enqueued no index job")
	}
	got := search()
	if len(got.Results) != 1 {
		t.Fatalf("after the end: %+v", got.Results)
	}
	if r := got.Results[0]; r.Kind != "chunk" || r.ThreadID != "t" || r.SeqFrom != 1 || r.SeqTo != 3 || r.Scores["fulltext"] == 0 || r.Scores["vector"] == 0 {
		t.Fatalf("chunk result %+v", r)
	}
}
