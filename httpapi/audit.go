package httpapi

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/agentmem/agentmem"
)

// recordAudit appends e to the audit log with the caller as its actor. The
// action it records has already happened, so a failure to record it is
// logged for the operator rather than reported to the caller as a failure
// of the action. userID is the stored user ID of the path.
func recordAudit(r *http.Request, log *slog.Logger, audit agentmem.AuditStore, action, userID, target string, detail any) {
	id := agentmem.IdentityFromContext(r.Context())
	e := &agentmem.AuditEvent{Actor: id.Actor(), Action: action, UserID: userID, Target: target}
	if id != nil && id.Scope.TenantID != "" {
		e.TenantID = id.Scope.TenantID
		e.UserID = strings.TrimPrefix(userID, id.Scope.TenantID+"/")
	}
	if detail != nil {
		b, err := json.Marshal(detail)
		if err == nil {
			e.Detail = b
		}
	}
	if err := audit.CreateAuditEvent(r.Context(), e); err != nil {
		log.ErrorContext(r.Context(), "audit event not recorded", "action", action, "request_id", requestID(r.Context()), "err", err)
	}
}

// handleListAudit lists the audit log, newest first. Query: action,
// tenant_id, user_id, since (RFC 3339), limit, cursor.
func handleListAudit(log *slog.Logger, audit agentmem.AuditStore) http.Handler {
	type response struct {
		Data       []*agentmem.AuditEvent `json:"data"`
		NextCursor string                 `json:"next_cursor"`
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		f := agentmem.AuditFilter{Cursor: q.Get("cursor")}
		for name, p := range map[string]**string{"action": &f.Action, "tenant_id": &f.TenantID, "user_id": &f.UserID} {
			if q.Has(name) {
				v := q.Get(name)
				*p = &v
			}
		}
		var err error
		if s := q.Get("since"); s != "" {
			var t time.Time
			if t, err = time.Parse(time.RFC3339Nano, s); err != nil {
				err = agentmem.Errorf(agentmem.EINVALID, "since must be an RFC 3339 time, not %q.", s)
			}
			f.Since = &t
		}
		var limit int64
		if err == nil {
			limit, err = queryInt(q, "limit")
			f.Limit = int(min(limit, agentmem.MaxPageSize+1))
		}
		var resp response
		if err == nil {
			resp.Data, resp.NextCursor, err = audit.FindAuditEvents(r.Context(), f)
		}
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		if resp.Data == nil {
			resp.Data = []*agentmem.AuditEvent{}
		}
		encode(w, r, log, http.StatusOK, resp)
	})
}
