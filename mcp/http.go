package mcp

import (
	"cmp"
	"context"
	"encoding/json"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/internal/httpx"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// HeaderUser names the user of a request whose key is not one user's (a
// tenant's or an admin's), as the REST API's path does.
const HeaderUser = httpx.HeaderUser

// The bounds of MCP sessions over HTTP, by default. An idle session holds
// about 15 KB of heap and one goroutine (BenchmarkHTTP_Session), some
// 40 KB of resident memory: the defaults bound them to about 40 MB.
const (
	DefaultMaxSessionsPerKey = 16
	DefaultMaxSessions       = 1000
	DefaultSessionIdle       = 10 * time.Minute
)

// HTTPOptions configure NewHTTPHandler.
type HTTPOptions struct {
	Agent   string // as Options.Agent
	Version string
	Log     *slog.Logger
	// LocalUser is the user of a request whose identity is not one user's
	// and that names none: serve's "local-user" with authentication off;
	// "" requires X-Agentmem-User.
	LocalUser string
	// MaxSessionsPerKey bounds the sessions one identity has open at
	// once: an API key, or without one (header authentication, or
	// authentication off) a user. Opening one more is 429
	// (DefaultMaxSessionsPerKey when 0).
	MaxSessionsPerKey int
	// MaxSessions bounds the sessions open at once in all; opening one
	// more is 503 (DefaultMaxSessions when 0).
	MaxSessions int
	// IdleTimeout closes a session that has had no request in flight for
	// this long (DefaultSessionIdle when 0). A client connected to its
	// session's event stream (GET) keeps it open.
	IdleTimeout time.Duration
}

// withDefaults fills in the bounds left zero.
func (opt HTTPOptions) withDefaults() HTTPOptions {
	opt.MaxSessionsPerKey = cmp.Or(opt.MaxSessionsPerKey, DefaultMaxSessionsPerKey)
	opt.MaxSessions = cmp.Or(opt.MaxSessions, DefaultMaxSessions)
	opt.IdleTimeout = cmp.Or(opt.IdleTimeout, DefaultSessionIdle)
	return opt
}

// sessionHeader is the MCP streamable transport's session header.
const sessionHeader = "Mcp-Session-Id"

// NewHTTPHandler serves the tools over MCP's streamable HTTP transport,
// behind the REST API's authentication (httpapi.Options.MCP). A session
// acts for the user of the request that opened it (see userOf) and
// belongs to that request's exact identity (tenant, user, key): a request
// of any other naming it is 403, one naming a session the handler does
// not know (closed, expired, never opened) is 404, both before the SDK is
// reached. Sessions are bounded per identity and in all, and closed, in
// the SDK too, once idle for opt.IdleTimeout.
func NewHTTPHandler(svc agentmem.Service, opt HTTPOptions) http.Handler {
	opt = opt.withDefaults()
	h := &httpHandler{
		opt:      opt,
		log:      agentmem.LoggerOr(opt.Log),
		sessions: map[string]*session{},
		perKey:   map[string]int{},
	}
	// The SDK asks for a server on every request, to learn the protocol
	// versions it speaks; only a request that opens a session gets one
	// of its own (see opening), the others this one, never connected.
	h.probe = NewServer(svc, Options{Agent: opt.Agent, Version: opt.Version, Log: opt.Log})
	h.sdk = sdk.NewStreamableHTTPHandler(func(r *http.Request) *sdk.Server {
		if op, ok := r.Context().Value(openingKey{}).(*opening); ok {
			if op.server == nil {
				op.server = NewServer(svc, Options{User: op.owner.user, Agent: opt.Agent, Version: opt.Version, Log: opt.Log})
			}
			return op.server
		}
		return h.probe
	}, &sdk.StreamableHTTPOptions{
		Logger: quietLog(opt.Log),
		// No SessionTimeout: this handler closes idle sessions itself, so
		// that it knows every session the SDK holds.
		DisableLocalhostProtection: true,
	})
	return h
}

// httpHandler is NewHTTPHandler's: the SDK's handler behind the sessions'
// owners and bounds.
type httpHandler struct {
	opt   HTTPOptions
	log   *slog.Logger
	sdk   *sdk.StreamableHTTPHandler
	probe *sdk.Server

	mu       sync.Mutex
	sessions map[string]*session // by ID
	perKey   map[string]int      // sessions open or being opened, by owner.key
	total    int                 // sessions open or being opened
}

// A session is one the SDK holds, with what this handler knows of it.
type session struct {
	id       string
	owner    owner
	server   *sdk.Server // the session's own
	inflight int         // requests naming it being served
	last     time.Time   // when the last of them ended
	timer    *time.Timer // closes it once idle; nil until first idle
	closed   bool
}

// owner is who opened a session: the request's identity (zero when it
// has none) and the user it acts for.
type owner struct {
	id   agentmem.Identity
	user string
}

// key is what the bound per identity counts by: the API key, or without
// one (authentication off, a trusted proxy's header) the user, so that
// the users of a server without keys do not share one bound.
func (o owner) key() string {
	k := o.id.Via + "|" + o.id.KeyID + "|" + o.id.Scope.String()
	if o.id.KeyID == "" {
		k += "|" + o.user
	}
	return k
}

// opening is a request that may open a session, as the SDK's getServer
// sees it.
type opening struct {
	owner   owner
	server  *sdk.Server // the new session's, made when the SDK asks
	session *session    // set once the SDK has opened it
}

type openingKey struct{}

func (h *httpHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	user, err := userOf(r, h.opt)
	if err != nil {
		writeError(w, err)
		return
	}
	o := owner{user: user}
	if id := agentmem.IdentityFromContext(r.Context()); id != nil {
		o.id = *id
	}
	switch sid := r.Header.Get(sessionHeader); {
	case sid != "":
		h.serveSession(w, r, sid, o)
	case r.Method == http.MethodPost:
		h.serveOpen(w, r, o)
	default:
		h.sdk.ServeHTTP(w, r) // refused by the SDK: it names no session
	}
}

// serveSession serves a request naming session sid, if o opened it.
func (h *httpHandler) serveSession(w http.ResponseWriter, r *http.Request, sid string, o owner) {
	s, err := h.enter(sid, o)
	if err != nil {
		writeError(w, err)
		return
	}
	h.sdk.ServeHTTP(w, r)
	if !hasSessions(s.server) {
		h.end(s) // closed by the SDK: a DELETE, or on its own
	}
	h.leave(s)
}

// serveOpen serves a request naming no session, which opens one if it is
// an initialize, within the bounds.
func (h *httpHandler) serveOpen(w http.ResponseWriter, r *http.Request, o owner) {
	if retry, err := h.reserve(o); err != nil {
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(retry.Seconds()))))
		writeError(w, err)
		return
	}
	op := &opening{owner: o}
	r = r.WithContext(context.WithValue(r.Context(), openingKey{}, op))
	h.sdk.ServeHTTP(&openWriter{ResponseWriter: w, h: h, op: op}, r)
	if op.session == nil {
		h.release(o) // no session opened
		return
	}
	if !hasSessions(op.server) {
		h.end(op.session) // an initialize that failed: the SDK closed it
	}
	h.leave(op.session)
}

// reserve counts a session about to be opened by o, or says which bound
// it would pass and when to try again.
func (h *httpHandler) reserve(o owner) (time.Duration, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	k := o.key()
	if n := h.perKey[k]; n >= h.opt.MaxSessionsPerKey {
		h.log.Debug("mcp: session refused: bound per key", "sessions", n)
		return h.retryAfter(func(s *session) bool { return s.owner.key() == k }), agentmem.Errorf(agentmem.ERATELIMIT,
			"This key has %d MCP sessions open, the most one key may have at once; close one (DELETE /mcp with its %s) or wait for an idle one to expire (after %s idle).",
			n, sessionHeader, h.opt.IdleTimeout)
	}
	if h.total >= h.opt.MaxSessions {
		h.log.Debug("mcp: session refused: bound in all", "sessions", h.total)
		return h.retryAfter(func(*session) bool { return true }), agentmem.Errorf(agentmem.EUNAVAILABLE,
			"The server has %d MCP sessions open, the most it serves at once; try again later.", h.total)
	}
	h.perKey[k]++
	h.total++
	return 0, nil
}

// retryAfter returns how long until the first idle session of those
// matching expires, or the idle timeout when none is idle; h.mu is held.
func (h *httpHandler) retryAfter(match func(*session) bool) time.Duration {
	d := h.opt.IdleTimeout
	now := time.Now()
	for _, s := range h.sessions {
		if s.inflight == 0 && match(s) {
			d = min(d, s.last.Add(h.opt.IdleTimeout).Sub(now))
		}
	}
	return max(d, time.Second)
}

// release uncounts a session reserve counted for o.
func (h *httpHandler) release(o owner) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.uncount(o)
}

// uncount uncounts a session of o; h.mu is held.
func (h *httpHandler) uncount(o owner) {
	k := o.key()
	if h.perKey[k]--; h.perKey[k] <= 0 {
		delete(h.perKey, k)
	}
	h.total--
}

// opened records session sid, which the SDK has just opened for op, in
// flight until its opening request ends.
func (h *httpHandler) opened(sid string, op *opening) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := &session{id: sid, owner: op.owner, server: op.server, inflight: 1}
	h.sessions[sid] = s
	op.session = s
}

// enter returns session sid for a request of o, in flight until leave.
// Returns ENOTFOUND if no such session is open, EFORBIDDEN if another
// opened it.
func (h *httpHandler) enter(sid string, o owner) (*session, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.sessions[sid]
	switch {
	case s == nil:
		return nil, agentmem.Errorf(agentmem.ENOTFOUND,
			"MCP session not found: it was closed, or expired after %s idle, or never opened; open a new one (initialize without %s).", h.opt.IdleTimeout, sessionHeader)
	case s.owner != o:
		return nil, agentmem.Errorf(agentmem.EFORBIDDEN, "This MCP session belongs to another key or user.")
	}
	s.inflight++
	if s.timer != nil {
		s.timer.Stop()
	}
	return s, nil
}

// leave ends a request of s; once none is in flight, s expires after the
// idle timeout.
func (h *httpHandler) leave(s *session) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s.inflight--
	s.last = time.Now()
	if s.inflight > 0 || s.closed {
		return
	}
	if s.timer == nil {
		s.timer = time.AfterFunc(h.opt.IdleTimeout, func() { h.expire(s) })
	} else {
		s.timer.Reset(h.opt.IdleTimeout)
	}
}

// expire closes s if it is still idle: a timer stopped too late, or
// reset since, may fire early.
func (h *httpHandler) expire(s *session) {
	h.mu.Lock()
	idle := !s.closed && s.inflight == 0 && time.Since(s.last) >= h.opt.IdleTimeout
	if idle {
		h.forget(s)
	}
	h.mu.Unlock()
	if idle {
		h.log.Debug("mcp: idle session closed", "idle", h.opt.IdleTimeout)
		closeSDK(s)
	}
}

// end forgets s and closes it in the SDK, which frees it.
func (h *httpHandler) end(s *session) {
	h.mu.Lock()
	open := !s.closed
	if open {
		h.forget(s)
	}
	h.mu.Unlock()
	if open {
		closeSDK(s)
	}
}

// forget forgets open session s, which frees its place; h.mu is held.
func (h *httpHandler) forget(s *session) {
	s.closed = true
	delete(h.sessions, s.id)
	h.uncount(s.owner)
	if s.timer != nil {
		s.timer.Stop()
	}
}

// closeSDK closes s in the SDK (if it has not already), which forgets it.
func closeSDK(s *session) {
	for ss := range s.server.Sessions() {
		ss.Close()
	}
}

// hasSessions reports whether the SDK still holds a session of srv.
func hasSessions(srv *sdk.Server) bool {
	for range srv.Sessions() {
		return true
	}
	return false
}

// userOf returns whose memory a request reaches: the user of its identity
// when that is one user's (X-Agentmem-User naming another is refused),
// else X-Agentmem-User, else opt.LocalUser.
func userOf(r *http.Request, opt HTTPOptions) (string, error) {
	user, err := httpx.UserOf(agentmem.IdentityFromContext(r.Context()), httpx.Name{Where: HeaderUser, User: r.Header.Get(HeaderUser)})
	switch {
	case err != nil || user != "":
		return user, err
	case opt.LocalUser != "":
		return opt.LocalUser, nil
	}
	return "", agentmem.Errorf(agentmem.EINVALID, "Name the user whose memory the tools reach with the %s header.", HeaderUser)
}

// writeError answers a request the SDK is not given, in the REST API's
// error shape.
func writeError(w http.ResponseWriter, err error) {
	b, _ := json.Marshal(map[string]any{"error": map[string]string{"code": agentmem.ErrorCode(err), "message": agentmem.ErrorMessage(err)}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(httpx.StatusOf(agentmem.ErrorCode(err)))
	w.Write(append(b, '\n'))
}

// openWriter records the session the SDK opens, before the answer that
// gives the client its ID is sent.
type openWriter struct {
	http.ResponseWriter
	h    *httpHandler
	op   *opening
	done bool
}

func (w *openWriter) WriteHeader(code int) {
	if !w.done {
		w.done = true
		// An initialize that fails is answered with the ID of a session
		// the SDK then closes: only a success opens one.
		if sid := w.Header().Get(sessionHeader); sid != "" && code == http.StatusOK && w.op.server != nil {
			w.h.opened(sid, w.op)
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *openWriter) Write(b []byte) (int, error) {
	if !w.done {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the server's writer: the SDK
// flushes its event streams through one.
func (w *openWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// quietLog returns log for the SDK, which logs at INFO what happens in
// every session and on every call: sessions opening and closing, each
// resource update sent (one per notes edit), each subscription. Those
// records are the protocol's mechanics, not the operator's business, so
// the SDK's records below Warn are logged at Debug. Its session IDs (a
// session's ID lets whoever holds it with its key use it) are logged at
// Debug only: redacted at Warn and above. Nil stays nil (the SDK then
// discards).
func quietLog(log *slog.Logger) *slog.Logger {
	if log == nil {
		return nil
	}
	return slog.New(quietHandler{log.Handler()})
}

// sessionIDKey is the attribute under which the SDK logs a session's ID.
const sessionIDKey = "session_id"

type quietHandler struct{ slog.Handler }

// Enabled reports whether a record of level would be logged, at the
// level Handle logs it at.
func (h quietHandler) Enabled(ctx context.Context, level slog.Level) bool {
	if level < slog.LevelWarn {
		level = slog.LevelDebug
	}
	return h.Handler.Enabled(ctx, level)
}

func (h quietHandler) Handle(ctx context.Context, r slog.Record) error {
	level := r.Level
	if level < slog.LevelWarn {
		if !h.Handler.Enabled(ctx, slog.LevelDebug) {
			return nil // a caller that did not ask Enabled first
		}
		level = slog.LevelDebug
	}
	q := slog.NewRecord(r.Time, level, r.Message, r.PC)
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == sessionIDKey && level >= slog.LevelWarn {
			a = slog.String(sessionIDKey, "(redacted)")
		}
		q.AddAttrs(a)
		return true
	})
	return h.Handler.Handle(ctx, q)
}

func (h quietHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return quietHandler{h.Handler.WithAttrs(as)}
}

func (h quietHandler) WithGroup(name string) slog.Handler {
	return quietHandler{h.Handler.WithGroup(name)}
}
