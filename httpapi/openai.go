package httpapi

import (
	"net/http"
	"strings"
)

// OpenAIPrefix is the path prefix of the OpenAI-compatible proxy
// (Options.Proxy, served under /openai/v1/). Every error answered to a
// request under it, whoever answers it (authentication, the middleware,
// the router or the proxy), is in OpenAI's shape (httpx.OpenAIError), the
// one OpenAI's SDKs read: an application that only changed its base URL
// sees the errors it knows.
const OpenAIPrefix = "/openai/"

// isOpenAI reports whether r is a request of the proxy's, whose errors
// are in OpenAI's shape.
func isOpenAI(r *http.Request) bool {
	return r != nil && strings.HasPrefix(r.URL.Path, OpenAIPrefix)
}
