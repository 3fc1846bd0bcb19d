package proxy

import (
	"io"
	"net/http"
)

// handleModels serves GET /openai/v1/models and /openai/v1/models/{model}:
// the upstream's answer, passed on.
func (p *proxy) handleModels() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		api := "models"
		if m := r.PathValue("model"); m != "" {
			api += "/" + m
		}
		x, err := p.send(r.Context(), http.MethodGet, api, "", nil)
		if err != nil {
			p.writeError(w, r, err)
			return
		}
		defer x.Close()
		copyHeaders(w.Header(), x.res.Header)
		w.WriteHeader(x.res.StatusCode)
		io.Copy(w, x.body)
	})
}
