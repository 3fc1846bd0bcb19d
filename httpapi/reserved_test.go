package httpapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/httpapi"
	"github.com/agentmem/agentmem/internal/testutil"
	"github.com/agentmem/agentmem/reembed"
)

// TestHandler_ReservedIDs: user and tenant IDs starting with _ are
// agentmem's own (reembed.SystemUser holds the jobs that concern every
// user): every route naming one is 400, naming the ID, and the system's
// records survive.
func TestHandler_ReservedIDs(t *testing.T) {
	testutil.Backends(t, func(t *testing.T, s agentmem.Store) {
		ctx := context.Background()
		job, err := s.EnqueueJob(ctx, &agentmem.Job{UserID: reembed.SystemUser, Kind: reembed.AllJobKind, Key: "space"})
		if err != nil {
			t.Fatal(err)
		}
		admin, _ := mustKey(t, s, "admin", time.Now(), 0)
		acme, _ := mustKey(t, s, "tenant:acme", time.Now(), 0)
		open := MustServe(t, s, httpapi.Options{})
		keyed := MustServe(t, s, httpapi.Options{Auth: httpapi.Auth{Mode: httpapi.AuthAPIKey}})
		for _, c := range []struct {
			name         string
			srv          string
			header       http.Header
			method, path string
			body         string
			want         int
			wantID       string // named in the error
		}{
			{"EraseSystemUser", open.URL, nil, "DELETE", "/v1/users/_agentmem", "", 400, "_agentmem"},
			{"EraseSystemUserAdmin", keyed.URL, bearerHeader(admin), "DELETE", "/v1/users/_agentmem", "", 400, "_agentmem"},
			{"ListThreads", open.URL, nil, "GET", "/v1/users/_agentmem/threads", "", 400, "_agentmem"},
			{"CreateThread", open.URL, nil, "POST", "/v1/users/_mine/threads", `{"id":"t"}`, 400, "_mine"},
			{"CreateMemory", open.URL, nil, "POST", "/v1/users/_agentmem/memories", `{"text":"planted"}`, 400, "_agentmem"},
			{"Export", open.URL, nil, "GET", "/v1/users/_agentmem/export", "", 400, "_agentmem"},
			{"Import", open.URL, nil, "POST", "/v1/users/_agentmem/import", `{"version":2}`, 400, "_agentmem"},
			{"Notes", open.URL, nil, "GET", "/v1/users/_agentmem/agents/a/notes", "", 400, "_agentmem"},
			{"ReservedTenant", open.URL, nil, "GET", "/v1/users/tenant:_acme%2Fuser:bob/threads", "", 400, "_acme"},
			{"ReservedTenantUser", open.URL, nil, "GET", "/v1/users/tenant:acme%2Fuser:_bob/threads", "", 400, "_bob"},
			{"TenantKeyReservedUser", keyed.URL, bearerHeader(acme), "GET", "/v1/users/_agentmem/threads", "", 400, "_agentmem"},
			{"KeyForReservedUser", keyed.URL, bearerHeader(admin), "POST", "/v1/keys", `{"scope":"user:_agentmem"}`, 400, "_agentmem"},
			{"KeyForReservedTenant", keyed.URL, bearerHeader(admin), "POST", "/v1/keys", `{"scope":"tenant:_x"}`, 400, "_x"},
			{"UnderscoreInside", open.URL, nil, "GET", "/v1/users/my_user/threads", "", 200, ""},
		} {
			resp, body := Do(t, c.method, c.srv+c.path, c.header, c.body)
			if resp.StatusCode != c.want || !strings.Contains(string(body), c.wantID) {
				t.Errorf("%s: %s %s: %d %s, want %d naming %q", c.name, c.method, c.path, resp.StatusCode, body, c.want, c.wantID)
			}
		}
		system := reembed.SystemUser
		jobs, _, err := s.FindJobs(ctx, agentmem.JobFilter{UserID: &system})
		if err != nil || len(jobs) != 1 || jobs[0].ID != job.ID {
			t.Fatalf("the system's jobs after the erasures: %v, %v; want its job %s", jobs, err, job.ID)
		}
		if mems, _, err := s.FindMemories(ctx, system, agentmem.MemoryFilter{}); err != nil || len(mems) != 0 {
			t.Fatalf("the system user's memories: %d, %v; want none", len(mems), err)
		}
	})
}
