package proxy

import (
	"io"
	"net/http"
	"strings"
	"unicode"
)

// handleModels serves GET /openai/v1/models and /openai/v1/models/{model}:
// the upstream's answer, passed on.
func (p *proxy) handleModels() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		api, model := "models", ""
		if r.Pattern == Routes[3] {
			api, model = "model", r.PathValue("model")
			if err := checkModelID(model); err != nil {
				p.writeError(w, r, err)
				return
			}
		}
		x, err := p.send(r.Context(), http.MethodGet, api, model, nil)
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

// checkModelID refuses a model ID (as decoded from the path) that is not
// plain: one that could, once in the upstream's URL, name another path
// or carry a query (it is sent with the operator's key). A plain ID is
// not blank and has no '/', '\\', "..", '?', '#', '%' or control
// character; the upstream URL escapes it as one path segment all the
// same (Upstream.endpoint).
func checkModelID(id string) error {
	bad := ""
	switch {
	case strings.TrimSpace(id) == "":
		return invalid("model", "The model ID in the path is empty.")
	case strings.Contains(id, ".."):
		bad = ".."
	case strings.ContainsAny(id, `/\?#%`):
		bad = string(id[strings.IndexAny(id, `/\?#%`)])
	case strings.ContainsFunc(id, unicode.IsControl):
		bad = "a control character"
	}
	if bad != "" {
		if len(bad) == 1 {
			bad = "'" + bad + "'"
		}
		return invalid("model", "The model ID in the path must be a plain model ID (such as gpt-4o or llama3:8b); it has %s.", bad)
	}
	return nil
}
