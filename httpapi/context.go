package httpapi

import (
	"log/slog"
	"net/http"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/window"
)

// handleBuildContext builds what a model should see of a thread within a
// token budget: 200 with messages, instructions and input, or text, and
// the telemetry. The body is a window.Request; an empty body takes the
// server's defaults.
func handleBuildContext(log *slog.Logger, win *window.Builder) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := readPath(r)
		var req window.Request
		if err == nil && r.ContentLength != 0 {
			req, err = decode[window.Request](r)
		}
		var c *window.Context
		if err == nil {
			c, err = win.Build(r.Context(), p.user, p.thread, req)
		}
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, r, log, http.StatusOK, c)
	})
}

// handleListJobs lists the background jobs of every user, newest updated
// first, for operators: dead letters with ?status=dead. Query: status,
// kind, user_id (a stored user ID), limit, cursor.
func handleListJobs(log *slog.Logger, jobs agentmem.JobStore) http.Handler {
	type response struct {
		Data       []*agentmem.Job `json:"data"`
		NextCursor string          `json:"next_cursor"`
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		f := agentmem.JobFilter{Cursor: q.Get("cursor")}
		for name, p := range map[string]**string{"status": &f.Status, "kind": &f.Kind, "user_id": &f.UserID} {
			if q.Has(name) {
				v := q.Get(name)
				*p = &v
			}
		}
		var err error
		if f.Status != nil {
			switch *f.Status {
			case agentmem.JobQueued, agentmem.JobRunning, agentmem.JobDone, agentmem.JobDead:
			default:
				err = agentmem.Errorf(agentmem.EINVALID, "status must be queued, running, done or dead, not %q.", *f.Status)
			}
		}
		var limit int64
		if err == nil {
			limit, err = queryInt(q, "limit")
			f.Limit = int(min(limit, agentmem.MaxPageSize+1))
		}
		var resp response
		if err == nil {
			resp.Data, resp.NextCursor, err = jobs.FindJobs(r.Context(), f)
		}
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		if resp.Data == nil {
			resp.Data = []*agentmem.Job{}
		}
		encode(w, r, log, http.StatusOK, resp)
	})
}
