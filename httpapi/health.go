package httpapi

import (
	"errors"
	"log/slog"
	"net/http"

	"github.com/agentmem/agentmem"
)

// handleHealth answers while the process serves: liveness, no store call.
func handleHealth(log *slog.Logger, version string) http.Handler {
	type response struct {
		Status  string `json:"status"`
		Version string `json:"version,omitempty"`
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		encode(w, r, log, http.StatusOK, response{Status: "ok", Version: version})
	})
}

// handleReady answers 200 when the store answers, 503 otherwise.
func handleReady(log *slog.Logger, store agentmem.Store) http.Handler {
	type response struct {
		Status string `json:"status"`
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := store.Ping(r.Context()); err != nil {
			if agentmem.ErrorCode(err) == agentmem.EINTERNAL { // not ready is 503, whatever the cause
				err = errors.Join(agentmem.Errorf(agentmem.EUNAVAILABLE, "The database does not answer."), err)
			}
			writeError(w, r, log, err)
			return
		}
		encode(w, r, log, http.StatusOK, response{Status: "ready"})
	})
}

// handleStats reports the store's counts and size, for operators.
func handleStats(log *slog.Logger, users agentmem.UserStore) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		st, err := users.Stats(r.Context())
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, r, log, http.StatusOK, st)
	})
}
