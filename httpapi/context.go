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

// handleBeginTurn records the user's side of a model call and answers
// the context to send the model (agentmem.Service.BeginTurn): the body is
// an agentmem.TurnRequest; 200 with the agentmem.Turn. The model's reply
// is then appended to the turn's thread (POST …/messages).
func handleBeginTurn(log *slog.Logger, svc agentmem.ThreadService) http.Handler {
	return handle(log, func(w http.ResponseWriter, r *http.Request) error {
		p, err := readPath(r)
		if err != nil {
			return err
		}
		req, err := decode[agentmem.TurnRequest](r)
		if err != nil {
			return err
		}
		turn, err := svc.BeginTurn(r.Context(), p.user, req)
		if err != nil {
			return err
		}
		encode(w, r, log, http.StatusOK, turn)
		return nil
	}).
		reads(reflect.TypeFor[agentmem.TurnRequest](), "messages").
		writes(http.StatusOK, reflect.TypeFor[agentmem.Turn]())
}
