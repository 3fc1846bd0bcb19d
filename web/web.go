// Package web is agentmem's web UI, embedded in the binary: a chat page
// whose replies stream through the OpenAI-compatible proxy, the user's
// conversations in a sidebar, and an inspector of exactly what the model
// is sent (the context's sections and tokens) and what is remembered.
// The page is static; its script calls the REST API and the proxy, same
// origin, with JSON bodies, so the API's authentication and cross-site
// protections apply to it unchanged.
package web

import (
	"embed"
	"io/fs"
	"net/http"
)

//go:embed static
var static embed.FS

// NewHandler serves the page at / and its files under /static/.
func NewHandler() http.Handler {
	files, _ := fs.Sub(static, "static") // a constant directory: cannot fail
	mux := http.NewServeMux()
	fileServer := http.StripPrefix("/static/", http.FileServerFS(files))
	mux.Handle("GET /static/", fileServer)
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'self'; script-src 'self'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		http.ServeFileFS(w, r, files, "index.html")
	})
	return mux
}
