package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/core"
	"github.com/agentmem/agentmem/httpapi"
	"github.com/agentmem/agentmem/index"
	"github.com/agentmem/agentmem/internal/testutil"
	"github.com/agentmem/agentmem/llm/lexical"
	"github.com/agentmem/agentmem/retrieve"
)

func decodeJSON[T any](t *testing.T, body []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	return v
}

type searchResponse struct {
	Results []retrieve.Result
	Signals []string
}

// TestHandler_Memories: memories written, found, edited (with history),
// answered from and deleted through the API; and learned from appended
// messages by the index job.
func TestHandler_Memories(t *testing.T) {
	store := testutil.MustOpenSQLite(t)
	emb := lexical.New(0)
	ix := &index.Indexer{Store: store, Jobs: store, Emb: emb, Space: emb.Space()}
	srv := MustServeCore(t, store, core.Options{Indexer: ix, Searcher: retrieve.New(store, emb, emb.Space(), retrieve.Options{})}, httpapi.Options{})
	u := srv.URL + "/v1/users/alice"

	resp, body := Do(t, "POST", u+"/memories", nil, `{"text":"User lives in Lisbon.","category":"place","importance":0.8}`)
	if resp.StatusCode != 201 {
		t.Fatalf("create: %d %s", resp.StatusCode, body)
	}
	m := decodeJSON[agentmem.Memory](t, body)
	if m.ID == "" || m.Version != 1 || m.Source != agentmem.SourceAPI || m.Confidence != 1 {
		t.Fatalf("created %+v", m)
	}
	resp, body = Do(t, "POST", u+"/search", nil, `{"query":"Where does the user live?"}`)
	sr := decodeJSON[searchResponse](t, body)
	if resp.StatusCode != 200 || len(sr.Results) == 0 || sr.Results[0].ID != m.ID || sr.Results[0].Kind != "memory" ||
		sr.Results[0].Scores["fulltext"] == 0 || sr.Results[0].Scores["vector"] == 0 || len(sr.Signals) != 2 {
		t.Fatalf("search: %d %s", resp.StatusCode, body)
	}
	resp, body = Do(t, "PATCH", u+"/memories/"+m.ID, nil, `{"text":"User lives in Porto.","reason":"moved"}`)
	if m = decodeJSON[agentmem.Memory](t, body); resp.StatusCode != 200 || m.Version != 2 || m.Text != "User lives in Porto." {
		t.Fatalf("update: %d %s", resp.StatusCode, body)
	}
	_, body = Do(t, "GET", u+"/memories/"+m.ID+"/history", nil, "")
	h := decodeJSON[struct{ Data []agentmem.MemoryChange }](t, body)
	if len(h.Data) != 2 || h.Data[0].Text != "User lives in Lisbon." || h.Data[1].Reason != "moved" {
		t.Fatalf("history: %s", body)
	}
	// Not yet built into a profile; then built in.
	for _, c := range []struct {
		query string
		n     int
	}{{"?processed=false", 1}, {"?processed=true", 0}} {
		_, body = Do(t, "GET", u+"/memories"+c.query, nil, "")
		if got := decodeJSON[struct{ Data []agentmem.Memory }](t, body); len(got.Data) != c.n {
			t.Fatalf("memories%s: %s", c.query, body)
		}
	}
	if resp, body := Do(t, "POST", u+"/profile/refresh", nil, ""); resp.StatusCode != 200 || !strings.Contains(string(body), "User lives in Porto.") {
		t.Fatalf("profile refresh: %d %s", resp.StatusCode, body)
	}
	_, body = Do(t, "GET", u+"/memories?processed=true", nil, "")
	if got := decodeJSON[struct{ Data []agentmem.Memory }](t, body); len(got.Data) != 1 || got.Data[0].ProcessedAt == nil {
		t.Fatalf("memories built into the profile: %s", body)
	}
	_, body = Do(t, "POST", u+"/facts", nil, `{"query":"Where does the user live?"}`)
	if f := decodeJSON[retrieve.FactsResponse](t, body); !strings.Contains(f.Answer, "[1] User lives in Porto.") || len(f.Facts) == 0 {
		t.Fatalf("facts without a model: %s", body)
	}

	for _, bad := range []struct {
		method, path, body string
		status             int
	}{
		{"POST", "/search", `{"query":"  "}`, 400},
		{"POST", "/search", `{"query":"x","top_k":1000}`, 400},
		{"POST", "/search", `{"query":"x","scopes":["everything"]}`, 400},
		{"POST", "/memories", `{"text":"x","confidence":2}`, 400},
		{"POST", "/memories", `{"text":""}`, 400},
		{"GET", "/memories/nope", "", 404},
		{"GET", "/memories?processed=maybe", "", 400},
		{"PATCH", "/memories/nope", `{"text":"x"}`, 404},
	} {
		if resp, body := Do(t, bad.method, u+bad.path, nil, bad.body); resp.StatusCode != bad.status {
			t.Errorf("%s %s %s: %d %s, want %d", bad.method, bad.path, bad.body, resp.StatusCode, body, bad.status)
		}
	}

	if resp, _ := Do(t, "DELETE", u+"/memories/"+m.ID, nil, ""); resp.StatusCode != 204 {
		t.Fatalf("delete: %d", resp.StatusCode)
	}
	if resp, _ := Do(t, "GET", u+"/memories/"+m.ID, nil, ""); resp.StatusCode != 404 {
		t.Fatalf("deleted memory: %d", resp.StatusCode)
	}
	_, body = Do(t, "POST", u+"/search", nil, `{"query":"Porto","scopes":["memories"]}`)
	if sr := decodeJSON[searchResponse](t, body); len(sr.Results) != 0 {
		t.Fatalf("search finds a deleted memory: %s", body)
	}

	// Appending runs an index job that learns what the user said.
	MustCreateThread(t, store, &agentmem.Thread{UserID: "alice", ID: "t"})
	if resp, body := Do(t, "POST", u+"/threads/t/messages", nil, `{"messages":[{"role":"user","content":"My name is Alice and I work as a nurse."}]}`); resp.StatusCode != 201 {
		t.Fatalf("append: %d %s", resp.StatusCode, body)
	}
	jobs, err := store.ClaimJobs(context.Background(), "test", []string{index.JobKind}, 10, time.Minute)
	if err != nil || len(jobs) != 1 {
		t.Fatalf("index jobs: %d, %v", len(jobs), err)
	}
	if err := ix.Run(context.Background(), jobs[0]); err != nil {
		t.Fatal(err)
	}
	_, body = Do(t, "GET", u+"/memories", nil, "")
	if !strings.Contains(string(body), "User's name is Alice.") || !strings.Contains(string(body), "User works as a nurse.") {
		t.Fatalf("memories after the index job: %s", body)
	}
	_, body = Do(t, "POST", u+"/search", nil, `{"query":"what is her job","scopes":["messages"]}`)
	if sr := decodeJSON[searchResponse](t, body); len(sr.Results) == 0 || sr.Results[0].ThreadID != "t" || sr.Results[0].SeqFrom != 1 {
		t.Fatalf("message search: %s", body)
	}
}

// TestHandler_InvalidateMemory: POST …/memories/{memory}/invalidate marks
// a memory as no longer holding (200 with it, recorded in its history,
// left out of lists unless include_invalid), with an optional body;
// again, it answers the memory as it is. 400 names a bad field, 404 an
// unknown memory or another user's.
func TestHandler_InvalidateMemory(t *testing.T) {
	testutil.Backends(t, func(t *testing.T, s agentmem.Store) {
		alice, _ := mustKey(t, s, "user:alice", time.Now(), 0)
		bob, _ := mustKey(t, s, "user:bob", time.Now(), 0)
		for _, id := range []string{"m1", "m2", "m3", "m4"} {
			if err := s.CreateMemory(context.Background(), &agentmem.Memory{UserID: "alice", ID: id, Text: "User lives in " + id + "."}); err != nil {
				t.Fatal(err)
			}
		}
		srv := MustServe(t, s, httpapi.Options{Auth: httpapi.Auth{Mode: httpapi.AuthAPIKey}})
		var first agentmem.Memory
		invalidated := func(supersededBy string, version int) func(*testing.T, *http.Response, []byte) {
			return func(t *testing.T, _ *http.Response, body []byte) {
				m := decodeJSON[agentmem.Memory](t, body)
				if m.InvalidAt == nil || m.SupersededBy != supersededBy || m.Version != version || m.UserID != "alice" {
					t.Fatalf("invalidated: %s, want invalid_at set, superseded_by %q, version %d", body, supersededBy, version)
				}
				if first.ID == "" {
					first = m
				} else if m.ID == first.ID && !m.InvalidAt.Equal(*first.InvalidAt) {
					t.Fatalf("invalidated again: invalid_at %v, want it unchanged (%v)", m.InvalidAt, first.InvalidAt)
				}
			}
		}
		u := "/v1/users/alice/memories/"
		runScenarios(t, srv.URL, []scenario{
			{name: "OK", method: "POST", url: u + "m1/invalidate", header: bearerHeader(alice), body: `{"superseded_by":"m2","reason":"moved"}`,
				wantStatus: 200, check: invalidated("m2", 2)},
			{name: "Again", method: "POST", url: u + "m1/invalidate", header: bearerHeader(alice), body: `{"superseded_by":"m3","reason":"again"}`,
				wantStatus: 200, check: invalidated("m2", 2)},
			{name: "History", method: "GET", url: u + "m1/history", header: bearerHeader(alice), wantStatus: 200,
				check: func(t *testing.T, _ *http.Response, body []byte) {
					h := decodeJSON[struct{ Data []agentmem.MemoryChange }](t, body).Data
					if len(h) != 2 || h[1].Op != agentmem.OpInvalidate || h[1].Reason != "moved" || h[1].Version != 2 {
						t.Fatalf("history: %s, want the addition and one invalidation", body)
					}
				}},
			{name: "LeftOutOfLists", method: "GET", url: "/v1/users/alice/memories", header: bearerHeader(alice), wantStatus: 200,
				check: func(t *testing.T, _ *http.Response, body []byte) {
					if strings.Contains(string(body), `"id":"m1"`) {
						t.Fatalf("list holds the invalidated memory: %s", body)
					}
				}},
			{name: "ListedWithInvalid", method: "GET", url: "/v1/users/alice/memories?include_invalid=true", header: bearerHeader(alice), wantStatus: 200,
				wantBody: `"id":"m1"`},
			{name: "NoBody", method: "POST", url: u + "m3/invalidate", header: bearerHeader(alice), wantStatus: 200, check: invalidated("", 2)},
			{name: "EmptyObject", method: "POST", url: u + "m4/invalidate", header: bearerHeader(alice), body: `{}`, wantStatus: 200,
				check: invalidated("", 2)},
			{name: "BadSupersededBy", method: "POST", url: u + "m2/invalidate", header: bearerHeader(alice), body: `{"superseded_by":"a b"}`,
				wantStatus: 400, wantBody: `superseded_by \"a b\" may not contain slashes, spaces or control characters.`},
			{name: "SupersedesItself", method: "POST", url: u + "m2/invalidate", header: bearerHeader(alice), body: `{"superseded_by":"m2"}`,
				wantStatus: 400, wantBody: `A memory cannot supersede itself.`},
			{name: "BadReason", method: "POST", url: u + "m2/invalidate", header: bearerHeader(alice), body: `{"reason":"a\u0000b"}`,
				wantStatus: 400, wantBody: `reason may not contain NUL characters.`},
			{name: "UnknownField", method: "POST", url: u + "m2/invalidate", header: bearerHeader(alice), body: `{"superseded":"m1"}`,
				wantStatus: 400, wantBody: `superseded`},
			{name: "WrongType", method: "POST", url: u + "m2/invalidate", header: bearerHeader(alice), body: `{"reason":1}`,
				wantStatus: 400, wantBody: `reason`},
			{name: "StillValid", method: "GET", url: u + "m2", header: bearerHeader(alice), wantStatus: 200,
				check: func(t *testing.T, _ *http.Response, body []byte) {
					if m := decodeJSON[agentmem.Memory](t, body); m.InvalidAt != nil || m.Version != 1 {
						t.Fatalf("refused invalidations changed m2: %s", body)
					}
				}},
			{name: "Unknown", method: "POST", url: u + "nope/invalidate", header: bearerHeader(alice), wantStatus: 404,
				wantBody: `Memory \"nope\" not found.`},
			{name: "OtherUser", method: "POST", url: u + "m2/invalidate", header: bearerHeader(bob), wantStatus: 404,
				wantBody: `User \"alice\" not found.`},
			{name: "OtherUsersMemory", method: "POST", url: "/v1/users/bob/memories/m2/invalidate", header: bearerHeader(bob), wantStatus: 404,
				wantBody: `Memory \"m2\" not found.`},
		})
	})
}

// TestHandler_MemorySources (issue 30, item 2): a memory's JSON holds
// every turn it came from ("sources"), in order: a statement said again
// adds its turn to the memory it repeats; a memory of no thread has
// none, and no "sources" key.
func TestHandler_MemorySources(t *testing.T) {
	store := testutil.MustOpenSQLite(t)
	emb := lexical.New(0)
	ix := &index.Indexer{Store: store, Jobs: store, Emb: emb, Space: emb.Space()}
	srv := MustServeCore(t, store, core.Options{Indexer: ix, Searcher: retrieve.New(store, emb, emb.Space(), retrieve.Options{})}, httpapi.Options{})
	u := srv.URL + "/v1/users/alice"
	MustCreateThread(t, store, &agentmem.Thread{UserID: "alice", ID: "t"})
	for i, text := range []string{"I live in Hull.", "Did I say? I live in Hull."} {
		if resp, body := Do(t, "POST", u+"/threads/t/messages", nil, `{"messages":[{"role":"user","content":"`+text+`"}]}`); resp.StatusCode != 201 {
			t.Fatalf("append: %d %s", resp.StatusCode, body)
		}
		if err := ix.IndexRange(context.Background(), "alice", "t", int64(i+1), int64(i+1)); err != nil {
			t.Fatal(err)
		}
	}
	_, body := Do(t, "GET", u+"/memories", nil, "")
	list := decodeJSON[struct{ Data []agentmem.Memory }](t, body)
	if len(list.Data) != 1 || list.Data[0].Text != "User lives in Hull." {
		t.Fatalf("memories: %s", body)
	}
	resp, body := Do(t, "GET", u+"/memories/"+list.Data[0].ID, nil, "")
	if want := `"sources":[{"thread_id":"t","seq_from":1,"seq_to":1},{"thread_id":"t","seq_from":2,"seq_to":2}]`; resp.StatusCode != 200 || !strings.Contains(string(body), want) {
		t.Fatalf("GET the memory: %d %s, want %s in it", resp.StatusCode, body, want)
	}
	resp, body = Do(t, "POST", u+"/memories", nil, `{"text":"User likes tea."}`)
	if resp.StatusCode != 201 || strings.Contains(string(body), `"sources"`) {
		t.Fatalf("a memory of no thread: %d %s", resp.StatusCode, body)
	}
}
