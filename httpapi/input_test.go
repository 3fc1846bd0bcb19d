package httpapi_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/httpapi"
	"github.com/agentmem/agentmem/internal/testutil"
)

var jsonBody = http.Header{"Content-Type": {"application/json"}}

// runScenarios sends each scenario to srv and checks its answer.
func runScenarios(t *testing.T, srv string, scenarios []scenario) {
	t.Helper()
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			header := sc.header
			if header == nil && sc.body != "" {
				header = jsonBody
			}
			resp, body := Do(t, sc.method, srv+sc.url, header, sc.body)
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

// TestHandler_QueryParameters: a route answers 400 for a query parameter
// it does not take, naming it and the ones it takes, rather than
// ignoring it; so it does for a parameter given twice, a malformed query
// and a malformed value.
func TestHandler_QueryParameters(t *testing.T) {
	store := testutil.MustOpenSQLite(t)
	seed(t, store)
	srv := MustServe(t, store, httpapi.Options{})

	runScenarios(t, srv.URL, []scenario{
		{name: "ThreadsUnknown", method: "GET", url: "/v1/users/alice/threads?tags=a", wantStatus: 400,
			wantBody: `Unknown query parameter \"tags\"; this route accepts: agent_id, status, deleted, tag, q, since, until, limit, cursor.`},
		{name: "MemoriesUnknown", method: "GET", url: "/v1/users/alice/memories?include_invalidated=true", wantStatus: 400,
			wantBody: `Unknown query parameter \"include_invalidated\"; this route accepts: kind, category, agent_id, thread_id, include_invalid, processed, limit, cursor.`},
		{name: "MessagesUnknown", method: "GET", url: "/v1/users/alice/threads/t1/messages?after=1", wantStatus: 400, wantBody: `Unknown query parameter \"after\"`},
		{name: "ElementsUnknown", method: "GET", url: "/v1/users/alice/threads/t1/elements?x=1", wantStatus: 400, wantBody: `Unknown query parameter \"x\"`},
		{name: "EntitiesUnknown", method: "GET", url: "/v1/users/alice/entities?name=x", wantStatus: 400, wantBody: `Unknown query parameter \"name\"`},
		{name: "EntityRefsUnknown", method: "GET", url: "/v1/users/alice/threads/t1/entities?type=x", wantStatus: 400, wantBody: `Unknown query parameter \"type\"`},
		{name: "ProfilesUnknown", method: "GET", url: "/v1/users/alice/profile/versions?order=asc", wantStatus: 400, wantBody: `Unknown query parameter \"order\"`},
		{name: "NotesHistoryUnknown", method: "GET", url: "/v1/users/alice/agents/a1/notes/history?version=2", wantStatus: 400, wantBody: `Unknown query parameter \"version\"`},
		{name: "SessionUnknown", method: "GET", url: "/v1/users/alice/agents/a1/session?new=true", wantStatus: 400, wantBody: `this route accepts: create.`},
		{name: "ExportUnknown", method: "GET", url: "/v1/users/alice/threads/t1/export?fmt=markdown", wantStatus: 400, wantBody: `this route accepts: format.`},
		{name: "UserExportUnknown", method: "GET", url: "/v1/users/alice/export?deleted=true", wantStatus: 400, wantBody: `this route accepts: format, include_deleted.`},
		{name: "DeleteThreadUnknown", method: "DELETE", url: "/v1/users/alice/threads/t2?hard=true", wantStatus: 400, wantBody: `this route accepts: permanent.`},
		{name: "JobsUnknown", method: "GET", url: "/v1/jobs?state=dead", wantStatus: 400, wantBody: `Unknown query parameter \"state\"`},
		{name: "AuditUnknown", method: "GET", url: "/v1/audit?until=2024-01-01T00:00:00Z", wantStatus: 400, wantBody: `Unknown query parameter \"until\"`},
		{name: "KeysUnknown", method: "GET", url: "/v1/keys?revoked=true", wantStatus: 400, wantBody: `Unknown query parameter \"revoked\"`},
		{name: "NoParametersTaken", method: "GET", url: "/v1/users/alice/threads/t1?include_deleted=true", wantStatus: 400,
			wantBody: `Unknown query parameter \"include_deleted\"; this route takes no query parameters.`},
		{name: "NoParametersTakenPOST", method: "POST", url: "/v1/users/alice/threads/t2/end?force=1", wantStatus: 400, wantBody: `Unknown query parameter \"force\"`},
		{name: "NoParametersTakenDidNotEnd", method: "GET", url: "/v1/users/alice/threads/t2", wantStatus: 200, wantBody: `"status":"active"`},

		{name: "GivenTwice", method: "GET", url: "/v1/users/alice/threads?limit=1&limit=2", wantStatus: 400, wantBody: `Query parameter \"limit\" is given 2 times; it takes one value.`},
		{name: "MalformedQuery", method: "GET", url: "/v1/users/alice/threads?limit=%zz", wantStatus: 400, wantBody: `The query string is malformed`},
		{name: "MalformedSince", method: "GET", url: "/v1/users/alice/threads?since=notatime", wantStatus: 400, wantBody: `since must be an RFC 3339 time such as 2024-05-01T12:00:00Z, not \"notatime\".`},
		{name: "MalformedUntil", method: "GET", url: "/v1/users/alice/threads?until=2024-13-01T00:00:00Z", wantStatus: 400, wantBody: `until must be an RFC 3339 time`},
		{name: "MalformedLimit", method: "GET", url: "/v1/users/alice/threads?limit=abc", wantStatus: 400, wantBody: `limit must be a non-negative integer, not \"abc\".`},
		{name: "EmptyTag", method: "GET", url: "/v1/users/alice/threads?tag=", wantStatus: 400, wantBody: `tag must not be empty.`},
		{name: "KnownParametersStillWork", method: "GET", url: "/v1/users/alice/threads?agent_id=a1&status=active&limit=5", wantStatus: 200, wantBody: `"id":"t1"`},
	})
}

// threadPage is a page of the thread list.
type threadPage struct {
	Data       []agentmem.Thread `json:"data"`
	NextCursor string            `json:"next_cursor"`
}

// TestHandler_ThreadFilters: the thread list filters by tag (repeatable:
// threads with all of them) and by updated_at (since inclusive, until
// exclusive), also across pages.
func TestHandler_ThreadFilters(t *testing.T) {
	testutil.Backends(t, func(t *testing.T, s agentmem.Store) {
		srv := MustServe(t, s, httpapi.Options{})
		u := srv.URL + "/v1/users/alice/threads"
		create := func(id string, tags ...string) agentmem.Thread {
			t.Helper()
			b, _ := json.Marshal(map[string]any{"id": id, "tags": tags})
			resp, body := Do(t, "POST", u, jsonBody, string(b))
			if resp.StatusCode != 201 {
				t.Fatalf("create %s: %d %s", id, resp.StatusCode, body)
			}
			return decodeJSON[agentmem.Thread](t, body)
		}
		list := func(query string) []string {
			t.Helper()
			var ids []string
			for cursor := ""; ; {
				q := query + "&limit=1"
				if cursor != "" {
					q += "&cursor=" + url.QueryEscape(cursor)
				}
				resp, body := Do(t, "GET", u+"?"+q, nil, "")
				if resp.StatusCode != 200 {
					t.Fatalf("list ?%s: %d %s", q, resp.StatusCode, body)
				}
				page := decodeJSON[threadPage](t, body)
				for _, th := range page.Data {
					ids = append(ids, th.ID)
				}
				if cursor = page.NextCursor; cursor == "" {
					return ids
				}
			}
		}
		create("old", "work")
		time.Sleep(2 * time.Millisecond) // distinct updated_at values
		mid := create("mid", "work", "urgent")
		time.Sleep(2 * time.Millisecond)
		create("new", "home", "urgent,later")
		at := url.QueryEscape(mid.UpdatedAt.Format(time.RFC3339Nano))

		for _, c := range []struct{ query, want string }{
			{"tag=work", "mid old"},
			{"tag=urgent", "mid"},
			{"tag=work&tag=urgent", "mid"},
			{"tag=urgent,later", "new"}, // tags may hold commas: the parameter repeats instead
			{"tag=none", ""},
			{"since=" + at, "new mid"},
			{"until=" + at, "old"},
			{"since=" + at + "&until=" + at, ""},
			{"since=" + at + "&tag=work", "mid"},
		} {
			if got := strings.Join(list(c.query), " "); got != c.want {
				t.Errorf("?%s: threads %q, want %q", c.query, got, c.want)
			}
		}
	})
}

// TestHandler_CursorBoundToList: a cursor continues only the list that
// issued it: not another list, not the same list in the other order, not
// another thread's or user's list.
func TestHandler_CursorBoundToList(t *testing.T) {
	testutil.Backends(t, func(t *testing.T, s agentmem.Store) {
		seed(t, s)
		MustCreateThread(t, s, &agentmem.Thread{UserID: "alice", ID: "t3"},
			&agentmem.Message{Role: agentmem.RoleUser, Content: "one"}, &agentmem.Message{Role: agentmem.RoleUser, Content: "two"})
		srv := MustServe(t, s, httpapi.Options{})
		next := func(path string) string {
			t.Helper()
			resp, body := Do(t, "GET", srv.URL+path, nil, "")
			var page struct {
				NextCursor string `json:"next_cursor"`
			}
			if err := json.Unmarshal(body, &page); err != nil || resp.StatusCode != 200 || page.NextCursor == "" {
				t.Fatalf("GET %s: %d %s, want a page with a next cursor", path, resp.StatusCode, body)
			}
			return url.QueryEscape(page.NextCursor)
		}
		threads := next("/v1/users/alice/threads?limit=1")
		asc := next("/v1/users/alice/threads/t1/messages?limit=1")
		desc := next("/v1/users/alice/threads/t1/messages?limit=1&order=desc")
		const another = `cursor belongs to another list`
		runScenarios(t, srv.URL, []scenario{
			{name: "ThreadCursorOnMessages", method: "GET", url: "/v1/users/alice/threads/t1/messages?cursor=" + threads, wantStatus: 400, wantBody: another},
			{name: "DescCursorAsc", method: "GET", url: "/v1/users/alice/threads/t1/messages?cursor=" + desc, wantStatus: 400, wantBody: another},
			{name: "AscCursorDesc", method: "GET", url: "/v1/users/alice/threads/t1/messages?order=desc&cursor=" + asc, wantStatus: 400, wantBody: another},
			{name: "OtherThread", method: "GET", url: "/v1/users/alice/threads/t3/messages?cursor=" + asc, wantStatus: 400, wantBody: another},
			{name: "MessageCursorOnThreads", method: "GET", url: "/v1/users/alice/threads?cursor=" + asc, wantStatus: 400, wantBody: another},
			{name: "OtherUser", method: "GET", url: "/v1/users/bob/threads?cursor=" + threads, wantStatus: 400, wantBody: another},
			{name: "MessageCursorOnElements", method: "GET", url: "/v1/users/alice/threads/t1/elements?cursor=" + asc, wantStatus: 400, wantBody: another},
			{name: "ThreadCursorOnMemories", method: "GET", url: "/v1/users/alice/memories?cursor=" + threads, wantStatus: 400, wantBody: another},
			{name: "SameList", method: "GET", url: "/v1/users/alice/threads/t1/messages?limit=1&cursor=" + asc, wantStatus: 200, wantBody: `"seq":2`},
			{name: "SameListDesc", method: "GET", url: "/v1/users/alice/threads/t1/messages?limit=1&order=desc&cursor=" + desc, wantStatus: 200, wantBody: `"seq":2`},
			{name: "SameThreads", method: "GET", url: "/v1/users/alice/threads?cursor=" + threads, wantStatus: 200},
		})
	})
}

// TestHandler_BadInputBothBackends: bad text, IDs and times get the same
// answer on both backends, naming the field or parameter.
func TestHandler_BadInputBothBackends(t *testing.T) {
	testutil.Backends(t, func(t *testing.T, s agentmem.Store) {
		seed(t, s)
		srv := MustServe(t, s, httpapi.Options{})
		future := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
		soon := time.Now().Add(time.Minute).UTC().Format(time.RFC3339)
		runScenarios(t, srv.URL, []scenario{
			// NUL in a filter.
			{name: "NULCategory", method: "GET", url: "/v1/users/alice/memories?category=a%00b", wantStatus: 400, wantBody: `"message":"category may not contain NUL characters."`},
			{name: "NULKind", method: "GET", url: "/v1/users/alice/memories?kind=%00", wantStatus: 400, wantBody: `"message":"kind may not contain NUL characters."`},
			{name: "NULMemoryThread", method: "GET", url: "/v1/users/alice/memories?thread_id=%00", wantStatus: 400, wantBody: `"message":"thread_id may not contain NUL characters."`},
			{name: "NULTag", method: "GET", url: "/v1/users/alice/threads?tag=%00", wantStatus: 400, wantBody: `"message":"tag may not contain NUL characters."`},
			{name: "NULEntityType", method: "GET", url: "/v1/users/alice/entities?type=%00", wantStatus: 400, wantBody: `"message":"type may not contain NUL characters."`},
			{name: "NULRefAction", method: "GET", url: "/v1/users/alice/threads/t1/entities?action=%00", wantStatus: 400, wantBody: `"message":"action may not contain NUL characters."`},
			{name: "NULJobKind", method: "GET", url: "/v1/jobs?kind=%00", wantStatus: 400, wantBody: `"message":"kind may not contain NUL characters."`},
			{name: "NULAuditAction", method: "GET", url: "/v1/audit?action=%00", wantStatus: 400, wantBody: `"message":"action may not contain NUL characters."`},
			{name: "NULKeyTenant", method: "GET", url: "/v1/keys?tenant_id=%00", wantStatus: 400, wantBody: `"message":"tenant_id may not contain NUL characters."`},
			{name: "InvalidUTF8Category", method: "GET", url: "/v1/users/alice/memories?category=%ff", wantStatus: 400, wantBody: `"message":"category is not valid UTF-8."`},

			// NUL in a context request's names.
			{name: "NULContextModel", method: "POST", url: "/v1/users/alice/threads/t1/context", body: `{"model":"gpt-4o\u0000"}`, wantStatus: 400, wantBody: `"message":"model may not contain NUL characters."`},
			{name: "NULContextPrompt", method: "POST", url: "/v1/users/alice/threads/t1/context", body: `{"prompt":"a\u0000"}`, wantStatus: 400, wantBody: `"message":"prompt may not contain NUL characters."`},

			// A retention of zero would delete every thread.
			{name: "CleanupZero", method: "POST", url: "/v1/cleanup", body: `{"older_than":"0d","dry_run":true}`, wantStatus: 400, wantBody: `older_than`},
			{name: "CleanupNegative", method: "POST", url: "/v1/cleanup", body: `{"older_than":"-1d","dry_run":true}`, wantStatus: 400, wantBody: `older_than`},

			// Lone surrogates, which encoding/json turns into U+FFFD.
			{name: "LoneSurrogate", method: "POST", url: "/v1/users/alice/threads", body: `{"title":"a \ud800 b"}`, wantStatus: 400,
				wantBody: `"message":"title has \\ud800, half of a UTF-16 surrogate pair without its other half; it is not a character."`},
			{name: "LoneLowSurrogate", method: "POST", url: "/v1/users/alice/threads/t-msgs/messages", body: `{"messages":[{"role":"user","content":"ok"},{"role":"user","content":"\uDC00"}]}`, wantStatus: 400,
				wantBody: `messages[1].content has \\uDC00`},
			{name: "HighThenHigh", method: "POST", url: "/v1/users/alice/threads", body: `{"title":"\ud800\ud800\udc00"}`, wantStatus: 400, wantBody: `title has \\ud800`},
			{name: "SurrogateInKey", method: "POST", url: "/v1/users/alice/threads", body: `{"metadata":{"\ud800":1}}`, wantStatus: 400, wantBody: `metadata`},
			{name: "PairedSurrogates", method: "POST", url: "/v1/users/alice/threads", body: `{"title":"\ud83d\ude00"}`, wantStatus: 201, wantBody: `"title":"😀"`},
			{name: "EscapedBackslashU", method: "POST", url: "/v1/users/alice/threads", body: `{"title":"\\ud800"}`, wantStatus: 201, wantBody: `"title":"\\ud800"`},

			// IDs "." and "..", which no path can reach.
			{name: "ThreadIDDot", method: "POST", url: "/v1/users/alice/threads", body: `{"id":"."}`, wantStatus: 400, wantBody: `"message":"id may not be \".\" or \"..\"."`},
			{name: "ThreadIDDotDot", method: "POST", url: "/v1/users/alice/threads", body: `{"id":".."}`, wantStatus: 400, wantBody: `"message":"id may not be \".\" or \"..\"."`},
			{name: "MessageIDDotDot", method: "POST", url: "/v1/users/alice/threads/t-msgs/messages", body: `{"messages":[{"id":"..","role":"user"}]}`, wantStatus: 400, wantBody: `"message":"messages[0].id may not be \".\" or \"..\"."`},
			{name: "MemoryIDDot", method: "POST", url: "/v1/users/alice/memories", body: `{"id":".","text":"x"}`, wantStatus: 400, wantBody: `"message":"id may not be \".\" or \"..\"."`},
			{name: "ElementIDDot", method: "POST", url: "/v1/users/alice/threads/t-el/elements", body: `{"id":".","name":"x"}`, wantStatus: 400, wantBody: `"message":"id may not be \".\" or \"..\"."`},
			{name: "ThreadIDDots", method: "POST", url: "/v1/users/alice/threads", body: `{"id":"..."}`, wantStatus: 201},

			// A created_at in the future.
			{name: "CreatedAtYear9999", method: "POST", url: "/v1/users/alice/threads/t1/messages", body: `{"messages":[{"role":"user","content":"x","created_at":"9999-01-01T00:00:00Z"}]}`, wantStatus: 400,
				wantBody: `"message":"messages[0].created_at 9999-01-01T00:00:00Z is in the future`},
			{name: "CreatedAtInAnHour", method: "POST", url: "/v1/users/alice/threads/t1/messages", body: `{"messages":[{"role":"user","content":"x"},{"role":"user","content":"y","created_at":"` + future + `"}]}`, wantStatus: 400,
				wantBody: `messages[1].created_at`},
			{name: "CreatedAtNothingStored", method: "GET", url: "/v1/users/alice/threads/t1", wantStatus: 200, wantBody: `"message_count":3`},
			{name: "CreatedAtWithinSkew", method: "POST", url: "/v1/users/alice/threads/t1/messages", body: `{"messages":[{"role":"user","content":"x","created_at":"` + soon + `"}]}`, wantStatus: 201},
			{name: "CreatedAtPast", method: "POST", url: "/v1/users/alice/threads/t1/messages", body: `{"messages":[{"role":"user","content":"x","created_at":"2020-01-01T00:00:00Z"}]}`, wantStatus: 201},
			{name: "ImportCreatedAtYear9999", method: "POST", url: "/v1/users/alice/threads/import", body: `{"version":2,"thread":{},"messages":[{"role":"user","content":"x","created_at":"9999-01-01T00:00:00Z"}]}`, wantStatus: 400,
				wantBody: `messages[0].created_at 9999-01-01T00:00:00Z is in the future`},
		})
	})
}
