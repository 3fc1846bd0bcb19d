package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/client"
	"github.com/agentmem/agentmem/core"
	"github.com/agentmem/agentmem/httpapi"
	"github.com/agentmem/agentmem/internal/testutil"
	"github.com/agentmem/agentmem/metrics"
	"github.com/agentmem/agentmem/reflection"
	"github.com/agentmem/agentmem/storetest"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/prometheus/client_golang/prometheus"
)

// MustServe serves the real handler, with metrics, over an empty SQLite
// store and returns a client of it, and the store for fixtures that no
// route makes (reflections, jobs).
func MustServe(tb testing.TB) (*client.Client, agentmem.Store) {
	tb.Helper()
	s := testutil.MustOpenSQLite(tb)
	reg := prometheus.NewRegistry()
	srv := httptest.NewServer(httpapi.NewHandler(nil, core.New(s, core.Options{}), httpapi.Options{Middleware: metrics.HTTP(reg, httpapi.Served), Metrics: metrics.Handler(reg)}))
	tb.Cleanup(srv.Close)
	return client.New(srv.URL+"/", srv.Client()), s
}

// wantCode fails unless err carries the agentmem error code want.
func wantCode(tb testing.TB, err error, want string) {
	tb.Helper()
	if got := agentmem.ErrorCode(err); got != want {
		tb.Fatalf("ErrorCode=%q (%v), want %q", got, err, want)
	}
}

// mustThread creates the user's thread id of agent.
func mustThread(tb testing.TB, c *client.Client, user, id, agent string) *agentmem.Thread {
	tb.Helper()
	t := &agentmem.Thread{ID: id, AgentID: agent}
	if err := c.CreateThread(context.Background(), user, t); err != nil {
		tb.Fatalf("CreateThread(%s, %s): %v", user, id, err)
	}
	return t
}

// mustAppend appends one message per content to a thread, user and
// assistant in turn.
func mustAppend(tb testing.TB, c *client.Client, user, thread string, contents ...string) []*agentmem.Message {
	tb.Helper()
	var msgs []*agentmem.Message
	for i, s := range contents {
		role := agentmem.RoleUser
		if i%2 == 1 {
			role = agentmem.RoleAssistant
		}
		msgs = append(msgs, &agentmem.Message{Role: role, Content: s})
	}
	stored, err := c.AppendMessages(context.Background(), user, thread, msgs, "")
	if err != nil {
		tb.Fatalf("AppendMessages(%s, %s): %v", user, thread, err)
	}
	return stored
}

// mustMemory creates a memory of the user.
func mustMemory(tb testing.TB, c *client.Client, user string, in agentmem.MemoryInput) *agentmem.Memory {
	tb.Helper()
	m, err := c.CreateMemory(context.Background(), user, in)
	if err != nil {
		tb.Fatalf("CreateMemory(%s, %q): %v", user, in.Text, err)
	}
	return m
}

// collect gathers what an iterator yields, failing on its first error.
func collect[T any](tb testing.TB, seq func(func(T, error) bool)) []T {
	tb.Helper()
	var out []T
	for v, err := range seq {
		if err != nil {
			tb.Fatalf("iterating: %v", err)
		}
		out = append(out, v)
	}
	return out
}

func ptr[T any](v T) *T { return &v }

// routeCases exercise, for each route of httpapi/routes.go, the client
// method that calls it against the real handler, each on a server of its
// own. TestClient_RoutesCovered keeps the table complete.
var routeCases = map[string]func(t *testing.T, c *client.Client, s agentmem.Store){
	"GET /healthz": func(t *testing.T, c *client.Client, s agentmem.Store) {
		if err := c.Health(t.Context()); err != nil {
			t.Fatalf("Health: %v", err)
		}
	},
	"GET /readyz": func(t *testing.T, c *client.Client, s agentmem.Store) {
		if err := c.Ready(t.Context()); err != nil {
			t.Fatalf("Ready: %v", err)
		}
	},
	"GET /openapi.json": func(t *testing.T, c *client.Client, s agentmem.Store) {
		var b bytes.Buffer
		if err := c.OpenAPI(t.Context(), &b); err != nil {
			t.Fatalf("OpenAPI: %v", err)
		}
		var doc struct {
			OpenAPI string                    `json:"openapi"`
			Paths   map[string]map[string]any `json:"paths"`
		}
		if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
			t.Fatalf("OpenAPI: %v", err)
		}
		if doc.OpenAPI != "3.1.0" || doc.Paths["/v1/users/{user}/threads"]["get"] == nil {
			t.Fatalf("OpenAPI: openapi=%q, %d paths, want 3.1.0 with GET /v1/users/{user}/threads", doc.OpenAPI, len(doc.Paths))
		}
	},
	"GET /metrics": func(t *testing.T, c *client.Client, s agentmem.Store) {
		if err := c.Health(t.Context()); err != nil {
			t.Fatalf("Health: %v", err)
		}
		var b bytes.Buffer
		if err := c.Metrics(t.Context(), &b); err != nil {
			t.Fatalf("Metrics: %v", err)
		}
		if !strings.Contains(b.String(), `agentmem_http_requests_total{`) {
			t.Fatalf("Metrics=%q, want agentmem_http_requests_total", b.String())
		}
	},
	"GET /v1/stats": func(t *testing.T, c *client.Client, s agentmem.Store) {
		mustThread(t, c, "alice", "t1", "")
		mustAppend(t, c, "alice", "t1", "Hello.", "Hi!")
		st, err := c.Stats(t.Context())
		if err != nil || st.Users != 1 || st.Threads != 1 || st.Messages != 2 {
			t.Fatalf("Stats=%+v, %v; want 1 user, 1 thread, 2 messages", st, err)
		}
	},
	"POST /v1/cleanup": func(t *testing.T, c *client.Client, s agentmem.Store) {
		mustThread(t, c, "alice", "t1", "")
		mustAppend(t, c, "alice", "t1", "Hello.", "Hi!")
		res, err := c.Cleanup(t.Context(), time.Now().Add(time.Hour), true)
		if err != nil || !res.DryRun || res.Users != 1 || res.Deleted.Threads != 1 || res.Deleted.Messages != 2 {
			t.Fatalf("Cleanup dry run=%+v, %v; want 1 user, 1 thread, 2 messages", res, err)
		}
		if _, err := c.FindThreadByID(t.Context(), "alice", "t1"); err != nil {
			t.Fatalf("a dry run deleted the thread: %v", err)
		}
		res, err = c.Cleanup(t.Context(), time.Now().Add(time.Hour), false)
		if err != nil || res.Deleted.Threads != 1 {
			t.Fatalf("Cleanup=%+v, %v", res, err)
		}
		_, err = c.FindThreadByID(t.Context(), "alice", "t1")
		wantCode(t, err, agentmem.ENOTFOUND)
	},
	"GET /v1/audit": func(t *testing.T, c *client.Client, s agentmem.Store) {
		ctx := t.Context()
		if _, err := c.CreateKey(ctx, agentmem.KeyInput{Scope: "user:alice"}); err != nil {
			t.Fatalf("CreateKey: %v", err)
		}
		mustThread(t, c, "alice", "t1", "")
		if _, err := c.EraseUser(ctx, "alice"); err != nil {
			t.Fatalf("EraseUser: %v", err)
		}
		evs, next, err := c.FindAuditEvents(ctx, agentmem.AuditFilter{Action: ptr(agentmem.AuditUserErase)})
		if err != nil || len(evs) != 1 || evs[0].UserID != "alice" || next != "" {
			t.Fatalf("FindAuditEvents(user.erase)=%+v, %q, %v; want alice's erasure", evs, next, err)
		}
		if evs, _, err := c.FindAuditEvents(ctx, agentmem.AuditFilter{UserID: ptr("bob")}); err != nil || len(evs) != 0 {
			t.Fatalf("FindAuditEvents(bob)=%+v, %v; want none", evs, err)
		}
		if evs, _, err := c.FindAuditEvents(ctx, agentmem.AuditFilter{Since: ptr(time.Now().Add(time.Hour))}); err != nil || len(evs) != 0 {
			t.Fatalf("FindAuditEvents(since an hour ahead)=%+v, %v; want none", evs, err)
		}
		if all := collect(t, c.AllAuditEvents(ctx, agentmem.AuditFilter{Limit: 1})); len(all) != 2 || all[0].Action != agentmem.AuditUserErase {
			t.Fatalf("AllAuditEvents=%+v; want the erasure, then the key", all)
		}
	},
	"GET /v1/jobs": func(t *testing.T, c *client.Client, s agentmem.Store) {
		ctx := t.Context()
		for _, kind := range []string{"summarize", "embed"} {
			if _, err := s.EnqueueJob(ctx, &agentmem.Job{UserID: "alice", Kind: kind, Payload: json.RawMessage(`{}`)}); err != nil {
				t.Fatalf("EnqueueJob: %v", err)
			}
		}
		jobs, _, err := c.FindJobs(ctx, agentmem.JobFilter{Kind: ptr("embed"), Status: ptr(agentmem.JobQueued), UserID: ptr("alice")})
		if err != nil || len(jobs) != 1 || jobs[0].Kind != "embed" {
			t.Fatalf("FindJobs(embed)=%+v, %v; want the embed job", jobs, err)
		}
		if jobs, _, err := c.FindJobs(ctx, agentmem.JobFilter{Status: ptr(agentmem.JobDead)}); err != nil || len(jobs) != 0 {
			t.Fatalf("FindJobs(dead)=%+v, %v; want none", jobs, err)
		}
		_, _, err = c.FindJobs(ctx, agentmem.JobFilter{Status: ptr("bogus")})
		wantCode(t, err, agentmem.EINVALID)
		if all := collect(t, c.AllJobs(ctx, agentmem.JobFilter{Limit: 1})); len(all) != 2 {
			t.Fatalf("AllJobs=%+v; want 2", all)
		}
	},
	"GET /v1/users/{user}/jobs": func(t *testing.T, c *client.Client, s agentmem.Store) {
		ctx := t.Context()
		for _, j := range []*agentmem.Job{{UserID: "alice", Kind: "summarize"}, {UserID: "alice", Kind: "embed"}, {UserID: "bob", Kind: "embed"}} {
			if _, err := s.EnqueueJob(ctx, j); err != nil {
				t.Fatalf("EnqueueJob: %v", err)
			}
		}
		// The user of the path, whatever the filter's UserID says.
		jobs, next, err := c.FindUserJobs(ctx, "alice", agentmem.JobFilter{Kind: ptr("embed"), Status: ptr(agentmem.JobQueued), UserID: ptr("bob")})
		if err != nil || len(jobs) != 1 || jobs[0].Kind != "embed" || jobs[0].UserID != "alice" || next != "" {
			t.Fatalf("FindUserJobs(embed)=%+v, %q, %v; want alice's embed job", jobs, next, err)
		}
		if jobs, _, err := c.FindUserJobs(ctx, "alice", agentmem.JobFilter{Status: ptr(agentmem.JobDead)}); err != nil || len(jobs) != 0 {
			t.Fatalf("FindUserJobs(dead)=%+v, %v; want none", jobs, err)
		}
		if all := collect(t, c.AllUserJobs(ctx, "alice", agentmem.JobFilter{Limit: 1})); len(all) != 2 {
			t.Fatalf("AllUserJobs=%+v; want alice's 2", all)
		}
		_, _, err = c.FindUserJobs(ctx, "alice", agentmem.JobFilter{Status: ptr("bogus")})
		wantCode(t, err, agentmem.EINVALID)
	},
	"POST /v1/users/{user}/jobs/{job}/retry": func(t *testing.T, c *client.Client, s agentmem.Store) {
		ctx := t.Context()
		dead := storetest.MustKillJob(t, s, &agentmem.Job{UserID: "alice", Kind: "summarize"}, "model down")
		j, err := c.RetryJob(ctx, "alice", dead.ID)
		if err != nil || j.ID != dead.ID || j.Status != agentmem.JobQueued || j.Attempts != 0 || j.LastError != "model down" || j.UserID != "alice" {
			t.Fatalf("RetryJob=%+v, %v; want it queued again with its last error", j, err)
		}
		_, err = c.RetryJob(ctx, "alice", dead.ID)
		wantCode(t, err, agentmem.ECONFLICT)
		_, err = c.RetryJob(ctx, "alice", "nope")
		wantCode(t, err, agentmem.ENOTFOUND)
		_, err = c.RetryJob(ctx, "bob", dead.ID)
		wantCode(t, err, agentmem.ENOTFOUND)
	},
	"GET /v1/users": func(t *testing.T, c *client.Client, s agentmem.Store) {
		ctx := t.Context()
		mustThread(t, c, "alice", "t1", "")
		mustAppend(t, c, "alice", "t1", "Hello.", "Hi!")
		mustMemory(t, c, "bob", agentmem.MemoryInput{Text: "User is vegetarian."})
		mustThread(t, c, "tenant:acme/user:carol", "t1", "")
		users, next, err := c.FindUsers(ctx, agentmem.UserFilter{})
		if err != nil || len(users) != 3 || next != "" {
			t.Fatalf("FindUsers=%+v, %q, %v; want 3", users, next, err)
		}
		if u := users[1]; u.UserID != "alice" || u.Threads != 1 || u.Messages != 2 || u.Memories != 0 || u.LastActiveAt == nil {
			t.Fatalf("alice=%+v", u)
		}
		if u := users[2]; u.UserID != "bob" || u.Threads != 0 || u.Memories != 1 || u.LastActiveAt != nil {
			t.Fatalf("bob=%+v", u)
		}
		all := collect(t, c.AllUsers(ctx, agentmem.UserFilter{Limit: 1}))
		if len(all) != 3 || all[0].UserID != "tenant:acme/user:carol" {
			t.Fatalf("AllUsers=%+v; want the 3, acme's carol first", all)
		}
		if _, err := c.FindThreadByID(ctx, all[0].UserID, "t1"); err != nil {
			t.Fatalf("FindThreadByID(%s): %v; want the user reachable by the name listed", all[0].UserID, err)
		}
		_, _, err = c.FindUsers(ctx, agentmem.UserFilter{Cursor: "garbage!"})
		wantCode(t, err, agentmem.EINVALID)
	},
	"GET /v1/me": func(t *testing.T, c *client.Client, s agentmem.Store) {
		me, err := c.WhoAmI(t.Context())
		want := &agentmem.Caller{Kind: agentmem.ScopeAdmin, Via: "none", DefaultUser: agentmem.LocalUser}
		if err != nil {
			t.Fatalf("WhoAmI: %v", err)
		}
		if diff := cmp.Diff(want, me); diff != "" {
			t.Fatalf("WhoAmI mismatch (-want +got):\n%s", diff)
		}
	},
	"GET /v1/keys": func(t *testing.T, c *client.Client, s agentmem.Store) {
		ctx := t.Context()
		for _, scope := range []string{"user:alice", "tenant:acme"} {
			if _, err := c.CreateKey(ctx, agentmem.KeyInput{Scope: scope}); err != nil {
				t.Fatalf("CreateKey(%s): %v", scope, err)
			}
		}
		keys, _, err := c.FindKeys(ctx, agentmem.KeyFilter{TenantID: ptr("acme")})
		if err != nil || len(keys) != 1 || keys[0].Scope.TenantID != "acme" {
			t.Fatalf("FindKeys(acme)=%+v, %v; want acme's key", keys, err)
		}
		if all := collect(t, c.AllKeys(ctx, agentmem.KeyFilter{Limit: 1})); len(all) != 2 {
			t.Fatalf("AllKeys=%+v; want 2", all)
		}
	},
	"POST /v1/keys": func(t *testing.T, c *client.Client, s agentmem.Store) {
		k, err := c.CreateKey(t.Context(), agentmem.KeyInput{Scope: "tenant:acme/user:alice", Name: "app", ExpiresIn: "90d"})
		if err != nil || k.Token == "" || k.Key.Name != "app" || k.Key.Scope.UserID != "alice" || k.Key.ExpiresAt == nil {
			t.Fatalf("CreateKey=%+v, %v; want a token and alice's key of acme, expiring", k, err)
		}
		_, err = c.CreateKey(t.Context(), agentmem.KeyInput{Scope: "everyone"})
		wantCode(t, err, agentmem.EINVALID)
	},
	"DELETE /v1/keys/{key}": func(t *testing.T, c *client.Client, s agentmem.Store) {
		k, err := c.CreateKey(t.Context(), agentmem.KeyInput{Scope: "admin"})
		if err != nil {
			t.Fatalf("CreateKey: %v", err)
		}
		got, err := c.RevokeKey(t.Context(), k.Key.ID)
		if err != nil || got.ID != k.Key.ID || got.RevokedAt == nil {
			t.Fatalf("RevokeKey=%+v, %v; want the key, revoked", got, err)
		}
		_, err = c.RevokeKey(t.Context(), "0123456789abcdef")
		wantCode(t, err, agentmem.ENOTFOUND)
	},

	"GET /v1/users/{user}/threads": func(t *testing.T, c *client.Client, s agentmem.Store) {
		ctx := t.Context()
		mustThread(t, c, "alice", "t1", "bot")
		mustThread(t, c, "alice", "t2", "bot")
		mustThread(t, c, "alice", "t3", "")
		if _, err := c.EndThread(ctx, "alice", "t1"); err != nil {
			t.Fatalf("EndThread: %v", err)
		}
		if _, err := c.UpdateThread(ctx, "alice", "t2", agentmem.ThreadUpdate{Tags: &[]string{"x", "y,z"}, Title: ptr("50% off_Sale")}); err != nil {
			t.Fatalf("UpdateThread: %v", err)
		}
		ids := func(ts []*agentmem.Thread) []string {
			var out []string
			for _, t := range ts {
				out = append(out, t.ID)
			}
			slices.Sort(out)
			return out
		}
		past, future := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC), time.Now().Add(time.Hour)
		for _, tc := range []struct {
			f    agentmem.ThreadFilter
			want []string
		}{
			{agentmem.ThreadFilter{Tags: []string{"x", "y,z"}}, []string{"t2"}},
			{agentmem.ThreadFilter{Tags: []string{"x", "y"}}, nil},
			{agentmem.ThreadFilter{UpdatedSince: &past, UpdatedBefore: &future}, []string{"t1", "t2", "t3"}},
			{agentmem.ThreadFilter{UpdatedBefore: &past}, nil},
			{agentmem.ThreadFilter{UpdatedSince: &future}, nil},
			{agentmem.ThreadFilter{AgentID: ptr("bot")}, []string{"t1", "t2"}},
			{agentmem.ThreadFilter{AgentID: ptr("")}, []string{"t3"}},
			{agentmem.ThreadFilter{Status: ptr(agentmem.ThreadEnded)}, []string{"t1"}},
			{agentmem.ThreadFilter{Title: ptr("% OFF_s")}, []string{"t2"}},
			{agentmem.ThreadFilter{Title: ptr("0%_o")}, nil},
			{agentmem.ThreadFilter{Title: ptr("")}, []string{"t1", "t2", "t3"}},
			{agentmem.ThreadFilter{}, []string{"t1", "t2", "t3"}},
		} {
			got, next, err := c.FindThreads(ctx, "alice", tc.f)
			if err != nil || next != "" || !slices.Equal(ids(got), tc.want) {
				t.Fatalf("FindThreads(%+v)=%v, %q, %v; want %v", tc.f, ids(got), next, err, tc.want)
			}
		}
		page, next, err := c.FindThreads(ctx, "alice", agentmem.ThreadFilter{Limit: 2})
		if err != nil || len(page) != 2 || next == "" {
			t.Fatalf("FindThreads(limit 2)=%v, %q, %v; want 2 and a cursor", ids(page), next, err)
		}
		if rest, next, err := c.FindThreads(ctx, "alice", agentmem.ThreadFilter{Limit: 2, Cursor: next}); err != nil || len(rest) != 1 || next != "" {
			t.Fatalf("FindThreads(page 2)=%v, %q, %v; want the last one", ids(rest), next, err)
		}
		if all := collect(t, c.AllThreads(ctx, "alice", agentmem.ThreadFilter{Limit: 1})); !slices.Equal(ids(all), []string{"t1", "t2", "t3"}) {
			t.Fatalf("AllThreads=%v; want t1, t2, t3", ids(all))
		}
		_, _, err = c.FindThreads(ctx, "alice", agentmem.ThreadFilter{Cursor: "garbage!"})
		wantCode(t, err, agentmem.EINVALID)
		_, _, err = c.FindThreads(ctx, "alice", agentmem.ThreadFilter{IncludeDeleted: true})
		wantCode(t, err, agentmem.EINVALID)
	},
	"POST /v1/users/{user}/threads": func(t *testing.T, c *client.Client, s agentmem.Store) {
		ctx := t.Context()
		th := &agentmem.Thread{ID: "t1", AgentID: "bot", Title: "Hello", Metadata: json.RawMessage(`{"k":1}`), Tags: []string{"x"}}
		if err := c.CreateThread(ctx, "alice", th); err != nil {
			t.Fatalf("CreateThread: %v", err)
		}
		if th.UserID != "alice" || th.Status != agentmem.ThreadActive || th.CreatedAt.IsZero() || string(th.Metadata) != `{"k":1}` || th.Title != "Hello" {
			t.Fatalf("CreateThread filled in %+v, want alice's active t1", th)
		}
		wantCode(t, c.CreateThread(ctx, "alice", &agentmem.Thread{ID: "t1"}), agentmem.ECONFLICT)
		t2 := &agentmem.Thread{}
		if err := c.CreateThread(ctx, "alice", t2); err != nil || t2.ID == "" {
			t.Fatalf("CreateThread without ID=%+v, %v; want an assigned ID", t2, err)
		}
	},
	"POST /v1/users/{user}/threads/import": func(t *testing.T, c *client.Client, s agentmem.Store) {
		ctx := t.Context()
		mustThread(t, c, "alice", "t1", "bot")
		mustAppend(t, c, "alice", "t1", "Weather?", "Rain.")
		x, err := c.ExportThread(ctx, "alice", "t1")
		if err != nil {
			t.Fatalf("ExportThread: %v", err)
		}
		th, err := c.ImportThread(ctx, "bob", x)
		if err != nil || th.UserID != "bob" || th.ID != "t1" || th.MessageCount != 2 {
			t.Fatalf("ImportThread=%+v, %v; want bob's t1 with 2 messages", th, err)
		}
		y, err := c.ExportThread(ctx, "bob", "t1")
		if err != nil {
			t.Fatalf("ExportThread(bob): %v", err)
		}
		if diff := cmp.Diff(x, y, cmpopts.IgnoreFields(agentmem.Thread{}, "UserID")); diff != "" {
			t.Fatalf("import round trip mismatch (-want +got):\n%s", diff)
		}
		_, err = c.ImportThread(ctx, "bob", x)
		wantCode(t, err, agentmem.ECONFLICT)
	},
	"GET /v1/users/{user}/threads/{thread}": func(t *testing.T, c *client.Client, s agentmem.Store) {
		ctx := t.Context()
		th := mustThread(t, c, "alice", "t1", "bot")
		got, err := c.FindThreadByID(ctx, "alice", "t1")
		if err != nil {
			t.Fatalf("FindThreadByID: %v", err)
		}
		if diff := cmp.Diff(th, got); diff != "" {
			t.Fatalf("FindThreadByID mismatch (-want +got):\n%s", diff)
		}
		_, err = c.FindThreadByID(ctx, "bob", "t1")
		wantCode(t, err, agentmem.ENOTFOUND)
		if msg := agentmem.ErrorMessage(err); msg != `Thread "t1" not found.` {
			t.Fatalf("ErrorMessage=%q, want the server's", msg)
		}
		_, err = c.FindThreadByID(ctx, "alice", "a/b")
		wantCode(t, err, agentmem.EINVALID)
	},
	"PATCH /v1/users/{user}/threads/{thread}": func(t *testing.T, c *client.Client, s agentmem.Store) {
		mustThread(t, c, "alice", "t1", "bot")
		th, err := c.UpdateThread(t.Context(), "alice", "t1", agentmem.ThreadUpdate{Title: ptr("Renamed"), Tags: &[]string{"a", "b"}})
		if err != nil || th.Title != "Renamed" || !slices.Equal(th.Tags, []string{"a", "b"}) || th.AgentID != "bot" {
			t.Fatalf("UpdateThread=%+v, %v; want the title and tags changed only", th, err)
		}
	},
	"DELETE /v1/users/{user}/threads/{thread}": func(t *testing.T, c *client.Client, s agentmem.Store) {
		ctx := t.Context()
		mustThread(t, c, "alice", "t1", "")
		if err := c.DeleteThread(ctx, "alice", "t1", false); err != nil {
			t.Fatalf("DeleteThread: %v", err)
		}
		_, err := c.FindThreadByID(ctx, "alice", "t1")
		wantCode(t, err, agentmem.ENOTFOUND)
		if err := c.DeleteThread(ctx, "alice", "t1", true); err != nil {
			t.Fatalf("DeleteThread(permanent) of a soft-deleted thread: %v", err)
		}
		wantCode(t, c.DeleteThread(ctx, "alice", "t1", true), agentmem.ENOTFOUND)
	},
	"POST /v1/users/{user}/threads/{thread}/restore": func(t *testing.T, c *client.Client, s agentmem.Store) {
		ctx := t.Context()
		mustThread(t, c, "alice", "t1", "")
		mustThread(t, c, "alice", "t2", "")
		mustAppend(t, c, "alice", "t1", "Hello.")
		if err := c.DeleteThread(ctx, "alice", "t1", false); err != nil {
			t.Fatalf("DeleteThread: %v", err)
		}
		deleted, next, err := c.FindThreads(ctx, "alice", agentmem.ThreadFilter{Deleted: true})
		if err != nil || len(deleted) != 1 || deleted[0].ID != "t1" || deleted[0].DeletedAt == nil || next != "" {
			t.Fatalf("FindThreads(Deleted)=%v, %q, %v; want t1", deleted, next, err)
		}
		err = c.CreateThread(ctx, "alice", &agentmem.Thread{ID: "t1"})
		if wantCode(t, err, agentmem.ECONFLICT); !strings.Contains(agentmem.ErrorMessage(err), "restore") {
			t.Fatalf("CreateThread of a deleted thread's ID: %v; want it to say how to restore it", err)
		}
		th, err := c.RestoreThread(ctx, "alice", "t1")
		if err != nil || th.ID != "t1" || th.DeletedAt != nil || th.LastSeq != 1 {
			t.Fatalf("RestoreThread=%+v, %v; want t1 back", th, err)
		}
		if _, err := c.FindThreadByID(ctx, "alice", "t1"); err != nil {
			t.Fatalf("FindThreadByID after the restore: %v", err)
		}
		_, err = c.RestoreThread(ctx, "alice", "nope")
		wantCode(t, err, agentmem.ENOTFOUND)
	},
	"POST /v1/users/{user}/threads/{thread}/end": func(t *testing.T, c *client.Client, s agentmem.Store) {
		mustThread(t, c, "alice", "t1", "")
		th, err := c.EndThread(t.Context(), "alice", "t1")
		if err != nil || th.Status != agentmem.ThreadEnded || th.EndedAt == nil {
			t.Fatalf("EndThread=%+v, %v; want ended", th, err)
		}
		_, err = c.EndThread(t.Context(), "alice", "nope")
		wantCode(t, err, agentmem.ENOTFOUND)
	},
	"GET /v1/users/{user}/threads/{thread}/messages": func(t *testing.T, c *client.Client, s agentmem.Store) {
		ctx := t.Context()
		mustThread(t, c, "alice", "t1", "")
		stored := mustAppend(t, c, "alice", "t1", "one", "two", "three")
		all, next, err := c.FindMessages(ctx, "alice", "t1", agentmem.MessageFilter{})
		if err != nil || next != "" {
			t.Fatalf("FindMessages: %v, next %q", err, next)
		}
		if diff := cmp.Diff(stored, all); diff != "" {
			t.Fatalf("FindMessages mismatch (-want +got):\n%s", diff)
		}
		tail, next, err := c.FindMessages(ctx, "alice", "t1", agentmem.MessageFilter{Desc: true, Limit: 2})
		if err != nil || len(tail) != 2 || tail[0].Seq != 3 || next == "" {
			t.Fatalf("FindMessages(desc, 2)=%v, %q, %v; want seqs 3, 2 and a cursor", tail, next, err)
		}
		if rest, next, err := c.FindMessages(ctx, "alice", "t1", agentmem.MessageFilter{Desc: true, Limit: 2, Cursor: next}); err != nil || len(rest) != 1 || rest[0].Seq != 1 || next != "" {
			t.Fatalf("FindMessages(desc, page 2)=%v, %q, %v; want seq 1", rest, next, err)
		}
		if mid, _, err := c.FindMessages(ctx, "alice", "t1", agentmem.MessageFilter{AfterSeq: 1, BeforeSeq: 3}); err != nil || len(mid) != 1 || mid[0].Seq != 2 {
			t.Fatalf("FindMessages(1 < seq < 3)=%v, %v; want seq 2", mid, err)
		}
		if diff := cmp.Diff(stored, collect(t, c.AllMessages(ctx, "alice", "t1", agentmem.MessageFilter{Limit: 1}))); diff != "" {
			t.Fatalf("AllMessages mismatch (-want +got):\n%s", diff)
		}
		_, _, err = c.FindMessages(ctx, "alice", "t1", agentmem.MessageFilter{IncludeDeleted: true})
		wantCode(t, err, agentmem.EINVALID)
	},
	"POST /v1/users/{user}/threads/{thread}/messages": func(t *testing.T, c *client.Client, s agentmem.Store) {
		ctx := t.Context()
		mustThread(t, c, "alice", "t1", "")
		msgs := []*agentmem.Message{
			{Role: agentmem.RoleUser, Content: "Weather?"},
			{Role: agentmem.RoleAssistant, ToolCalls: []agentmem.ToolCall{{ID: "c1", Function: agentmem.FunctionCall{Name: "weather", Arguments: "{}"}}}},
			{Role: agentmem.RoleTool, ToolCallID: "c1", Content: "rain", Metadata: json.RawMessage(`{"src":"api"}`)},
		}
		stored, err := c.AppendMessages(ctx, "alice", "t1", msgs, "key-1")
		if err != nil || len(stored) != 3 || stored[0].Seq != 1 || stored[2].Seq != 3 || stored[1].ToolCalls[0].Type != "function" {
			t.Fatalf("AppendMessages=%v, %v; want seqs 1..3", stored, err)
		}
		retry, err := c.AppendMessages(ctx, "alice", "t1", msgs, "key-1")
		if err != nil {
			t.Fatalf("AppendMessages retry: %v", err)
		}
		if diff := cmp.Diff(stored, retry); diff != "" {
			t.Fatalf("retry mismatch (-want +got):\n%s", diff)
		}
		_, err = c.AppendMessages(ctx, "alice", "t1", msgs[:1], "key-1")
		wantCode(t, err, agentmem.ECONFLICT)
		_, err = c.AppendMessages(ctx, "alice", "t1", []*agentmem.Message{{Role: "robot"}}, "")
		wantCode(t, err, agentmem.EINVALID)
		_, err = c.AppendMessages(ctx, "alice", "t1", []*agentmem.Message{{Role: "user", Content: strings.Repeat("x", agentmem.DefaultMaxMessageBytes+1)}}, "")
		wantCode(t, err, agentmem.ETOOLARGE)
	},
	"GET /v1/users/{user}/threads/{thread}/elements": func(t *testing.T, c *client.Client, s agentmem.Store) {
		ctx := t.Context()
		mustThread(t, c, "alice", "t1", "")
		stored := mustAppend(t, c, "alice", "t1", "Weather?")
		onThread := &agentmem.Element{Type: "text", Name: "Ref #1", Content: "…"}
		onMessage := &agentmem.Element{MessageID: stored[0].ID, Type: "citation", Name: "source", URL: "https://example.com"}
		for _, e := range []*agentmem.Element{onThread, onMessage} {
			if err := c.CreateElement(ctx, "alice", "t1", e); err != nil {
				t.Fatalf("CreateElement: %v", err)
			}
		}
		els, _, err := c.FindElements(ctx, "alice", "t1", agentmem.ElementFilter{MessageID: &stored[0].ID})
		if err != nil {
			t.Fatalf("FindElements: %v", err)
		}
		if diff := cmp.Diff([]*agentmem.Element{onMessage}, els); diff != "" {
			t.Fatalf("FindElements(message) mismatch (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]*agentmem.Element{onThread, onMessage}, collect(t, c.AllElements(ctx, "alice", "t1", agentmem.ElementFilter{Limit: 1}))); diff != "" {
			t.Fatalf("AllElements mismatch (-want +got):\n%s", diff)
		}
		_, _, err = c.FindElements(ctx, "alice", "t1", agentmem.ElementFilter{MessageID: ptr("")})
		wantCode(t, err, agentmem.EINVALID)
	},
	"POST /v1/users/{user}/threads/{thread}/elements": func(t *testing.T, c *client.Client, s agentmem.Store) {
		mustThread(t, c, "alice", "t1", "")
		e := &agentmem.Element{Type: "citation", Name: "source", URL: "https://example.com"}
		if err := c.CreateElement(t.Context(), "alice", "t1", e); err != nil || e.ID == "" || e.ThreadID != "t1" || e.CreatedAt.IsZero() {
			t.Fatalf("CreateElement filled in %+v, %v; want an ID, the thread and a time", e, err)
		}
		wantCode(t, c.CreateElement(t.Context(), "alice", "t1", &agentmem.Element{MessageID: "nope"}), agentmem.ENOTFOUND)
	},
	"GET /v1/users/{user}/threads/{thread}/export": func(t *testing.T, c *client.Client, s agentmem.Store) {
		ctx := t.Context()
		mustThread(t, c, "alice", "t1", "")
		if _, err := c.UpdateThread(ctx, "alice", "t1", agentmem.ThreadUpdate{Title: ptr("Weather")}); err != nil {
			t.Fatalf("UpdateThread: %v", err)
		}
		stored := mustAppend(t, c, "alice", "t1", "Weather?", "Rain.")
		x, err := c.ExportThread(ctx, "alice", "t1")
		if err != nil || x.Thread.ID != "t1" {
			t.Fatalf("ExportThread=%+v, %v", x, err)
		}
		if diff := cmp.Diff(stored, x.Messages); diff != "" {
			t.Fatalf("ExportThread messages mismatch (-want +got):\n%s", diff)
		}
		md, err := c.ExportThreadMarkdown(ctx, "alice", "t1")
		if err != nil || !strings.HasPrefix(md, "# Weather\n") || !strings.Contains(md, "## 👤 User\n\nWeather?\n\n---\n") {
			t.Fatalf("ExportThreadMarkdown=%q, %v", md, err)
		}
	},
	"POST /v1/users/{user}/threads/{thread}/context": func(t *testing.T, c *client.Client, s agentmem.Store) {
		ctx := t.Context()
		mustThread(t, c, "alice", "t1", "")
		mustAppend(t, c, "alice", "t1", "Plan three days in Lisbon.", "Day 1: Alfama.")
		cx, err := c.BuildContext(ctx, "alice", "t1", agentmem.ContextRequest{Input: "And on day 2?", System: "You plan trips.", BudgetTokens: 1000})
		if err != nil {
			t.Fatalf("BuildContext: %v", err)
		}
		want := []string{"You plan trips.", "Plan three days in Lisbon.", "Day 1: Alfama.", "And on day 2?"}
		var got []string
		for _, m := range cx.Messages {
			got = append(got, fmt.Sprint(m.Content))
		}
		if !slices.Equal(got, want) || cx.Format != agentmem.FormatMessages || cx.Telemetry.BudgetTokens != 1000 || cx.Telemetry.UsedTokens == 0 {
			t.Fatalf("BuildContext=%v (format %q, telemetry %+v); want %v", got, cx.Format, cx.Telemetry, want)
		}
		text, err := c.BuildContext(ctx, "alice", "t1", agentmem.ContextRequest{Input: "And on day 2?", Format: agentmem.FormatText})
		if err != nil || text.Format != agentmem.FormatText || !strings.Contains(text.Text, "Day 1: Alfama.") {
			t.Fatalf("BuildContext(text)=%+v, %v; want the history as text", text, err)
		}
		_, err = c.BuildContext(ctx, "alice", "t1", agentmem.ContextRequest{Strategy: "guess"})
		wantCode(t, err, agentmem.EINVALID)
	},

	"POST /v1/users/{user}/turns": func(t *testing.T, c *client.Client, s agentmem.Store) {
		ctx := t.Context()
		ask := &agentmem.Message{Role: agentmem.RoleUser, Content: "Plan three days in Lisbon."}
		turn, err := c.BeginTurn(ctx, "alice", agentmem.TurnRequest{ThreadID: "trip", Messages: []*agentmem.Message{ask}})
		if err != nil {
			t.Fatalf("BeginTurn: %v", err)
		}
		if turn.Thread == nil || turn.Thread.ID != "trip" || turn.Mode != agentmem.MemoryFull || len(turn.Stored) != 1 || turn.Stored[0].Seq != 1 || turn.Held != 0 ||
			turn.Context == nil || turn.Context.Format != agentmem.FormatMessages || len(turn.Context.Messages) == 0 {
			t.Fatalf("BeginTurn=%+v; want thread trip begun, the message stored as seq 1, a full context", turn)
		}
		reply := &agentmem.Message{Role: agentmem.RoleAssistant, Content: "Day 1: Alfama."}
		if _, err := c.AppendMessages(ctx, "alice", "trip", []*agentmem.Message{reply}, ""); err != nil {
			t.Fatal(err)
		}
		// The client resends its history with the new turn: only the new
		// turn is stored, and its own messages are kept (augment).
		next := &agentmem.Message{Role: agentmem.RoleUser, Content: "And on day 2?"}
		turn, err = c.BeginTurn(ctx, "alice", agentmem.TurnRequest{ThreadID: "trip", Continue: true, Messages: []*agentmem.Message{ask, reply, next},
			Context: agentmem.ContextRequest{System: "You plan trips."}})
		if err != nil || turn.Mode != agentmem.MemoryAugment || turn.Held != 2 || len(turn.Stored) != 1 || turn.Stored[0].Content != next.Content || turn.Stored[0].Seq != 3 {
			t.Fatalf("BeginTurn(history)=%+v, %v; want the new turn alone stored as seq 3, augment", turn, err)
		}
		if last := turn.Context.Messages[len(turn.Context.Messages)-1]; fmt.Sprint(last.Content) != next.Content {
			t.Fatalf("context ends with %v, want the new turn", last.Content)
		}
		// The same history again stores nothing: an empty list, not null
		// (schemathesis found null against the OpenAPI document).
		turn, err = c.BeginTurn(ctx, "alice", agentmem.TurnRequest{ThreadID: "trip", Messages: []*agentmem.Message{ask, reply, next}})
		if err != nil || turn.Stored == nil || len(turn.Stored) != 0 || turn.Held != 3 {
			t.Fatalf("BeginTurn(the same history)=%+v, %v; want nothing stored, an empty list, 3 held", turn, err)
		}
		_, err = c.BeginTurn(ctx, "alice", agentmem.TurnRequest{ThreadID: "nope", Continue: true, Messages: []*agentmem.Message{next}})
		wantCode(t, err, agentmem.ENOTFOUND)
		_, err = c.BeginTurn(ctx, "alice", agentmem.TurnRequest{Mode: "sometimes", Messages: []*agentmem.Message{next}})
		wantCode(t, err, agentmem.EINVALID)
		if msgs, _, err := c.FindMessages(ctx, "alice", "trip", agentmem.MessageFilter{}); err != nil || len(msgs) != 3 {
			t.Fatalf("thread after the turns: %d messages, %v; want 3", len(msgs), err)
		}
	},

	"GET /v1/tools": func(t *testing.T, c *client.Client, s agentmem.Store) {
		tools, err := c.Tools(t.Context())
		if err != nil || len(tools) < 10 || tools[0].Type != "function" || tools[0].Function.Name == "" || !strings.Contains(string(tools[0].Function.Parameters), `"object"`) {
			t.Fatalf("Tools=%+v, %v", tools, err)
		}
	},
	"POST /v1/users/{user}/tools/{name}": func(t *testing.T, c *client.Client, s agentmem.Store) {
		out, err := c.CallTool(t.Context(), "alice", "coach", "remember", json.RawMessage(`{"text":"User runs marathons."}`))
		if err != nil || !strings.Contains(string(out), "User runs marathons.") {
			t.Fatalf("CallTool=%s, %v", out, err)
		}
		if ms, _, err := c.FindMemories(t.Context(), "alice", agentmem.MemoryFilter{}); err != nil || len(ms) != 1 || ms[0].AgentID != "coach" {
			t.Fatalf("memories after the call: %+v, %v", ms, err)
		}
		if _, err := c.CallTool(t.Context(), "alice", "", "fly", nil); agentmem.ErrorCode(err) != agentmem.ENOTFOUND {
			t.Fatalf("an unknown tool: %v", err)
		}
	},
	"POST /v1/users/{user}/search": func(t *testing.T, c *client.Client, s agentmem.Store) {
		m := mustMemory(t, c, "alice", agentmem.MemoryInput{Text: "User is vegetarian.", Category: "preference"})
		mustMemory(t, c, "alice", agentmem.MemoryInput{Text: "User lives in Lisbon."})
		resp, err := c.Search(t.Context(), "alice", agentmem.SearchRequest{Query: "vegetarian", Scopes: []string{agentmem.ScopeMemories},
			Filters: agentmem.SearchFilters{Category: ptr("preference")}})
		if err != nil || len(resp.Results) != 1 || resp.Results[0].ID != m.ID || resp.Results[0].Kind != "memory" {
			t.Fatalf("Search=%+v, %v; want the vegetarian memory", resp, err)
		}
		_, err = c.Search(t.Context(), "alice", agentmem.SearchRequest{Query: "x", Scopes: []string{"everything"}})
		wantCode(t, err, agentmem.EINVALID)
	},
	"POST /v1/users/{user}/facts": func(t *testing.T, c *client.Client, s agentmem.Store) {
		mustMemory(t, c, "alice", agentmem.MemoryInput{Text: "User is vegetarian."})
		resp, err := c.Facts(t.Context(), "alice", agentmem.SearchRequest{Query: "Is alice vegetarian?"})
		if err != nil || len(resp.Facts) == 0 || resp.Facts[0].Text != "User is vegetarian." || !strings.Contains(resp.Answer, "vegetarian") {
			t.Fatalf("Facts=%+v, %v; want the fact listed", resp, err)
		}
		// By kind: insights alone.
		ins := mustMemory(t, c, "alice", agentmem.MemoryInput{Kind: agentmem.MemoryInsight, Text: "User cares about animal welfare, which is why they are vegetarian."})
		resp, err = c.Facts(t.Context(), "alice", agentmem.SearchRequest{Query: "Why is alice vegetarian?", Kinds: []string{agentmem.KindInsights}})
		if err != nil || len(resp.Facts) != 1 || resp.Facts[0].ID != ins.ID {
			t.Fatalf("Facts(insights)=%+v, %v; want the insight alone", resp, err)
		}
		_, err = c.Facts(t.Context(), "alice", agentmem.SearchRequest{Query: "x", Kinds: []string{"everything"}})
		wantCode(t, err, agentmem.EINVALID)
	},
	"GET /v1/users/{user}/memories": func(t *testing.T, c *client.Client, s agentmem.Store) {
		ctx := t.Context()
		veg := mustMemory(t, c, "alice", agentmem.MemoryInput{Text: "User is vegetarian.", Category: "preference", AgentID: "bot"})
		home := mustMemory(t, c, "alice", agentmem.MemoryInput{Text: "User lives in Lisbon.", Category: "home"})
		got, next, err := c.FindMemories(ctx, "alice", agentmem.MemoryFilter{Category: ptr("preference")})
		if err != nil || len(got) != 1 || got[0].ID != veg.ID || next != "" {
			t.Fatalf("FindMemories(preference)=%+v, %q, %v; want the vegetarian memory", got, next, err)
		}
		if got, _, err := c.FindMemories(ctx, "alice", agentmem.MemoryFilter{AgentID: ptr("bot"), Kind: ptr(agentmem.MemoryFact), Processed: ptr(false)}); err != nil || len(got) != 1 || got[0].ID != veg.ID {
			t.Fatalf("FindMemories(bot's unprocessed facts)=%+v, %v; want the vegetarian memory", got, err)
		}
		if got, _, err := c.FindMemories(ctx, "alice", agentmem.MemoryFilter{ThreadID: ptr("t1"), IncludeInvalid: true}); err != nil || len(got) != 0 {
			t.Fatalf("FindMemories(thread t1)=%+v, %v; want none", got, err)
		}
		all := collect(t, c.AllMemories(ctx, "alice", agentmem.MemoryFilter{Limit: 1}))
		if len(all) != 2 || all[0].ID != home.ID || all[1].ID != veg.ID {
			t.Fatalf("AllMemories=%+v; want both, newest first", all)
		}
		_, _, err = c.FindMemories(ctx, "alice", agentmem.MemoryFilter{Kind: ptr("rumour")})
		wantCode(t, err, agentmem.EINVALID)
		_, _, err = c.FindMemories(ctx, "alice", agentmem.MemoryFilter{UpdatedAfter: ptr(time.Now())})
		wantCode(t, err, agentmem.EINVALID)
	},
	"POST /v1/users/{user}/memories": func(t *testing.T, c *client.Client, s agentmem.Store) {
		m, err := c.CreateMemory(t.Context(), "alice", agentmem.MemoryInput{Text: "User is vegetarian.", Category: "preference", Importance: ptr(0.9)})
		if err != nil || m.ID == "" || m.UserID != "alice" || m.Source != agentmem.SourceAPI || m.Confidence != 1 || m.Importance != 0.9 {
			t.Fatalf("CreateMemory=%+v, %v", m, err)
		}
		_, err = c.CreateMemory(t.Context(), "alice", agentmem.MemoryInput{})
		wantCode(t, err, agentmem.EINVALID)
	},
	"GET /v1/users/{user}/memories/{memory}": func(t *testing.T, c *client.Client, s agentmem.Store) {
		m := mustMemory(t, c, "alice", agentmem.MemoryInput{Text: "User is vegetarian."})
		got, err := c.FindMemoryByID(t.Context(), "alice", m.ID)
		if err != nil {
			t.Fatalf("FindMemoryByID: %v", err)
		}
		if diff := cmp.Diff(m, got); diff != "" {
			t.Fatalf("FindMemoryByID mismatch (-want +got):\n%s", diff)
		}
		_, err = c.FindMemoryByID(t.Context(), "bob", m.ID)
		wantCode(t, err, agentmem.ENOTFOUND)
	},
	"PATCH /v1/users/{user}/memories/{memory}": func(t *testing.T, c *client.Client, s agentmem.Store) {
		m := mustMemory(t, c, "alice", agentmem.MemoryInput{Text: "User lives in Lisbon.", Category: "home"})
		got, err := c.UpdateMemory(t.Context(), "alice", m.ID, agentmem.MemoryUpdate{Text: ptr("User lives in Berlin."), Reason: "moved"})
		if err != nil || got.Text != "User lives in Berlin." || got.Category != "home" || got.Version != m.Version+1 {
			t.Fatalf("UpdateMemory=%+v, %v; want the new text, next version", got, err)
		}
		_, err = c.UpdateMemory(t.Context(), "alice", m.ID, agentmem.MemoryUpdate{Text: ptr("x"), ThreadID: "t1"})
		wantCode(t, err, agentmem.EINVALID)
	},
	"DELETE /v1/users/{user}/memories/{memory}": func(t *testing.T, c *client.Client, s agentmem.Store) {
		m := mustMemory(t, c, "alice", agentmem.MemoryInput{Text: "User is vegetarian."})
		if err := c.DeleteMemory(t.Context(), "alice", m.ID); err != nil {
			t.Fatalf("DeleteMemory: %v", err)
		}
		_, err := c.FindMemoryByID(t.Context(), "alice", m.ID)
		wantCode(t, err, agentmem.ENOTFOUND)
	},
	"POST /v1/users/{user}/memories/{memory}/invalidate": func(t *testing.T, c *client.Client, s agentmem.Store) {
		ctx := t.Context()
		old := mustMemory(t, c, "alice", agentmem.MemoryInput{Text: "User lives in Lisbon."})
		fresh := mustMemory(t, c, "alice", agentmem.MemoryInput{Text: "User lives in Berlin."})
		got, err := c.InvalidateMemory(ctx, "alice", old.ID, agentmem.MemoryInvalidation{SupersededBy: fresh.ID, Reason: "moved"})
		if err != nil || got.InvalidAt == nil || got.SupersededBy != fresh.ID || got.Version != 2 || got.UserID != "alice" {
			t.Fatalf("InvalidateMemory=%+v, %v; want it invalidated, superseded by the fresh one", got, err)
		}
		again, err := c.InvalidateMemory(ctx, "alice", old.ID, agentmem.MemoryInvalidation{})
		if err != nil {
			t.Fatalf("InvalidateMemory again: %v", err)
		}
		if diff := cmp.Diff(got, again); diff != "" {
			t.Fatalf("invalidated again mismatch (-first +again):\n%s", diff)
		}
		if h, err := c.FindMemoryHistory(ctx, "alice", old.ID); err != nil || len(h) != 2 || h[1].Op != agentmem.OpInvalidate || h[1].Reason != "moved" {
			t.Fatalf("FindMemoryHistory=%+v, %v; want the addition and the invalidation", h, err)
		}
		_, err = c.InvalidateMemory(ctx, "alice", fresh.ID, agentmem.MemoryInvalidation{SupersededBy: fresh.ID})
		wantCode(t, err, agentmem.EINVALID)
		_, err = c.InvalidateMemory(ctx, "alice", "nope", agentmem.MemoryInvalidation{})
		wantCode(t, err, agentmem.ENOTFOUND)
		_, err = c.InvalidateMemory(ctx, "bob", fresh.ID, agentmem.MemoryInvalidation{})
		wantCode(t, err, agentmem.ENOTFOUND)
	},
	"GET /v1/users/{user}/memories/{memory}/history": func(t *testing.T, c *client.Client, s agentmem.Store) {
		m := mustMemory(t, c, "alice", agentmem.MemoryInput{Text: "User lives in Lisbon."})
		if _, err := c.UpdateMemory(t.Context(), "alice", m.ID, agentmem.MemoryUpdate{Text: ptr("User lives in Berlin."), Reason: "moved"}); err != nil {
			t.Fatalf("UpdateMemory: %v", err)
		}
		h, err := c.FindMemoryHistory(t.Context(), "alice", m.ID)
		if err != nil || len(h) != 2 || h[0].MemoryID != m.ID || h[0].Op == h[1].Op {
			t.Fatalf("FindMemoryHistory=%+v, %v; want its addition and its update", h, err)
		}
	},
	"GET /v1/users/{user}/entities": func(t *testing.T, c *client.Client, s agentmem.Store) {
		ctx := t.Context()
		task, err := c.PutEntity(ctx, "alice", agentmem.EntityInput{Name: "Task Management", Type: "workflow"})
		if err != nil {
			t.Fatalf("PutEntity: %v", err)
		}
		if _, err := c.PutEntity(ctx, "alice", agentmem.EntityInput{Name: "Lisbon", Type: "place"}); err != nil {
			t.Fatalf("PutEntity: %v", err)
		}
		got, _, err := c.FindEntities(ctx, "alice", agentmem.EntityFilter{Keys: agentmem.QueryKeys("my Task Workflow")})
		if err != nil || len(got) != 1 || got[0].ID != task.ID {
			t.Fatalf("FindEntities(my task workflow)=%+v, %v; want Task Management", got, err)
		}
		if got, _, err := c.FindEntities(ctx, "alice", agentmem.EntityFilter{Type: ptr("place")}); err != nil || len(got) != 1 || got[0].Name != "Lisbon" {
			t.Fatalf("FindEntities(place)=%+v, %v; want Lisbon", got, err)
		}
		if all := collect(t, c.AllEntities(ctx, "alice", agentmem.EntityFilter{Limit: 1})); len(all) != 2 {
			t.Fatalf("AllEntities=%+v; want 2", all)
		}
		_, _, err = c.FindEntities(ctx, "alice", agentmem.EntityFilter{Keys: []string{"lisbon", "task management"}})
		wantCode(t, err, agentmem.EINVALID)
		_, _, err = c.FindEntities(ctx, "alice", agentmem.EntityFilter{Keys: []string{}})
		wantCode(t, err, agentmem.EINVALID)
	},
	"POST /v1/users/{user}/entities": func(t *testing.T, c *client.Client, s agentmem.Store) {
		ctx := t.Context()
		mustThread(t, c, "alice", "t1", "")
		e, err := c.PutEntity(ctx, "alice", agentmem.EntityInput{Name: "Task Management", Type: "workflow", ThreadID: "t1", Action: "created"})
		if err != nil || e.ID == "" || e.UserID != "alice" || !slices.Contains(e.Aliases, "task workflow") {
			t.Fatalf("PutEntity=%+v, %v; want the entity with generated aliases", e, err)
		}
		again, err := c.PutEntity(ctx, "alice", agentmem.EntityInput{Name: "task management", Aliases: []string{"TM"}})
		if err != nil || again.ID != e.ID || !slices.Contains(again.Aliases, "TM") {
			t.Fatalf("PutEntity(same name)=%+v, %v; want it merged into %s", again, err, e.ID)
		}
		_, err = c.PutEntity(ctx, "alice", agentmem.EntityInput{Name: "X", Action: "created"})
		wantCode(t, err, agentmem.EINVALID)
	},
	"GET /v1/users/{user}/entities/{entity}": func(t *testing.T, c *client.Client, s agentmem.Store) {
		e, err := c.PutEntity(t.Context(), "alice", agentmem.EntityInput{Name: "Lisbon"})
		if err != nil {
			t.Fatalf("PutEntity: %v", err)
		}
		got, err := c.FindEntityByID(t.Context(), "alice", e.ID)
		if err != nil {
			t.Fatalf("FindEntityByID: %v", err)
		}
		if diff := cmp.Diff(e, got); diff != "" {
			t.Fatalf("FindEntityByID mismatch (-want +got):\n%s", diff)
		}
	},
	"PATCH /v1/users/{user}/entities/{entity}": func(t *testing.T, c *client.Client, s agentmem.Store) {
		e, err := c.PutEntity(t.Context(), "alice", agentmem.EntityInput{Name: "Lisbon"})
		if err != nil {
			t.Fatalf("PutEntity: %v", err)
		}
		got, err := c.UpdateEntity(t.Context(), "alice", e.ID, agentmem.EntityUpdate{Name: ptr("Lisboa"), Type: ptr("place")})
		if err != nil || got.Name != "Lisboa" || got.Type != "place" || !slices.ContainsFunc(got.Aliases, func(a string) bool { return strings.EqualFold(a, "lisbon") }) {
			t.Fatalf("UpdateEntity=%+v, %v; want renamed, the old name an alias", got, err)
		}
	},
	"DELETE /v1/users/{user}/entities/{entity}": func(t *testing.T, c *client.Client, s agentmem.Store) {
		e, err := c.PutEntity(t.Context(), "alice", agentmem.EntityInput{Name: "Lisbon"})
		if err != nil {
			t.Fatalf("PutEntity: %v", err)
		}
		if err := c.DeleteEntity(t.Context(), "alice", e.ID); err != nil {
			t.Fatalf("DeleteEntity: %v", err)
		}
		_, err = c.FindEntityByID(t.Context(), "alice", e.ID)
		wantCode(t, err, agentmem.ENOTFOUND)
	},
	"GET /v1/users/{user}/entities/{entity}/threads": func(t *testing.T, c *client.Client, s agentmem.Store) {
		ctx := t.Context()
		for _, id := range []string{"t1", "t2"} {
			mustThread(t, c, "alice", id, "")
			mustAppend(t, c, "alice", id, "Set up my task workflow.")
		}
		e, err := c.PutEntity(ctx, "alice", agentmem.EntityInput{Name: "Task Management", ThreadID: "t1", Action: "created", Seq: 1})
		if err != nil {
			t.Fatalf("PutEntity: %v", err)
		}
		if _, err := c.PutEntity(ctx, "alice", agentmem.EntityInput{Name: "Task Management", ThreadID: "t2"}); err != nil {
			t.Fatalf("PutEntity: %v", err)
		}
		refs, _, err := c.FindEntityRefs(ctx, "alice", agentmem.EntityRefFilter{EntityID: e.ID, Action: ptr("created")})
		if err != nil || len(refs) != 1 || refs[0].ThreadID != "t1" || refs[0].Action != "created" {
			t.Fatalf("FindEntityRefs(entity, created)=%+v, %v; want t1's", refs, err)
		}
		if all := collect(t, c.AllEntityRefs(ctx, "alice", agentmem.EntityRefFilter{EntityID: e.ID, Limit: 1})); len(all) != 2 {
			t.Fatalf("AllEntityRefs=%+v; want t1's and t2's", all)
		}
		_, _, err = c.FindEntityRefs(ctx, "alice", agentmem.EntityRefFilter{})
		wantCode(t, err, agentmem.EINVALID)
	},
	"GET /v1/users/{user}/threads/{thread}/entities": func(t *testing.T, c *client.Client, s agentmem.Store) {
		mustThread(t, c, "alice", "t1", "")
		e, err := c.PutEntity(t.Context(), "alice", agentmem.EntityInput{Name: "Lisbon", ThreadID: "t1", Action: "discussed"})
		if err != nil {
			t.Fatalf("PutEntity: %v", err)
		}
		refs, next, err := c.FindEntityRefs(t.Context(), "alice", agentmem.EntityRefFilter{ThreadID: "t1"})
		if err != nil || len(refs) != 1 || refs[0].EntityID != e.ID || refs[0].ThreadID != "t1" || next != "" {
			t.Fatalf("FindEntityRefs(thread)=%+v, %q, %v; want Lisbon's", refs, next, err)
		}
	},
	"GET /v1/users/{user}/profile": func(t *testing.T, c *client.Client, s agentmem.Store) {
		_, err := c.FindProfile(t.Context(), "alice")
		wantCode(t, err, agentmem.ENOTFOUND)
		mustMemory(t, c, "alice", agentmem.MemoryInput{Text: "User is vegetarian.", Category: "preference"})
		refreshed, err := c.RefreshProfile(t.Context(), "alice")
		if err != nil {
			t.Fatalf("RefreshProfile: %v", err)
		}
		got, err := c.FindProfile(t.Context(), "alice")
		if err != nil {
			t.Fatalf("FindProfile: %v", err)
		}
		if diff := cmp.Diff(refreshed, got); diff != "" {
			t.Fatalf("FindProfile mismatch (-want +got):\n%s", diff)
		}
	},
	"POST /v1/users/{user}/profile/refresh": func(t *testing.T, c *client.Client, s agentmem.Store) {
		_, err := c.RefreshProfile(t.Context(), "alice")
		wantCode(t, err, agentmem.ENOTFOUND)
		m := mustMemory(t, c, "alice", agentmem.MemoryInput{Text: "User is vegetarian.", Category: "preference"})
		p, err := c.RefreshProfile(t.Context(), "alice")
		if err != nil || p.Version != 1 || p.Method != agentmem.ProfileAssembled || !slices.Contains(p.Sources, m.ID) || !strings.Contains(p.Text, "vegetarian") {
			t.Fatalf("RefreshProfile=%+v, %v; want version 1 assembled from the memory", p, err)
		}
	},
	"GET /v1/users/{user}/profile/versions": func(t *testing.T, c *client.Client, s agentmem.Store) {
		ctx := t.Context()
		for _, text := range []string{"User is vegetarian.", "User lives in Lisbon."} {
			mustMemory(t, c, "alice", agentmem.MemoryInput{Text: text})
			if _, err := c.RefreshProfile(ctx, "alice"); err != nil {
				t.Fatalf("RefreshProfile: %v", err)
			}
		}
		page, next, err := c.FindProfiles(ctx, "alice", 1, "")
		if err != nil || len(page) != 1 || page[0].Version != 2 || next == "" {
			t.Fatalf("FindProfiles(1)=%+v, %q, %v; want version 2 and a cursor", page, next, err)
		}
		if rest, next, err := c.FindProfiles(ctx, "alice", 1, next); err != nil || len(rest) != 1 || rest[0].Version != 1 || next != "" {
			t.Fatalf("FindProfiles(page 2)=%+v, %q, %v; want version 1", rest, next, err)
		}
		if all := collect(t, c.AllProfiles(ctx, "alice", 1)); len(all) != 2 || all[0].Version != 2 {
			t.Fatalf("AllProfiles=%+v; want versions 2, 1", all)
		}
	},
	"POST /v1/users/{user}/threads/{thread}/reflection/retry": func(t *testing.T, _ *client.Client, s agentmem.Store) {
		ctx := t.Context()
		// A server that reflects (no worker runs the jobs).
		srv := httptest.NewServer(httpapi.NewHandler(nil, core.New(s, core.Options{Reflector: &reflection.Reflector{Store: s}}), httpapi.Options{}))
		t.Cleanup(srv.Close)
		c := client.New(srv.URL+"/", srv.Client())
		mustThread(t, c, "alice", "t1", "")
		mustAppend(t, c, "alice", "t1", "Hello.")
		_, err := c.RetryReflection(ctx, "alice", "t1")
		wantCode(t, err, agentmem.ECONFLICT) // active
		if _, err := c.EndThread(ctx, "alice", "t1"); err != nil {
			t.Fatalf("EndThread: %v", err)
		}
		_, err = c.RetryReflection(ctx, "alice", "t1")
		wantCode(t, err, agentmem.ECONFLICT) // queued
		// The job fails on every attempt, as while the model is down.
		for range agentmem.DefaultJobAttempts {
			js, err := s.ClaimJobs(ctx, "test", []string{reflection.JobKind}, 1, time.Minute)
			if err != nil || len(js) != 1 {
				t.Fatalf("ClaimJobs=%v, %v", js, err)
			}
			if err := s.FailJob(ctx, "alice", js[0].ID, "test", "model down", time.Now()); err != nil {
				t.Fatal(err)
			}
		}
		if got, err := c.FindReflection(ctx, "alice", "t1"); err != nil || got.Status != agentmem.ReflectionFailed {
			t.Fatalf("FindReflection=%+v, %v; want failed", got, err)
		}
		got, err := c.RetryReflection(ctx, "alice", "t1")
		if err != nil || got.Status != agentmem.ReflectionPending || got.UserID != "alice" {
			t.Fatalf("RetryReflection=%+v, %v; want pending", got, err)
		}
		_, err = c.RetryReflection(ctx, "alice", "nope")
		wantCode(t, err, agentmem.ENOTFOUND)
	},
	"GET /v1/users/{user}/threads/{thread}/reflection": func(t *testing.T, c *client.Client, s agentmem.Store) {
		ctx := t.Context()
		mustThread(t, c, "alice", "t1", "")
		_, err := c.FindReflection(ctx, "alice", "t1")
		wantCode(t, err, agentmem.ENOTFOUND)
		// No route writes a reflection: the job does (reflection.Reflector).
		want := &agentmem.Reflection{UserID: "alice", ThreadID: "t1", Status: agentmem.ReflectionNoInsight, Topics: []string{"lisbon"}, Reason: "small talk"}
		if err := s.PutReflections(ctx, "alice", []*agentmem.Reflection{want}, nil); err != nil {
			t.Fatalf("PutReflections: %v", err)
		}
		got, err := c.FindReflection(ctx, "alice", "t1")
		if err != nil {
			t.Fatalf("FindReflection: %v", err)
		}
		if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(agentmem.Reflection{}, "UpdatedAt")); diff != "" {
			t.Fatalf("FindReflection mismatch (-want +got):\n%s", diff)
		}
	},

	"GET /v1/users/{user}/agents/{agent}/session": func(t *testing.T, c *client.Client, s agentmem.Store) {
		ctx := t.Context()
		_, err := c.FindSession(ctx, "alice", "bot")
		wantCode(t, err, agentmem.ENOTFOUND)
		sess, created, err := c.OpenSession(ctx, "alice", "bot")
		if err != nil || !created || sess.ThreadID == "" || sess.AgentID != "bot" {
			t.Fatalf("OpenSession=%+v, %v, %v; want a new session of bot", sess, created, err)
		}
		again, created, err := c.OpenSession(ctx, "alice", "bot")
		if err != nil || created || again.ThreadID != sess.ThreadID {
			t.Fatalf("OpenSession again=%+v, %v, %v; want the same thread %s, not created", again, created, err, sess.ThreadID)
		}
		found, err := c.FindSession(ctx, "alice", "bot")
		if err != nil || found.ThreadID != sess.ThreadID {
			t.Fatalf("FindSession=%+v, %v; want thread %s", found, err, sess.ThreadID)
		}
	},
	"PUT /v1/users/{user}/agents/{agent}/session": func(t *testing.T, c *client.Client, s agentmem.Store) {
		mustThread(t, c, "alice", "t1", "bot")
		sess, err := c.SetSession(t.Context(), "alice", "bot", "t1")
		if err != nil || sess.ThreadID != "t1" || sess.UserID != "alice" {
			t.Fatalf("SetSession=%+v, %v", sess, err)
		}
		_, err = c.SetSession(t.Context(), "bob", "bot", "t1")
		wantCode(t, err, agentmem.ENOTFOUND)
	},
	"GET /v1/users/{user}/agents/{agent}/notes": func(t *testing.T, c *client.Client, s agentmem.Store) {
		n, err := c.FindNotes(t.Context(), "alice", "bot")
		if err != nil || n.Version != 0 || n.Content != "" {
			t.Fatalf("FindNotes=%+v, %v; want version 0, empty", n, err)
		}
		if _, err := c.PutNotes(t.Context(), "alice", "bot", "# Alice\n", nil); err != nil {
			t.Fatalf("PutNotes: %v", err)
		}
		if n, err = c.FindNotes(t.Context(), "alice", "bot"); err != nil || n.Version != 1 || n.Content != "# Alice\n" {
			t.Fatalf("FindNotes=%+v, %v; want version 1", n, err)
		}
	},
	"PUT /v1/users/{user}/agents/{agent}/notes": func(t *testing.T, c *client.Client, s agentmem.Store) {
		n, err := c.PutNotes(t.Context(), "alice", "bot", "# Alice\n\n## Goals\n- Run a marathon\n", ptr(int64(0)))
		if err != nil || n.Version != 1 || n.AgentID != "bot" {
			t.Fatalf("PutNotes=%+v, %v; want version 1", n, err)
		}
		_, err = c.PutNotes(t.Context(), "alice", "bot", "", ptr(int64(0)))
		wantCode(t, err, agentmem.ECONFLICT)
	},
	"POST /v1/users/{user}/agents/{agent}/notes/ops": func(t *testing.T, c *client.Client, s agentmem.Store) {
		ctx := t.Context()
		if _, err := c.PutNotes(ctx, "alice", "bot", "# Alice\n\n## Goals\n- Run a marathon\n", nil); err != nil {
			t.Fatalf("PutNotes: %v", err)
		}
		n, err := c.EditNotes(ctx, "alice", "bot", agentmem.NotesOp{Operation: agentmem.NotesReplaceSection, SectionHeader: "## Goals", Content: "- Swim a mile", ExpectedVersion: ptr(int64(1))})
		if err != nil || n.Version != 2 || n.Content != "# Alice\n\n## Goals\n- Swim a mile\n" {
			t.Fatalf("EditNotes(replace)=%+v, %v", n, err)
		}
		if read, err := c.EditNotes(ctx, "alice", "bot", agentmem.NotesOp{}); err != nil || read.Version != 2 {
			t.Fatalf("EditNotes(read)=%+v, %v; want version 2", read, err)
		}
		_, err = c.EditNotes(ctx, "alice", "bot", agentmem.NotesOp{Operation: agentmem.NotesDeleteSection, SectionHeader: "## Travel"})
		wantCode(t, err, agentmem.EUNPROCESSABLE)
	},
	"GET /v1/users/{user}/agents/{agent}/notes/history": func(t *testing.T, c *client.Client, s agentmem.Store) {
		ctx := t.Context()
		for _, content := range []string{"one\n", "two\n", "three\n"} {
			if _, err := c.PutNotes(ctx, "alice", "bot", content, nil); err != nil {
				t.Fatalf("PutNotes: %v", err)
			}
		}
		page, next, err := c.FindNotesHistory(ctx, "alice", "bot", agentmem.NotesFilter{Limit: 2})
		if err != nil || len(page) != 2 || page[0].Version != 3 || next == "" {
			t.Fatalf("FindNotesHistory(2)=%+v, %q, %v; want versions 3, 2 and a cursor", page, next, err)
		}
		all := collect(t, c.AllNotesHistory(ctx, "alice", "bot", agentmem.NotesFilter{Limit: 2}))
		if len(all) != 3 || all[2].Content != "one\n" {
			t.Fatalf("AllNotesHistory=%+v; want versions 3, 2, 1", all)
		}
	},

	"GET /v1/users/{user}/export": func(t *testing.T, c *client.Client, s agentmem.Store) {
		ctx := t.Context()
		mustThread(t, c, "alice", "t1", "bot")
		mustAppend(t, c, "alice", "t1", "Weather?", "Rain.")
		mustThread(t, c, "alice", "t2", "")
		m := mustMemory(t, c, "alice", agentmem.MemoryInput{Text: "User is vegetarian."})
		var b bytes.Buffer
		if err := c.ExportUser(ctx, "alice", agentmem.ExportOptions{}, &b); err != nil {
			t.Fatalf("ExportUser: %v", err)
		}
		var x agentmem.UserExport
		if err := json.Unmarshal(b.Bytes(), &x); err != nil {
			t.Fatalf("ExportUser wrote %q: %v", b.String(), err)
		}
		if x.UserID != "alice" || len(x.Threads) != 2 || len(x.Memories) != 1 || x.Memories[0].ID != m.ID {
			t.Fatalf("ExportUser=%+v; want alice's 2 threads and memory", x)
		}
		_, err := c.FindThreadByID(ctx, "alice", "t1")
		if err != nil {
			t.Fatalf("FindThreadByID after export: %v", err)
		}
		var md bytes.Buffer
		if err := c.ExportUser(ctx, "alice", agentmem.ExportOptions{Format: "markdown"}, &md); err != nil || !strings.Contains(md.String(), "- User is vegetarian.") {
			t.Fatalf("ExportUser as Markdown: %v\n%s", err, md.String())
		}
	},
	"POST /v1/users/{user}/import": func(t *testing.T, c *client.Client, s agentmem.Store) {
		ctx := t.Context()
		mustThread(t, c, "alice", "t1", "bot")
		mustAppend(t, c, "alice", "t1", "I live in Oslo.", "Noted.")
		mustMemory(t, c, "alice", agentmem.MemoryInput{Text: "User lives in Oslo."})
		var b bytes.Buffer
		if err := c.ExportUser(ctx, "alice", agentmem.ExportOptions{}, &b); err != nil {
			t.Fatal(err)
		}
		var x agentmem.UserExport
		if err := json.Unmarshal(b.Bytes(), &x); err != nil {
			t.Fatal(err)
		}
		res, err := c.ImportUser(ctx, "bob", &x, agentmem.ImportOptions{})
		if err != nil || res.Imported.Threads != 1 || res.Imported.Messages != 2 || res.Imported.Memories != 1 {
			t.Fatalf("ImportUser=%+v, %v; want 1 thread, 2 messages, 1 memory", res, err)
		}
		msgs, _, err := c.FindMessages(ctx, "bob", "t1", agentmem.MessageFilter{})
		if err != nil || len(msgs) != 2 || msgs[0].Content != "I live in Oslo." {
			t.Fatalf("bob's messages=%+v, %v", msgs, err)
		}
		// Again: every record clashes, and nothing is written.
		_, err = c.ImportUser(ctx, "bob", &x, agentmem.ImportOptions{})
		wantCode(t, err, agentmem.ECONFLICT)
		res, err = c.ImportUser(ctx, "bob", &x, agentmem.ImportOptions{OnConflict: agentmem.OnConflictSkip})
		if err != nil || res.Imported.Threads != 0 || res.Skipped.Threads != 1 {
			t.Fatalf("ImportUser with skip=%+v, %v", res, err)
		}
	},
	"DELETE /v1/users/{user}": func(t *testing.T, c *client.Client, s agentmem.Store) {
		ctx := t.Context()
		mustThread(t, c, "alice", "t1", "bot")
		stored := mustAppend(t, c, "alice", "t1", "Weather?", "Rain.")
		if err := c.CreateElement(ctx, "alice", "t1", &agentmem.Element{MessageID: stored[0].ID, Type: "citation"}); err != nil {
			t.Fatalf("CreateElement: %v", err)
		}
		mustThread(t, c, "bob", "t1", "")
		counts, err := c.EraseUser(ctx, "alice")
		want := agentmem.Counts{Users: 1, Threads: 1, Messages: 2, Elements: 1}
		if err != nil || counts != want {
			t.Fatalf("EraseUser=%+v, %v; want %+v", counts, err, want)
		}
		if _, err := c.FindThreadByID(ctx, "bob", "t1"); err != nil {
			t.Fatalf("bob's thread after erasing alice: %v", err)
		}
	},
}

// TestClient_Routes runs routeCases, each against a server of its own.
func TestClient_Routes(t *testing.T) {
	for _, pattern := range slices.Sorted(maps.Keys(routeCases)) {
		t.Run(pattern, func(t *testing.T) {
			c, s := MustServe(t)
			routeCases[pattern](t, c, s)
		})
	}
}

// TestClient_RoutesCovered fails for every route of httpapi/routes.go
// without a case in routeCases: a route added to the API needs its
// client method, and a case.
func TestClient_RoutesCovered(t *testing.T) {
	src, err := os.ReadFile("../httpapi/routes.go")
	if err != nil {
		t.Fatal(err)
	}
	// Route entries open with their pattern: {"GET /healthz", … or route{"GET /metrics", …
	matches := regexp.MustCompile(`\{"((?:GET|POST|PUT|PATCH|DELETE|HEAD) /[^"]*)"`).FindAllSubmatch(src, -1)
	if len(matches) < 40 {
		t.Fatalf("found %d routes in httpapi/routes.go; the pattern that finds them needs updating", len(matches))
	}
	routes := map[string]bool{}
	for _, m := range matches {
		routes[string(m[1])] = true
		if routeCases[string(m[1])] == nil {
			t.Errorf("route %q has no case in routeCases (and perhaps no client method)", m[1])
		}
	}
	for pattern := range routeCases {
		if !routes[pattern] {
			t.Errorf("routeCases has %q, which is not a route of httpapi/routes.go", pattern)
		}
	}
}

// flaky answers its first failures requests with status (and
// Retry-After, when set), then 200 with body; it counts the requests.
type flaky struct {
	failures   int32
	status     int
	retryAfter string
	body       string
	calls      atomic.Int32
}

func (f *flaky) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if f.calls.Add(1) <= f.failures {
		if f.retryAfter != "" {
			w.Header().Set("Retry-After", f.retryAfter)
		}
		w.WriteHeader(f.status)
		fmt.Fprintf(w, `{"error":{"code":%q,"message":"Try again."}}`, agentmem.EUNAVAILABLE)
		return
	}
	body := f.body
	if body == "" {
		body = `{}`
	}
	w.WriteHeader(http.StatusOK)
	io.WriteString(w, body)
}

// serveFlaky serves f and returns a client of it that records its waits
// instead of waiting.
func serveFlaky(t *testing.T, f *flaky) (*client.Client, *[]time.Duration) {
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	c := client.New(srv.URL, srv.Client())
	waits := &[]time.Duration{}
	c.Sleep = func(ctx context.Context, d time.Duration) error {
		*waits = append(*waits, d)
		return ctx.Err()
	}
	return c, waits
}

func TestClient_Retries(t *testing.T) {
	t.Run("IdempotentGET", func(t *testing.T) {
		f := &flaky{failures: 2, status: http.StatusServiceUnavailable, body: `{"id":"t1","user_id":"alice"}`}
		c, waits := serveFlaky(t, f)
		th, err := c.FindThreadByID(t.Context(), "alice", "t1")
		if err != nil || th.ID != "t1" {
			t.Fatalf("FindThreadByID=%+v, %v; want t1 after two retries", th, err)
		}
		if n := f.calls.Load(); n != 3 {
			t.Fatalf("calls=%d, want 3", n)
		}
		if len(*waits) != 2 || (*waits)[0] > client.DefaultRetryBaseDelay || (*waits)[1] > 2*client.DefaultRetryBaseDelay {
			t.Fatalf("waits=%v, want two growing back-offs", *waits)
		}
	})
	t.Run("PostNotRetried", func(t *testing.T) {
		f := &flaky{failures: 2, status: http.StatusServiceUnavailable}
		c, waits := serveFlaky(t, f)
		err := c.CreateThread(t.Context(), "alice", &agentmem.Thread{ID: "t1"})
		wantCode(t, err, agentmem.EUNAVAILABLE)
		if n := f.calls.Load(); n != 1 || len(*waits) != 0 {
			t.Fatalf("calls=%d, waits=%v; want one call, no wait", n, *waits)
		}
		_, err = c.AppendMessages(t.Context(), "alice", "t1", []*agentmem.Message{{Role: "user", Content: "x"}}, "")
		wantCode(t, err, agentmem.EUNAVAILABLE)
		if n := f.calls.Load(); n != 2 {
			t.Fatalf("calls=%d, want an append without a key sent once", n)
		}
	})
	t.Run("AppendWithKey", func(t *testing.T) {
		f := &flaky{failures: 2, status: http.StatusBadGateway, body: `{"messages":[{"seq":1}]}`}
		c, _ := serveFlaky(t, f)
		msgs, err := c.AppendMessages(t.Context(), "alice", "t1", []*agentmem.Message{{Role: "user", Content: "x"}}, "turn-1")
		if err != nil || len(msgs) != 1 || f.calls.Load() != 3 {
			t.Fatalf("AppendMessages=%v, %v after %d calls; want it retried to success", msgs, err, f.calls.Load())
		}
	})
	t.Run("RetryAfter", func(t *testing.T) {
		f := &flaky{failures: 1, status: http.StatusTooManyRequests, retryAfter: "2", body: `{"users":1}`}
		c, waits := serveFlaky(t, f)
		if _, err := c.Stats(t.Context()); err != nil {
			t.Fatalf("Stats: %v", err)
		}
		if !slices.Equal(*waits, []time.Duration{2 * time.Second}) {
			t.Fatalf("waits=%v, want the 2s the server asked", *waits)
		}
	})
	t.Run("RetryAfterTooLong", func(t *testing.T) {
		f := &flaky{failures: 1, status: http.StatusTooManyRequests, retryAfter: "3600"}
		c, waits := serveFlaky(t, f)
		_, err := c.Stats(t.Context())
		wantCode(t, err, agentmem.EUNAVAILABLE) // the body's code
		if f.calls.Load() != 1 || len(*waits) != 0 {
			t.Fatalf("calls=%d, waits=%v; want no retry when the server asks for an hour", f.calls.Load(), *waits)
		}
	})
	t.Run("GivesUp", func(t *testing.T) {
		f := &flaky{failures: 100, status: http.StatusGatewayTimeout}
		c, _ := serveFlaky(t, f)
		c.MaxRetries = 1
		wantCode(t, c.Health(t.Context()), agentmem.EUNAVAILABLE)
		if n := f.calls.Load(); n != 2 {
			t.Fatalf("calls=%d, want 2 (one retry)", n)
		}
		c.MaxRetries = -1
		wantCode(t, c.Health(t.Context()), agentmem.EUNAVAILABLE)
		if n := f.calls.Load(); n != 3 {
			t.Fatalf("calls=%d, want 3 (no retry)", n)
		}
	})
	t.Run("NotRetried", func(t *testing.T) {
		f := &flaky{failures: 1, status: http.StatusInternalServerError}
		c, _ := serveFlaky(t, f)
		wantCode(t, c.Health(t.Context()), agentmem.EUNAVAILABLE)
		if n := f.calls.Load(); n != 1 {
			t.Fatalf("calls=%d, want a 500 not retried", n)
		}
	})
	t.Run("ConnectionError", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, `{}`) }))
		t.Cleanup(srv.Close)
		var calls int
		c := client.New(srv.URL, &http.Client{Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
			if calls++; calls <= 2 {
				return nil, errors.New("connection reset by peer")
			}
			return http.DefaultTransport.RoundTrip(r)
		})})
		c.RetryBaseDelay = time.Millisecond
		if err := c.Health(t.Context()); err != nil || calls != 3 {
			t.Fatalf("Health=%v after %d calls; want success on the third", err, calls)
		}
		calls = 0
		err := c.CreateThread(t.Context(), "alice", &agentmem.Thread{})
		wantCode(t, err, agentmem.EUNAVAILABLE)
		if calls != 1 || !strings.Contains(err.Error(), "connection reset") {
			t.Fatalf("CreateThread=%v after %d calls; want one call and the transport's error", err, calls)
		}
	})
	t.Run("ContextEnds", func(t *testing.T) {
		f := &flaky{failures: 100, status: http.StatusServiceUnavailable}
		c, _ := serveFlaky(t, f)
		ctx, cancel := context.WithCancel(t.Context())
		c.Sleep = func(context.Context, time.Duration) error { cancel(); return context.Canceled }
		if err := c.Health(ctx); !errors.Is(err, context.Canceled) || f.calls.Load() != 1 {
			t.Fatalf("Health=%v after %d calls; want context.Canceled after the first", err, f.calls.Load())
		}
		// A deadline sooner than the wait ends the retries with the server's error.
		ctx, cancel2 := context.WithTimeout(t.Context(), 2*time.Second)
		defer cancel2()
		c.RetryBaseDelay = time.Hour // capped at RetryMaxDelay, 10s: longer than the deadline
		wantCode(t, c.Health(ctx), agentmem.EUNAVAILABLE)
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestClient_Headers(t *testing.T) {
	var got http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
		io.WriteString(w, `{"messages":[]}`)
	}))
	t.Cleanup(srv.Close)
	c := client.New(srv.URL, srv.Client())
	c.APIKey = "am_secret"
	c.UserAgent = "planner/1.0"
	if _, err := c.AppendMessages(t.Context(), "alice", "t1", []*agentmem.Message{{Role: "user", Content: "x"}}, "turn-7"); err != nil {
		t.Fatalf("AppendMessages: %v", err)
	}
	for k, want := range map[string]string{
		"Authorization":   "Bearer am_secret",
		"User-Agent":      "planner/1.0",
		"Idempotency-Key": "turn-7",
		"Content-Type":    "application/json",
		"Accept":          "application/json",
	} {
		if v := got.Get(k); v != want {
			t.Errorf("%s=%q, want %q", k, v, want)
		}
	}
	c.APIKey, c.UserAgent = "", ""
	if err := c.Health(t.Context()); err != nil {
		t.Fatalf("Health: %v", err)
	}
	if got.Get("Authorization") != "" || got.Get("User-Agent") != client.DefaultUserAgent {
		t.Fatalf("headers=%v, want no Authorization and the default User-Agent", got)
	}
}

func TestClient_Errors(t *testing.T) {
	t.Run("NotJSON", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "upstream connect error", http.StatusBadGateway)
		}))
		defer srv.Close()
		c := client.New(srv.URL, nil)
		c.MaxRetries = -1
		err := c.Health(t.Context())
		wantCode(t, err, agentmem.EUNAVAILABLE)
		if msg := agentmem.ErrorMessage(err); msg != "The server answered 502 Bad Gateway: upstream connect error." {
			t.Fatalf("ErrorMessage=%q, want the status and the body", msg)
		}
	})
	t.Run("APIError", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusForbidden)
			w.Write([]byte(`{"error":{"code":"forbidden","message":"This route needs an admin key."}}`))
		}))
		defer srv.Close()
		_, err := client.New(srv.URL, nil).Stats(t.Context())
		want := &agentmem.Error{Code: agentmem.EFORBIDDEN, Message: "This route needs an admin key."}
		if diff := cmp.Diff(want, err); diff != "" {
			t.Fatalf("error mismatch (-want +got):\n%s", diff)
		}
	})
	t.Run("NotFound", func(t *testing.T) {
		c, _ := MustServe(t)
		_, err := c.FindMemoryByID(t.Context(), "alice", "nope")
		wantCode(t, err, agentmem.ENOTFOUND)
		if msg := agentmem.ErrorMessage(err); !strings.Contains(msg, `"nope"`) {
			t.Fatalf("ErrorMessage=%q, want the server's, naming the memory", msg)
		}
	})
	t.Run("Unreachable", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		srv.Close()
		c := client.New(srv.URL, nil)
		c.MaxRetries = -1
		err := c.Health(t.Context())
		wantCode(t, err, agentmem.EUNAVAILABLE)
		if !strings.Contains(err.Error(), "GET /healthz") {
			t.Fatalf("err=%v, want a transport error naming the request", err)
		}
	})
	t.Run("BadBaseURL", func(t *testing.T) {
		c := client.New("http://[::1", nil)
		c.Sleep = func(context.Context, time.Duration) error {
			t.Fatal("a request that cannot be made was retried")
			return nil
		}
		if err := c.Health(t.Context()); err == nil || agentmem.ErrorCode(err) == agentmem.EUNAVAILABLE {
			t.Fatalf("Health=%v, want an error that is not the server's unavailability", err)
		}
	})
	t.Run("OddIDs", func(t *testing.T) {
		c, _ := MustServe(t)
		ctx := t.Context()
		// "/v1/users//threads/threads" would be a path to clean: refused.
		_, err := c.FindThreadByID(ctx, "", "threads")
		wantCode(t, err, agentmem.EINVALID)
		// Dots are no IDs (no plain HTTP client can send them in a path):
		// refused, also when asked for, rather than sent to a cleaned path.
		for _, id := range []string{".", ".."} {
			err := c.CreateThread(ctx, "u", &agentmem.Thread{ID: id})
			if want := `id may not be "." or "..".`; agentmem.ErrorCode(err) != agentmem.EINVALID || agentmem.ErrorMessage(err) != want {
				t.Fatalf("CreateThread(%q)=%v, want EINVALID %q", id, err, want)
			}
			_, err = c.FindThreadByID(ctx, "u", id)
			if want := `thread_id may not be "." or "..".`; agentmem.ErrorCode(err) != agentmem.EINVALID || agentmem.ErrorMessage(err) != want {
				t.Fatalf("FindThreadByID(%q)=%v, want EINVALID %q", id, err, want)
			}
		}
		if page, _, err := c.FindThreads(ctx, "u", agentmem.ThreadFilter{}); err != nil || len(page) != 0 {
			t.Fatalf("FindThreads=%v, %v; want none left", page, err)
		}
	})
}

// TestClient_All checks the iterators' contract on a server whose second
// page fails: the items of the first page, then the error; and a loop
// that breaks fetches no further page.
func TestClient_All(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if r.URL.Query().Get("cursor") == "" {
			io.WriteString(w, `{"data":[{"id":"t1"},{"id":"t2"}],"next_cursor":"c2"}`)
			return
		}
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"error":{"code":"invalid","message":"Bad cursor."}}`)
	}))
	t.Cleanup(srv.Close)
	c := client.New(srv.URL, srv.Client())
	var ids []string
	var last error
	for th, err := range c.AllThreads(t.Context(), "alice", agentmem.ThreadFilter{}) {
		if err != nil {
			last = err
			continue
		}
		ids = append(ids, th.ID)
	}
	if !slices.Equal(ids, []string{"t1", "t2"}) || agentmem.ErrorCode(last) != agentmem.EINVALID {
		t.Fatalf("AllThreads yielded %v, then %v; want t1, t2, then the error", ids, last)
	}
	calls.Store(0)
	for range c.AllThreads(t.Context(), "alice", agentmem.ThreadFilter{}) {
		break
	}
	if n := calls.Load(); n != 1 {
		t.Fatalf("calls=%d after a break, want 1", n)
	}
}
