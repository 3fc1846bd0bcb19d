package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/httpapi"
	"github.com/agentmem/agentmem/internal/testutil"
)

// TestHandler_Notes edits the notes of alice's planner through the API, one
// scenario after the other: each depends on the versions before it.
func TestHandler_Notes(t *testing.T) {
	store := testutil.MustOpenSQLite(t)
	srv := MustServe(t, store, httpapi.Options{})
	const u = "/v1/users/alice/agents/planner/notes"
	big := strings.Repeat("x", agentmem.MaxNotesBytes)
	wantNotes := func(version int64, content string) func(*testing.T, *http.Response, []byte) {
		return func(t *testing.T, _ *http.Response, body []byte) {
			t.Helper()
			var n agentmem.Notes
			if err := json.Unmarshal(body, &n); err != nil {
				t.Fatal(err)
			}
			if n.Version != version || n.Content != content || n.UserID != "alice" || n.AgentID != "planner" || n.UpdatedAt.IsZero() != (version == 0) {
				t.Fatalf("notes=%+v, want version %d with content %q", n, version, content)
			}
		}
	}
	for _, sc := range []scenario{
		{name: "GetNone", method: "GET", url: u, wantStatus: 200, wantBody: `{"user_id":"alice","agent_id":"planner","content":"","version":0}`},
		{name: "HistoryNone", method: "GET", url: u + "/history", wantStatus: 200, wantBody: `{"data":[],"next_cursor":""}`},
		{name: "Put", method: "PUT", url: u, body: `{"content":"# Alice\n\n## Goals\n- Run\n","expected_version":0}`, wantStatus: 200,
			wantBody: `"operation":"overwrite"`, check: wantNotes(1, "# Alice\n\n## Goals\n- Run\n")},
		{name: "Get", method: "GET", url: u, wantStatus: 200, check: wantNotes(1, "# Alice\n\n## Goals\n- Run\n")},
		{name: "Append", method: "POST", url: u + "/ops", body: `{"operation":"append","content":"## Travel\nLisbon."}`, wantStatus: 200,
			check: wantNotes(2, "# Alice\n\n## Goals\n- Run\n\n## Travel\nLisbon.")},
		{name: "ReplaceSection", method: "POST", url: u + "/ops", body: `{"operation":"replace_section_by_header","section_header":"## Goals","content":"- Swim","expected_version":2}`,
			wantStatus: 200, check: wantNotes(3, "# Alice\n\n## Goals\n- Swim\n\n## Travel\nLisbon.")},
		{name: "Read", method: "POST", url: u + "/ops", body: `{"operation":"read"}`, wantStatus: 200, check: wantNotes(3, "# Alice\n\n## Goals\n- Swim\n\n## Travel\nLisbon.")},
		{name: "StaleVersion", method: "POST", url: u + "/ops", body: `{"operation":"prepend","content":"x","expected_version":1}`, wantStatus: 409,
			wantBody: `The notes are at version 3, not the expected version 1`},
		{name: "StalePut", method: "PUT", url: u, body: `{"content":"","expected_version":0}`, wantStatus: 409, wantBody: `"code":"conflict"`},
		{name: "MissingSection", method: "POST", url: u + "/ops", body: `{"operation":"delete_section_by_header","section_header":"Hobbies"}`, wantStatus: 422,
			wantBody: `The notes have no section \"Hobbies\"; their headers are \"# Alice\", \"## Goals\", \"## Travel\".`},
		{name: "ReadByDefault", method: "POST", url: u + "/ops", body: `{}`, wantStatus: 200, check: wantNotes(3, "# Alice\n\n## Goals\n- Swim\n\n## Travel\nLisbon.")},
		{name: "UnknownOperation", method: "POST", url: u + "/ops", body: `{"operation":"rewrite"}`, wantStatus: 400, wantBody: "operation must be one of read, overwrite"},
		{name: "UnknownField", method: "POST", url: u + "/ops", body: `{"operation":"append","text":"x"}`, wantStatus: 400, wantBody: `unknown field \"text\"`},
		{name: "NoHeader", method: "POST", url: u + "/ops", body: `{"operation":"delete_section_by_header"}`, wantStatus: 400, wantBody: "section_header is required"},
		{name: "PutNoContent", method: "PUT", url: u, body: `{"expected_version":3}`, wantStatus: 400, wantBody: "content is required"},
		{name: "PutTooLarge", method: "PUT", url: u, body: `{"content":"` + big + `y"}`, wantStatus: 413, wantBody: `"code":"too_large"`},
		{name: "AppendTooLarge", method: "POST", url: u + "/ops", body: `{"operation":"append","content":"` + big[:agentmem.MaxNotesBytes-20] + `"}`, wantStatus: 413,
			wantBody: "the limit is 65536 bytes"},
		{name: "BadAgent", method: "GET", url: "/v1/users/alice/agents/a%20b/notes", wantStatus: 400, wantBody: "agent_id"},
		{name: "DeleteSection", method: "POST", url: u + "/ops", body: `{"operation":"delete_section_by_header","section_header":"Travel","expected_version":3}`,
			wantStatus: 200, check: wantNotes(4, "# Alice\n\n## Goals\n- Swim\n")},
		{name: "DeleteAll", method: "POST", url: u + "/ops", body: `{"operation":"delete_all_notes"}`, wantStatus: 200, check: wantNotes(5, "")},
		{name: "HistoryPage", method: "GET", url: u + "/history?limit=2", wantStatus: 200, check: func(t *testing.T, _ *http.Response, body []byte) {
			page := decodeJSON[struct {
				Data       []agentmem.Notes `json:"data"`
				NextCursor string           `json:"next_cursor"`
			}](t, body)
			if len(page.Data) != 2 || page.Data[0].Version != 5 || page.Data[1].Version != 4 || page.NextCursor == "" {
				t.Fatalf("first page: %s", body)
			}
			var versions []int64
			for cursor := page.NextCursor; cursor != ""; {
				resp, body := Do(t, "GET", srv.URL+u+"/history?limit=2&cursor="+cursor, nil, "")
				next := decodeJSON[struct {
					Data       []agentmem.Notes `json:"data"`
					NextCursor string           `json:"next_cursor"`
				}](t, body)
				if resp.StatusCode != 200 {
					t.Fatalf("next page: %d %s", resp.StatusCode, body)
				}
				for _, n := range next.Data {
					versions = append(versions, n.Version)
				}
				cursor = next.NextCursor
			}
			if fmt.Sprint(versions) != "[3 2 1]" {
				t.Fatalf("later pages list versions %v, want [3 2 1]", versions)
			}
		}},
		{name: "HistoryBadCursor", method: "GET", url: u + "/history?cursor=nope", wantStatus: 400, wantBody: "cursor"},
		{name: "HistoryBadLimit", method: "GET", url: u + "/history?limit=-1", wantStatus: 400, wantBody: "limit"},
		{name: "OtherAgent", method: "GET", url: "/v1/users/alice/agents/coach/notes", wantStatus: 200, wantBody: `"version":0`},
		{name: "ErasedWithTheUser", method: "DELETE", url: "/v1/users/alice", wantStatus: 200},
		{name: "GoneWithTheUser", method: "GET", url: u + "/history", wantStatus: 200, wantBody: `{"data":[],"next_cursor":""}`},
	} {
		t.Run(sc.name, func(t *testing.T) {
			resp, body := Do(t, sc.method, srv.URL+sc.url, sc.header, sc.body)
			if resp.StatusCode != sc.wantStatus {
				t.Fatalf("status=%d, want %d; body: %.500s", resp.StatusCode, sc.wantStatus, body)
			}
			if !strings.Contains(string(body), sc.wantBody) {
				t.Fatalf("body=%.1000s, want %q in it", body, sc.wantBody)
			}
			if sc.check != nil {
				sc.check(t, resp, body)
			}
		})
	}
}

// TestHandler_NotesConcurrentEdits: two edits of one version sent at once
// get one 200 and one 409, round after round, on both backends.
func TestHandler_NotesConcurrentEdits(t *testing.T) {
	t.Run("SQLite", func(t *testing.T) { testNotesConcurrentEdits(t, testutil.MustOpenSQLite(t)) })
	t.Run("PostgreSQL", func(t *testing.T) {
		testutil.PostgresDSN(t)
		testNotesConcurrentEdits(t, testutil.MustOpenPostgres(t))
	})
}

func testNotesConcurrentEdits(t *testing.T, store agentmem.Store) {
	srv := MustServe(t, store, httpapi.Options{})
	u := srv.URL + "/v1/users/alice/agents/planner/notes"
	const rounds = 10
	for version := range rounds {
		statuses := make([]int, 2)
		var start, wg sync.WaitGroup
		start.Add(1)
		for i := range statuses {
			wg.Go(func() {
				// One appends, the other overwrites: both expect the same version.
				method, url, body := "POST", u+"/ops", fmt.Sprintf(`{"operation":"append","content":"round %d","expected_version":%d}`, version, version)
				if i == 1 {
					method, url, body = "PUT", u, fmt.Sprintf(`{"content":"round %d","expected_version":%d}`, version, version)
				}
				start.Wait()
				resp, _ := Do(t, method, url, nil, body)
				statuses[i] = resp.StatusCode
			})
		}
		start.Done()
		wg.Wait()
		if ok, conflict := countStatus(statuses, 200), countStatus(statuses, 409); ok != 1 || conflict != 1 {
			t.Fatalf("round %d: statuses %v, want one 200 and one 409", version, statuses)
		}
	}
	n, err := store.FindNotes(t.Context(), "alice", "planner")
	if err != nil || n.Version != rounds {
		t.Fatalf("notes after %d rounds = %+v, %v; want version %d", rounds, n, err, rounds)
	}
}

func countStatus(xs []int, x int) int {
	n := 0
	for _, v := range xs {
		if v == x {
			n++
		}
	}
	return n
}
