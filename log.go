package agentmem

import "log/slog"

// discard is the logger of a component given none.
var discard = slog.New(slog.DiscardHandler)

// LoggerOr returns log, or a logger that discards when log is nil: the
// logger of a component whose options leave it out.
func LoggerOr(log *slog.Logger) *slog.Logger {
	if log == nil {
		return discard
	}
	return log
}

// The keys of the attributes agentmem logs, so that one thing is logged
// under one key everywhere (and found by one query of the logs).
const (
	LogErr      = "err"      // the error
	LogUser     = "user"     // a user's ID
	LogThread   = "thread"   // a thread's ID
	LogJob      = "job"      // a background job's ID
	LogKind     = "kind"     // a job's kind
	LogStatus   = "status"   // an HTTP status, or a job's or reflection's status
	LogMethod   = "method"   // an HTTP method
	LogPath     = "path"     // a request's path
	LogRoute    = "route"    // the route pattern a request matched
	LogDuration = "duration" // how long something took
	LogModel    = "model"    // a model's name
)
