package httpapi

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/agentmem/agentmem"
)

// handleCreateKey makes an API key: 201 {key, token}. The token is shown
// this once; only its hash is stored. Request: {scope: "admin" |
// "user:ID" | "tenant:ID" | "tenant:ID/user:ID", name, expires_in: a
// duration such as "2160h" or "90d"}.
func handleCreateKey(log *slog.Logger, store interface {
	agentmem.KeyStore
	agentmem.AuditStore
}) http.Handler {
	type request struct {
		Scope     string `json:"scope"`
		Name      string `json:"name"`
		ExpiresIn string `json:"expires_in"`
	}
	type response struct {
		Key   *agentmem.APIKey `json:"key"`
		Token string           `json:"token"`
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, err := decode[request](r)
		var sc agentmem.Scope
		if err == nil {
			sc, err = agentmem.ParseScope(req.Scope)
		}
		var ttl time.Duration
		if err == nil && req.ExpiresIn != "" {
			ttl, err = agentmem.ParseAge("expires_in", req.ExpiresIn)
		}
		var resp response
		if err == nil {
			resp.Token, resp.Key, err = agentmem.NewAPIKey(sc, req.Name, time.Now(), ttl)
		}
		if err == nil {
			resp.Key.CreatedBy = agentmem.IdentityFromContext(r.Context()).Actor()
			err = store.CreateKey(r.Context(), resp.Key)
		}
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		recordAudit(r, log, store, agentmem.AuditKeyCreate, sc.UserID, resp.Key.ID, map[string]string{"scope": sc.String(), "name": req.Name})
		encode(w, r, log, http.StatusCreated, resp)
	})
}

// handleListKeys lists API keys, newest first (never their secrets).
// Query: tenant_id, limit, cursor.
func handleListKeys(log *slog.Logger, keys agentmem.KeyStore) http.Handler {
	type response struct {
		Data       []*agentmem.APIKey `json:"data"`
		NextCursor string             `json:"next_cursor"`
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		f := agentmem.KeyFilter{Cursor: q.Get("cursor")}
		if q.Has("tenant_id") {
			t := q.Get("tenant_id")
			f.TenantID = &t
		}
		limit, err := queryInt(q, "limit")
		f.Limit = int(min(limit, agentmem.MaxPageSize+1))
		var resp response
		if err == nil {
			resp.Data, resp.NextCursor, err = keys.FindKeys(r.Context(), f)
		}
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		if resp.Data == nil {
			resp.Data = []*agentmem.APIKey{}
		}
		encode(w, r, log, http.StatusOK, resp)
	})
}

// handleRevokeKey revokes an API key (idempotent) and returns it.
func handleRevokeKey(log *slog.Logger, store interface {
	agentmem.KeyStore
	agentmem.AuditStore
}) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("key")
		err := agentmem.ValidateID("key", id)
		var k *agentmem.APIKey
		if err == nil {
			k, err = store.RevokeKey(r.Context(), id)
		}
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		recordAudit(r, log, store, agentmem.AuditKeyRevoke, k.Scope.UserID, k.ID, map[string]string{"scope": k.Scope.String()})
		encode(w, r, log, http.StatusOK, k)
	})
}
