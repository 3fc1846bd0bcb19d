package httpapi

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"reflect"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/tools"
)

// handleListTools answers the tools (package tools, which the MCP server
// offers too) as OpenAI
// function-calling declarations: 200 {"tools": [{"type":"function",
// "function": {name, description, parameters}}]}, for an agent loop that
// is not on MCP to hand to its model.
func handleListTools(log *slog.Logger) http.Handler {
	type response struct {
		Tools []tools.Function `json:"tools"`
	}
	return handle(log, func(w http.ResponseWriter, r *http.Request) error {
		encode(w, r, log, http.StatusOK, response{tools.Functions()})
		return nil
	}).writes(http.StatusOK, reflect.TypeFor[response]())
}

// handleCallTool runs one tool for the path's user with a model's JSON
// arguments (the body, an object): 200 {"result": …}. The agent of notes
// and sessions is ?agent= (default "default"). Arguments that do not fit
// the tool's schema are 400 naming what is wrong; an unknown tool is 404.
func handleCallTool(log *slog.Logger, svc agentmem.Service) http.Handler {
	type response struct {
		Result any `json:"result"` // the tool's result, of the shape it declares
	}
	return handleQuery(log, []string{"agent"}, func(w http.ResponseWriter, r *http.Request) error {
		p, err := readPath(r)
		if err != nil {
			return err
		}
		args := json.RawMessage("{}") // a tool without arguments may be called without a body
		if r.ContentLength != 0 {
			if args, err = decode[json.RawMessage](r); err != nil {
				return err
			}
		}
		agent := r.URL.Query().Get("agent")
		if agent != "" {
			if err := agentmem.ValidateID("agent", agent); err != nil {
				return err
			}
		}
		result, err := tools.Call(r.Context(), tools.Env{Service: svc, Agent: agent}, p.user, r.PathValue("name"), args)
		if err != nil {
			return err
		}
		encode(w, r, log, http.StatusOK, response{result})
		return nil
	}).readsOptional(reflect.TypeFor[json.RawMessage]()).
		writes(http.StatusOK, reflect.TypeFor[response]())
}
