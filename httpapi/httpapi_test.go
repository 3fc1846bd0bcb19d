package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/core"
	"github.com/agentmem/agentmem/httpapi"
	"github.com/agentmem/agentmem/internal/testutil"
	"github.com/prometheus/client_golang/prometheus"
)

// scenario is one request and what its answer must be.
type scenario struct {
	name       string
	method     string
	url        string // path and query
	header     http.Header
	body       string
	wantStatus int
	wantBody   string                                               // a substring of the response body ("" checks nothing)
	check      func(t *testing.T, resp *http.Response, body []byte) // further checks, when set
}

// seed stores what the scenarios read: alice's threads t1 (agent a1, three
// messages, one element), t2, t-patch, t-end, t-del1, t-del2, t-msgs and
// bob's bt.
func seed(t *testing.T, s agentmem.Store) {
	t.Helper()
	MustCreateThread(t, s, &agentmem.Thread{UserID: "alice", ID: "t1", AgentID: "a1", Title: "First"},
		&agentmem.Message{ID: "m1", Role: agentmem.RoleUser, Content: "What is the weather?"},
		&agentmem.Message{ID: "m2", Role: agentmem.RoleAssistant, ToolCalls: []agentmem.ToolCall{{ID: "c1", Function: agentmem.FunctionCall{Name: "weather", Arguments: `{"city":"Paris"}`}}}},
		&agentmem.Message{ID: "m3", Role: agentmem.RoleTool, ToolCallID: "c1", Content: "sunny"})
	for _, id := range []string{"t2", "t-patch", "t-end", "t-del1", "t-del2", "t-msgs", "t-el"} {
		MustCreateThread(t, s, &agentmem.Thread{UserID: "alice", ID: id})
	}
	MustCreateThread(t, s, &agentmem.Thread{UserID: "bob", ID: "bt"}, &agentmem.Message{Role: agentmem.RoleUser, Content: "bob's secret"})
	if err := s.CreateElement(context.Background(), "alice", "t1", &agentmem.Element{ID: "e1", MessageID: "m3", Name: "forecast", Content: "sunny"}); err != nil {
		t.Fatalf("create element: %v", err)
	}
}

func wantHeader(name, want string) func(*testing.T, *http.Response, []byte) {
	return func(t *testing.T, resp *http.Response, _ []byte) {
		t.Helper()
		if got := resp.Header.Get(name); !strings.Contains(got, want) {
			t.Fatalf("%s=%q, want %q in it", name, got, want)
		}
	}
}

func TestHandler_Scenarios(t *testing.T) {
	store := testutil.MustOpenSQLite(t)
	seed(t, store)
	srv := MustServeMetered(t, store, core.Options{}, httpapi.Options{Version: "test"}, prometheus.NewRegistry())

	big := strings.Repeat("a", agentmem.DefaultMaxMessageBytes+1)
	jsonHeader := http.Header{"Content-Type": {"application/json"}}
	for _, sc := range []scenario{
		// Health, stats, metrics.
		{name: "Healthz", method: "GET", url: "/healthz", wantStatus: 200, wantBody: `"status":"ok"`, check: wantHeader("Content-Type", "application/json")},
		{name: "Readyz", method: "GET", url: "/readyz", wantStatus: 200, wantBody: `"status":"ready"`},
		{name: "Stats", method: "GET", url: "/v1/stats", wantStatus: 200, wantBody: `"users":2`},
		{name: "Metrics", method: "GET", url: "/metrics", wantStatus: 200, wantBody: "agentmem_http_requests_total"},
		{name: "RequestIDEchoed", method: "GET", url: "/healthz", header: http.Header{"X-Request-Id": {"req-42"}}, wantStatus: 200, check: wantHeader("X-Request-ID", "req-42")},
		{name: "RequestIDGenerated", method: "GET", url: "/healthz", header: http.Header{"X-Request-Id": {"bad id"}}, wantStatus: 200, check: func(t *testing.T, resp *http.Response, _ []byte) {
			if got := resp.Header.Get("X-Request-ID"); len(got) != 36 {
				t.Fatalf("X-Request-ID=%q, want a generated ID", got)
			}
		}},

		// Routing.
		{name: "UnknownRoute", method: "GET", url: "/v2/nothing", wantStatus: 404, wantBody: `{"error":{"code":"not_found","message":"No route for GET /v2/nothing."}}`, check: wantHeader("Content-Type", "application/json")},
		{name: "WrongMethod", method: "PUT", url: "/v1/users/alice/threads", wantStatus: 405, wantBody: `"code":"invalid"`, check: func(t *testing.T, resp *http.Response, body []byte) {
			wantHeader("Allow", "GET")(t, resp, body)
			wantHeader("Allow", "POST")(t, resp, body)
			wantHeader("Content-Type", "application/json")(t, resp, body)
		}},
		{name: "DotDotSegment", method: "DELETE", url: "/v1/users/alice/threads/..", wantStatus: 400, wantBody: "has an empty, . or .. segment"},
		{name: "DotDotSegmentDidNotEraseAlice", method: "GET", url: "/v1/users/alice/threads/t1", wantStatus: 200},
		{name: "EmptySegment", method: "GET", url: "/v1/users//threads", wantStatus: 400, wantBody: `\"/v1/users//threads\"`},
		{name: "EscapedDotDotIsNoID", method: "GET", url: "/v1/users/alice/threads/%2E%2E", wantStatus: 400, wantBody: `thread_id may not be \".\" or \"..\".`},
		{name: "BadUserID", method: "GET", url: "/v1/users/a%20b/threads", wantStatus: 400, wantBody: "user_id"},
		{name: "BadThreadID", method: "GET", url: "/v1/users/alice/threads/a%2Fb", wantStatus: 400, wantBody: "thread_id"},
		{name: "BadAgentID", method: "GET", url: "/v1/users/alice/agents/" + strings.Repeat("x", 201) + "/session", wantStatus: 400, wantBody: "agent_id is longer than 200 bytes"},

		// Threads.
		{name: "ListThreads", method: "GET", url: "/v1/users/alice/threads", wantStatus: 200, wantBody: `"next_cursor":""`, check: func(t *testing.T, _ *http.Response, body []byte) {
			var page struct{ Data []agentmem.Thread }
			if err := json.Unmarshal(body, &page); err != nil {
				t.Fatal(err)
			}
			if got, want := len(page.Data), 8; got != want {
				t.Fatalf("len(data)=%d, want %d", got, want)
			}
		}},
		{name: "ListThreadsByAgent", method: "GET", url: "/v1/users/alice/threads?agent_id=a1", wantStatus: 200, wantBody: `"id":"t1"`, check: func(t *testing.T, _ *http.Response, body []byte) {
			if n := strings.Count(string(body), `"user_id"`); n != 1 {
				t.Fatalf("threads=%d, want 1", n)
			}
		}},
		{name: "ListThreadsEmptyUser", method: "GET", url: "/v1/users/nobody/threads", wantStatus: 200, wantBody: `{"data":[],"next_cursor":""}`},
		{name: "ListThreadsBadStatus", method: "GET", url: "/v1/users/alice/threads?status=open", wantStatus: 400, wantBody: "status must be"},
		{name: "ListThreadsBadLimit", method: "GET", url: "/v1/users/alice/threads?limit=ten", wantStatus: 400, wantBody: `limit must be a non-negative integer, not \"ten\"`},
		{name: "ListThreadsNegativeLimit", method: "GET", url: "/v1/users/alice/threads?limit=-1", wantStatus: 400, wantBody: "limit"},
		{name: "ListThreadsLimitTooLarge", method: "GET", url: "/v1/users/alice/threads?limit=99999999999999999", wantStatus: 400, wantBody: "limit must be at most 1000"},
		{name: "ListThreadsBadCursor", method: "GET", url: "/v1/users/alice/threads?cursor=!!!", wantStatus: 400, wantBody: "cursor is malformed"},
		{name: "CreateThread", method: "POST", url: "/v1/users/alice/threads", header: jsonHeader, body: `{"id":"new1","agent_id":"a2","title":"New","metadata":{"k":"v"},"tags":["x"]}`, wantStatus: 201,
			wantBody: `"user_id":"alice","agent_id":"a2","title":"New","status":"active","metadata":{"k":"v"},"tags":["x"]`},
		{name: "CreateThreadAssignsID", method: "POST", url: "/v1/users/alice/threads", body: `{}`, wantStatus: 201, wantBody: `"id":"`},
		{name: "CreateThreadDuplicate", method: "POST", url: "/v1/users/alice/threads", body: `{"id":"t1"}`, wantStatus: 409, wantBody: `"code":"conflict"`},
		{name: "CreateThreadUserIDInBody", method: "POST", url: "/v1/users/alice/threads", body: `{"user_id":"bob"}`, wantStatus: 400, wantBody: `unknown field \"user_id\"`},
		{name: "CreateThreadBadMetadata", method: "POST", url: "/v1/users/alice/threads", body: `{"metadata":[1]}`, wantStatus: 400, wantBody: "metadata must be a JSON object"},
		{name: "CreateThreadTagsWrongType", method: "POST", url: "/v1/users/alice/threads", body: `{"tags":"x"}`, wantStatus: 400, wantBody: "tags must be an array, not string"},
		{name: "CreateThreadEmptyBody", method: "POST", url: "/v1/users/alice/threads", wantStatus: 400, wantBody: "A request body is required"},
		{name: "CreateThreadNotAnObject", method: "POST", url: "/v1/users/alice/threads", body: `[{}]`, wantStatus: 400, wantBody: "must be a JSON object"},
		{name: "CreateThreadNull", method: "POST", url: "/v1/users/alice/threads", body: `null`, wantStatus: 400, wantBody: "must be a JSON object"},
		{name: "CreateThreadMalformed", method: "POST", url: "/v1/users/alice/threads", body: "{\n  \"title\": \"x\",,\n}", wantStatus: 400, wantBody: "not valid JSON at line 2, column 16"},
		{name: "CreateThreadTruncated", method: "POST", url: "/v1/users/alice/threads", body: `{"title": "x"`, wantStatus: 400, wantBody: "ends before"},
		{name: "CreateThreadTrailingData", method: "POST", url: "/v1/users/alice/threads", body: `{"title":"x"} {"title":"y"}`, wantStatus: 400, wantBody: "data after the JSON object"},
		{name: "CreateThreadTrailingGarbage", method: "POST", url: "/v1/users/alice/threads", body: `{"title":"x"}]`, wantStatus: 400, wantBody: "data after the JSON object"},
		{name: "CreateThreadInvalidUTF8Title", method: "POST", url: "/v1/users/alice/threads", body: "{\"title\":\"a\xffb\"}", wantStatus: 400, wantBody: "title is not valid UTF-8"},
		{name: "GetThread", method: "GET", url: "/v1/users/alice/threads/t1", wantStatus: 200, wantBody: `"message_count":3`},
		{name: "GetThreadOtherUser", method: "GET", url: "/v1/users/bob/threads/t1", wantStatus: 404, wantBody: `"code":"not_found"`},
		{name: "GetThreadMissing", method: "GET", url: "/v1/users/alice/threads/nope", wantStatus: 404, wantBody: `Thread \"nope\" not found.`},
		{name: "PatchThread", method: "PATCH", url: "/v1/users/alice/threads/t-patch", body: `{"title":"Renamed","tags":["a","a"],"metadata":{"n":1}}`, wantStatus: 200, wantBody: `"title":"Renamed","status":"active","metadata":{"n":1},"tags":["a"]`},
		{name: "PatchThreadBadStatus", method: "PATCH", url: "/v1/users/alice/threads/t-patch", body: `{"status":"paused"}`, wantStatus: 400, wantBody: "status must be"},
		{name: "PatchThreadUnknownField", method: "PATCH", url: "/v1/users/alice/threads/t-patch", body: `{"titel":"x"}`, wantStatus: 400, wantBody: `unknown field \"titel\"`},
		{name: "PatchThreadOtherUser", method: "PATCH", url: "/v1/users/bob/threads/t-patch", body: `{"title":"x"}`, wantStatus: 404},
		{name: "EndThread", method: "POST", url: "/v1/users/alice/threads/t-end/end", wantStatus: 200, wantBody: `"status":"ended"`},
		{name: "EndThreadOtherUser", method: "POST", url: "/v1/users/bob/threads/t-end/end", wantStatus: 404},
		{name: "DeleteThread", method: "DELETE", url: "/v1/users/alice/threads/t-del1", wantStatus: 204},
		{name: "DeleteThreadGone", method: "GET", url: "/v1/users/alice/threads/t-del1", wantStatus: 404},
		{name: "DeleteThreadAgain", method: "DELETE", url: "/v1/users/alice/threads/t-del1", wantStatus: 404},
		{name: "DeleteThreadPermanent", method: "DELETE", url: "/v1/users/alice/threads/t-del2?permanent=true", wantStatus: 204},
		{name: "DeleteThreadBadPermanent", method: "DELETE", url: "/v1/users/alice/threads/t2?permanent=yes", wantStatus: 400, wantBody: `permanent must be true or false, not \"yes\"`},
		{name: "DeleteThreadOtherUser", method: "DELETE", url: "/v1/users/bob/threads/t2", wantStatus: 404},

		// Messages.
		{name: "ListMessages", method: "GET", url: "/v1/users/alice/threads/t1/messages", wantStatus: 200, wantBody: `"seq":3`, check: func(t *testing.T, _ *http.Response, body []byte) {
			var page struct{ Data []agentmem.Message }
			if err := json.Unmarshal(body, &page); err != nil {
				t.Fatal(err)
			}
			if len(page.Data) != 3 || page.Data[0].ID != "m1" || page.Data[1].ToolCalls[0].Function.Name != "weather" || page.Data[2].ToolCallID != "c1" {
				t.Fatalf("data=%s, want m1, m2 with its tool call, m3", body)
			}
		}},
		{name: "ListMessagesDesc", method: "GET", url: "/v1/users/alice/threads/t1/messages?order=desc&limit=1", wantStatus: 200, wantBody: `"id":"m3"`, check: func(t *testing.T, _ *http.Response, body []byte) {
			if strings.Contains(string(body), `"next_cursor":""`) {
				t.Fatalf("body=%s, want a next cursor", body)
			}
		}},
		{name: "ListMessagesAfterSeq", method: "GET", url: "/v1/users/alice/threads/t1/messages?after_seq=2", wantStatus: 200, wantBody: `"id":"m3"`},
		{name: "ListMessagesBeforeSeq", method: "GET", url: "/v1/users/alice/threads/t1/messages?before_seq=2", wantStatus: 200, wantBody: `{"data":[{"id":"m1"`},
		{name: "ListMessagesNegativeAfterSeq", method: "GET", url: "/v1/users/alice/threads/t1/messages?after_seq=-1", wantStatus: 400, wantBody: "after_seq must be a non-negative integer"},
		{name: "ListMessagesBadBeforeSeq", method: "GET", url: "/v1/users/alice/threads/t1/messages?before_seq=1.5", wantStatus: 400, wantBody: "before_seq"},
		{name: "ListMessagesBadOrder", method: "GET", url: "/v1/users/alice/threads/t1/messages?order=up", wantStatus: 400, wantBody: "order must be asc or desc"},
		{name: "ListMessagesBadCursor", method: "GET", url: "/v1/users/alice/threads/t1/messages?cursor=%25%25", wantStatus: 400, wantBody: "cursor is malformed"},
		{name: "ListMessagesOtherUser", method: "GET", url: "/v1/users/bob/threads/t1/messages", wantStatus: 404},
		{name: "AppendMessages", method: "POST", url: "/v1/users/alice/threads/t-msgs/messages",
			body:       `{"messages":[{"role":"user","content":"Plan a trip to Lisbon"},{"role":"assistant","content":"Sure.","metadata":{"model":"m"}}]}`,
			wantStatus: 201, wantBody: `"seq":2`, check: func(t *testing.T, _ *http.Response, body []byte) {
				var resp struct{ Messages []agentmem.Message }
				if err := json.Unmarshal(body, &resp); err != nil {
					t.Fatal(err)
				}
				if len(resp.Messages) != 2 || resp.Messages[0].ID == "" || resp.Messages[0].ThreadID != "t-msgs" || resp.Messages[0].TokenCount == 0 {
					t.Fatalf("messages=%s, want two with id, thread_id and token_count", body)
				}
			}},
		{name: "AppendMessagesTitlesThread", method: "GET", url: "/v1/users/alice/threads/t-msgs", wantStatus: 200, wantBody: `"title":"Plan a trip to Lisbon"`},
		{name: "AppendMessagesRoundTrip", method: "POST", url: "/v1/users/alice/threads/t-msgs/messages",
			body: `{"messages":[{"id":"","thread_id":"t-msgs","seq":0,"role":"user","content":"again","metadata":null,"token_count":0,"created_at":"0001-01-01T00:00:00Z"}]}`, wantStatus: 201, wantBody: `"seq":3`},
		{name: "AppendMessagesOtherThreadID", method: "POST", url: "/v1/users/alice/threads/t-msgs/messages", body: `{"messages":[{"thread_id":"t1","role":"user","content":"x"}]}`, wantStatus: 400, wantBody: `messages[0].thread_id \"t1\" is not the thread \"t-msgs\"`},
		{name: "AppendMessagesUnknownRole", method: "POST", url: "/v1/users/alice/threads/t-msgs/messages", body: `{"messages":[{"role":"robot","content":"beep"}]}`, wantStatus: 400, wantBody: `messages[0].role \"robot\" is unknown`},
		{name: "AppendMessagesEmptyBatch", method: "POST", url: "/v1/users/alice/threads/t-msgs/messages", body: `{"messages":[]}`, wantStatus: 400, wantBody: "messages must contain at least one message"},
		{name: "AppendMessagesNoMessages", method: "POST", url: "/v1/users/alice/threads/t-msgs/messages", body: `{}`, wantStatus: 400, wantBody: "messages must contain at least one message"},
		{name: "AppendMessagesNullMessage", method: "POST", url: "/v1/users/alice/threads/t-msgs/messages", body: `{"messages":[null]}`, wantStatus: 400, wantBody: "messages[0] is null"},
		{name: "AppendMessagesInvalidUTF8", method: "POST", url: "/v1/users/alice/threads/t-msgs/messages", body: "{\"messages\":[{\"role\":\"user\",\"content\":\"ok\"},{\"role\":\"user\",\"content\":\"bad \xff byte\"}]}", wantStatus: 400, wantBody: "messages[1].content is not valid UTF-8"},
		{name: "AppendMessagesInvalidUTF8Key", method: "POST", url: "/v1/users/alice/threads/t-msgs/messages", body: "{\"messages\":[{\"r\xffle\":\"user\"}]}", wantStatus: 400, wantBody: "not valid UTF-8"},
		{name: "AppendMessagesLoneSurrogate", method: "POST", url: "/v1/users/alice/threads/t-msgs/messages", body: `{"messages":[{"role":"user","content":"lone \ud800 surrogate"}]}`, wantStatus: 400,
			wantBody: `messages[0].content has \\ud800, half of a UTF-16 surrogate pair without its other half`},
		{name: "AppendMessagesTooLarge", method: "POST", url: "/v1/users/alice/threads/t-msgs/messages", body: `{"messages":[{"role":"user","content":"` + big + `"}]}`, wantStatus: 413, wantBody: "the limit is 1048576 bytes per message"},
		{name: "AppendMessagesMalformed", method: "POST", url: "/v1/users/alice/threads/t-msgs/messages", body: `{"messages":[{"role":"user" "content":"x"}]}`, wantStatus: 400, wantBody: "not valid JSON at line 1, column 29"},
		{name: "AppendMessagesUnknownField", method: "POST", url: "/v1/users/alice/threads/t-msgs/messages", body: `{"messages":[{"role":"user","content":"x","colour":"red"}]}`, wantStatus: 400, wantBody: `unknown field \"colour\"`},
		{name: "AppendMessagesWrongType", method: "POST", url: "/v1/users/alice/threads/t-msgs/messages", body: `{"messages":[{"role":"user","content":"x"},{"role":"user","content":42}]}`, wantStatus: 400, wantBody: "messages[1].content must be a string, not number"},
		{name: "AppendMessagesWrongNestedType", method: "POST", url: "/v1/users/alice/threads/t-msgs/messages", body: `{"messages":[{"role":"assistant","tool_calls":[{"function":{"name":"f","arguments":{}}}]}]}`, wantStatus: 400, wantBody: "messages[0].tool_calls[0].function.arguments must be a string, not object"},
		{name: "AppendMessagesBatchNotArray", method: "POST", url: "/v1/users/alice/threads/t-msgs/messages", body: `{"messages":{"role":"user"}}`, wantStatus: 400, wantBody: "messages must be an array, not object"},
		{name: "AppendMessagesBadTime", method: "POST", url: "/v1/users/alice/threads/t-msgs/messages", body: `{"messages":[{"role":"user","created_at":"yesterday"}]}`, wantStatus: 400, wantBody: "RFC 3339"},
		{name: "AppendMessagesTimeNotString", method: "POST", url: "/v1/users/alice/threads/t-msgs/messages", body: `{"messages":[{"role":"user","created_at":5}]}`, wantStatus: 400, wantBody: `"code":"invalid"`},
		{name: "AppendMessagesToolWithoutCallID", method: "POST", url: "/v1/users/alice/threads/t-msgs/messages", body: `{"messages":[{"role":"tool","content":"x"}]}`, wantStatus: 400, wantBody: "tool_call_id is required"},
		{name: "AppendMessagesBadIdempotencyKey", method: "POST", url: "/v1/users/alice/threads/t-msgs/messages", header: http.Header{"Idempotency-Key": {"has space"}}, body: `{"messages":[{"role":"user","content":"x"}]}`, wantStatus: 400, wantBody: "Idempotency-Key"},
		{name: "AppendMessagesOtherUser", method: "POST", url: "/v1/users/bob/threads/t1/messages", body: `{"messages":[{"role":"user","content":"x"}]}`, wantStatus: 404},
		{name: "AppendMessagesDeletedThread", method: "POST", url: "/v1/users/alice/threads/t-del1/messages", body: `{"messages":[{"role":"user","content":"x"}]}`, wantStatus: 404},

		// Elements.
		{name: "ListElements", method: "GET", url: "/v1/users/alice/threads/t1/elements", wantStatus: 200, wantBody: `"id":"e1","thread_id":"t1","message_id":"m3","type":"text","name":"forecast"`},
		{name: "ListElementsByMessage", method: "GET", url: "/v1/users/alice/threads/t1/elements?message_id=m1", wantStatus: 200, wantBody: `{"data":[],"next_cursor":""}`},
		{name: "ListElementsBadLimit", method: "GET", url: "/v1/users/alice/threads/t1/elements?limit=x", wantStatus: 400, wantBody: "limit"},
		{name: "ListElementsBadCursor", method: "GET", url: "/v1/users/alice/threads/t1/elements?cursor=@", wantStatus: 400, wantBody: "cursor"},
		{name: "ListElementsOtherUser", method: "GET", url: "/v1/users/bob/threads/t1/elements", wantStatus: 404},
		{name: "CreateElement", method: "POST", url: "/v1/users/alice/threads/t-el/elements", body: `{"type":"citation","name":"source","url":"https://example.com","metadata":{"page":3}}`, wantStatus: 201, wantBody: `"thread_id":"t-el","type":"citation","name":"source","url":"https://example.com","metadata":{"page":3}`},
		{name: "CreateElementUnknownMessage", method: "POST", url: "/v1/users/alice/threads/t-el/elements", body: `{"message_id":"m1","name":"x"}`, wantStatus: 404, wantBody: "Message"},
		{name: "CreateElementOtherThreadID", method: "POST", url: "/v1/users/alice/threads/t-el/elements", body: `{"thread_id":"t1"}`, wantStatus: 400, wantBody: "thread_id"},
		{name: "CreateElementUnknownField", method: "POST", url: "/v1/users/alice/threads/t-el/elements", body: `{"kind":"x"}`, wantStatus: 400, wantBody: `unknown field \"kind\"`},
		{name: "CreateElementOtherUser", method: "POST", url: "/v1/users/bob/threads/t1/elements", body: `{"name":"x"}`, wantStatus: 404},

		// Export and import.
		{name: "ExportThreadJSON", method: "GET", url: "/v1/users/alice/threads/t1/export", wantStatus: 200, wantBody: `{"version":2,"thread":{"id":"t1"`},
		{name: "ExportThreadExplicitJSON", method: "GET", url: "/v1/users/alice/threads/t1/export?format=json", wantStatus: 200, wantBody: `"elements":[{"id":"e1"`},
		{name: "ExportThreadMarkdown", method: "GET", url: "/v1/users/alice/threads/t1/export?format=markdown", wantStatus: 200, check: func(t *testing.T, resp *http.Response, body []byte) {
			wantHeader("Content-Type", "text/markdown; charset=utf-8")(t, resp, body)
			wantHeader("Content-Disposition", `attachment; filename=thread-t1.md`)(t, resp, body)
			for _, want := range []string{"# First\n", "## 👤 User\n\nWhat is the weather?\n\n---\n", "## 🤖 Assistant", "Tool call `weather`", "## 🔧 Tool\n\nsunny"} {
				if !strings.Contains(string(body), want) {
					t.Fatalf("markdown=%q, want %q in it", body, want)
				}
			}
		}},
		{name: "ExportThreadBadFormat", method: "GET", url: "/v1/users/alice/threads/t1/export?format=pdf", wantStatus: 400, wantBody: `format must be json or markdown, not \"pdf\"`},
		{name: "ExportThreadOtherUser", method: "GET", url: "/v1/users/bob/threads/t1/export", wantStatus: 404},
		{name: "ImportThread", method: "POST", url: "/v1/users/carol/threads/import", body: `{"version":1,"thread":{"id":"imp","title":"Imported"},"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}],"elements":[]}`,
			wantStatus: 201, wantBody: `"id":"imp","user_id":"carol","agent_id":"","title":"Imported","status":"active"`},
		{name: "ImportThreadMessages", method: "GET", url: "/v1/users/carol/threads/imp/messages", wantStatus: 200, wantBody: `"seq":2,"role":"assistant","content":"hello"`},
		{name: "ImportThreadAgain", method: "POST", url: "/v1/users/carol/threads/import", body: `{"version":1,"thread":{"id":"imp"}}`, wantStatus: 409},
		{name: "ImportThreadNoThread", method: "POST", url: "/v1/users/carol/threads/import", body: `{"version":1}`, wantStatus: 400, wantBody: "thread is required"},
		{name: "ImportThreadFutureVersion", method: "POST", url: "/v1/users/carol/threads/import", body: `{"version":9,"thread":{}}`, wantStatus: 400, wantBody: "version 9 is not supported"},
		{name: "ImportThreadBadRole", method: "POST", url: "/v1/users/carol/threads/import", body: `{"version":1,"thread":{},"messages":[{"role":"x"}]}`, wantStatus: 400, wantBody: "messages[0].role"},
		{name: "ImportWrongMethodIsThreadRoute", method: "GET", url: "/v1/users/carol/threads/import", wantStatus: 404, wantBody: `Thread \"import\" not found.`},

		// Sessions.
		{name: "GetSessionNone", method: "GET", url: "/v1/users/alice/agents/a1/session", wantStatus: 404, wantBody: `"code":"not_found"`},
		{name: "GetSessionBadCreate", method: "GET", url: "/v1/users/alice/agents/a1/session?create=maybe", wantStatus: 400, wantBody: "create must be true or false"},
		{name: "SetSession", method: "PUT", url: "/v1/users/alice/agents/a1/session", body: `{"thread_id":"t1"}`, wantStatus: 200, wantBody: `"user_id":"alice","agent_id":"a1","thread_id":"t1"`},
		{name: "GetSession", method: "GET", url: "/v1/users/alice/agents/a1/session", wantStatus: 200, wantBody: `"thread_id":"t1"`},
		{name: "GetSessionCreateExisting", method: "GET", url: "/v1/users/alice/agents/a1/session?create=true", wantStatus: 200, wantBody: `"thread_id":"t1"`},
		{name: "GetSessionCreate", method: "GET", url: "/v1/users/alice/agents/a9/session?create=true", wantStatus: 201, wantBody: `"agent_id":"a9","thread_id":"`},
		{name: "GetSessionCreatedThread", method: "GET", url: "/v1/users/alice/threads?agent_id=a9", wantStatus: 200, wantBody: `"agent_id":"a9"`},
		{name: "SetSessionOtherUsersThread", method: "PUT", url: "/v1/users/alice/agents/a1/session", body: `{"thread_id":"bt"}`, wantStatus: 404},
		{name: "SetSessionNoThreadID", method: "PUT", url: "/v1/users/alice/agents/a1/session", body: `{}`, wantStatus: 400, wantBody: "thread_id is required"},
		{name: "SetSessionWrongType", method: "PUT", url: "/v1/users/alice/agents/a1/session", body: `{"thread_id":7}`, wantStatus: 400, wantBody: "thread_id must be a string, not number"},

		// Users.
		{name: "ExportUser", method: "GET", url: "/v1/users/bob/export", wantStatus: 200, check: func(t *testing.T, resp *http.Response, body []byte) {
			wantHeader("Content-Type", "application/json")(t, resp, body)
			var x agentmem.UserExport
			if err := json.Unmarshal(body, &x); err != nil {
				t.Fatalf("decode %s: %v", body, err)
			}
			if x.Version != agentmem.ExportVersion || x.UserID != "bob" || x.ExportedAt.IsZero() || len(x.Threads) != 1 || x.Threads[0].Messages[0].Content != "bob's secret" || x.Sessions == nil {
				t.Fatalf("export=%s, want bob's thread", body)
			}
		}},
		{name: "ExportUserUnknown", method: "GET", url: "/v1/users/nobody/export", wantStatus: 200, wantBody: `"user_id":"nobody"`, check: func(t *testing.T, _ *http.Response, body []byte) {
			if !strings.HasSuffix(string(body), `,"threads":[],"sessions":[],"notes":[],"memories":[],"profiles":[],"entities":[],"reflections":[]}`+"\n") {
				t.Fatalf("body=%s, want no threads", body)
			}
		}},
		{name: "DeleteUser", method: "DELETE", url: "/v1/users/carol", wantStatus: 200, wantBody: `{"deleted":{"users":1,"threads":1,"messages":2,"elements":0,"sessions":0}}`},
		{name: "DeleteUserUnknown", method: "DELETE", url: "/v1/users/carol", wantStatus: 200, wantBody: `{"deleted":{"threads":0,"messages":0,"elements":0,"sessions":0}}`},
		{name: "DeleteUserBadID", method: "DELETE", url: "/v1/users/%00", wantStatus: 400, wantBody: "user_id"},
	} {
		t.Run(sc.name, func(t *testing.T) {
			resp, body := Do(t, sc.method, srv.URL+sc.url, sc.header, sc.body)
			if resp.StatusCode != sc.wantStatus {
				t.Fatalf("status=%d, want %d; body: %.500s", resp.StatusCode, sc.wantStatus, body)
			}
			if !strings.Contains(string(body), sc.wantBody) {
				t.Fatalf("body=%.1000s, want %q in it", body, sc.wantBody)
			}
			if resp.StatusCode >= 400 {
				var e struct {
					Error struct{ Code, Message string }
				}
				if err := json.Unmarshal(body, &e); err != nil || e.Error.Code == "" || e.Error.Message == "" {
					t.Fatalf("error body=%s, want {\"error\":{\"code\",\"message\"}}", body)
				}
			}
			if sc.check != nil {
				sc.check(t, resp, body)
			}
		})
	}
}

// TestHandler_RetryAfterUnavailable: a store that is down (here closed)
// answers 503 with a Retry-After, for writes and /readyz alike, so that
// clients know to send the request again; other errors carry none.
func TestHandler_RetryAfterUnavailable(t *testing.T) {
	s := testutil.MustOpenSQLite(t)
	srv := MustServe(t, s, httpapi.Options{})
	resp, _ := Do(t, "GET", srv.URL+"/v1/users/alice/threads/nope", nil, "")
	if resp.StatusCode != http.StatusNotFound || resp.Header.Get("Retry-After") != "" {
		t.Fatalf("404: status %d, Retry-After %q; want none", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	s.Close()
	for _, r := range []struct{ method, url, body string }{
		{"GET", "/readyz", ""},
		{"POST", "/v1/users/alice/threads/t/messages", `{"messages":[{"role":"user","content":"hi"}]}`},
	} {
		resp, body := Do(t, r.method, srv.URL+r.url, nil, r.body)
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "1" || !strings.Contains(string(body), `"code":"unavailable"`) {
			t.Errorf("%s %s: status %d, Retry-After %q, body %s; want 503, 1 and unavailable", r.method, r.url, resp.StatusCode, resp.Header.Get("Retry-After"), body)
		}
	}
}
