package mcp

import "net/http"

// SDKHandler returns the SDK's handler behind h, a NewHTTPHandler.
func SDKHandler(h http.Handler) http.Handler { return h.(*httpHandler).sdk }

// OpenSessions returns how many sessions h, a NewHTTPHandler, holds open.
func OpenSessions(h http.Handler) int {
	hh := h.(*httpHandler)
	hh.mu.Lock()
	defer hh.mu.Unlock()
	return len(hh.sessions)
}
