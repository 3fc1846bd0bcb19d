package httpapi

import (
	"log/slog"
	"net/http"
	"reflect"

	"github.com/agentmem/agentmem"
)

// handleSearch runs a hybrid search over the user's memories and
// messages: 200 {results, signals, warnings}.
func handleSearch(log *slog.Logger, svc agentmem.MemoryService) http.Handler {
	return handle(log, func(w http.ResponseWriter, r *http.Request) error {
		p, err := readPath(r)
		if err != nil {
			return err
		}
		req, err := decode[agentmem.SearchRequest](r)
		if err != nil {
			return err
		}
		resp, err := svc.Search(r.Context(), p.user, req)
		if err != nil {
			return err
		}
		encode(w, r, log, http.StatusOK, resp)
		return nil
	}).
		reads(reflect.TypeFor[agentmem.SearchRequest]()).
		writes(http.StatusOK, reflect.TypeFor[agentmem.SearchResponse]())
}

// handleFacts answers a question about the user from what search finds:
// 200 {answer, facts, model, warnings}. With a model the answer is
// synthesised and cites the facts as [n]; without one it lists them.
func handleFacts(log *slog.Logger, svc agentmem.MemoryService) http.Handler {
	return handle(log, func(w http.ResponseWriter, r *http.Request) error {
		p, err := readPath(r)
		if err != nil {
			return err
		}
		req, err := decode[agentmem.SearchRequest](r)
		if err != nil {
			return err
		}
		resp, err := svc.Facts(r.Context(), p.user, req)
		if err != nil {
			return err
		}
		encode(w, r, log, http.StatusOK, resp)
		return nil
	}).
		reads(reflect.TypeFor[agentmem.SearchRequest]()).
		writes(http.StatusOK, reflect.TypeFor[agentmem.FactsResponse]())
}
