package mcp_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentmem/agentmem"
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
		Auth: httpapi.Auth{Mode: httpapi.AuthAPIKey},
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
