package httpapi

import (
	"log/slog"
	"net/http"

	"github.com/agentmem/agentmem"
)

// route is one line of the API surface: its ServeMux pattern, who may
// call it, and its handler. A REST handler is an endpoint, which says what
// it reads and writes for the OpenAPI document (see openapi.go).
type route struct {
	pattern string
	access  access
	handler http.Handler
}

// routes is the whole API surface, one line per route. Every route says
// who may call it; the isolation tests are built from this table, so a
// route added here without its cases fails them.
func routes(log *slog.Logger, svc agentmem.Service, opt Options) []route {
	rs := []route{
		{"GET /healthz", accessPublic, handleHealth(log, opt.Version)},
		{"GET /readyz", accessPublic, handleReady(log, svc)},
		{"GET /openapi.json", accessPublic, handleOpenAPI(log, opt)},
		{"GET /v1/stats", accessAdmin, handleStats(log, svc)},
		{"GET /v1/audit", accessAdmin, handleListAudit(log, svc)},
		{"GET /v1/jobs", accessAdmin, handleListJobs(log, svc)},
		{"GET /v1/keys", accessAdmin, handleListKeys(log, svc)},
		{"POST /v1/keys", accessAdmin, handleCreateKey(log, svc)},
		{"DELETE /v1/keys/{key}", accessAdmin, handleRevokeKey(log, svc)},
		{"POST /v1/cleanup", accessAdmin, handleCleanup(log, svc)},
		{"GET /v1/tools", accessPublic, handleListTools(log)},
		{"GET /v1/me", accessIdentified, handleWhoAmI(log, svc)},
		{"GET /v1/users", accessAdmin, handleListUsers(log, svc)},

		{"GET /v1/users/{user}/threads", accessUser, handleListThreads(log, svc)},
		{"POST /v1/users/{user}/threads", accessUser, handleCreateThread(log, svc)},
		{"POST /v1/users/{user}/threads/import", accessUser, handleImportThread(log, svc)},
		{"GET /v1/users/{user}/threads/{thread}", accessUser, handleGetThread(log, svc)},
		{"PATCH /v1/users/{user}/threads/{thread}", accessUser, handleUpdateThread(log, svc)},
		{"DELETE /v1/users/{user}/threads/{thread}", accessUser, handleDeleteThread(log, svc)},
		{"POST /v1/users/{user}/threads/{thread}/restore", accessUser, handleRestoreThread(log, svc)},
		{"POST /v1/users/{user}/threads/{thread}/end", accessUser, handleEndThread(log, svc)},
		{"GET /v1/users/{user}/threads/{thread}/messages", accessUser, handleListMessages(log, svc)},
		{"POST /v1/users/{user}/threads/{thread}/messages", accessUser, handleAppendMessages(log, svc)},
		{"GET /v1/users/{user}/threads/{thread}/elements", accessUser, handleListElements(log, svc)},
		{"POST /v1/users/{user}/threads/{thread}/elements", accessUser, handleCreateElement(log, svc)},
		{"GET /v1/users/{user}/threads/{thread}/export", accessUser, handleExportThread(log, svc)},
		{"POST /v1/users/{user}/threads/{thread}/context", accessUser, handleBuildContext(log, svc)},
		{"POST /v1/users/{user}/turns", accessUser, handleBeginTurn(log, svc)},

		{"POST /v1/users/{user}/search", accessUser, handleSearch(log, svc)},
		{"POST /v1/users/{user}/facts", accessUser, handleFacts(log, svc)},
		{"GET /v1/users/{user}/memories", accessUser, handleListMemories(log, svc)},
		{"POST /v1/users/{user}/memories", accessUser, handleCreateMemory(log, svc)},
		{"GET /v1/users/{user}/memories/{memory}", accessUser, handleGetMemory(log, svc)},
		{"PATCH /v1/users/{user}/memories/{memory}", accessUser, handleUpdateMemory(log, svc)},
		{"DELETE /v1/users/{user}/memories/{memory}", accessUser, handleDeleteMemory(log, svc)},
		{"GET /v1/users/{user}/memories/{memory}/history", accessUser, handleMemoryHistory(log, svc)},
		{"POST /v1/users/{user}/memories/{memory}/invalidate", accessUser, handleInvalidateMemory(log, svc)},
		{"GET /v1/users/{user}/entities", accessUser, handleListEntities(log, svc)},
		{"POST /v1/users/{user}/entities", accessUser, handlePutEntity(log, svc)},
		{"GET /v1/users/{user}/entities/{entity}", accessUser, handleGetEntity(log, svc)},
		{"PATCH /v1/users/{user}/entities/{entity}", accessUser, handleUpdateEntity(log, svc)},
		{"DELETE /v1/users/{user}/entities/{entity}", accessUser, handleDeleteEntity(log, svc)},
		{"GET /v1/users/{user}/entities/{entity}/threads", accessUser, handleListEntityRefs(log, svc)},
		{"GET /v1/users/{user}/threads/{thread}/entities", accessUser, handleListEntityRefs(log, svc)},
		{"GET /v1/users/{user}/profile", accessUser, handleGetProfile(log, svc)},
		{"POST /v1/users/{user}/profile/refresh", accessUser, handleRefreshProfile(log, svc)},
		{"GET /v1/users/{user}/profile/versions", accessUser, handleListProfiles(log, svc)},
		{"GET /v1/users/{user}/threads/{thread}/reflection", accessUser, handleGetReflection(log, svc)},
		{"POST /v1/users/{user}/threads/{thread}/reflection/retry", accessUser, handleRetryReflection(log, svc)},

		{"GET /v1/users/{user}/agents/{agent}/session", accessUser, handleGetSession(log, svc)},
		{"PUT /v1/users/{user}/agents/{agent}/session", accessUser, handleSetSession(log, svc)},
		{"GET /v1/users/{user}/agents/{agent}/notes", accessUser, handleGetNotes(log, svc)},
		{"PUT /v1/users/{user}/agents/{agent}/notes", accessUser, handlePutNotes(log, svc)},
		{"POST /v1/users/{user}/agents/{agent}/notes/ops", accessUser, handleNotesOp(log, svc)},
		{"GET /v1/users/{user}/agents/{agent}/notes/history", accessUser, handleNotesHistory(log, svc)},

		{"POST /v1/users/{user}/tools/{name}", accessUser, handleCallTool(log, svc)},

		{"GET /v1/users/{user}/jobs", accessUser, handleListUserJobs(log, svc)},
		{"POST /v1/users/{user}/jobs/{job}/retry", accessUser, handleRetryJob(log, svc)},

		{"GET /v1/users/{user}/export", accessUser, handleExportUser(log, svc)},
		{"POST /v1/users/{user}/import", accessUser, handleImportUser(log, svc)},
		{"DELETE /v1/users/{user}", accessUserAdmin, handleDeleteUser(log, svc)},
	}
	if opt.Proxy != nil {
		// The proxy routes its own paths and says whose memory a request
		// is (the identity's user, or a user it names: see package proxy).
		rs = append(rs, route{"/openai/v1/", accessUser, opt.Proxy})
	}
	if opt.MCP != nil {
		// The MCP server says whose memory a session reaches (the
		// identity's user, or the one it names: see package mcp).
		rs = append(rs, route{"/mcp", accessUser, opt.MCP})
	}
	if opt.Web != nil {
		rs = append(rs, route{"/{$}", accessPublic, opt.Web}, route{"/static/", accessPublic, opt.Web})
	}
	if opt.Metrics != nil {
		metrics := describe(opt.Metrics).
			writesMedia(http.StatusOK, "text/plain", &jsonSchema{Type: "string", Description: "Prometheus' text exposition format."})
		rs = append(rs, route{"GET /metrics", accessAdmin, metrics})
	}
	return rs
}

// addRoutes registers the routes of routes, each behind authorize.
func addRoutes(mux *http.ServeMux, log *slog.Logger, svc agentmem.Service, opt Options) {
	for _, rt := range routes(log, svc, opt) {
		mux.Handle(rt.pattern, authorize(log, rt.access, rt.handler))
	}
}
