package httpapi_test

import (
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/httpapi"
	"github.com/agentmem/agentmem/internal/testutil"
)

// TestHandler_OpenSessionConcurrent: eight concurrent GET
// …/session?create=true of one user and agent make one thread, the
// active session of all eight: one is answered 201, the others 200.
func TestHandler_OpenSessionConcurrent(t *testing.T) {
	testutil.Backends(t, func(t *testing.T, s agentmem.Store) {
		srv := MustServe(t, s, httpapi.Options{})
		const calls = 8
		type answer struct {
			status int
			thread string
		}
		answers := make([]answer, calls)
		var wg sync.WaitGroup
		for i := range calls {
			wg.Go(func() {
				resp, body := Do(t, "GET", srv.URL+"/v1/users/u/agents/ag/session?create=true", nil, "")
				answers[i] = answer{resp.StatusCode, MustDecode[agentmem.Session](t, body).ThreadID}
			})
		}
		wg.Wait()
		created := 0
		for _, a := range answers {
			if a.status == http.StatusCreated {
				created++
			} else if a.status != http.StatusOK {
				t.Fatalf("status %d, want 200 or 201", a.status)
			}
			if a.thread == "" || a.thread != answers[0].thread {
				t.Fatalf("answers name threads %+v, want one", answers)
			}
		}
		if created != 1 {
			t.Fatalf("%d calls answered 201, want 1", created)
		}
		if n := agentThreads(t, srv.URL, "u", "ag"); n != 1 {
			t.Fatalf("%d threads of the agent, want 1", n)
		}
	})
}

// TestHandler_SetSessionConcurrent: a PUT …/session racing with GET
// …/session?create=true calls always wins: whichever comes first, the
// active session ends up the thread the PUT named (a create that came
// first made a session the PUT replaced; one that came after found the
// PUT's), and the creates make at most one thread. Rounds of one agent
// each give the race its chances.
func TestHandler_SetSessionConcurrent(t *testing.T) {
	testutil.Backends(t, func(t *testing.T, s agentmem.Store) {
		srv := MustServe(t, s, httpapi.Options{})
		const rounds, creates = 20, 4
		for r := range rounds {
			agent := fmt.Sprintf("ag%d", r)
			mine := MustCreateThread(t, s, &agentmem.Thread{UserID: "u", ID: "mine-" + agent, AgentID: agent})
			var wg sync.WaitGroup
			var putStatus int
			wg.Go(func() {
				resp, _ := Do(t, "PUT", srv.URL+"/v1/users/u/agents/"+agent+"/session", nil, `{"thread_id":"`+mine.ID+`"}`)
				putStatus = resp.StatusCode
			})
			for range creates {
				wg.Go(func() {
					if resp, body := Do(t, "GET", srv.URL+"/v1/users/u/agents/"+agent+"/session?create=true", nil, ""); resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusCreated {
						t.Errorf("GET ?create=true: %d %s", resp.StatusCode, body)
					}
				})
			}
			wg.Wait()
			if putStatus != http.StatusOK {
				t.Fatalf("PUT: %d", putStatus)
			}
			resp, body := Do(t, "GET", srv.URL+"/v1/users/u/agents/"+agent+"/session", nil, "")
			if got := MustDecode[agentmem.Session](t, body).ThreadID; resp.StatusCode != http.StatusOK || got != mine.ID {
				t.Fatalf("round %d: the session is %q (%d), want %q, which the PUT set", r, got, resp.StatusCode, mine.ID)
			}
			if n := agentThreads(t, srv.URL, "u", agent); n > 2 {
				t.Fatalf("round %d: %d threads of the agent, want at most 2 (the PUT's and one created)", r, n)
			}
		}
	})
}

// agentThreads counts the threads of a user's agent.
func agentThreads(t *testing.T, base, user, agent string) int {
	t.Helper()
	resp, body := Do(t, "GET", base+"/v1/users/"+user+"/threads?agent_id="+agent+"&limit=100", nil, "")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("list threads: %d %s", resp.StatusCode, body)
	}
	return len(MustDecode[struct{ Data []*agentmem.Thread }](t, body).Data)
}
