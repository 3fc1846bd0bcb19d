package httpapi

import (
	"log/slog"
	"net/http"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/retrieve"
)

// handleSearch runs a hybrid search over the user's memories and
// messages: 200 {results, signals, warnings}.
func handleSearch(log *slog.Logger, s *retrieve.Searcher) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := readPath(r)
		var req retrieve.Request
		if err == nil {
			req, err = decode[retrieve.Request](r)
		}
		var resp *retrieve.Response
		if err == nil {
			resp, err = s.Search(r.Context(), p.user, req)
		}
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, r, log, http.StatusOK, resp)
	})
}

// handleFacts answers a question about the user from what search finds:
// 200 {answer, facts, model, warnings}. With a model the answer is
// synthesised and cites the facts as [n]; without one it lists them.
func handleFacts(log *slog.Logger, s *retrieve.Searcher, chat agentmem.Chat, model string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := readPath(r)
		var req retrieve.Request
		if err == nil {
			req, err = decode[retrieve.Request](r)
		}
		var resp *retrieve.FactsResponse
		if err == nil {
			resp, err = s.Facts(r.Context(), chat, model, p.user, req)
		}
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, r, log, http.StatusOK, resp)
	})
}
