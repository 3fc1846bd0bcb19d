package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/app"
	"github.com/agentmem/agentmem/httpapi"
	"github.com/agentmem/agentmem/internal/apptest"
	"github.com/agentmem/agentmem/mcp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// keyTransport sends an API key, and the user header when set, with every
// request.
type keyTransport struct{ key, user string }

func (k keyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+k.key)
	if k.user != "" {
		r.Header.Set(mcp.HeaderUser, k.user)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// TestHTTP: over streamable HTTP behind the REST API's API keys, a
// session acts for its key's user; a tenant's key names its user by
// header; another key cannot use a session it did not open; no key is
// 401.
func TestHTTP(t *testing.T) {
	mem := apptest.Open(t)
	srv := httptest.NewServer(httpapi.NewHandler(nil, mem.Service, httpapi.Options{
		Auth: httpapi.Auth{Mode: httpapi.AuthAPIKey, Keys: mem.Store()},
		MCP:  mcp.NewHTTPHandler(mem.Service, mcp.HTTPOptions{}),
	}))
	t.Cleanup(srv.Close)
	key := func(scope string) string {
		k, err := mem.CreateKey(ctx, agentmem.KeyInput{Scope: scope})
		if err != nil {
			t.Fatal(err)
		}
		return k.Token
	}
	session := func(k keyTransport) (*sdk.ClientSession, error) {
		tr := &sdk.StreamableClientTransport{Endpoint: srv.URL + "/mcp", HTTPClient: &http.Client{Transport: k}, MaxRetries: -1}
		return sdk.NewClient(&sdk.Implementation{Name: "test-host", Version: "1"}, nil).Connect(ctx, tr, nil)
	}
	aliceKey := key("user:alice")
	alice, err := session(keyTransport{key: aliceKey})
	if err != nil {
		t.Fatal(err)
	}
	defer alice.Close()
	call(t, alice, "remember", map[string]any{"text": "User keeps bees."}, nil)
	if ms, _, err := mem.FindMemories(ctx, "alice", agentmem.MemoryFilter{}); err != nil || len(ms) != 1 || ms[0].Text != "User keeps bees." {
		t.Errorf("alice's memories: %v, %v", ms, err)
	}

	acme, err := session(keyTransport{key: key("tenant:acme"), user: "carol"})
	if err != nil {
		t.Fatal(err)
	}
	defer acme.Close()
	call(t, acme, "remember", map[string]any{"text": "User works night shifts."}, nil)
	if ms, _, err := mem.FindMemories(ctx, "tenant:acme/user:carol", agentmem.MemoryFilter{}); err != nil || len(ms) != 1 {
		t.Errorf("carol's memories: %v, %v", ms, err)
	}
	var found struct{ Results []struct{ Text string } }
	call(t, acme, "search_memory", map[string]any{"query": "bees"}, &found)
	for _, r := range found.Results {
		if strings.Contains(r.Text, "bees") {
			t.Errorf("carol found alice's memory: %+v", found)
		}
	}

	// Another user's key on alice's session; alice's key naming another
	// user; a tenant key naming no one; no key.
	bobKey := key("user:bob")
	post := func(k keyTransport, sid string) int {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"tools/list"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
		}
		if k.key != "" {
			req.Header.Set("Authorization", "Bearer "+k.key)
		}
		if k.user != "" {
			req.Header.Set(mcp.HeaderUser, k.user)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	for name, c := range map[string]struct {
		k    keyTransport
		sid  string
		want int
	}{
		"bob on alice's session":   {keyTransport{key: bobKey}, alice.ID(), 403},
		"alice naming bob":         {keyTransport{key: aliceKey, user: "bob"}, "", 403},
		"a tenant naming no one":   {keyTransport{key: key("tenant:acme")}, "", 400},
		"no key":                   {keyTransport{}, "", 401},
		"alice on her own session": {keyTransport{key: aliceKey}, alice.ID(), 200},
	} {
		if got := post(c.k, c.sid); got != c.want {
			t.Errorf("%s: %d, want %d", name, got, c.want)
		}
	}
}

// mcpServer is agentmem's REST API with API-key authentication and the
// MCP handler at /mcp, as serve wires them.
type mcpServer struct {
	t   testing.TB
	mem *app.App
	url string
	mcp http.Handler
}

func newMCPServer(t testing.TB, opt mcp.HTTPOptions) *mcpServer {
	t.Helper()
	mem := apptest.Open(t)
	h := mcp.NewHTTPHandler(mem.Service, opt)
	srv := httptest.NewServer(httpapi.NewHandler(nil, mem.Service, httpapi.Options{Auth: httpapi.Auth{Mode: httpapi.AuthAPIKey, Keys: mem.Store()}, MCP: h}))
	t.Cleanup(srv.Close)
	return &mcpServer{t: t, mem: mem, url: srv.URL + "/mcp", mcp: h}
}

// key returns the token of a new key of scope.
func (s *mcpServer) key(scope string) string {
	s.t.Helper()
	k, err := s.mem.CreateKey(ctx, agentmem.KeyInput{Scope: scope})
	if err != nil {
		s.t.Fatal(err)
	}
	return k.Token
}

// reply is an answer of the MCP endpoint.
type reply struct {
	status int
	header http.Header
	body   string
}

// errorCode returns the code of a REST error answer ("" if it is not one).
func (r reply) errorCode() string {
	var e struct {
		Error struct{ Code, Message string }
	}
	if !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") || json.Unmarshal([]byte(r.body), &e) != nil {
		return ""
	}
	return e.Error.Code
}

const (
	initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	ping       = `{"jsonrpc":"2.0","id":2,"method":"ping"}`
)

// send sends one request to h (the server's /mcp when nil) with key k,
// naming session sid when not "".
func (s *mcpServer) send(h http.Handler, method string, k keyTransport, sid, body string) reply {
	s.t.Helper()
	req := httptest.NewRequest(method, s.url, strings.NewReader(body))
	req.RequestURI = ""
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	if k.key != "" {
		req.Header.Set("Authorization", "Bearer "+k.key)
	}
	if k.user != "" {
		req.Header.Set(mcp.HeaderUser, k.user)
	}
	if h != nil {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return reply{rec.Code, rec.Header(), rec.Body.String()}
	}
	// A request that reaches a session's event stream (GET) would wait
	// for events: it is cut short, its answer being the status.
	c, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	res, err := http.DefaultClient.Do(req.WithContext(c))
	if err != nil {
		s.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return reply{res.StatusCode, res.Header, string(b)}
}

// open opens a session with key k and returns its ID; it fails the test
// if none is opened.
func (s *mcpServer) open(k keyTransport) string {
	s.t.Helper()
	r := s.send(nil, http.MethodPost, k, "", initialize)
	sid := r.header.Get("Mcp-Session-Id")
	if r.status != http.StatusOK || sid == "" {
		s.t.Fatalf("open: %d %q, session %q", r.status, r.body, sid)
	}
	return sid
}

// TestHTTP_SessionOwner: a session belongs to the exact identity that
// opened it, its tenant, user and key: any other, even one acting for a
// user of the same name, is refused before the SDK is reached.
func TestHTTP_SessionOwner(t *testing.T) {
	s := newMCPServer(t, mcp.HTTPOptions{})
	acme, globex := s.key("tenant:acme"), s.key("tenant:globex")
	alice, alice2 := s.key("user:alice"), s.key("user:alice")
	acmeAlice := s.key("tenant:acme/user:alice")
	for name, c := range map[string]struct{ opener, other keyTransport }{
		"another tenant, same user header":        {keyTransport{key: acme, user: "alice"}, keyTransport{key: globex, user: "alice"}},
		"a tenant key on a global user's":         {keyTransport{key: alice}, keyTransport{key: acme, user: "alice"}},
		"a global user key on a tenant's":         {keyTransport{key: acme, user: "alice"}, keyTransport{key: alice}},
		"another key of the same user":            {keyTransport{key: alice}, keyTransport{key: alice2}},
		"a tenant user key on its tenant's":       {keyTransport{key: acme, user: "alice"}, keyTransport{key: acmeAlice}},
		"the same tenant key naming another user": {keyTransport{key: acme, user: "alice"}, keyTransport{key: acme, user: "bob"}},
	} {
		t.Run(name, func(t *testing.T) {
			sid := s.open(c.opener)
			for _, method := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
				if r := s.send(nil, method, c.other, sid, ping); r.status != http.StatusForbidden || r.errorCode() != agentmem.EFORBIDDEN {
					t.Errorf("%s by another: %d %q, want 403 forbidden", method, r.status, r.body)
				}
			}
			if r := s.send(nil, http.MethodPost, c.opener, sid, ping); r.status != http.StatusOK {
				t.Errorf("ping by its opener: %d %q, want 200", r.status, r.body)
			}
		})
	}
}

// TestHTTP_UnknownSession: a session ID the server does not know (never
// issued, closed, expired) is 404 in the REST API's error shape, whatever
// the method.
func TestHTTP_UnknownSession(t *testing.T) {
	s := newMCPServer(t, mcp.HTTPOptions{})
	alice := keyTransport{key: s.key("user:alice")}
	closed := s.open(alice)
	if r := s.send(nil, http.MethodDelete, alice, closed, ""); r.status != http.StatusNoContent {
		t.Fatalf("DELETE: %d %q, want 204", r.status, r.body)
	}
	for _, sid := range []string{"never-issued", closed} {
		for _, method := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
			if r := s.send(nil, method, alice, sid, ping); r.status != http.StatusNotFound || r.errorCode() != agentmem.ENOTFOUND {
				t.Errorf("%s %s: %d %q, want 404 not_found", method, sid, r.status, r.body)
			}
		}
	}
}

// TestHTTP_SessionIDNotLogged: the server logs no session ID at INFO: it
// is the session's only credential besides the key.
func TestHTTP_SessionIDNotLogged(t *testing.T) {
	var buf syncBuffer
	s := newMCPServer(t, mcp.HTTPOptions{Log: slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))})
	tr := &sdk.StreamableClientTransport{Endpoint: s.url, HTTPClient: &http.Client{Transport: keyTransport{key: s.key("user:alice")}}, MaxRetries: -1}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test-host", Version: "1"}, nil).Connect(ctx, tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	call(t, cs, "remember", map[string]any{"text": "User keeps bees."}, nil)
	if _, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "agentmem://notes"}); err != nil {
		t.Logf("read resource: %v", err)
	}
	sid := cs.ID()
	cs.Close()
	if sid == "" {
		t.Fatal("no session ID")
	}
	if log := buf.String(); strings.Contains(log, sid) {
		t.Errorf("the session ID %s is logged at INFO:\n%s", sid, log)
	}
}

// syncBuffer is a bytes.Buffer safe for the concurrent writes of a log.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// TestHTTP_SessionBounds: a key opens at most MaxSessionsPerKey sessions
// (429 past it) and the server at most MaxSessions (503), both with
// Retry-After and naming the bound; a session closed frees its place.
func TestHTTP_SessionBounds(t *testing.T) {
	s := newMCPServer(t, mcp.HTTPOptions{MaxSessionsPerKey: 2, MaxSessions: 3})
	alice, bob, carol := keyTransport{key: s.key("user:alice")}, keyTransport{key: s.key("user:bob")}, keyTransport{key: s.key("user:carol")}
	// An initialize that fails is answered with a session ID the SDK then
	// closes: it takes no place.
	badInit := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":7}}`
	if r := s.send(nil, http.MethodPost, alice, "", badInit); r.status != http.StatusOK || !strings.Contains(r.body, "error") {
		t.Fatalf("a bad initialize: %d %q", r.status, r.body)
	}
	first := s.open(alice)
	s.open(alice)
	r := s.send(nil, http.MethodPost, alice, "", initialize)
	if r.status != http.StatusTooManyRequests || r.errorCode() != agentmem.ERATELIMIT || r.header.Get("Mcp-Session-Id") != "" {
		t.Errorf("alice's third session: %d %q (session %q), want 429 rate_limited and none", r.status, r.body, r.header.Get("Mcp-Session-Id"))
	}
	checkBound(t, r, "2")
	s.open(bob)
	r = s.send(nil, http.MethodPost, carol, "", initialize)
	if r.status != http.StatusServiceUnavailable || r.errorCode() != agentmem.EUNAVAILABLE || r.header.Get("Mcp-Session-Id") != "" {
		t.Errorf("a fourth session: %d %q (session %q), want 503 unavailable and none", r.status, r.body, r.header.Get("Mcp-Session-Id"))
	}
	checkBound(t, r, "3")
	// Requests that open no session are not counted against the bound.
	if r := s.send(nil, http.MethodPost, alice, "", ping); r.status == http.StatusOK && r.header.Get("Mcp-Session-Id") != "" {
		t.Errorf("a ping without a session opened one")
	}
	if r := s.send(nil, http.MethodDelete, alice, first, ""); r.status != http.StatusNoContent {
		t.Fatalf("DELETE: %d %q, want 204", r.status, r.body)
	}
	s.open(carol)
	if r := s.send(nil, http.MethodPost, alice, "", initialize); r.status != http.StatusServiceUnavailable {
		t.Errorf("alice's session past the total: %d %q, want 503", r.status, r.body)
	}
}

// checkBound checks that an answer past a bound says to retry and names
// the bound.
func checkBound(t *testing.T, r reply, bound string) {
	t.Helper()
	if s, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || s < 1 {
		t.Errorf("Retry-After %q, want a number of seconds", r.header.Get("Retry-After"))
	}
	if !strings.Contains(r.body, bound) {
		t.Errorf("%q does not name the bound %s", r.body, bound)
	}
}

// TestHTTP_SessionIdle: a session idle for IdleTimeout is closed, in the
// SDK too (its memory freed), and its ID is then 404; a session in use is
// not.
func TestHTTP_SessionIdle(t *testing.T) {
	s := newMCPServer(t, mcp.HTTPOptions{IdleTimeout: 50 * time.Millisecond, MaxSessionsPerKey: 1})
	alice := keyTransport{key: s.key("user:alice")}
	sid := s.open(alice)
	waitSessions(t, s.mcp, 0)
	// The handler forgets the session, then closes it in the SDK: wait
	// for that (a ping the SDK answers leaves the session as it was).
	for deadline := time.Now().Add(10 * time.Second); s.send(mcp.SDKHandler(s.mcp), http.MethodPost, keyTransport{}, sid, ping).status != http.StatusNotFound; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the SDK still holds the expired session after 10s")
		}
	}
	if r := s.send(mcp.SDKHandler(s.mcp), http.MethodDelete, keyTransport{}, sid, ""); r.status != http.StatusNotFound {
		t.Errorf("the SDK still holds the expired session: DELETE %d %q, want 404", r.status, r.body)
	}
	if r := s.send(nil, http.MethodPost, alice, sid, ping); r.status != http.StatusNotFound || r.errorCode() != agentmem.ENOTFOUND {
		t.Errorf("expired session: %d %q, want 404 not_found", r.status, r.body)
	}
	// Its place is free again.
	s.open(alice)
}

// TestHTTP_SessionInUse: a session whose client listens on its event
// stream is not idle, however long the stream stays open; once the client
// goes, it expires.
func TestHTTP_SessionInUse(t *testing.T) {
	s := newMCPServer(t, mcp.HTTPOptions{IdleTimeout: 50 * time.Millisecond})
	alice := keyTransport{key: s.key("user:alice")}
	listening := s.open(alice)
	c, stop := context.WithCancel(ctx)
	defer stop()
	req, _ := http.NewRequestWithContext(c, http.MethodGet, s.url, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", listening)
	req.Header.Set("Authorization", "Bearer "+alice.key)
	res, err := http.DefaultClient.Do(req) // returns once the stream is open
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("GET: %v, %v", res, err)
	}
	defer res.Body.Close()
	// Another session, opened after, expires: the first has been idle as
	// long, but for its stream.
	s.open(alice)
	waitSessions(t, s.mcp, 1)
	if r := s.send(nil, http.MethodPost, alice, listening, ping); r.status != http.StatusOK {
		t.Errorf("the listened session: %d %q, want 200", r.status, r.body)
	}
	stop()
	waitSessions(t, s.mcp, 0)
}

// waitSessions waits until h holds n sessions open.
func waitSessions(t *testing.T, h http.Handler, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); mcp.OpenSessions(h) != n; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d sessions open after 10s, want %d", mcp.OpenSessions(h), n)
		}
	}
}

// TestHTTP_SessionCost: an open session costs the server little memory
// (the tools' schemas are shared, not made again for each), and closing
// it frees that.
func TestHTTP_SessionCost(t *testing.T) {
	const n = 200
	s := newMCPServer(t, mcp.HTTPOptions{MaxSessionsPerKey: n + 1, MaxSessions: n + 1})
	alice := keyTransport{key: s.key("user:alice")}
	s.send(nil, http.MethodDelete, alice, s.open(alice), "") // what all sessions share is made
	before := heapAlloc()
	sids := make([]string, n)
	for i := range sids {
		sids[i] = s.open(alice)
	}
	if per := (heapAlloc() - before) / n; per > 64<<10 {
		t.Errorf("an open session holds %.0f KB of heap, want at most 64", per/1024)
	}
	for _, sid := range sids {
		s.send(nil, http.MethodDelete, alice, sid, "")
	}
	if per := (heapAlloc() - before) / n; per > 8<<10 {
		t.Errorf("a closed session leaves %.0f KB of heap, want at most 8", per/1024)
	}
}

// heapAlloc returns the bytes of live heap, after a collection.
func heapAlloc() float64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m)
	return float64(m.HeapAlloc)
}

// BenchmarkHTTP_Session reports what an open session costs the server
// (live heap and goroutines per session) and that closing frees it (what
// is left per session once all are closed).
func BenchmarkHTTP_Session(b *testing.B) {
	s := newMCPServer(b, mcp.HTTPOptions{MaxSessions: b.N + 1, MaxSessionsPerKey: b.N + 1})
	alice := keyTransport{key: s.key("user:alice")}
	s.open(alice) // warm up: the first session builds what all share
	before := heapAlloc()
	g := runtime.NumGoroutine()
	b.ResetTimer()
	sids := make([]string, b.N)
	for i := range sids {
		sids[i] = s.open(alice)
	}
	b.StopTimer()
	b.ReportMetric((heapAlloc()-before)/float64(b.N), "heap-B/session")
	b.ReportMetric(float64(runtime.NumGoroutine()-g)/float64(b.N), "goroutines/session")
	for _, sid := range sids {
		if r := s.send(nil, http.MethodDelete, alice, sid, ""); r.status != http.StatusNoContent {
			b.Fatalf("DELETE: %d %q", r.status, r.body)
		}
	}
	b.ReportMetric((heapAlloc()-before)/float64(b.N), "heap-B/session-closed")
	b.ReportMetric(float64(runtime.NumGoroutine()-g)/float64(b.N), "goroutines/session-closed")
}

// TestHTTP_SessionBoundsWithoutKeys: without keys (authentication off) the
// bound per identity counts each user's sessions, not everyone's.
func TestHTTP_SessionBoundsWithoutKeys(t *testing.T) {
	mem := apptest.Open(t)
	h := mcp.NewHTTPHandler(mem.Service, mcp.HTTPOptions{MaxSessionsPerKey: 1, MaxSessions: 10, LocalUser: "local-user"})
	srv := httptest.NewServer(httpapi.NewHandler(nil, mem.Service, httpapi.Options{Auth: httpapi.Auth{Mode: httpapi.AuthNone}, MCP: h}))
	t.Cleanup(srv.Close)
	s := &mcpServer{t: t, mem: mem, url: srv.URL + "/mcp", mcp: h}
	alice, bob := keyTransport{user: "alice"}, keyTransport{user: "bob"}
	s.open(alice)
	s.open(bob) // another user: a place of their own
	if r := s.send(nil, http.MethodPost, alice, "", initialize); r.status != http.StatusTooManyRequests {
		t.Errorf("alice's second session: %d %q, want 429", r.status, r.body)
	}
}
