package httpapi

import (
	"log/slog"
	"net/http"

	"github.com/agentmem/agentmem"
)

// handleGetSession returns the active session of the user and agent: 200,
// or 404 when there is none. With ?create=true a missing session is made:
// a new thread of the agent becomes the active one, answered 201.
//
// Two concurrent creating calls may each make a thread; the later
// SetSession wins and the other thread stays as an ordinary, empty thread.
func handleGetSession(log *slog.Logger, store interface {
	agentmem.ThreadStore
	agentmem.SessionStore
}) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := readPath(r)
		var create bool
		if err == nil {
			create, err = queryBool(r.URL.Query(), "create")
		}
		var sess *agentmem.Session
		if err == nil {
			sess, err = store.FindSession(r.Context(), p.user, p.agent)
		}
		status := http.StatusOK
		if create && agentmem.ErrorCode(err) == agentmem.ENOTFOUND {
			t := &agentmem.Thread{UserID: p.user, AgentID: p.agent}
			if err = store.CreateThread(r.Context(), t); err == nil {
				sess, err = store.SetSession(r.Context(), p.user, p.agent, t.ID)
				status = http.StatusCreated
			}
		}
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, r, log, status, sess)
	})
}

// handleSetSession makes {"thread_id":…} the active thread of the user and
// agent; 404 when the user has no such thread.
func handleSetSession(log *slog.Logger, sessions agentmem.SessionStore) http.Handler {
	type request struct {
		ThreadID string `json:"thread_id"`
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := readPath(r)
		var req request
		if err == nil {
			req, err = decode[request](r)
		}
		if err == nil {
			err = agentmem.ValidateID("thread_id", req.ThreadID)
		}
		var sess *agentmem.Session
		if err == nil {
			sess, err = sessions.SetSession(r.Context(), p.user, p.agent, req.ThreadID)
		}
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, r, log, http.StatusOK, sess)
	})
}
