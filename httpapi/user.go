package httpapi

import (
	"log/slog"
	"net/http"

	"github.com/agentmem/agentmem"
)

// handleDeleteUser erases everything stored for the user and reports what
// it removed: 200 {"deleted": Counts}, recorded in the audit log. Erasing an unknown user removes
// nothing and succeeds.
func handleDeleteUser(log *slog.Logger, users interface {
	agentmem.UserStore
	agentmem.AuditStore
}) http.Handler {
	type response struct {
		Deleted agentmem.Counts `json:"deleted"`
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := readPath(r)
		var resp response
		if err == nil {
			resp.Deleted, err = users.DeleteUser(r.Context(), p.user)
		}
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		recordAudit(r, log, users, agentmem.AuditUserErase, p.user, "", resp.Deleted)
		encode(w, r, log, http.StatusOK, resp)
	})
}
