package httpapi

import (
	"log/slog"
	"net/http"
	"reflect"
	"time"

	"github.com/agentmem/agentmem"
)

// handleListUsers lists every user with their counts, in the order of
// their stored IDs (a tenant's users together), for operators: {"data":[{"user_id","threads","messages","memories",
// "last_active_at"}],"next_cursor"}. A tenant's user is named
// "tenant:TENANT/user:USER", the user ID of the other routes. Query:
// limit, cursor, user_id (that user alone, or none).
func handleListUsers(log *slog.Logger, svc agentmem.AdminService) http.Handler {
	return handleQuery(log, []string{"limit", "cursor", "user_id"}, func(w http.ResponseWriter, r *http.Request) error {
		q := r.URL.Query()
		f := agentmem.UserFilter{Cursor: q.Get("cursor")}
		if q.Has("user_id") {
			id := q.Get("user_id")
			f.UserID = &id
		}
		var err error
		if f.Limit, err = queryLimit(q); err != nil {
			return err
		}
		data, next, err := svc.FindUsers(r.Context(), f)
		if err != nil {
			return err
		}
		return encodeList(w, r, log, data, next)
	}).writes(http.StatusOK, pageOf[*agentmem.UserSummary]())
}

// handleWhoAmI describes the caller's identity (an agentmem.Caller): its
// kind, user and tenant, how it was established, and with
// authentication off the user of requests that name none.
func handleWhoAmI(log *slog.Logger, svc agentmem.UserService) http.Handler {
	return handle(log, func(w http.ResponseWriter, r *http.Request) error {
		c, err := svc.WhoAmI(r.Context())
		if err != nil {
			return err
		}
		encode(w, r, log, http.StatusOK, c)
		return nil
	}).writes(http.StatusOK, reflect.TypeFor[agentmem.Caller]())
}

// handleDeleteUser erases everything of a user and answers with what was
// deleted.
func handleDeleteUser(log *slog.Logger, svc agentmem.AdminService) http.Handler {
	type response struct {
		Deleted agentmem.Counts `json:"deleted"`
	}
	return handle(log, func(w http.ResponseWriter, r *http.Request) error {
		p, err := readPath(r)
		if err != nil {
			return err
		}
		c, err := svc.EraseUser(r.Context(), p.user)
		if err != nil {
			return err
		}
		encode(w, r, log, http.StatusOK, response{c})
		return nil
	}).writes(http.StatusOK, reflect.TypeFor[response]())
}

// handleCleanup deletes every user's threads not updated for a while
// (seed 002's retention; admin): {"older_than":"30d"} or {"before":TIME},
// with "dry_run" to count only. Answers what was (or would be) deleted.
func handleCleanup(log *slog.Logger, svc agentmem.AdminService) http.Handler {
	type request struct {
		OlderThan string    `json:"older_than"`
		Before    time.Time `json:"before"`
		DryRun    bool      `json:"dry_run"`
	}
	return handle(log, func(w http.ResponseWriter, r *http.Request) error {
		req, err := decode[request](r)
		if err != nil {
			return err
		}
		cutoff := req.Before
		switch {
		case req.OlderThan != "" && !cutoff.IsZero():
			return agentmem.Errorf(agentmem.EINVALID, "Give older_than or before, not both.")
		case req.OlderThan != "":
			age, err := agentmem.ParseAge("older_than", req.OlderThan)
			if err != nil {
				return err
			}
			if age <= 0 {
				return agentmem.Errorf(agentmem.EINVALID, "older_than %q would delete every thread; give a positive age such as \"30d\", or before (an RFC 3339 time).", req.OlderThan)
			}
			cutoff = time.Now().Add(-age)
		case cutoff.IsZero():
			return agentmem.Errorf(agentmem.EINVALID, `older_than (e.g. "30d") or before (an RFC 3339 time) is required.`)
		}
		res, err := svc.Cleanup(r.Context(), cutoff, req.DryRun)
		if err != nil {
			return err
		}
		encode(w, r, log, http.StatusOK, res)
		return nil
	}).
		reads(reflect.TypeFor[request]()).
		writes(http.StatusOK, reflect.TypeFor[agentmem.CleanupResult]())
}
