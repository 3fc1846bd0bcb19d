package httpapi

import (
	"log/slog"
	"net/http"

	"github.com/agentmem/agentmem"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// addRoutes registers the whole API surface, one line per route.
func addRoutes(mux *http.ServeMux, log *slog.Logger, store agentmem.Store, opt Options) {
	mux.Handle("GET /healthz", handleHealth(log, opt.Version))
	mux.Handle("GET /readyz", handleReady(log, store))
	mux.Handle("GET /v1/stats", handleStats(log, store))
	if opt.Registry != nil {
		mux.Handle("GET /metrics", promhttp.HandlerFor(opt.Registry, promhttp.HandlerOpts{Registry: opt.Registry}))
	}

	mux.Handle("GET /v1/users/{user}/threads", handleListThreads(log, store))
	mux.Handle("POST /v1/users/{user}/threads", handleCreateThread(log, store))
	mux.Handle("POST /v1/users/{user}/threads/import", handleImportThread(log, store))
	mux.Handle("GET /v1/users/{user}/threads/{thread}", handleGetThread(log, store))
	mux.Handle("PATCH /v1/users/{user}/threads/{thread}", handleUpdateThread(log, store))
	mux.Handle("DELETE /v1/users/{user}/threads/{thread}", handleDeleteThread(log, store))
	mux.Handle("POST /v1/users/{user}/threads/{thread}/end", handleEndThread(log, store))
	mux.Handle("GET /v1/users/{user}/threads/{thread}/messages", handleListMessages(log, store))
	mux.Handle("POST /v1/users/{user}/threads/{thread}/messages", handleAppendMessages(log, store))
	mux.Handle("GET /v1/users/{user}/threads/{thread}/elements", handleListElements(log, store))
	mux.Handle("POST /v1/users/{user}/threads/{thread}/elements", handleCreateElement(log, store))
	mux.Handle("GET /v1/users/{user}/threads/{thread}/export", handleExportThread(log, store))

	mux.Handle("GET /v1/users/{user}/agents/{agent}/session", handleGetSession(log, store))
	mux.Handle("PUT /v1/users/{user}/agents/{agent}/session", handleSetSession(log, store))

	mux.Handle("GET /v1/users/{user}/export", handleExportUser(log, store))
	mux.Handle("DELETE /v1/users/{user}", handleDeleteUser(log, store))
}
