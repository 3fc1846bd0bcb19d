package httpapi

import (
	"log/slog"
	"net/http"
	"net/url"
	"reflect"

	"github.com/agentmem/agentmem"
)

// handleListJobs lists the background jobs of every user, newest updated
// first, for operators: dead letters with ?status=dead. Query: status,
// kind, user_id (a stored user ID), limit, cursor.
func handleListJobs(log *slog.Logger, svc agentmem.AdminService) http.Handler {
	return handleQuery(log, []string{"status", "kind", "user_id", "limit", "cursor"}, func(w http.ResponseWriter, r *http.Request) error {
		q := r.URL.Query()
		f, err := jobFilter(q)
		if err != nil {
			return err
		}
		if q.Has("user_id") {
			user := q.Get("user_id")
			f.UserID = &user
		}
		data, next, err := svc.FindJobs(r.Context(), f)
		if err != nil {
			return err
		}
		return encodeList(w, r, log, data, next)
	}).writes(http.StatusOK, pageOf[*agentmem.Job]())
}

// handleListUserJobs lists the background jobs of the user of the path,
// newest updated first: their dead letters with ?status=dead. Query:
// status, kind, limit, cursor.
func handleListUserJobs(log *slog.Logger, svc agentmem.UserService) http.Handler {
	return handleQuery(log, []string{"status", "kind", "limit", "cursor"}, func(w http.ResponseWriter, r *http.Request) error {
		p, err := readPath(r)
		if err != nil {
			return err
		}
		f, err := jobFilter(r.URL.Query())
		if err != nil {
			return err
		}
		data, next, err := svc.FindUserJobs(r.Context(), p.user, f)
		if err != nil {
			return err
		}
		return encodeList(w, r, log, data, next)
	}).writes(http.StatusOK, pageOf[*agentmem.Job]())
}

// jobFilter reads the status, kind, limit and cursor of a list of jobs.
func jobFilter(q url.Values) (agentmem.JobFilter, error) {
	f := agentmem.JobFilter{Cursor: q.Get("cursor")}
	for name, p := range map[string]**string{"status": &f.Status, "kind": &f.Kind} {
		if q.Has(name) {
			v := q.Get(name)
			*p = &v
		}
	}
	if f.Status != nil {
		switch *f.Status {
		case agentmem.JobQueued, agentmem.JobRunning, agentmem.JobDone, agentmem.JobDead:
		default:
			return f, agentmem.Errorf(agentmem.EINVALID, "status must be queued, running, done or dead, not %q.", *f.Status)
		}
	}
	var err error
	f.Limit, err = queryLimit(q)
	return f, err
}

// handleRetryJob queues a dead job of the user again and answers 200
// with it, queued: 409 for a job that is not dead, or whose kind and key
// have another job queued or running.
func handleRetryJob(log *slog.Logger, svc agentmem.UserService) http.Handler {
	return handle(log, func(w http.ResponseWriter, r *http.Request) error {
		p, err := readPath(r)
		if err != nil {
			return err
		}
		j, err := svc.RetryJob(r.Context(), p.user, r.PathValue("job"))
		if err != nil {
			return err
		}
		encode(w, r, log, http.StatusOK, j)
		return nil
	}).writes(http.StatusOK, reflect.TypeFor[agentmem.Job]())
}
