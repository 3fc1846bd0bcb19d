package httpapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/httpapi"
	"github.com/agentmem/agentmem/internal/testutil"
)

// TestHandler_Entities: entities set through the API, resolved by name
// and alias, edited and deleted, and their references listed both ways.
func TestHandler_Entities(t *testing.T) {
	store := testutil.MustOpenSQLite(t)
	MustCreateThread(t, store, &agentmem.Thread{UserID: "alice", ID: "t1"})
	MustCreateThread(t, store, &agentmem.Thread{UserID: "alice", ID: "t2"})
	MustCreateThread(t, store, &agentmem.Thread{UserID: "bob", ID: "bt"})
	srv := MustServe(t, store, httpapi.Options{})

	var tmID string
	entityOf := func(t *testing.T, body []byte) agentmem.Entity {
		t.Helper()
		var e agentmem.Entity
		if err := json.Unmarshal(body, &e); err != nil {
			t.Fatal(err)
		}
		return e
	}
	names := func(want ...string) func(*testing.T, *http.Response, []byte) {
		return func(t *testing.T, _ *http.Response, body []byte) {
			t.Helper()
			var page struct{ Data []agentmem.Entity }
			if err := json.Unmarshal(body, &page); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range page.Data {
				got = append(got, e.Name)
			}
			if strings.Join(got, "|") != strings.Join(want, "|") {
				t.Fatalf("entities %q, want %q", got, want)
			}
		}
	}
	for _, sc := range []scenario{
		{name: "Create", method: "POST", url: "/v1/users/alice/entities", body: `{"name":"Task Management","type":"Workflow","aliases":["TM"],"thread_id":"t1","action":"created","seq":1}`,
			wantStatus: 200, wantBody: `"name":"Task Management","type":"workflow","aliases":["TM","task management","task management workflow","task workflow","my task"]`,
			check: func(t *testing.T, _ *http.Response, body []byte) { tmID = entityOf(t, body).ID }},
		{name: "PutAgainMerges", method: "POST", url: "/v1/users/alice/entities", body: `{"name":"task management","aliases":["Tasks"],"thread_id":"t2"}`,
			wantStatus: 200, check: func(t *testing.T, _ *http.Response, body []byte) {
				if e := entityOf(t, body); e.ID != tmID || e.Name != "Task Management" || e.Aliases[len(e.Aliases)-1] != "Tasks" {
					t.Fatalf("merged: %+v, want entity %s with alias Tasks", e, tmID)
				}
			}},
		{name: "CreateCRM", method: "POST", url: "/v1/users/alice/entities", body: `{"id":"crm","name":"CRM","type":"system","thread_id":"t1"}`, wantStatus: 200},

		// Alias resolution through ?q=.
		{name: "ResolveAlias", method: "GET", url: "/v1/users/alice/entities?q=my+task+workflow", wantStatus: 200, check: names("Task Management")},
		{name: "ResolveName", method: "GET", url: "/v1/users/alice/entities?q=TASK-management", wantStatus: 200, check: names("Task Management")},
		{name: "ResolveGivenAlias", method: "GET", url: "/v1/users/alice/entities?q=tm", wantStatus: 200, check: names("Task Management")},
		{name: "ResolveDeterminer", method: "GET", url: "/v1/users/alice/entities?q=the+CRM", wantStatus: 200, check: names("CRM")},
		{name: "ResolveNothing", method: "GET", url: "/v1/users/alice/entities?q=task", wantStatus: 200, wantBody: `{"data":[],"next_cursor":""}`},
		{name: "ResolveOtherUser", method: "GET", url: "/v1/users/bob/entities?q=task+management", wantStatus: 200, wantBody: `{"data":[],"next_cursor":""}`},
		{name: "ResolveByType", method: "GET", url: "/v1/users/alice/entities?q=crm&type=workflow", wantStatus: 200, wantBody: `"data":[]`},
		{name: "List", method: "GET", url: "/v1/users/alice/entities", wantStatus: 200, check: names("CRM", "Task Management")},
		{name: "ListPaged", method: "GET", url: "/v1/users/alice/entities?limit=1", wantStatus: 200, wantBody: `"next_cursor":"e`},
		{name: "ListByType", method: "GET", url: "/v1/users/alice/entities?type=System", wantStatus: 200, check: names("CRM")},
		{name: "ListBadQuery", method: "GET", url: "/v1/users/alice/entities?q=%3F%21", wantStatus: 400, wantBody: "q must contain a letter or a digit"},
		{name: "ListLongQuery", method: "GET", url: "/v1/users/alice/entities?q=" + strings.Repeat("a", 1001), wantStatus: 400, wantBody: "q is longer"},
		{name: "ListBadLimit", method: "GET", url: "/v1/users/alice/entities?limit=x", wantStatus: 400, wantBody: "limit"},
		{name: "ListBadCursor", method: "GET", url: "/v1/users/alice/entities?cursor=x", wantStatus: 400, wantBody: "cursor"},

		// Bad input names the field; nothing is written.
		{name: "CreateNoName", method: "POST", url: "/v1/users/alice/entities", body: `{"type":"x"}`, wantStatus: 400, wantBody: "name is required"},
		{name: "CreatePunctuation", method: "POST", url: "/v1/users/alice/entities", body: `{"name":"?!"}`, wantStatus: 400, wantBody: "name must contain a letter or a digit"},
		{name: "CreateBadAlias", method: "POST", url: "/v1/users/alice/entities", body: `{"name":"X","aliases":["--"]}`, wantStatus: 400, wantBody: "aliases must contain"},
		{name: "CreateBadAction", method: "POST", url: "/v1/users/alice/entities", body: `{"name":"New One","thread_id":"t1","action":"deleted"}`, wantStatus: 400, wantBody: "action must be"},
		{name: "CreateActionWithoutThread", method: "POST", url: "/v1/users/alice/entities", body: `{"name":"New One","action":"created"}`, wantStatus: 400, wantBody: "thread_id"},
		{name: "CreateBadThreadID", method: "POST", url: "/v1/users/alice/entities", body: `{"name":"New One","thread_id":"a b"}`, wantStatus: 400, wantBody: "thread_id"},
		{name: "CreateMissingThread", method: "POST", url: "/v1/users/alice/entities", body: `{"name":"New One","thread_id":"nope"}`, wantStatus: 404, wantBody: `Thread \"nope\" not found`},
		{name: "CreateOtherUsersThread", method: "POST", url: "/v1/users/alice/entities", body: `{"name":"New One","thread_id":"bt"}`, wantStatus: 404},
		{name: "NothingWritten", method: "GET", url: "/v1/users/alice/entities?q=new+one", wantStatus: 200, wantBody: `"data":[]`},
		{name: "CreateUnknownField", method: "POST", url: "/v1/users/alice/entities", body: `{"name":"X","user_id":"bob"}`, wantStatus: 400, wantBody: `unknown field \"user_id\"`},
		{name: "CreateIDOfAnother", method: "POST", url: "/v1/users/alice/entities", body: `{"id":"crm","name":"Other"}`, wantStatus: 409},

		// One entity.
		{name: "Get", method: "GET", url: "/v1/users/alice/entities/crm", wantStatus: 200, wantBody: `"name":"CRM","type":"system"`},
		{name: "GetOtherUser", method: "GET", url: "/v1/users/bob/entities/crm", wantStatus: 404, wantBody: `Entity \"crm\" not found.`},
		{name: "GetBadID", method: "GET", url: "/v1/users/alice/entities/a%20b", wantStatus: 400, wantBody: "entity_id"},
		{name: "Patch", method: "PATCH", url: "/v1/users/alice/entities/crm", body: `{"name":"Sales CRM","aliases":["pipeline"]}`, wantStatus: 200,
			wantBody: `"name":"Sales CRM","type":"system","aliases":["CRM","pipeline","sales crm","sales crm system","sales system","my sales"]`},
		{name: "PatchOldNameResolves", method: "GET", url: "/v1/users/alice/entities?q=crm", wantStatus: 200, check: names("Sales CRM")},
		{name: "PatchConflict", method: "PATCH", url: "/v1/users/alice/entities/crm", body: `{"name":"Task Management"}`, wantStatus: 409},
		{name: "PatchBadType", method: "PATCH", url: "/v1/users/alice/entities/crm", body: `{"type":"` + strings.Repeat("t", 51) + `"}`, wantStatus: 400, wantBody: "type is longer"},
		{name: "PatchOtherUser", method: "PATCH", url: "/v1/users/bob/entities/crm", body: `{"type":"x"}`, wantStatus: 404},

		// References, both ways.
		{name: "EntityThreads", method: "GET", url: "/v1/users/alice/entities/crm/threads", wantStatus: 200, wantBody: `"thread_id":"t1","action":"discussed"`},
		{name: "EntityThreadsMissing", method: "GET", url: "/v1/users/alice/entities/nope/threads", wantStatus: 404},
		{name: "EntityThreadsBadAction", method: "GET", url: "/v1/users/alice/entities/crm/threads?action=x", wantStatus: 400, wantBody: "action must be"},
		{name: "ThreadEntities", method: "GET", url: "/v1/users/alice/threads/t1/entities?action=created", wantStatus: 200, check: func(t *testing.T, _ *http.Response, body []byte) {
			var page struct{ Data []agentmem.EntityRef }
			if err := json.Unmarshal(body, &page); err != nil {
				t.Fatal(err)
			}
			if len(page.Data) != 1 || page.Data[0].EntityID != tmID || page.Data[0].Seq != 1 || page.Data[0].Entity == nil || page.Data[0].Entity.Name != "Task Management" {
				t.Fatalf("t1's created entities: %s", body)
			}
		}},
		{name: "ThreadEntitiesPaged", method: "GET", url: "/v1/users/alice/threads/t1/entities?limit=1", wantStatus: 200, wantBody: `"next_cursor":"e`},
		{name: "ThreadEntitiesOtherUser", method: "GET", url: "/v1/users/bob/threads/t1/entities", wantStatus: 404},
		{name: "ThreadEntitiesMissing", method: "GET", url: "/v1/users/alice/threads/nope/entities", wantStatus: 404},

		// Deletion.
		{name: "Delete", method: "DELETE", url: "/v1/users/alice/entities/crm", wantStatus: 204},
		{name: "DeleteAgain", method: "DELETE", url: "/v1/users/alice/entities/crm", wantStatus: 404},
		{name: "DeletedRefsGone", method: "GET", url: "/v1/users/alice/threads/t1/entities", wantStatus: 200, check: func(t *testing.T, _ *http.Response, body []byte) {
			if strings.Contains(string(body), `"crm"`) || !strings.Contains(string(body), tmID) {
				t.Fatalf("t1's entities after deleting crm: %s", body)
			}
		}},
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
