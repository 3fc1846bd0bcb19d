// Package httpx is what agentmem's HTTP faces share (the REST API,
// package httpapi, and the OpenAI-compatible proxy, package proxy): the
// HTTP status of each agentmem error code, OpenAI's shape of an error,
// and the default bound of a request body.
package httpx

import (
	"encoding/json"
	"net/http"

	"github.com/agentmem/agentmem"
)

// DefaultMaxBodyBytes bounds a request body when a face's options say
// nothing.
const DefaultMaxBodyBytes = 8 << 20

// StatusOf maps an agentmem error code to its HTTP status (the REST API's
// and the proxy's).
func StatusOf(code string) int {
	switch code {
	case agentmem.EINVALID:
		return http.StatusBadRequest
	case agentmem.EUNAUTHORIZED:
		return http.StatusUnauthorized
	case agentmem.EFORBIDDEN:
		return http.StatusForbidden
	case agentmem.ENOTFOUND:
		return http.StatusNotFound
	case agentmem.ECONFLICT:
		return http.StatusConflict
	case agentmem.ETOOLARGE:
		return http.StatusRequestEntityTooLarge
	case agentmem.EUNPROCESSABLE:
		return http.StatusUnprocessableEntity
	case agentmem.ERATELIMIT:
		return http.StatusTooManyRequests
	case agentmem.EUNAVAILABLE:
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

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
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.Status)
	_, _ = w.Write(append(out, '\n')) // a failed write means the client left
}

// HeaderUser names the user a request speaks for, where the path does
// not (the proxy, MCP over HTTP).
const HeaderUser = "X-Agentmem-User"

// A Name is a user a request names, and where it names them (a header,
// a body field), for the error that refuses it.
type Name struct{ Where, User string }

// UserOf returns the user a request speaks for: the user of its identity
// id when that is one user's, where a name of another user is EFORBIDDEN;
// else the first user named; "" when none is (the caller then takes its
// default, or refuses).
func UserOf(id *agentmem.Identity, names ...Name) (string, error) {
	if id != nil && id.Scope.Kind == agentmem.ScopeUser {
		for _, n := range names {
			if n.User != "" && n.User != id.Scope.UserID {
				return "", agentmem.Errorf(agentmem.EFORBIDDEN, "This key speaks for one user; %s names another (%q). Leave it out, or use that user's key.", n.Where, n.User)
			}
		}
		return id.Scope.UserID, nil
	}
	for _, n := range names {
		if n.User != "" {
			return n.User, nil
		}
	}
	return "", nil
}
