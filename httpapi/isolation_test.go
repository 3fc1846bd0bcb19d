package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/httpapi"
	"github.com/agentmem/agentmem/internal/testutil"
	"github.com/agentmem/agentmem/metrics"
	"github.com/prometheus/client_golang/prometheus"
)

// routeCase is how the isolation matrix calls one route: the path with
// {user}, {thread}, {agent} and {key} still in it, the body, and the status
// of a call that is allowed.
type routeCase struct {
	path string
	body string
	ok   int
}

// routeCases holds a case for every route of httpapi's route table. A
// route without a case fails TestIsolation: every new route must say how
// it is called, and so is checked against every identity.
var routeCases = map[string]routeCase{
	"GET /healthz":          {"/healthz", "", 200},
	"GET /readyz":           {"/readyz", "", 200},
	"GET /openapi.json":     {"/openapi.json", "", 200},
	"GET /metrics":          {"/metrics", "", 200},
	"GET /v1/stats":         {"/v1/stats", "", 200},
	"GET /v1/audit":         {"/v1/audit", "", 200},
	"GET /v1/jobs":          {"/v1/jobs?status=dead", "", 200},
	"GET /v1/keys":          {"/v1/keys", "", 200},
	"POST /v1/keys":         {"/v1/keys", `{"scope":"user:zed","expires_in":"1d"}`, 201},
	"DELETE /v1/keys/{key}": {"/v1/keys/{key}", "", 200},
	"POST /v1/cleanup":      {"/v1/cleanup", `{"older_than":"3650d","dry_run":true}`, 200},
	"GET /v1/tools":         {"/v1/tools", "", 200},
	"GET /v1/me":            {"/v1/me", "", 200},
	"GET /v1/users":         {"/v1/users?limit=2", "", 200},

	"GET /v1/users/{user}/threads":                       {"/v1/users/{user}/threads", "", 200},
	"POST /v1/users/{user}/threads":                      {"/v1/users/{user}/threads", `{"title":"new"}`, 201},
	"POST /v1/users/{user}/threads/import":               {"/v1/users/{user}/threads/import", `{"version":1,"thread":{"title":"imported"},"messages":[{"role":"user","content":"hi"}]}`, 201},
	"GET /v1/users/{user}/threads/{thread}":              {"/v1/users/{user}/threads/{thread}", "", 200},
	"PATCH /v1/users/{user}/threads/{thread}":            {"/v1/users/{user}/threads/{thread}", `{"title":"renamed"}`, 200},
	"DELETE /v1/users/{user}/threads/{thread}":           {"/v1/users/{user}/threads/{thread}?permanent=true", "", 204},
	"POST /v1/users/{user}/threads/{thread}/end":         {"/v1/users/{user}/threads/{thread}/end", "", 200},
	"POST /v1/users/{user}/threads/{thread}/restore":     {"/v1/users/{user}/threads/{thread}/restore", "", 200}, // t1 is not deleted: answered as it is
	"GET /v1/users/{user}/threads/{thread}/messages":     {"/v1/users/{user}/threads/{thread}/messages", "", 200},
	"POST /v1/users/{user}/threads/{thread}/messages":    {"/v1/users/{user}/threads/{thread}/messages", `{"messages":[{"role":"user","content":"more"}]}`, 201},
	"GET /v1/users/{user}/threads/{thread}/elements":     {"/v1/users/{user}/threads/{thread}/elements", "", 200},
	"POST /v1/users/{user}/threads/{thread}/elements":    {"/v1/users/{user}/threads/{thread}/elements", `{"name":"note","content":"c"}`, 201},
	"GET /v1/users/{user}/threads/{thread}/export":       {"/v1/users/{user}/threads/{thread}/export", "", 200},
	"POST /v1/users/{user}/threads/{thread}/context":     {"/v1/users/{user}/threads/{thread}/context", `{"input":"hello","budget_tokens":1000}`, 200},
	"POST /v1/users/{user}/turns":                        {"/v1/users/{user}/turns", `{"thread_id":"t1","continue":true,"messages":[{"role":"user","content":"more"}],"context":{"budget_tokens":1000}}`, 200},
	"POST /v1/users/{user}/facts":                        {"/v1/users/{user}/facts", `{"query":"SECRET"}`, 200},
	"POST /v1/users/{user}/search":                       {"/v1/users/{user}/search", `{"query":"SECRET"}`, 200},
	"GET /v1/users/{user}/memories":                      {"/v1/users/{user}/memories", "", 200},
	"POST /v1/users/{user}/memories":                     {"/v1/users/{user}/memories", `{"text":"User likes tea."}`, 201},
	"GET /v1/users/{user}/memories/{memory}":             {"/v1/users/{user}/memories/mem1", "", 200},
	"PATCH /v1/users/{user}/memories/{memory}":           {"/v1/users/{user}/memories/mem1", `{"text":"User likes coffee."}`, 200},
	"DELETE /v1/users/{user}/memories/{memory}":          {"/v1/users/{user}/memories/mem1", "", 204},
	"GET /v1/users/{user}/memories/{memory}/history":     {"/v1/users/{user}/memories/mem1/history", "", 200},
	"POST /v1/users/{user}/memories/{memory}/invalidate": {"/v1/users/{user}/memories/mem1/invalidate", `{"reason":"no longer true"}`, 200},
	"GET /v1/users/{user}/jobs":                          {"/v1/users/{user}/jobs?status=queued", "", 200},
	// job1 is queued: the retry reaches the job, which answers 409 (a dead
	// job would be listed by GET /v1/jobs?status=dead under its stored
	// user ID).
	"POST /v1/users/{user}/jobs/{job}/retry":           {"/v1/users/{user}/jobs/job1/retry", "", 409},
	"GET /v1/users/{user}/agents/{agent}/session":      {"/v1/users/{user}/agents/{agent}/session", "", 200},
	"PUT /v1/users/{user}/agents/{agent}/session":      {"/v1/users/{user}/agents/{agent}/session", `{"thread_id":"t1"}`, 200},
	"GET /v1/users/{user}/profile":                     {"/v1/users/{user}/profile", "", 200},
	"POST /v1/users/{user}/profile/refresh":            {"/v1/users/{user}/profile/refresh", "", 200},
	"GET /v1/users/{user}/profile/versions":            {"/v1/users/{user}/profile/versions", "", 200},
	"GET /v1/users/{user}/threads/{thread}/reflection": {"/v1/users/{user}/threads/{thread}/reflection", "", 200},
	// t1 is active: the retry reaches the thread, which answers 409.
	"POST /v1/users/{user}/threads/{thread}/reflection/retry": {"/v1/users/{user}/threads/{thread}/reflection/retry", "", 409},
	"POST /v1/users/{user}/tools/{name}":                      {"/v1/users/{user}/tools/search_memory", `{"query":"SECRET"}`, 200},
	"GET /v1/users/{user}/export":                             {"/v1/users/{user}/export", "", 200},
	"POST /v1/users/{user}/import":                            {"/v1/users/{user}/import?on_conflict=skip", `{"version":2,"threads":[{"thread":{"id":"imp","title":"imported"},"messages":[{"role":"user","content":"hi"}]}],"memories":[{"text":"User likes tea."}]}`, 200},
	"DELETE /v1/users/{user}":                                 {"/v1/users/{user}", "", 200},

	"GET /v1/users/{user}/agents/{agent}/notes":         {"/v1/users/{user}/agents/{agent}/notes", "", 200},
	"PUT /v1/users/{user}/agents/{agent}/notes":         {"/v1/users/{user}/agents/{agent}/notes", `{"content":"Tea."}`, 200},
	"POST /v1/users/{user}/agents/{agent}/notes/ops":    {"/v1/users/{user}/agents/{agent}/notes/ops", `{"operation":"append","content":"More."}`, 200},
	"GET /v1/users/{user}/agents/{agent}/notes/history": {"/v1/users/{user}/agents/{agent}/notes/history", "", 200},

	"GET /v1/users/{user}/entities":                  {"/v1/users/{user}/entities?q=my+secret+workflow", "", 200},
	"POST /v1/users/{user}/entities":                 {"/v1/users/{user}/entities", `{"name":"Task Management","type":"workflow","thread_id":"t1","action":"created"}`, 200},
	"GET /v1/users/{user}/entities/{entity}":         {"/v1/users/{user}/entities/ent1", "", 200},
	"PATCH /v1/users/{user}/entities/{entity}":       {"/v1/users/{user}/entities/ent1", `{"type":"project"}`, 200},
	"DELETE /v1/users/{user}/entities/{entity}":      {"/v1/users/{user}/entities/ent1", "", 204},
	"GET /v1/users/{user}/entities/{entity}/threads": {"/v1/users/{user}/entities/ent1/threads", "", 200},
	"GET /v1/users/{user}/threads/{thread}/entities": {"/v1/users/{user}/threads/{thread}/entities", "", 200},
}

// Outcomes of a call in the matrix.
const (
	allow    = "allow"    // the route's ok status
	deny401  = "401"      // not authenticated
	deny403  = "403"      // authenticated, but the route needs another kind of key
	deny404  = "404"      // another user's route: answered as if it did not exist
	isolated = "isolated" // another tenant: it reaches only its own namespace, never the target's data
)

// caller is one identity of the matrix: how it authenticates, which
// user's path it calls, and the outcome it must get on each kind of route.
type caller struct {
	name   string
	server string // "apikey", "header" or "untrusted" (header mode, proxy not trusted)
	header http.Header
	user   string // the {user} of the path
	// outcomes by route access: public, user, user-admin, admin; a route
	// that any identified caller may call (identified) allows every
	// caller but those denied 401.
	user_, userAdmin, admin string
}

// seeded users: stored user IDs, each with thread t1 of agent a1 holding a
// message SECRET-<id>, an element, an active session and a queued job1. Callers that are
// allowed write to a user of their own, so that no allowed call changes
// what a denied call is checked against (alice).
var seededUsers = []string{"alice", "bob", "carol", "erin", "acme/alice", "acme/dave"}

func seedIsolation(t *testing.T, s agentmem.Store) {
	t.Helper()
	ctx := context.Background()
	for _, u := range seededUsers {
		MustCreateThread(t, s, &agentmem.Thread{UserID: u, ID: "t1", AgentID: "a1"},
			&agentmem.Message{ID: "m-" + strings.ReplaceAll(u, "/", "-"), Role: agentmem.RoleUser, Content: "SECRET-" + u})
		if err := s.CreateElement(ctx, u, "t1", &agentmem.Element{Name: "el", Content: "SECRET-" + u}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.SetSession(ctx, u, "a1", "t1"); err != nil {
			t.Fatal(err)
		}
		if err := s.CreateMemory(ctx, &agentmem.Memory{UserID: u, ID: "mem1", Text: "SECRET-" + u}); err != nil {
			t.Fatal(err)
		}
		if err := s.PutEntities(ctx, u, []*agentmem.Entity{{ID: "ent1", Name: "SECRET-" + u, Aliases: []string{"Secret Workflow"}}}); err != nil {
			t.Fatal(err)
		}
		if err := s.PutEntityRefs(ctx, u, []*agentmem.EntityRef{{EntityID: "ent1", ThreadID: "t1"}}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.PutNotes(ctx, u, "a1", agentmem.NotesOp{Operation: agentmem.NotesOverwrite, Content: "SECRET-" + u}); err != nil {
			t.Fatal(err)
		}
		if err := s.PutProfile(ctx, &agentmem.Profile{UserID: u, Text: "SECRET-" + u, Method: agentmem.ProfileAssembled}, -1, nil); err != nil {
			t.Fatal(err)
		}
		if err := s.PutReflections(ctx, u, []*agentmem.Reflection{{UserID: u, ThreadID: "t1", Status: agentmem.ReflectionPending, Reason: "SECRET-" + u}}, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := s.EnqueueJob(ctx, &agentmem.Job{UserID: u, ID: "job1", Kind: "isolation", Payload: json.RawMessage(`{"secret":"SECRET-` + u + `"}`)}); err != nil {
			t.Fatal(err)
		}
	}
}

// mustKey stores a key of scope sc created at created with lifetime ttl
// and returns its token and ID.
func mustKey(t *testing.T, s agentmem.Store, scope string, created time.Time, ttl time.Duration) (string, string) {
	t.Helper()
	sc, err := agentmem.ParseScope(scope)
	if err != nil {
		t.Fatal(err)
	}
	token, k, err := agentmem.NewAPIKey(sc, scope, created, ttl)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CreateKey(context.Background(), k); err != nil {
		t.Fatal(err)
	}
	return token, k.ID
}

func bearerHeader(token string) http.Header {
	return http.Header{"Authorization": {"Bearer " + token}}
}

// TestIsolation is the isolation matrix: every route of the route table,
// called by every kind of identity, on both backends. Denied calls must get
// their status and change nothing; calls of another tenant must never see
// the target's data; allowed calls must succeed on their own user's data
// and never show a tenant's stored user IDs.
func TestIsolation(t *testing.T) {
	t.Run("SQLite", func(t *testing.T) {
		testIsolation(t, func(tb testing.TB) agentmem.Store { return testutil.MustOpenSQLite(tb) })
	})
	t.Run("PostgreSQL", func(t *testing.T) {
		schemas := testutil.NewSchemas(t)
		testIsolation(t, func(tb testing.TB) agentmem.Store { return schemas.MustOpen(tb) })
	})
}

func testIsolation(t *testing.T, open func(testing.TB) agentmem.Store) {
	table := httpapi.RouteTable(httpapi.Options{Metrics: metrics.Handler(prometheus.NewRegistry())})
	for _, rt := range table {
		if _, ok := routeCases[rt.Pattern]; !ok {
			t.Errorf("route %s has no case in routeCases: add one so that the isolation matrix covers it", rt.Pattern)
		}
	}
	for _, rt := range table {
		rc, ok := routeCases[rt.Pattern]
		if !ok {
			continue
		}
		t.Run(rt.Pattern, func(t *testing.T) {
			t.Parallel() // a store and servers of its own
			store := open(t)
			seedIsolation(t, store)
			now := time.Now()
			admin, _ := mustKey(t, store, "admin", now, 0)
			alice, _ := mustKey(t, store, "user:alice", now, 0)
			bob, _ := mustKey(t, store, "user:bob", now, 0)
			acme, _ := mustKey(t, store, "tenant:acme", now, 0)
			globex, _ := mustKey(t, store, "tenant:globex", now, 0)
			acmeAlice, _ := mustKey(t, store, "tenant:acme/user:alice", now, 0)
			acmeBob, _ := mustKey(t, store, "tenant:acme/user:bob", now, 0)
			revoked, revokedID := mustKey(t, store, "user:alice", now, 0)
			if _, err := store.RevokeKey(context.Background(), revokedID); err != nil {
				t.Fatal(err)
			}
			expired, _ := mustKey(t, store, "user:alice", now.Add(-2*time.Hour), time.Hour)
			_, targetKey := mustKey(t, store, "user:zed", now, 0)
			unknown, _, _ := agentmem.NewAPIKey(agentmem.Scope{Kind: agentmem.ScopeAdmin}, "", now, 0) // never stored
			wrongSecret := admin[:len(admin)-4] + "AAAA"
			if wrongSecret == admin {
				wrongSecret = admin[:len(admin)-4] + "BBBB"
			}

			opt := httpapi.Options{Metrics: metrics.Handler(prometheus.NewRegistry())}
			servers := map[string]string{}
			opt.Auth = httpapi.Auth{Mode: httpapi.AuthAPIKey}
			servers["apikey"] = MustServe(t, store, opt).URL
			opt.Metrics = metrics.Handler(prometheus.NewRegistry())
			opt.Auth = httpapi.Auth{Mode: httpapi.AuthHeader, TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}
			servers["header"] = MustServe(t, store, opt).URL
			opt.Metrics = metrics.Handler(prometheus.NewRegistry())
			opt.Auth = httpapi.Auth{Mode: httpapi.AuthHeader, TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}}
			servers["untrusted"] = MustServe(t, store, opt).URL

			principal := func(user string) http.Header { return http.Header{httpapi.DefaultUserHeader: {user}} }
			denied := []caller{
				{"NoCredentials", "apikey", nil, "alice", deny401, deny401, deny401},
				{"Malformed", "apikey", bearerHeader("not-a-key"), "alice", deny401, deny401, deny401},
				{"MalformedScheme", "apikey", http.Header{"Authorization": {"Basic " + alice}}, "alice", deny401, deny401, deny401},
				{"Unknown", "apikey", bearerHeader(unknown), "alice", deny401, deny401, deny401},
				{"WrongSecret", "apikey", bearerHeader(wrongSecret), "alice", deny401, deny401, deny401},
				{"Revoked", "apikey", bearerHeader(revoked), "alice", deny401, deny401, deny401},
				{"Expired", "apikey", bearerHeader(expired), "alice", deny401, deny401, deny401},
				{"TwoKeys", "apikey", http.Header{"Authorization": {"Bearer " + alice}, "X-Api-Key": {bob}}, "alice", deny401, deny401, deny401},
				{"WrongUser", "apikey", bearerHeader(bob), "alice", deny404, deny404, deny403},
				{"WrongUserXAPIKey", "apikey", http.Header{"X-Api-Key": {bob}}, "alice", deny404, deny404, deny403},
				{"TenantUserOfOther", "apikey", bearerHeader(acmeBob), "alice", deny404, deny404, deny403},
				{"OtherTenant", "apikey", bearerHeader(globex), "alice", isolated, isolated, deny403},
				{"HeaderWrongUser", "header", principal("bob"), "alice", deny404, deny404, deny403},
				{"HeaderUntrustedProxy", "untrusted", principal("alice"), "alice", deny401, deny401, deny401},
				{"HeaderNone", "header", nil, "alice", deny401, deny401, deny401},
			}
			allowed := []caller{
				{"Own", "apikey", bearerHeader(alice), "alice", allow, deny403, deny403},
				{"TenantUser", "apikey", bearerHeader(acmeAlice), "alice", allow, deny403, deny403}, // acme/alice
				{"Tenant", "apikey", bearerHeader(acme), "dave", allow, allow, deny403},             // acme/dave
				{"Header", "header", principal("erin"), "erin", allow, deny403, deny403},
				{"Admin", "apikey", bearerHeader(admin), "carol", allow, allow, allow},
			}
			for _, c := range denied {
				call(t, servers, rt, rc, c, targetKey)
			}
			mustBeIntact(t, store, "alice")
			for _, c := range allowed {
				call(t, servers, rt, rc, c, targetKey)
			}
			mustBeIntact(t, store, "bob")
		})
	}
}

// call makes caller c call route rt and checks the outcome.
func call(t *testing.T, servers map[string]string, rt httpapi.RouteAccess, rc routeCase, c caller, targetKey string) {
	t.Helper()
	want := allow
	switch rt.Access {
	case "user":
		want = c.user_
	case "user-admin":
		want = c.userAdmin
	case "admin":
		want = c.admin
	case "identified":
		if c.user_ == deny401 {
			want = deny401
		}
	}
	method, _, _ := strings.Cut(rt.Pattern, " ")
	path := strings.NewReplacer("{user}", c.user, "{thread}", "t1", "{agent}", "a1", "{key}", targetKey).Replace(rc.path)
	header := http.Header{"Content-Type": {"application/json"}}
	for k, v := range c.header {
		header[k] = v
	}
	resp, body := Do(t, method, servers[c.server]+path, header, rc.body)
	got := resp.StatusCode
	switch want {
	case allow:
		if got != rc.ok {
			t.Errorf("%s: %s %s: status %d, want %d: %s", c.name, method, path, got, rc.ok, body)
		}
		if strings.Contains(string(body), `"user_id":"acme/`) {
			t.Errorf("%s: %s %s: the answer shows a tenant's stored user ID: %s", c.name, method, path, body)
		}
		return
	case isolated:
		if got >= 500 || got == 401 || got == 403 {
			t.Errorf("%s: %s %s: status %d, want the answer of its own (empty) namespace: %s", c.name, method, path, got, body)
		}
	default:
		if wantStatus := map[string]int{deny401: 401, deny403: 403, deny404: 404}[want]; got != wantStatus {
			t.Errorf("%s: %s %s: status %d, want %d: %s", c.name, method, path, got, wantStatus, body)
		}
		var e struct {
			Error struct{ Code, Message string } `json:"error"`
		}
		if json.Unmarshal(body, &e) != nil || e.Error.Code == "" || e.Error.Message == "" {
			t.Errorf("%s: %s %s: body %q is not a JSON error", c.name, method, path, body)
		}
	}
	if strings.Contains(string(body), "SECRET-") {
		t.Errorf("%s: %s %s: a denied call saw another user's data: %s", c.name, method, path, body)
	}
}

// mustBeIntact checks that user still has thread t1 with its one message,
// its element and its session: what every denied call must leave alone.
func mustBeIntact(t *testing.T, s agentmem.Store, user string) {
	t.Helper()
	ctx := context.Background()
	th, err := s.FindThreadByID(ctx, user, "t1")
	if err != nil {
		t.Fatalf("%s's thread t1: %v", user, err)
	}
	msgs, _, err := s.FindMessages(ctx, user, "t1", agentmem.MessageFilter{})
	if err != nil || len(msgs) != 1 || msgs[0].Content != "SECRET-"+user || th.AgentID != "a1" {
		t.Fatalf("%s's thread t1 changed: %+v, messages %v, err %v", user, th, msgs, err)
	}
	els, _, err := s.FindElements(ctx, user, "t1", agentmem.ElementFilter{})
	if err != nil || len(els) != 1 {
		t.Fatalf("%s's elements changed: %v, err %v", user, els, err)
	}
	if sess, err := s.FindSession(ctx, user, "a1"); err != nil || sess.ThreadID != "t1" {
		t.Fatalf("%s's session changed: %+v, err %v", user, sess, err)
	}
	if m, err := s.FindMemoryByID(ctx, user, "mem1"); err != nil || m.Text != "SECRET-"+user || m.Version != 1 {
		t.Fatalf("%s's memory changed: %+v, err %v", user, m, err)
	}
	if e, err := s.FindEntityByID(ctx, user, "ent1"); err != nil || e.Name != "SECRET-"+user || e.Type != "" {
		t.Fatalf("%s's entity changed: %+v, err %v", user, e, err)
	}
	if refs, _, err := s.FindEntityRefs(ctx, user, agentmem.EntityRefFilter{EntityID: "ent1"}); err != nil || len(refs) != 1 {
		t.Fatalf("%s's entity references changed: %v, err %v", user, refs, err)
	}
	if n, err := s.FindNotes(ctx, user, "a1"); err != nil || n.Content != "SECRET-"+user || n.Version != 1 {
		t.Fatalf("%s's notes changed: %+v, err %v", user, n, err)
	}
	if jobs, _, err := s.FindJobs(ctx, agentmem.JobFilter{UserID: &user}); err != nil || len(jobs) != 1 || jobs[0].ID != "job1" || jobs[0].Status != agentmem.JobQueued || jobs[0].Attempts != 0 {
		t.Fatalf("%s's jobs changed: %+v, err %v", user, jobs, err)
	}
}
