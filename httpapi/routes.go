package httpapi

import (
	"log/slog"
	"net/http"

	"github.com/agentmem/agentmem"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// route is one line of the API surface: its ServeMux pattern, who may
// call it, and its handler.
type route struct {
	pattern string
	access  access
	handler http.Handler
}

// routes is the whole API surface, one line per route. Every route says
// who may call it; the isolation tests are built from this table, so a
// route added here without its cases fails them.
func routes(log *slog.Logger, store agentmem.Store, opt Options) []route {
	rs := []route{
		{"GET /healthz", accessPublic, handleHealth(log, opt.Version)},
		{"GET /readyz", accessPublic, handleReady(log, store)},
		{"GET /v1/stats", accessAdmin, handleStats(log, store)},
		{"GET /v1/audit", accessAdmin, handleListAudit(log, store)},
		{"GET /v1/jobs", accessAdmin, handleListJobs(log, store)},
		{"GET /v1/keys", accessAdmin, handleListKeys(log, store)},
		{"POST /v1/keys", accessAdmin, handleCreateKey(log, store)},
		{"DELETE /v1/keys/{key}", accessAdmin, handleRevokeKey(log, store)},

		{"GET /v1/users/{user}/threads", accessUser, handleListThreads(log, store)},
		{"POST /v1/users/{user}/threads", accessUser, handleCreateThread(log, store)},
		{"POST /v1/users/{user}/threads/import", accessUser, handleImportThread(log, store)},
		{"GET /v1/users/{user}/threads/{thread}", accessUser, handleGetThread(log, store)},
		{"PATCH /v1/users/{user}/threads/{thread}", accessUser, handleUpdateThread(log, store, opt.Indexer, opt.Reflector)},
		{"DELETE /v1/users/{user}/threads/{thread}", accessUser, handleDeleteThread(log, store)},
		{"POST /v1/users/{user}/threads/{thread}/end", accessUser, handleEndThread(log, store, opt.Indexer, opt.Reflector)},
		{"GET /v1/users/{user}/threads/{thread}/messages", accessUser, handleListMessages(log, store)},
		{"POST /v1/users/{user}/threads/{thread}/messages", accessUser, handleAppendMessages(log, store, opt.Indexer, opt.MaxBatchMessages)},
		{"GET /v1/users/{user}/threads/{thread}/elements", accessUser, handleListElements(log, store)},
		{"POST /v1/users/{user}/threads/{thread}/elements", accessUser, handleCreateElement(log, store)},
		{"GET /v1/users/{user}/threads/{thread}/export", accessUser, handleExportThread(log, store)},
		{"POST /v1/users/{user}/threads/{thread}/context", accessUser, handleBuildContext(log, opt.Window)},

		{"POST /v1/users/{user}/search", accessUser, handleSearch(log, opt.Searcher)},
		{"POST /v1/users/{user}/facts", accessUser, handleFacts(log, opt.Searcher, opt.Chat, opt.ChatModel)},
		{"GET /v1/users/{user}/memories", accessUser, handleListMemories(log, store)},
		{"POST /v1/users/{user}/memories", accessUser, handleCreateMemory(log, store, opt.Indexer)},
		{"GET /v1/users/{user}/memories/{memory}", accessUser, handleGetMemory(log, store)},
		{"PATCH /v1/users/{user}/memories/{memory}", accessUser, handleUpdateMemory(log, store, opt.Indexer)},
		{"DELETE /v1/users/{user}/memories/{memory}", accessUser, handleDeleteMemory(log, store)},
		{"GET /v1/users/{user}/memories/{memory}/history", accessUser, handleMemoryHistory(log, store)},
		{"GET /v1/users/{user}/entities", accessUser, handleListEntities(log, store)},
		{"POST /v1/users/{user}/entities", accessUser, handlePutEntity(log, store)},
		{"GET /v1/users/{user}/entities/{entity}", accessUser, handleGetEntity(log, store)},
		{"PATCH /v1/users/{user}/entities/{entity}", accessUser, handleUpdateEntity(log, store)},
		{"DELETE /v1/users/{user}/entities/{entity}", accessUser, handleDeleteEntity(log, store)},
		{"GET /v1/users/{user}/entities/{entity}/threads", accessUser, handleListEntityRefs(log, store)},
		{"GET /v1/users/{user}/threads/{thread}/entities", accessUser, handleListEntityRefs(log, store)},
		{"GET /v1/users/{user}/profile", accessUser, handleGetProfile(log, store)},
		{"POST /v1/users/{user}/profile/refresh", accessUser, handleRefreshProfile(log, opt.Profiler)},
		{"GET /v1/users/{user}/profile/versions", accessUser, handleListProfiles(log, store)},
		{"GET /v1/users/{user}/threads/{thread}/reflection", accessUser, handleGetReflection(log, store)},

		{"GET /v1/users/{user}/agents/{agent}/session", accessUser, handleGetSession(log, store)},
		{"PUT /v1/users/{user}/agents/{agent}/session", accessUser, handleSetSession(log, store)},
		{"GET /v1/users/{user}/agents/{agent}/notes", accessUser, handleGetNotes(log, store)},
		{"PUT /v1/users/{user}/agents/{agent}/notes", accessUser, handlePutNotes(log, store)},
		{"POST /v1/users/{user}/agents/{agent}/notes/ops", accessUser, handleNotesOp(log, store)},
		{"GET /v1/users/{user}/agents/{agent}/notes/history", accessUser, handleNotesHistory(log, store)},

		{"GET /v1/users/{user}/export", accessUser, handleExportUser(log, store)},
		{"DELETE /v1/users/{user}", accessUserAdmin, handleDeleteUser(log, store)},
	}
	if opt.Registry != nil {
		rs = append(rs, route{"GET /metrics", accessAdmin, promhttp.HandlerFor(opt.Registry, promhttp.HandlerOpts{Registry: opt.Registry})})
	}
	return rs
}

// addRoutes registers the routes of routes, each behind authorize.
func addRoutes(mux *http.ServeMux, log *slog.Logger, store agentmem.Store, opt Options) {
	for _, rt := range routes(log, store, opt) {
		mux.Handle(rt.pattern, authorize(log, rt.access, rt.handler))
	}
}
