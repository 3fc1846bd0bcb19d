package httpapi

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/agentmem/agentmem"
)

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
	})
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
	})
}
