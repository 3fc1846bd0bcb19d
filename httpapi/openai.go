package httpapi

import (
	"encoding/json"
	"net/http"
	"strings"
)

// OpenAIPrefix is the path prefix of the OpenAI-compatible proxy
// (Options.Proxy, served under /openai/v1/). Every error answered to a
// request under it, whoever answers it (authentication, the middleware,
// the router or the proxy), is in OpenAI's shape (WriteOpenAIError), the
// one OpenAI's SDKs read: an application that only changed its base URL
// sees the errors it knows.
const OpenAIPrefix = "/openai/"

// OpenAIError is an error in the shape of OpenAI's API:
// {"error":{"message","type","param","code"}}, param and code null when
// "".
type OpenAIError struct {
	Status  int
	Type    string // invalid_request_error, server_error…
	Code    string // invalid_api_key, an agentmem code, or the model server's
	Param   string // the request field at fault
	Message string
}

// NewOpenAIError returns the error of status and agentmem code (what the
// REST API would answer) in OpenAI's terms: as OpenAI's API does, a
// missing or refused key is 401 invalid_request_error with code
// invalid_api_key, and every other client error is an
// invalid_request_error; server errors are server_error.
func NewOpenAIError(status int, code, message string) *OpenAIError {
	e := &OpenAIError{Status: status, Type: "invalid_request_error", Code: code, Message: message}
	switch {
	case status == http.StatusUnauthorized:
		e.Code = "invalid_api_key"
	case status == http.StatusForbidden:
		e.Type = "permission_error"
	case status == http.StatusTooManyRequests:
		e.Type, e.Code = "rate_limit_error", "rate_limit_exceeded"
	case status >= 500:
		e.Type = "server_error"
	}
	return e
}

// Write answers the error.
func (e *OpenAIError) Write(w http.ResponseWriter) {
	type body struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    *string `json:"code"`
	}
	b := body{Message: e.Message, Type: e.Type}
	if e.Param != "" {
		b.Param = &e.Param
	}
	if e.Code != "" {
		b.Code = &e.Code
	}
	out, _ := json.Marshal(struct { // strings only: cannot fail
		Error body `json:"error"`
	}{b})
	writeJSON(w, e.Status, append(out, '\n'))
}

// isOpenAI reports whether r is a request of the proxy's, whose errors
// are in OpenAI's shape.
func isOpenAI(r *http.Request) bool {
	return r != nil && strings.HasPrefix(r.URL.Path, OpenAIPrefix)
}
