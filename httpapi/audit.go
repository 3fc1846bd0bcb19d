package httpapi

import (
	"log/slog"
	"net/http"

	"github.com/agentmem/agentmem"
)

// handleListAudit lists the audit log, newest first (admin). Query:
// action, tenant_id, user_id, since, limit, cursor.
func handleListAudit(log *slog.Logger, svc agentmem.AdminService) http.Handler {
	return handleQuery(log, []string{"action", "tenant_id", "user_id", "since", "limit", "cursor"}, func(w http.ResponseWriter, r *http.Request) error {
		q := r.URL.Query()
		f := agentmem.AuditFilter{Cursor: q.Get("cursor")}
		for name, p := range map[string]**string{"action": &f.Action, "tenant_id": &f.TenantID, "user_id": &f.UserID} {
			if q.Has(name) {
				v := q.Get(name)
				*p = &v
			}
		}
		var err error
		if f.Since, err = queryTime(q, "since"); err != nil {
			return err
		}
		if f.Limit, err = queryLimit(q); err != nil {
			return err
		}
		data, next, err := svc.FindAuditEvents(r.Context(), f)
		if err != nil {
			return err
		}
		return encodeList(w, r, log, data, next)
	}).writes(http.StatusOK, pageOf[*agentmem.AuditEvent]())
}
