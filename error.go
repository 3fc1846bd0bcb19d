package agentmem

import (
	"errors"
	"fmt"
)

// Error codes. Each maps to one HTTP status in httpapi; callers branch on
// ErrorCode(err), never on message text.
const (
	EINVALID       = "invalid"       // the request is malformed (400)
	EUNAUTHORIZED  = "unauthorized"  // no or bad credentials (401)
	EFORBIDDEN     = "forbidden"     // authenticated, but this route needs another kind of key (403)
	ENOTFOUND      = "not_found"     // the thing does not exist for this user (404)
	ECONFLICT      = "conflict"      // the thing exists, or a version moved on (409)
	ETOOLARGE      = "too_large"     // a size limit was exceeded (413)
	EUNPROCESSABLE = "unprocessable" // well-formed but cannot be done as asked (422)
	ERATELIMIT     = "rate_limited"  // too many requests (429)
	EINTERNAL      = "internal"      // a bug or an infrastructure failure (500)
	EUNAVAILABLE   = "unavailable"   // a dependency (database, model) is down (503)
)

// ErrStoreDown is joined to a store's EUNAVAILABLE errors that say the
// store itself cannot work now (its database does not answer, or its disk
// is full), as against a dependency of the caller's (a model) being down.
// A background job that fails with it is not at fault: a worker hands it
// back without counting the attempt, and waits before claiming more
// (package worker), so that an outage, however long, kills no job.
var ErrStoreDown = errors.New("the store is unavailable")

// Error is an application error whose Message is safe to show to clients.
type Error struct {
	Code    string
	Message string
}

// Error implements the error interface.
func (e *Error) Error() string {
	return fmt.Sprintf("agentmem error: code=%s message=%s", e.Code, e.Message)
}

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code string, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of the first *Error in err's chain, EINTERNAL
// for any other non-nil error, and "" for nil.
func ErrorCode(err error) string {
	var e *Error
	if err == nil {
		return ""
	} else if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the client-safe message of the first *Error in err's
// chain, or a generic text for any other error so that internal details
// (SQL, driver or provider text) never reach a client.
func ErrorMessage(err error) string {
	var e *Error
	if err == nil {
		return ""
	} else if errors.As(err, &e) {
		return e.Message
	}
	return "Internal error."
}
