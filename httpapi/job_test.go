package httpapi_test

import (
	"context"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/httpapi"
	"github.com/agentmem/agentmem/internal/testutil"
	"github.com/agentmem/agentmem/storetest"
)

// wantJobs checks that a list of jobs holds the jobs ids (in any order),
// each shown as the user's named user.
func wantJobs(user string, ids ...string) func(*testing.T, *http.Response, []byte) {
	return func(t *testing.T, _ *http.Response, body []byte) {
		t.Helper()
		var got []string
		for _, j := range decodeJSON[struct{ Data []agentmem.Job }](t, body).Data {
			if j.UserID != user {
				t.Errorf("job %s of user %q, want %q", j.ID, j.UserID, user)
			}
			got = append(got, j.ID)
		}
		slices.Sort(got)
		if !slices.Equal(got, ids) {
			t.Fatalf("jobs %q, want %q: %s", got, ids, body)
		}
	}
}

// TestHandler_UserJobs: a user lists their own jobs, never another
// user's, and retries a dead one: 200 with the job queued again (its last
// error kept), 409 for a job that is not dead or whose equal is queued,
// 404 for an unknown job or another user's, 400 naming a bad parameter or
// ID. A tenant's user is shown by the name the tenant gives.
func TestHandler_UserJobs(t *testing.T) {
	testutil.Backends(t, func(t *testing.T, s agentmem.Store) {
		now := time.Now()
		alice, _ := mustKey(t, s, "user:alice", now, 0)
		bob, _ := mustKey(t, s, "user:bob", now, 0)
		acme, _ := mustKey(t, s, "tenant:acme", now, 0)
		admin, _ := mustKey(t, s, "admin", now, 0)
		storetest.MustKillJob(t, s, &agentmem.Job{UserID: "alice", ID: "dead", Kind: "summarize", Key: "t1"}, "model down")
		storetest.MustKillJob(t, s, &agentmem.Job{UserID: "alice", ID: "twin", Kind: "extract", Key: "t1"}, "boom")
		storetest.MustEnqueueJob(t, s, &agentmem.Job{UserID: "alice", ID: "queued", Kind: "extract", Key: "t1"}) // twin's equal
		storetest.MustEnqueueJob(t, s, &agentmem.Job{UserID: "bob", ID: "bobs", Kind: "summarize"})
		storetest.MustKillJob(t, s, &agentmem.Job{UserID: "acme/carol", ID: "dead", Kind: "summarize"}, "boom")
		srv := MustServe(t, s, httpapi.Options{Auth: httpapi.Auth{Mode: httpapi.AuthAPIKey}})

		runScenarios(t, srv.URL, []scenario{
			{name: "List", method: "GET", url: "/v1/users/alice/jobs", header: bearerHeader(alice), wantStatus: 200,
				check: wantJobs("alice", "dead", "queued", "twin")},
			{name: "ListDead", method: "GET", url: "/v1/users/alice/jobs?status=dead", header: bearerHeader(alice), wantStatus: 200,
				check: wantJobs("alice", "dead", "twin")},
			{name: "ListKind", method: "GET", url: "/v1/users/alice/jobs?kind=extract&limit=5", header: bearerHeader(alice), wantStatus: 200,
				check: wantJobs("alice", "queued", "twin")},
			{name: "ListPage", method: "GET", url: "/v1/users/alice/jobs?limit=2", header: bearerHeader(alice), wantStatus: 200,
				check: func(t *testing.T, _ *http.Response, body []byte) {
					if p := decodeJSON[struct {
						Data       []agentmem.Job
						NextCursor string `json:"next_cursor"`
					}](t, body); len(p.Data) != 2 || p.NextCursor == "" {
						t.Fatalf("page of limit 2: %s", body)
					}
				}},
			// The admin's list names a tenant's user as the admin addresses
			// them, so that the job leads to its user's routes.
			{name: "AdminListTenant", method: "GET", url: "/v1/jobs?status=dead&kind=summarize", header: bearerHeader(admin), wantStatus: 200,
				check: func(t *testing.T, _ *http.Response, body []byte) {
					var users []string
					for _, j := range decodeJSON[struct{ Data []agentmem.Job }](t, body).Data {
						users = append(users, j.UserID)
					}
					slices.Sort(users)
					if !slices.Equal(users, []string{"alice", "tenant:acme/user:carol"}) {
						t.Fatalf("the dead summaries' users %q: %s", users, body)
					}
				}},
			{name: "AdminRetryTenant", method: "POST", url: "/v1/users/tenant:acme%2Fuser:carol/jobs/nope/retry", header: bearerHeader(admin), wantStatus: 404,
				wantBody: `Job \"nope\" not found.`},
			{name: "ListTenant", method: "GET", url: "/v1/users/carol/jobs", header: bearerHeader(acme), wantStatus: 200,
				check: wantJobs("carol", "dead")},
			{name: "ListBadStatus", method: "GET", url: "/v1/users/alice/jobs?status=failed", header: bearerHeader(alice), wantStatus: 400,
				wantBody: `status must be queued, running, done or dead, not \"failed\".`},
			{name: "ListNoUserParameter", method: "GET", url: "/v1/users/alice/jobs?user_id=bob", header: bearerHeader(alice), wantStatus: 400,
				wantBody: `Unknown query parameter \"user_id\"; this route accepts: status, kind, limit, cursor.`},
			{name: "ListBadCursor", method: "GET", url: "/v1/users/alice/jobs?cursor=nonsense", header: bearerHeader(alice), wantStatus: 400,
				wantBody: `cursor is malformed`},
			{name: "ListOtherUser", method: "GET", url: "/v1/users/alice/jobs", header: bearerHeader(bob), wantStatus: 404,
				wantBody: `User \"alice\" not found.`},
			{name: "ListUnauthenticated", method: "GET", url: "/v1/users/alice/jobs", wantStatus: 401},

			{name: "RetryOtherUser", method: "POST", url: "/v1/users/alice/jobs/dead/retry", header: bearerHeader(bob), wantStatus: 404,
				wantBody: `User \"alice\" not found.`},
			{name: "RetryOwnUsersJobOnly", method: "POST", url: "/v1/users/bob/jobs/dead/retry", header: bearerHeader(bob), wantStatus: 404,
				wantBody: `Job \"dead\" not found.`},
			{name: "Retry", method: "POST", url: "/v1/users/alice/jobs/dead/retry", header: bearerHeader(alice), wantStatus: 200,
				check: func(t *testing.T, _ *http.Response, body []byte) {
					j := decodeJSON[agentmem.Job](t, body)
					if j.ID != "dead" || j.UserID != "alice" || j.Status != agentmem.JobQueued || j.Attempts != 0 || j.LeaseUntil != nil ||
						j.LastError != "model down" || j.RunAt.After(time.Now()) {
						t.Fatalf("retried: %s", body)
					}
				}},
			{name: "RetryQueued", method: "POST", url: "/v1/users/alice/jobs/dead/retry", header: bearerHeader(alice), wantStatus: 409,
				wantBody: `Job \"dead\" is queued; only a dead job can be retried.`},
			{name: "RetryEqualQueued", method: "POST", url: "/v1/users/alice/jobs/twin/retry", header: bearerHeader(alice), wantStatus: 409,
				wantBody: `an equal job (same kind and key) is already queued or running.`},
			{name: "RetryUnknown", method: "POST", url: "/v1/users/alice/jobs/nope/retry", header: bearerHeader(alice), wantStatus: 404,
				wantBody: `Job \"nope\" not found.`},
			{name: "RetryBadID", method: "POST", url: "/v1/users/alice/jobs/bad%20id/retry", header: bearerHeader(alice), wantStatus: 400,
				wantBody: `job_id \"bad id\" may not contain slashes, spaces or control characters.`},
			{name: "RetryTenant", method: "POST", url: "/v1/users/carol/jobs/dead/retry", header: bearerHeader(acme), wantStatus: 200,
				wantBody: `"user_id":"carol"`},
		})
		// The retries are in the audit log, by whom and of which user.
		evs, _, err := s.FindAuditEvents(context.Background(), agentmem.AuditFilter{Action: ptr(agentmem.AuditJobRetry)})
		if err != nil || len(evs) != 2 || evs[0].TenantID != "acme" || evs[0].UserID != "carol" || evs[1].UserID != "alice" || evs[1].Target != "dead" {
			t.Fatalf("audit events %+v, %v; want carol's retry, then alice's", evs, err)
		}
	})
}

func ptr[T any](v T) *T { return &v }
