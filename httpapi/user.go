package httpapi

import (
	"log/slog"
	"net/http"

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
