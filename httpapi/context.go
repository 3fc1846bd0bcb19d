package httpapi

import (
	"log/slog"
	"net/http"
	"reflect"

	"github.com/agentmem/agentmem"
)

// handleBuildContext builds what a model should see of a thread within a
// token budget: 200 with messages, instructions and input, or text, and
// the telemetry. The body is an agentmem.ContextRequest; an empty body
// takes the server's defaults.
func handleBuildContext(log *slog.Logger, svc agentmem.ThreadService) http.Handler {
	return handle(log, func(w http.ResponseWriter, r *http.Request) error {
		p, err := readPath(r)
		if err != nil {
			return err
		}
		var req agentmem.ContextRequest
		if r.ContentLength != 0 {
			if req, err = decode[agentmem.ContextRequest](r); err != nil {
				return err
			}
		}
		c, err := svc.BuildContext(r.Context(), p.user, p.thread, req)
		if err != nil {
			return err
		}
		encodeSelf(w, r, log, http.StatusOK, c)
		return nil
	}).
		readsOptional(reflect.TypeFor[agentmem.ContextRequest]()).
		writes(http.StatusOK, reflect.TypeFor[agentmem.Context]())
}
