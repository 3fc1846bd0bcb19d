package httpapi

import (
	"log/slog"
	"net/http"
	"reflect"

	"github.com/agentmem/agentmem"
)

// handleCreateKey creates an API key (an agentmem.KeyInput) and answers
// 201 {"key","token"}: the token is shown this once.
func handleCreateKey(log *slog.Logger, svc agentmem.AdminService) http.Handler {
	return handle(log, func(w http.ResponseWriter, r *http.Request) error {
		in, err := decode[agentmem.KeyInput](r)
		if err != nil {
			return err
		}
		k, err := svc.CreateKey(r.Context(), in)
		if err != nil {
			return err
		}
		encode(w, r, log, http.StatusCreated, k)
		return nil
	}).
		reads(reflect.TypeFor[agentmem.KeyInput]()).
		writes(http.StatusCreated, reflect.TypeFor[agentmem.NewKey]())
}

// handleListKeys lists the API keys (never their secrets). Query:
// tenant_id, limit, cursor.
func handleListKeys(log *slog.Logger, svc agentmem.AdminService) http.Handler {
	return handleQuery(log, []string{"tenant_id", "limit", "cursor"}, func(w http.ResponseWriter, r *http.Request) error {
		q := r.URL.Query()
		f := agentmem.KeyFilter{Cursor: q.Get("cursor")}
		if q.Has("tenant_id") {
			t := q.Get("tenant_id")
			f.TenantID = &t
		}
		var err error
		if f.Limit, err = queryLimit(q); err != nil {
			return err
		}
		data, next, err := svc.FindKeys(r.Context(), f)
		if err != nil {
			return err
		}
		return encodeList(w, r, log, data, next)
	}).writes(http.StatusOK, pageOf[*agentmem.APIKey]())
}

// handleRevokeKey revokes a key at once and answers with it.
func handleRevokeKey(log *slog.Logger, svc agentmem.AdminService) http.Handler {
	return handle(log, func(w http.ResponseWriter, r *http.Request) error {
		k, err := svc.RevokeKey(r.Context(), r.PathValue("key"))
		if err != nil {
			return err
		}
		encode(w, r, log, http.StatusOK, k)
		return nil
	}).writes(http.StatusOK, reflect.TypeFor[agentmem.APIKey]())
}
