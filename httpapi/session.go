package httpapi

import (
	"log/slog"
	"net/http"
	"reflect"

	"github.com/agentmem/agentmem"
)

// handleGetSession returns the active session of the user and agent: 200,
// or 404 when there is none. With ?create=true a missing session is made
// (a new thread of the agent becomes the active one) and answered 201;
// concurrent creating calls make one thread.
func handleGetSession(log *slog.Logger, svc agentmem.ThreadService) http.Handler {
	return handleQuery(log, []string{"create"}, func(w http.ResponseWriter, r *http.Request) error {
		p, err := readPath(r)
		if err != nil {
			return err
		}
		create, err := queryBool(r.URL.Query(), "create")
		if err != nil {
			return err
		}
		var sess *agentmem.Session
		created := false
		if create {
			sess, created, err = svc.OpenSession(r.Context(), p.user, p.agent)
		} else {
			sess, err = svc.FindSession(r.Context(), p.user, p.agent)
		}
		if err != nil {
			return err
		}
		status := http.StatusOK
		if created {
			status = http.StatusCreated
		}
		encode(w, r, log, status, sess)
		return nil
	}).
		writes(http.StatusOK, reflect.TypeFor[agentmem.Session]()).
		writes(http.StatusCreated, reflect.TypeFor[agentmem.Session]())
}

// handleSetSession makes {"thread_id":…} the active thread of the user and
// agent; 404 when the user has no such thread.
func handleSetSession(log *slog.Logger, svc agentmem.ThreadService) http.Handler {
	type request struct {
		ThreadID string `json:"thread_id"`
	}
	return handle(log, func(w http.ResponseWriter, r *http.Request) error {
		p, err := readPath(r)
		if err != nil {
			return err
		}
		req, err := decode[request](r)
		if err != nil {
			return err
		}
		sess, err := svc.SetSession(r.Context(), p.user, p.agent, req.ThreadID)
		if err != nil {
			return err
		}
		encode(w, r, log, http.StatusOK, sess)
		return nil
	}).
		reads(reflect.TypeFor[request](), "thread_id").
		writes(http.StatusOK, reflect.TypeFor[agentmem.Session]())
}
