// Package httpapi is agentmem's REST API: NewHandler serves the routes of
// routes.go over the application core (core.Service), each handler
// decoding a request, calling one method of it and encoding the answer,
// with JSON errors, request logging and panic recovery; metrics and
// traces are a middleware's (Options.Middleware).
package httpapi

import (
	"cmp"
	"context"
	"log/slog"
	"net/http"
	"path"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/internal/httpx"
)

// DefaultMaxBodyBytes bounds a request body when Options.MaxBodyBytes is 0.
const DefaultMaxBodyBytes = httpx.DefaultMaxBodyBytes

// Options tune NewHandler. The zero value works.
type Options struct {
	// MaxBodyBytes bounds every request body (DefaultMaxBodyBytes when 0);
	// a larger body is answered 413. Thread imports are bounded by it too.
	MaxBodyBytes int64
	// Middleware, when set, wraps the handling of every request, inside
	// the request log and outside everything else (body and query limits,
	// panic recovery, authentication, routing): metrics.HTTP counts and
	// times requests in it, metrics.TraceHTTP traces them. Once the next
	// handler returns, Served reports the route and status.
	Middleware func(http.Handler) http.Handler
	// Metrics, when set, is served to admins at GET /metrics
	// (metrics.Handler).
	Metrics http.Handler
	// Version is the server's version, reported by /healthz.
	Version string
	// Auth says how callers are identified; the zero value is AuthNone.
	Auth Auth
	// MaxQueryBytes bounds a request's URL query string
	// (DefaultMaxQueryBytes when 0).
	MaxQueryBytes int
	// AllowedOrigins are origins ("https://app.example.com") whose
	// requests are served besides the server's own: a request whose
	// Origin header names any other origin is refused with 403 (see
	// checkOrigin). No CORS headers are sent for them.
	AllowedOrigins []string
	// AllowedHosts are Host names served besides the loopback ones
	// (localhost, *.localhost, 127.0.0.0/8, [::1]) when Auth is AuthNone;
	// any other Host is refused with 403, against DNS rebinding (see
	// checkHost). With authentication, every Host is served unless
	// AllowedHosts is set, which then applies as well.
	AllowedHosts []string
	// Proxy, when set, serves the OpenAI-compatible proxy under
	// /openai/v1/ (proxy.NewHandler) to any authenticated caller.
	Proxy http.Handler
	// MCP, when set, serves the MCP tools over streamable HTTP at /mcp
	// (mcp.NewHTTPHandler) to any authenticated caller.
	MCP http.Handler
	// Web, when set, serves the web UI at / and /static/ (web.NewHandler)
	// to anyone: the page holds no data; its script calls the API.
	Web http.Handler
}

// DefaultMaxQueryBytes bounds a URL query string when
// Options.MaxQueryBytes is 0.
const DefaultMaxQueryBytes = 8 << 10

// WithDefaults returns o with zero fields set to their defaults.
func (o Options) WithDefaults() Options {
	o.MaxBodyBytes = cmp.Or(o.MaxBodyBytes, DefaultMaxBodyBytes)
	o.MaxQueryBytes = cmp.Or(o.MaxQueryBytes, DefaultMaxQueryBytes)
	return o
}

// NewHandler returns the REST API of svc: each route decodes its
// request, calls one method of svc and encodes the answer. A nil log
// discards.
func NewHandler(log *slog.Logger, svc agentmem.Service, opt Options) http.Handler {
	log = agentmem.LoggerOr(log)
	opt = opt.WithDefaults()
	if opt.Auth.Mode != "" && opt.Auth.Mode != AuthNone && opt.Auth.Keys == nil {
		panic("httpapi: Auth.Keys is required with auth mode " + opt.Auth.Mode)
	}
	mux := http.NewServeMux()
	addRoutes(mux, log, svc, opt)
	var h http.Handler = serveMux(mux)
	h = authenticate(opt.Auth)(h)
	h = requireJSON(h) // see browser.go: the three checks of what a web page can send
	h = checkOrigin(opt.AllowedOrigins)(h)
	h = checkHost(opt.Auth.Mode, opt.AllowedHosts)(h)
	h = limitQuery(opt.MaxQueryBytes)(h)
	h = recoverPanics(log)(h)
	h = limitBody(opt.MaxBodyBytes)(h)
	if opt.Middleware != nil {
		h = opt.Middleware(h)
	}
	h = foreground(h)
	return logRequests(log)(h)
}

// handlerFunc is a handler that returns its error rather than writing
// it; handle writes it.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// handle adapts h: an error it returns is answered by writeError. A
// handler that has begun its response returns nil. The route takes no
// query parameters (see handleQuery).
func handle(log *slog.Logger, h handlerFunc) *endpoint {
	return handleQuery(log, nil, h)
}

// handleQuery is handle for a route that takes the query parameters
// params, each given once, or any number of times if its name ends in
// "*". A request with another parameter, a parameter given twice, a
// malformed query string or a value that is not text is answered 400
// naming the parameter (see checkQuery) before h runs: a parameter the
// route ignored would answer another question than the one asked. The
// endpoint returned declares params, for the OpenAPI document; the
// handler adds what it reads and writes (see endpoint).
func handleQuery(log *slog.Logger, params []string, h handlerFunc) *endpoint {
	return &endpoint{params: params, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		err := checkQuery(r.URL.RawQuery, params)
		if err == nil {
			err = h(w, r)
		}
		if err != nil {
			writeError(w, r, log, err)
		}
	})}
}

// requestInfo is what the middleware learn about a request as it is
// served. The first middleware to see a request creates it (see track), so
// each middleware works in any order.
type requestInfo struct {
	id     string // from X-Request-ID, or generated
	route  string // the ServeMux pattern that matched; "" until the router ran or when none did
	status int    // 0 until the response header is written

	identity *agentmem.Identity // who is calling, once authenticate ran; nil if unknown
	authErr  error              // why the caller could not be identified
}

// code returns the status sent, 200 if the handler wrote nothing (the
// server then sends 200).
func (info *requestInfo) code() int { return cmp.Or(info.status, http.StatusOK) }

// routeLabel returns the matched pattern of the request.
func (info *requestInfo) routeLabel() string { return routeLabel(info.route) }

// routeLabel returns a ServeMux pattern without its method ("GET
// /v1/users/{user}/threads" → "/v1/users/{user}/threads"), or "unmatched"
// for none. Patterns, unlike paths, hold no user data, so they are safe as
// log fields and metric labels.
func routeLabel(pattern string) string {
	if pattern == "" {
		return "unmatched"
	}
	if _, path, ok := strings.Cut(pattern, " "); ok {
		return path
	}
	return pattern
}

type infoKey struct{}

// Served reports, to a middleware of Options.Middleware once its next
// handler has returned, the route pattern the request matched, without
// its method ("/v1/users/{user}/threads"; "unmatched" for none), and the
// status sent (200 when the handler wrote nothing). Patterns, unlike
// paths, hold no user data, so they are safe as metric labels.
func Served(r *http.Request) (route string, status int) {
	info, ok := r.Context().Value(infoKey{}).(*requestInfo)
	if !ok {
		return routeLabel(""), http.StatusOK
	}
	return info.routeLabel(), info.code()
}

// track returns the request's info, creating it on first use together with
// a ResponseWriter that records the status and a request carrying the info
// in its context. The request ID comes from X-Request-ID when it is a
// well-formed ID, else a new one, and is echoed in the response header.
func track(w http.ResponseWriter, r *http.Request) (*requestInfo, http.ResponseWriter, *http.Request) {
	if info, ok := r.Context().Value(infoKey{}).(*requestInfo); ok {
		return info, w, r
	}
	info := &requestInfo{id: r.Header.Get("X-Request-ID")}
	if len(info.id) > 128 || agentmem.ValidateID("X-Request-ID", info.id) != nil {
		info.id = agentmem.NewID()
	}
	w.Header().Set("X-Request-ID", info.id)
	return info, &statusWriter{ResponseWriter: w, info: info}, r.WithContext(context.WithValue(r.Context(), infoKey{}, info))
}

// requestID returns the ID of the request, "" outside the middleware.
func requestID(ctx context.Context) string {
	if info, ok := ctx.Value(infoKey{}).(*requestInfo); ok {
		return info.id
	}
	return ""
}

// statusWriter records the status of the response in its info.
type statusWriter struct {
	http.ResponseWriter
	info *requestInfo
}

func (w *statusWriter) WriteHeader(code int) {
	if w.info.status == 0 && code >= 200 { // 1xx are informational; the final status follows
		w.info.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.info.status == 0 {
		w.info.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the server's writer (Flush…).
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// serveMux serves mux, records the pattern it matched in the request info and
// turns the mux's own plain-text 404 and 405 replies into JSON errors (the
// Allow header of a 405 stays).
//
// ServeMux sets Pattern on the *http.Request it is given, so the pattern is
// read from the very request passed to mux, after it returns (in a defer,
// so that a panicking handler is labelled too). A middleware further out
// holds a different *http.Request (r.WithContext copies it) and would see
// an empty Pattern, hence the info holder.
//
// A path that is not clean (an empty, "." or ".." segment) is refused
// rather than redirected as ServeMux would: its 307 keeps the method, so a
// client following it would send DELETE …/threads/.. to DELETE
// /v1/users/{user} and erase the user.
func serveMux(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info, w, r := track(w, r)
		if p := r.URL.EscapedPath(); r.RequestURI != "*" && !isClean(p) {
			writeErrorBody(w, r, http.StatusBadRequest, agentmem.EINVALID,
				"The path "+strconv.Quote(p)+" has an empty, . or .. segment; IDs in a path must be none of these.")
			return
		}
		defer func() { info.route = r.Pattern }()
		mux.ServeHTTP(&unmatchedWriter{ResponseWriter: w, r: r}, r)
	})
}

// isClean reports whether p is its own cleaned form (a trailing slash is
// allowed), the test ServeMux applies before redirecting.
func isClean(p string) bool {
	if p == "" || p[0] != '/' {
		return false
	}
	c := path.Clean(p)
	if strings.HasSuffix(p, "/") && c != "/" {
		c += "/"
	}
	return c == p
}

// unmatchedWriter replaces the reply of a request that matched no pattern
// (ServeMux's NotFoundHandler, or its 405 handler) with a JSON error. The
// handlers' own 404s have a pattern and pass through.
type unmatchedWriter struct {
	http.ResponseWriter
	r       *http.Request
	replied bool // the JSON error is written; drop the mux's text body
}

func (w *unmatchedWriter) WriteHeader(code int) {
	if w.r.Pattern == "" && !w.replied {
		switch code {
		case http.StatusNotFound:
			w.replied = true
			writeErrorBody(w.ResponseWriter, w.r, code, agentmem.ENOTFOUND, "No route for "+w.r.Method+" "+w.r.URL.Path+".")
			return
		case http.StatusMethodNotAllowed:
			w.replied = true
			writeErrorBody(w.ResponseWriter, w.r, code, agentmem.EINVALID,
				"Method "+w.r.Method+" is not allowed on "+w.r.URL.Path+"; allowed: "+w.Header().Get("Allow")+".")
			return
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *unmatchedWriter) Write(b []byte) (int, error) {
	if w.replied {
		return len(b), nil
	}
	return w.ResponseWriter.Write(b)
}

func (w *unmatchedWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// limitBody bounds request bodies to n bytes; decode answers a larger one
// with 413.
func limitBody(n int64) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Body != nil {
				r.Body = http.MaxBytesReader(w, r.Body, n)
			}
			next.ServeHTTP(w, r)
		})
	}
}

// limitQuery answers a request whose URL query string is longer than n
// bytes with 414, naming the limit.
func limitQuery(n int) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if len(r.URL.RawQuery) > n {
				writeErrorBody(w, r, http.StatusRequestURITooLong, agentmem.ETOOLARGE,
					"The query string is "+strconv.Itoa(len(r.URL.RawQuery))+" bytes; the limit is "+strconv.Itoa(n)+" bytes.")
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// recoverPanics turns a panic in a handler into a logged 500, so that a bug
// costs one request and not the process. http.ErrAbortHandler passes on:
// it is how a handler aborts a response it has begun (see
// handleExportUser). A panic after the header was sent aborts the response
// as well, since a 500 can no longer be sent.
func recoverPanics(log *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			info, w, r := track(w, r)
			defer func() {
				v := recover()
				if v == nil {
					return
				} else if v == http.ErrAbortHandler {
					panic(v)
				}
				log.ErrorContext(r.Context(), "panic serving request", agentmem.LogMethod, r.Method, agentmem.LogRoute, info.routeLabel(),
					"request_id", info.id, "panic", v, "stack", string(debug.Stack()))
				if info.status != 0 {
					panic(http.ErrAbortHandler)
				}
				writeErrorBody(w, r, http.StatusInternalServerError, agentmem.EINTERNAL, "Internal error.")
			}()
			next.ServeHTTP(w, r)
		})
	}
}

// foreground marks each request in service (agentmem.Foreground), so that
// background work leaves it a core; a stream of events (Accept:
// text/event-stream), open for as long as its client listens, is not.
func foreground(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
			defer agentmem.Foreground()()
		}
		h.ServeHTTP(w, r)
	})
}

// logRequests logs each request once it is served: at Debug, or at Warn
// for a 5xx (whose error writeError has logged at Error). Paths are not
// logged, since they hold user IDs; the route pattern is.
func logRequests(log *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			info, w, r := track(w, r)
			start := time.Now()
			defer func() {
				level := slog.LevelDebug
				if info.code() >= 500 {
					level = slog.LevelWarn
				}
				log.LogAttrs(r.Context(), level, "request", slog.String("method", r.Method), slog.String("route", info.routeLabel()),
					slog.Int("status", info.code()), slog.Duration("duration", time.Since(start)), slog.String("request_id", info.id))
			}()
			next.ServeHTTP(w, r)
		})
	}
}
