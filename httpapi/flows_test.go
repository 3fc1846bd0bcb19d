package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentmem/agentmem/core"
	"github.com/agentmem/agentmem/internal/testutil"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/httpapi"
	"github.com/agentmem/agentmem/metrics"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/prometheus/client_golang/prometheus"
)

// MustDecode decodes body into a new T.
func MustDecode[T any](tb testing.TB, body []byte) T {
	tb.Helper()
	var v T
	if err := json.Unmarshal(body, &v); err != nil {
		tb.Fatalf("decode %.500s: %v", body, err)
	}
	return v
}

type list[T any] struct {
	Data       []T    `json:"data"`
	NextCursor string `json:"next_cursor"`
}

func TestHandler_BodyLimit(t *testing.T) {
	store := testutil.MustOpenSQLite(t)
	MustCreateThread(t, store, &agentmem.Thread{UserID: "u", ID: "t"})
	srv := MustServe(t, store, httpapi.Options{MaxBodyBytes: 1024})

	t.Run("TooLarge", func(t *testing.T) {
		body := `{"messages":[{"role":"user","content":"` + strings.Repeat("x", 2000) + `"}]}`
		resp, got := Do(t, "POST", srv.URL+"/v1/users/u/threads/t/messages", nil, body)
		if resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Fatalf("status=%d, want 413; body: %s", resp.StatusCode, got)
		}
		if want := `{"error":{"code":"too_large","message":"The request body is larger than the limit of 1024 bytes."}}`; !strings.Contains(string(got), want) {
			t.Fatalf("body=%s, want %s", got, want)
		}
	})
	t.Run("OK", func(t *testing.T) {
		body := `{"messages":[{"role":"user","content":"` + strings.Repeat("x", 900) + `"}]}`
		if resp, got := Do(t, "POST", srv.URL+"/v1/users/u/threads/t/messages", nil, body); resp.StatusCode != http.StatusCreated {
			t.Fatalf("status=%d, want 201; body: %s", resp.StatusCode, got)
		}
	})
}

// panicStore panics in Stats.
type panicStore struct{ agentmem.Store }

func (panicStore) Stats(context.Context) (*agentmem.Stats, error) { panic("boom") }

func TestHandler_RecoverPanic(t *testing.T) {
	reg := prometheus.NewRegistry()
	srv := MustServeMetered(t, panicStore{testutil.MustOpenSQLite(t)}, core.Options{}, httpapi.Options{}, reg)
	resp, body := Do(t, "GET", srv.URL+"/v1/stats", nil, "")
	if resp.StatusCode != http.StatusInternalServerError {
		t.Fatalf("status=%d, want 500", resp.StatusCode)
	}
	if want := `{"error":{"code":"internal","message":"Internal error."}}`; !strings.Contains(string(body), want) {
		t.Fatalf("body=%s, want %s", body, want)
	}
	// The server lives on, and the panic was counted under its route.
	if resp, _ := Do(t, "GET", srv.URL+"/healthz", nil, ""); resp.StatusCode != http.StatusOK {
		t.Fatalf("healthz status=%d, want 200", resp.StatusCode)
	}
	_, metrics := Do(t, "GET", srv.URL+"/metrics", nil, "")
	if want := `agentmem_http_requests_total{code="500",method="GET",route="/v1/stats"} 1`; !strings.Contains(string(metrics), want) {
		t.Fatalf("metrics lack %s:\n%s", want, metrics)
	}
}

func TestHandler_Idempotency(t *testing.T) {
	store := testutil.MustOpenSQLite(t)
	MustCreateThread(t, store, &agentmem.Thread{UserID: "u", ID: "t"})
	srv := MustServe(t, store, httpapi.Options{})
	url := srv.URL + "/v1/users/u/threads/t/messages"
	key := http.Header{"Idempotency-Key": {"k1"}}
	batch := `{"messages":[{"role":"user","content":"one"},{"role":"assistant","content":"two"}]}`

	resp1, body1 := Do(t, "POST", url, key, batch)
	resp2, body2 := Do(t, "POST", url, key, batch)
	if resp1.StatusCode != http.StatusCreated || resp2.StatusCode != http.StatusCreated {
		t.Fatalf("status=%d then %d, want 201 both; bodies: %s %s", resp1.StatusCode, resp2.StatusCode, body1, body2)
	}
	type appended struct{ Messages []*agentmem.Message }
	first, second := MustDecode[appended](t, body1), MustDecode[appended](t, body2)
	if diff := cmp.Diff(first, second); diff != "" {
		t.Fatalf("retry mismatch (-want +got):\n%s", diff)
	}
	if first.Messages[0].Seq != 1 || first.Messages[1].Seq != 2 {
		t.Fatalf("seqs=%d,%d, want 1,2", first.Messages[0].Seq, first.Messages[1].Seq)
	}
	_, body := Do(t, "GET", url, nil, "")
	if got := MustDecode[list[*agentmem.Message]](t, body); len(got.Data) != 2 {
		t.Fatalf("stored %d messages, want 2 (one copy)", len(got.Data))
	}

	t.Run("SameKeyOtherBody", func(t *testing.T) {
		resp, body := Do(t, "POST", url, key, `{"messages":[{"role":"user","content":"different"}]}`)
		if resp.StatusCode != http.StatusConflict {
			t.Fatalf("status=%d, want 409; body: %s", resp.StatusCode, body)
		}
		if !strings.Contains(string(body), `"code":"conflict"`) || !strings.Contains(string(body), "Idempotency-Key") {
			t.Fatalf("body=%s, want a conflict naming Idempotency-Key", body)
		}
	})
	t.Run("ClientIDs", func(t *testing.T) {
		batch := `{"messages":[{"id":"c1","role":"user","content":"three"}]}`
		_, body1 := Do(t, "POST", url, nil, batch)
		resp, body2 := Do(t, "POST", url, nil, batch)
		if resp.StatusCode != http.StatusCreated || string(body1) != string(body2) {
			t.Fatalf("retry: status=%d body=%s, want 201 and %s", resp.StatusCode, body2, body1)
		}
	})
}

func TestHandler_ListThreadsPagination(t *testing.T) {
	store := testutil.MustOpenSQLite(t)
	var clock atomic.Int64 // one second per call, so that updated_at orders threads
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	store.Now = func() time.Time { return base.Add(time.Duration(clock.Add(1)) * time.Second) }
	want := map[string]bool{}
	for i := range 23 {
		agent := ""
		if i%3 == 0 {
			agent = "a"
		}
		id := fmt.Sprintf("t%02d", i)
		MustCreateThread(t, store, &agentmem.Thread{UserID: "u", ID: id, AgentID: agent})
		want[id] = true
	}
	// Touching an old thread moves it to the front.
	if _, err := store.AppendMessages(context.Background(), "u", "t05", []*agentmem.Message{{Role: "user", Content: "x"}}, agentmem.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	MustCreateThread(t, store, &agentmem.Thread{UserID: "other", ID: "t99"})
	srv := MustServe(t, store, httpapi.Options{})

	walk := func(t *testing.T, query string) []*agentmem.Thread {
		var all []*agentmem.Thread
		for cursor, pages := "", 0; ; pages++ {
			if pages > 30 {
				t.Fatalf("more than 30 pages")
			}
			resp, body := Do(t, "GET", srv.URL+"/v1/users/u/threads?limit=5"+query+"&cursor="+cursor, nil, "")
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status=%d, want 200; body: %s", resp.StatusCode, body)
			}
			page := MustDecode[list[*agentmem.Thread]](t, body)
			if len(page.Data) > 5 {
				t.Fatalf("page of %d, want at most 5", len(page.Data))
			}
			all = append(all, page.Data...)
			if cursor = page.NextCursor; cursor == "" {
				return all
			}
		}
	}

	t.Run("All", func(t *testing.T) {
		all := walk(t, "")
		seen := map[string]bool{}
		for i, th := range all {
			if seen[th.ID] || !want[th.ID] || th.UserID != "u" {
				t.Fatalf("thread %s (user %s) seen twice or not expected", th.ID, th.UserID)
			}
			seen[th.ID] = true
			if i > 0 && !all[i-1].UpdatedAt.After(th.UpdatedAt) {
				t.Fatalf("thread %d updated %v, not before %v: want newest updated first", i, th.UpdatedAt, all[i-1].UpdatedAt)
			}
		}
		if len(seen) != len(want) {
			t.Fatalf("visited %d threads, want %d", len(seen), len(want))
		}
		if all[0].ID != "t05" {
			t.Fatalf("first=%s, want t05 (the last updated)", all[0].ID)
		}
	})
	t.Run("Agent", func(t *testing.T) {
		all := walk(t, "&agent_id=a")
		if len(all) != 8 {
			t.Fatalf("got %d threads of agent a, want 8", len(all))
		}
		for _, th := range all {
			if th.AgentID != "a" {
				t.Fatalf("thread %s has agent %q, want a", th.ID, th.AgentID)
			}
		}
	})
	t.Run("NoAgent", func(t *testing.T) {
		if all := walk(t, "&agent_id="); len(all) != 15 {
			t.Fatalf("got %d threads without agent, want 15", len(all))
		}
	})
}

func TestHandler_ExportImport(t *testing.T) {
	store := testutil.MustOpenSQLite(t)
	MustCreateThread(t, store, &agentmem.Thread{UserID: "alice", ID: "trip", AgentID: "planner", Title: "Trip", Metadata: json.RawMessage(`{"src":"test"}`), Tags: []string{"travel"}},
		&agentmem.Message{ID: "m1", Role: agentmem.RoleSystem, Content: "You plan trips."},
		&agentmem.Message{ID: "m2", Role: agentmem.RoleUser, Content: "Lisbon in May? 🇵🇹", Metadata: json.RawMessage(`{"lang":"en"}`)},
		&agentmem.Message{ID: "m3", Role: agentmem.RoleAssistant, Name: "planner", ToolCalls: []agentmem.ToolCall{
			{ID: "call1", Type: "function", Function: agentmem.FunctionCall{Name: "weather", Arguments: `{"city":"Lisbon","month":5}`}},
			{ID: "call2", Function: agentmem.FunctionCall{Name: "flights", Arguments: `{}`}},
		}},
		&agentmem.Message{ID: "m4", Role: agentmem.RoleTool, ToolCallID: "call1", Content: "22°C"},
		&agentmem.Message{ID: "m5", Role: agentmem.RoleTool, ToolCallID: "call2", Content: "3 flights"},
		&agentmem.Message{ID: "m6", Role: agentmem.RoleAssistant, Content: "Warm, and there are flights."},
	)
	ctx := context.Background()
	for _, e := range []*agentmem.Element{
		{ID: "e1", Type: "citation", Name: "forecast", URL: "https://example.com/w", MessageID: "m4", Metadata: json.RawMessage(`{"p":1}`)},
		{ID: "e2", Type: "file", Name: "itinerary.pdf", MimeType: "application/pdf", Display: "side", Content: "…"},
	} {
		if err := store.CreateElement(ctx, "alice", "trip", e); err != nil {
			t.Fatal(err)
		}
	}
	srv := MustServe(t, store, httpapi.Options{})

	resp, exported := Do(t, "GET", srv.URL+"/v1/users/alice/threads/trip/export?format=json", nil, "")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("export status=%d, want 200; body: %s", resp.StatusCode, exported)
	}
	resp, body := Do(t, "POST", srv.URL+"/v1/users/bob/threads/import", nil, string(exported))
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("import status=%d, want 201; body: %s", resp.StatusCode, body)
	}
	if th := MustDecode[agentmem.Thread](t, body); th.UserID != "bob" || th.ID != "trip" || th.MessageCount != 6 {
		t.Fatalf("imported thread=%s, want bob's trip with 6 messages", body)
	}
	_, reexported := Do(t, "GET", srv.URL+"/v1/users/bob/threads/trip/export", nil, "")

	want, got := MustDecode[agentmem.ThreadExport](t, exported), MustDecode[agentmem.ThreadExport](t, reexported)
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(agentmem.Thread{}, "UserID")); diff != "" {
		t.Fatalf("round trip mismatch (-want +got):\n%s", diff)
	}
	if want.Thread.UserID != "alice" || got.Thread.UserID != "bob" {
		t.Fatalf("user_id=%q then %q, want alice then bob", want.Thread.UserID, got.Thread.UserID)
	}

	t.Run("Markdown", func(t *testing.T) {
		_, md := Do(t, "GET", srv.URL+"/v1/users/bob/threads/trip/export?format=markdown", nil, "")
		for _, s := range []string{"# Trip\n", "**Agent**: planner", "## ⚙️ System\n\nYou plan trips.", "## 👤 User\n\nLisbon in May? 🇵🇹\n\n---\n", "## 🤖 Assistant (planner)", "Tool call `flights`: `{}`"} {
			if !strings.Contains(string(md), s) {
				t.Fatalf("markdown=%s\nwant %q in it", md, s)
			}
		}
	})
}

func TestHandler_ExportUser(t *testing.T) {
	store := testutil.MustOpenSQLite(t)
	for i := range 3 {
		MustCreateThread(t, store, &agentmem.Thread{UserID: "u", ID: fmt.Sprintf("t%d", i)},
			&agentmem.Message{Role: "user", Content: fmt.Sprintf("hello %d", i)})
	}
	srv := MustServe(t, store, httpapi.Options{})

	resp, body := Do(t, "GET", srv.URL+"/v1/users/u/export", nil, "")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status=%d, want 200; body: %s", resp.StatusCode, body)
	}
	x := MustDecode[agentmem.UserExport](t, body)
	if len(x.Threads) != 3 {
		t.Fatalf("threads=%d, want 3", len(x.Threads))
	}
	for _, th := range x.Threads {
		if want, err := agentmem.ExportThread(context.Background(), store, "u", th.Thread.ID); err != nil {
			t.Fatal(err)
		} else if diff := cmp.Diff(want, th); diff != "" {
			t.Fatalf("thread %s mismatch (-want +got):\n%s", th.Thread.ID, diff)
		}
	}

	t.Run("EverythingElse", func(t *testing.T) {
		// Besides threads: the sessions and notes of the threads' agents,
		// every memory (invalidated too), profile version and entity.
		ctx := context.Background()
		MustCreateThread(t, store, &agentmem.Thread{UserID: "v", ID: "coached", AgentID: "coach"}, &agentmem.Message{Role: "user", Content: "hi"})
		if _, err := store.SetSession(ctx, "v", "coach", "coached"); err != nil {
			t.Fatal(err)
		}
		if _, err := store.PutNotes(ctx, "v", "coach", agentmem.NotesOp{Operation: agentmem.NotesOverwrite, Content: "# Goals"}); err != nil {
			t.Fatal(err)
		}
		for _, text := range []string{"User lives in Lisbon.", "User lives in Porto."} {
			if err := store.CreateMemory(ctx, &agentmem.Memory{UserID: "v", Text: text}); err != nil {
				t.Fatal(err)
			}
		}
		ms, _, err := store.FindMemories(ctx, "v", agentmem.MemoryFilter{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := store.InvalidateMemory(ctx, "v", ms[1].ID, ms[0].ID, "moved"); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if err := store.PutProfile(ctx, &agentmem.Profile{UserID: "v", Text: "Lives in Porto.", Method: agentmem.ProfileAssembled}, -1, nil); err != nil {
				t.Fatal(err)
			}
		}
		if err := store.PutEntities(ctx, "v", []*agentmem.Entity{{Name: "Porto", Type: "place"}}); err != nil {
			t.Fatal(err)
		}
		_, body := Do(t, "GET", srv.URL+"/v1/users/v/export", nil, "")
		x := MustDecode[agentmem.UserExport](t, body)
		if len(x.Sessions) != 1 || x.Sessions[0].ThreadID != "coached" || len(x.Notes) != 1 || x.Notes[0].Content != "# Goals" ||
			len(x.Memories) != 2 || len(x.Profiles) != 2 || x.Profiles[0].Version != 2 || len(x.Entities) != 1 || x.Entities[0].Name != "Porto" {
			t.Fatalf("export beyond threads: %s", body)
		}
	})

	t.Run("SoftDeletedThread", func(t *testing.T) {
		// agentmem.ExportUser promises soft-deleted threads too, with
		// their messages.
		if err := store.DeleteThread(context.Background(), "u", "t1", false); err != nil {
			t.Fatal(err)
		}
		export := func(query string) agentmem.UserExport {
			t.Helper()
			resp, err := http.Get(srv.URL + "/v1/users/u/export" + query)
			if err != nil {
				t.Fatalf("user export with a soft-deleted thread: %v", err)
			}
			defer resp.Body.Close()
			var x agentmem.UserExport
			if err := json.NewDecoder(resp.Body).Decode(&x); err != nil || resp.StatusCode != 200 {
				t.Fatalf("user export with a soft-deleted thread: status %d, %v", resp.StatusCode, err)
			}
			return x
		}
		if x := export(""); len(x.Threads) != 2 {
			t.Fatalf("export has %d threads, want 2 (the soft-deleted one left out)", len(x.Threads))
		}
		x := export("?include_deleted=true")
		if len(x.Threads) != 3 {
			t.Fatalf("export?include_deleted=true has %d threads, want 3 (the soft-deleted one too)", len(x.Threads))
		}
		for _, th := range x.Threads {
			if th.Thread.ID == "t1" && (th.Thread.DeletedAt == nil || len(th.Messages) == 0) {
				t.Fatalf("the soft-deleted thread is exported without its deletion time or messages: %+v", th)
			}
		}
	})
}

func TestHandler_DeleteUser(t *testing.T) {
	store := testutil.MustOpenSQLite(t)
	ctx := context.Background()
	for _, u := range []string{"a", "b"} {
		for i := range 2 {
			MustCreateThread(t, store, &agentmem.Thread{UserID: u, ID: fmt.Sprintf("t%d", i), AgentID: "ag"},
				&agentmem.Message{ID: "m" + fmt.Sprint(i), Role: "user", Content: u + " says hi"},
				&agentmem.Message{Role: "assistant", Content: "hi " + u})
		}
		if err := store.CreateElement(ctx, u, "t0", &agentmem.Element{Name: "el"}); err != nil {
			t.Fatal(err)
		}
		if _, err := store.SetSession(ctx, u, "ag", "t1"); err != nil {
			t.Fatal(err)
		}
	}
	srv := MustServe(t, store, httpapi.Options{})
	_, before := Do(t, "GET", srv.URL+"/v1/users/b/export", nil, "")

	resp, body := Do(t, "DELETE", srv.URL+"/v1/users/a", nil, "")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status=%d, want 200; body: %s", resp.StatusCode, body)
	}
	type deleted struct{ Deleted agentmem.Counts }
	if diff := cmp.Diff(deleted{agentmem.Counts{Users: 1, Threads: 2, Messages: 4, Elements: 1, Sessions: 1}}, MustDecode[deleted](t, body)); diff != "" {
		t.Fatalf("counts mismatch (-want +got):\n%s", diff)
	}
	if _, body := Do(t, "GET", srv.URL+"/v1/users/a/threads", nil, ""); string(body) != `{"data":[],"next_cursor":""}`+"\n" {
		t.Fatalf("a's threads=%s, want none", body)
	}
	if resp, _ := Do(t, "GET", srv.URL+"/v1/users/a/agents/ag/session", nil, ""); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("a's session status=%d, want 404", resp.StatusCode)
	}

	_, after := Do(t, "GET", srv.URL+"/v1/users/b/export", nil, "")
	b1, b2 := MustDecode[agentmem.UserExport](t, before), MustDecode[agentmem.UserExport](t, after)
	if diff := cmp.Diff(b1, b2, cmpopts.IgnoreFields(agentmem.UserExport{}, "ExportedAt")); diff != "" {
		t.Fatalf("b's data changed (-want +got):\n%s", diff)
	}
	if len(b2.Threads) != 2 || len(b2.Threads[0].Messages) != 2 || len(b2.Threads[1].Elements)+len(b2.Threads[0].Elements) != 1 {
		t.Fatalf("b's export=%s, want 2 threads of 2 messages and 1 element", after)
	}
	if resp, _ := Do(t, "GET", srv.URL+"/v1/users/b/agents/ag/session", nil, ""); resp.StatusCode != http.StatusOK {
		t.Fatalf("b's session status=%d, want 200", resp.StatusCode)
	}
}

func TestHandler_Metrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	store := metrics.Store(testutil.MustOpenSQLite(t), reg, nil)
	srv := MustServeMetered(t, store, core.Options{}, httpapi.Options{}, reg)
	Do(t, "POST", srv.URL+"/v1/users/u/threads", nil, `{"id":"t"}`)
	Do(t, "GET", srv.URL+"/v1/users/u/threads", nil, "")
	Do(t, "GET", srv.URL+"/v1/users/u/threads/missing", nil, "")
	Do(t, "GET", srv.URL+"/nowhere", nil, "")
	Do(t, "BREW", srv.URL+"/v1/users/u/threads", nil, "")
	// Background work waiting (no worker runs here): two index jobs.
	store.EnqueueJob(context.Background(), &agentmem.Job{UserID: "u", Kind: "index", Key: "1"})
	store.EnqueueJob(context.Background(), &agentmem.Job{UserID: "v", Kind: "index", Key: "2"})

	resp, body := Do(t, "GET", srv.URL+"/metrics", nil, "")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status=%d, want 200", resp.StatusCode)
	}
	for _, want := range []string{
		`agentmem_http_requests_total{code="201",method="POST",route="/v1/users/{user}/threads"} 1`,
		`agentmem_http_requests_total{code="200",method="GET",route="/v1/users/{user}/threads"} 1`,
		`agentmem_http_requests_total{code="404",method="GET",route="/v1/users/{user}/threads/{thread}"} 1`,
		`agentmem_http_requests_total{code="404",method="GET",route="unmatched"} 1`,
		`agentmem_http_requests_total{code="405",method="other",route="unmatched"} 1`,
		`agentmem_http_request_duration_seconds_count{method="GET",route="/v1/users/{user}/threads"} 1`,
		`agentmem_store_operation_duration_seconds_count{op="create_thread"} 1`,
		`agentmem_store_operation_duration_seconds_count{op="find_threads"} 1`,
		`agentmem_store_operation_errors_total{code="not_found",op="find_thread_by_id"} 1`,
		`agentmem_jobs_backlog{kind="index"} 2`,
		`agentmem_jobs_backlog_oldest_seconds{kind="index"} `,
		"agentmem_index_shedding 0",
		`agentmem_extraction_fallbacks_total{reason="malformed"} 0`,
		`agentmem_extraction_fallbacks_total{reason="model_failed"} 0`,
		`agentmem_index_stage_seconds_total{stage="windows"} 0`,
		"agentmem_index_messages_total 0",
	} {
		if !strings.Contains(string(body), want) {
			t.Fatalf("metrics lack %s:\n%s", want, body)
		}
	}

	t.Run("SharedRegistry", func(t *testing.T) {
		// A second handler and store wrapper on the same registry share
		// the collectors rather than panicking.
		MustServeMetered(t, metrics.Store(testutil.MustOpenSQLite(t), reg, nil), core.Options{}, httpapi.Options{}, reg)
	})
	t.Run("NoRegistry", func(t *testing.T) {
		srv := MustServe(t, testutil.MustOpenSQLite(t), httpapi.Options{})
		if resp, _ := Do(t, "GET", srv.URL+"/metrics", nil, ""); resp.StatusCode != http.StatusNotFound {
			t.Fatalf("status=%d, want 404 without a registry", resp.StatusCode)
		}
	})
}
