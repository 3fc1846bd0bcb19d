package mcp

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/agentmem/agentmem"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// HeaderUser names the user of a request whose key is not one user's (a
// tenant's or an admin's), as the REST API's path does.
const HeaderUser = "X-Agentmem-User"

// SessionTimeout closes an MCP session over HTTP idle this long.
const SessionTimeout = time.Hour

// HTTPOptions configure NewHTTPHandler.
type HTTPOptions struct {
	Agent   string // as Options.Agent
	Version string
	Log     *slog.Logger
	// LocalUser is the user of a request whose identity is not one user's
	// and that names none: serve's "local-user" with authentication off;
	// "" requires X-Agentmem-User.
	LocalUser string
}

// sessionHeader is the MCP streamable transport's session header.
const sessionHeader = "Mcp-Session-Id"

// NewHTTPHandler serves the tools over MCP's streamable HTTP transport,
// behind the REST API's authentication (httpapi.Options.MCP): a session
// acts for the user of the request that opened it (see userOf), and a
// request of another user naming that session is refused with 403.
func NewHTTPHandler(svc agentmem.Service, opt HTTPOptions) http.Handler {
	owners := &sessionOwners{m: map[string]owner{}}
	h := sdk.NewStreamableHTTPHandler(func(r *http.Request) *sdk.Server {
		user, _ := userOf(r, opt) // checked before the SDK is reached
		return NewServer(svc, Options{User: user, Agent: opt.Agent, Version: opt.Version, Log: opt.Log})
	}, &sdk.StreamableHTTPOptions{Logger: opt.Log, SessionTimeout: SessionTimeout, DisableLocalhostProtection: true})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, err := userOf(r, opt)
		if err != nil {
			writeError(w, err)
			return
		}
		sid := r.Header.Get(sessionHeader)
		if sid != "" {
			if o, ok := owners.get(sid); ok && o != user {
				writeError(w, agentmem.Errorf(agentmem.EFORBIDDEN, "This MCP session belongs to another user."))
				return
			}
			if r.Method == http.MethodDelete {
				defer owners.drop(sid)
			}
		}
		h.ServeHTTP(&ownerWriter{ResponseWriter: w, owners: owners, user: user, opened: sid == ""}, r)
	})
}

// userOf returns whose memory a request reaches: the user of its identity
// when that is one user's (X-Agentmem-User naming another is refused),
// else X-Agentmem-User, else opt.LocalUser.
func userOf(r *http.Request, opt HTTPOptions) (string, error) {
	id := agentmem.IdentityFromContext(r.Context())
	header := r.Header.Get(HeaderUser)
	switch {
	case id != nil && id.Scope.Kind == agentmem.ScopeUser:
		if header != "" && header != id.Scope.UserID {
			return "", agentmem.Errorf(agentmem.EFORBIDDEN, "This key speaks for one user; %s names another (%q).", HeaderUser, header)
		}
		return id.Scope.UserID, nil
	case header != "":
		return header, nil
	case opt.LocalUser != "":
		return opt.LocalUser, nil
	}
	return "", agentmem.Errorf(agentmem.EINVALID, "Name the user whose memory the tools reach with the %s header.", HeaderUser)
}

// writeError answers a request the SDK is not given, in the REST API's
// error shape.
func writeError(w http.ResponseWriter, err error) {
	status := http.StatusBadRequest
	if agentmem.ErrorCode(err) == agentmem.EFORBIDDEN {
		status = http.StatusForbidden
	}
	b, _ := json.Marshal(map[string]any{"error": map[string]string{"code": agentmem.ErrorCode(err), "message": agentmem.ErrorMessage(err)}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

// sessionOwners remembers which user opened each session, until it is
// closed or idle for SessionTimeout.
type sessionOwners struct {
	mu sync.Mutex
	m  map[string]owner
}

type owner struct {
	user string
	seen time.Time
}

func (s *sessionOwners) get(sid string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.m[sid]
	if ok {
		o.seen = time.Now()
		s.m[sid] = o
	}
	return o.user, ok
}

func (s *sessionOwners) set(sid, user string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	for k, o := range s.m { // sessions the SDK has closed for idleness
		if now.Sub(o.seen) > SessionTimeout {
			delete(s.m, k)
		}
	}
	s.m[sid] = owner{user: user, seen: now}
}

func (s *sessionOwners) drop(sid string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, sid)
}

// ownerWriter records the owner of a session the SDK opens, before the
// answer that gives the client its ID is sent.
type ownerWriter struct {
	http.ResponseWriter
	owners *sessionOwners
	user   string
	opened bool // the request named no session: it may open one
	done   bool
}

func (w *ownerWriter) WriteHeader(code int) {
	if !w.done {
		w.done = true
		if sid := w.Header().Get(sessionHeader); w.opened && sid != "" {
			w.owners.set(sid, w.user)
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *ownerWriter) Write(b []byte) (int, error) {
	if !w.done {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the server's writer: the SDK
// flushes its event streams through one.
func (w *ownerWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
