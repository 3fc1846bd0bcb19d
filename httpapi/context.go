package httpapi

import (
	"log/slog"
	"net/http"

	"github.com/agentmem/agentmem"
)

// handleBuildContext builds what a model should see of a thread within a
// token budget: 200 with messages, instructions and input, or text, and
// the telemetry. The body is an agentmem.ContextRequest; an empty body
// takes the server's defaults.
func handleBuildContext(log *slog.Logger, svc agentmem.ThreadService) http.Handler {
	return handle(log, func(w http.ResponseWriter, r *http.Request) error {
		p, err := readPath(r)
		if err != nil {
			return err
		}
		var req agentmem.ContextRequest
		if r.ContentLength != 0 {
			if req, err = decode[agentmem.ContextRequest](r); err != nil {
				return err
			}
		}
		c, err := svc.BuildContext(r.Context(), p.user, p.thread, req)
		if err != nil {
			return err
		}
		encode(w, r, log, http.StatusOK, c)
		return nil
	})
}

// handleListJobs lists the background jobs of every user, newest updated
// first, for operators: dead letters with ?status=dead. Query: status,
// kind, user_id (a stored user ID), limit, cursor.
func handleListJobs(log *slog.Logger, svc agentmem.AdminService) http.Handler {
	return handleQuery(log, []string{"status", "kind", "user_id", "limit", "cursor"}, func(w http.ResponseWriter, r *http.Request) error {
		q := r.URL.Query()
		f := agentmem.JobFilter{Cursor: q.Get("cursor")}
		for name, p := range map[string]**string{"status": &f.Status, "kind": &f.Kind, "user_id": &f.UserID} {
			if q.Has(name) {
				v := q.Get(name)
				*p = &v
			}
		}
		if f.Status != nil {
			switch *f.Status {
			case agentmem.JobQueued, agentmem.JobRunning, agentmem.JobDone, agentmem.JobDead:
			default:
				return agentmem.Errorf(agentmem.EINVALID, "status must be queued, running, done or dead, not %q.", *f.Status)
			}
		}
		var err error
		if f.Limit, err = queryLimit(q); err != nil {
			return err
		}
		data, next, err := svc.FindJobs(r.Context(), f)
		if err != nil {
			return err
		}
		return encodeList(w, r, log, data, next)
	})
}
