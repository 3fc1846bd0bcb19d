package httpapi

import (
	"errors"
	"log/slog"
	"net/http"
	"reflect"

	"github.com/agentmem/agentmem"
)

// handleHealth answers while the process serves: liveness, no store call.
func handleHealth(log *slog.Logger, version string) http.Handler {
	type response struct {
		Status  string `json:"status"`
		Version string `json:"version,omitempty"`
	}
	return describe(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		encode(w, r, log, http.StatusOK, response{Status: "ok", Version: version})
	})).writes(http.StatusOK, reflect.TypeFor[response]())
}

// handleReady answers 200 when the store answers, 503 otherwise.
func handleReady(log *slog.Logger, svc agentmem.AdminService) http.Handler {
	type response struct {
		Status string `json:"status"`
	}
	return describe(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := svc.Ready(r.Context()); err != nil {
			if agentmem.ErrorCode(err) == agentmem.EINTERNAL { // not ready is 503, whatever the cause
				err = errors.Join(agentmem.Errorf(agentmem.EUNAVAILABLE, "The database does not answer."), err)
			}
			writeError(w, r, log, err)
			return
		}
		encode(w, r, log, http.StatusOK, response{Status: "ready"})
	})).writes(http.StatusOK, reflect.TypeFor[response]())
}

// handleStats answers the counts and store size (admin).
func handleStats(log *slog.Logger, svc agentmem.AdminService) http.Handler {
	return handle(log, func(w http.ResponseWriter, r *http.Request) error {
		st, err := svc.Stats(r.Context())
		if err != nil {
			return err
		}
		encode(w, r, log, http.StatusOK, st)
		return nil
	}).writes(http.StatusOK, reflect.TypeFor[agentmem.Stats]())
}
