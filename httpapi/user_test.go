package httpapi_test

import (
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/httpapi"
	"github.com/agentmem/agentmem/internal/testutil"
	"github.com/google/go-cmp/cmp"
)

// TestHandler_ListUsers: GET /v1/users lists every user with their
// counts, page by page, a tenant's user named as an admin addresses them
// (and reaches them by that name); for admins only (403 otherwise), and
// 400 naming a bad parameter.
func TestHandler_ListUsers(t *testing.T) {
	testutil.Backends(t, func(t *testing.T, s agentmem.Store) {
		now := time.Now()
		admin, _ := mustKey(t, s, "admin", now, 0)
		alice, _ := mustKey(t, s, "user:alice", now, 0)
		acme, _ := mustKey(t, s, "tenant:acme", now, 0)
		alices := MustCreateThread(t, s, &agentmem.Thread{UserID: "alice", ID: "t1"},
			&agentmem.Message{Role: agentmem.RoleUser, Content: "Hi."}, &agentmem.Message{Role: agentmem.RoleAssistant, Content: "Hello."})
		if err := s.CreateMemory(t.Context(), &agentmem.Memory{UserID: "alice", Text: "User likes tea."}); err != nil {
			t.Fatal(err)
		}
		if err := s.CreateMemory(t.Context(), &agentmem.Memory{UserID: "bob", Text: "User likes coffee."}); err != nil {
			t.Fatal(err)
		}
		carols := MustCreateThread(t, s, &agentmem.Thread{UserID: "acme/carol", ID: "t1"})
		want := []agentmem.UserSummary{ // in the order of the stored IDs: acme/carol, alice, bob
			{UserID: "tenant:acme/user:carol", Threads: 1, LastActiveAt: &carols.UpdatedAt},
			{UserID: "alice", Threads: 1, Messages: 2, Memories: 1, LastActiveAt: &alices.UpdatedAt},
			{UserID: "bob", Memories: 1},
		}
		srv := MustServe(t, s, httpapi.Options{Auth: httpapi.Auth{Mode: httpapi.AuthAPIKey}})

		type page struct {
			Data       []agentmem.UserSummary
			NextCursor string `json:"next_cursor"`
		}
		var got []agentmem.UserSummary
		for cursor := ""; ; {
			resp, body := Do(t, "GET", srv.URL+"/v1/users?limit=1&cursor="+url.QueryEscape(cursor), bearerHeader(admin), "")
			p := decodeJSON[page](t, body)
			if resp.StatusCode != 200 || len(p.Data) != 1 {
				t.Fatalf("page after %q: %d %s", cursor, resp.StatusCode, body)
			}
			got = append(got, p.Data...)
			if cursor = p.NextCursor; cursor == "" {
				break
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("users mismatch (-want +got):\n%s", diff)
		}

		runScenarios(t, srv.URL, []scenario{
			{name: "Shape", method: "GET", url: "/v1/users", header: bearerHeader(admin), wantStatus: 200,
				wantBody: `{"user_id":"bob","threads":0,"messages":0,"memories":1,"last_active_at":null}],"next_cursor":""}`},
			{name: "ReachedByName", method: "GET", url: "/v1/users/" + url.PathEscape(want[0].UserID) + "/threads", header: bearerHeader(admin),
				wantStatus: 200, wantBody: `"user_id":"tenant:acme/user:carol"`},
			{name: "BadLimit", method: "GET", url: "/v1/users?limit=abc", header: bearerHeader(admin), wantStatus: 400,
				wantBody: `limit must be a non-negative integer, not \"abc\".`},
			{name: "LimitTooLarge", method: "GET", url: "/v1/users?limit=100000", header: bearerHeader(admin), wantStatus: 400,
				wantBody: `limit must be at most`},
			{name: "BadCursor", method: "GET", url: "/v1/users?cursor=nonsense", header: bearerHeader(admin), wantStatus: 400,
				wantBody: `cursor is malformed`},
			{name: "UnknownParameter", method: "GET", url: "/v1/users?user=alice", header: bearerHeader(admin), wantStatus: 400,
				wantBody: `Unknown query parameter \"user\"; this route accepts: limit, cursor, user_id.`},
			{name: "ByUserID", method: "GET", url: "/v1/users?user_id=alice", header: bearerHeader(admin), wantStatus: 200,
				wantBody: `{"data":[{"user_id":"alice","threads":1,"messages":2,"memories":1,`},
			{name: "ByUserIDTenant", method: "GET", url: "/v1/users?user_id=" + url.QueryEscape("tenant:acme/user:carol"), header: bearerHeader(admin), wantStatus: 200,
				wantBody: `{"data":[{"user_id":"tenant:acme/user:carol","threads":1,`},
			{name: "ByUserIDNone", method: "GET", url: "/v1/users?user_id=ghost", header: bearerHeader(admin), wantStatus: 200,
				wantBody: `{"data":[],"next_cursor":""}`},
			{name: "ByUserIDInvalid", method: "GET", url: "/v1/users?user_id=_agentmem", header: bearerHeader(admin), wantStatus: 400,
				wantBody: `reserved`},
			{name: "UserKey", method: "GET", url: "/v1/users", header: bearerHeader(alice), wantStatus: 403, wantBody: `This route needs an admin key.`},
			{name: "TenantKey", method: "GET", url: "/v1/users", header: bearerHeader(acme), wantStatus: 403, wantBody: `This route needs an admin key.`},
			{name: "NoKey", method: "GET", url: "/v1/users", wantStatus: 401},
		})
	})
}

// TestHandler_WhoAmI: GET /v1/me describes any identified caller, and
// with authentication off says whose data a request naming no user
// reaches; without a valid key it is 401.
func TestHandler_WhoAmI(t *testing.T) {
	store := testutil.MustOpenSQLite(t)
	now := time.Now()
	admin, adminID := mustKey(t, store, "admin", now, 0)
	acme, _ := mustKey(t, store, "tenant:acme", now, 0)
	acmeAlice, acmeAliceID := mustKey(t, store, "tenant:acme/user:alice", now, 0)
	bob, _ := mustKey(t, store, "user:bob", now, 0)
	off := MustServe(t, store, httpapi.Options{}).URL
	keys := MustServe(t, store, httpapi.Options{Auth: httpapi.Auth{Mode: httpapi.AuthAPIKey}}).URL
	header := MustServe(t, store, httpapi.Options{Auth: httpapi.Auth{Mode: httpapi.AuthHeader,
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}}).URL

	for _, c := range []struct {
		name, srv  string
		header     http.Header
		wantStatus int
		want       string
	}{
		{"AuthOff", off, nil, 200, `{"kind":"admin","user_id":"","tenant_id":"","via":"none","default_user":"local-user"}` + "\n"},
		{"Admin", keys, bearerHeader(admin), 200, `{"kind":"admin","user_id":"","tenant_id":"","via":"apikey","key_id":"` + adminID + `"}` + "\n"},
		{"Tenant", keys, bearerHeader(acme), 200, `"kind":"tenant","user_id":"","tenant_id":"acme","via":"apikey"`},
		{"TenantUser", keys, bearerHeader(acmeAlice), 200, `{"kind":"user","user_id":"alice","tenant_id":"acme","via":"apikey","key_id":"` + acmeAliceID + `"}` + "\n"},
		{"User", keys, http.Header{"X-Api-Key": {bob}}, 200, `"kind":"user","user_id":"bob","tenant_id":"","via":"apikey"`},
		{"Header", header, http.Header{httpapi.DefaultUserHeader: {"erin"}}, 200, `{"kind":"user","user_id":"erin","tenant_id":"","via":"header"}` + "\n"},
		{"NoKey", keys, nil, 401, `"code":"unauthorized"`},
		{"BadKey", keys, bearerHeader("not-a-key"), 401, `The API key is malformed.`},
		{"HeaderWithoutPrincipal", header, nil, 401, `An API key is required`},
		{"QueryParameter", off, nil, 400, `this route takes no query parameters.`},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := "/v1/me"
			if c.name == "QueryParameter" {
				path += "?user=alice"
			}
			resp, body := Do(t, "GET", c.srv+path, c.header, "")
			if resp.StatusCode != c.wantStatus || !strings.Contains(string(body), c.want) {
				t.Fatalf("%d %s, want %d with %s", resp.StatusCode, body, c.wantStatus, c.want)
			}
		})
	}
}
