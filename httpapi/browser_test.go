package httpapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/httpapi"
	"github.com/agentmem/agentmem/internal/testutil"
)

// TestHandler_CrossSite: what a web page can make a browser send is
// refused, and nothing of it is stored: a body that is not JSON (a
// text/plain POST needs no CORS preflight), an Origin other than the
// server's own or an allowed one, and, without authentication, a Host that
// is not a loopback name or an allowed one (DNS rebinding).
func TestHandler_CrossSite(t *testing.T) {
	testutil.Backends(t, func(t *testing.T, s agentmem.Store) {
		MustCreateThread(t, s, &agentmem.Thread{UserID: "victim", ID: "t"})
		srv := MustServe(t, s, httpapi.Options{
			AllowedOrigins: []string{"https://app.example"},
			AllowedHosts:   []string{"agentmem.internal"},
		})
		own := "http://" + strings.TrimPrefix(srv.URL, "http://")
		h := func(kv ...string) http.Header {
			hd := http.Header{}
			for i := 0; i < len(kv); i += 2 {
				hd.Set(kv[i], kv[i+1])
			}
			return hd
		}
		const mems = "/v1/users/victim/memories"
		stored := map[string]bool{} // memory texts that must be stored; any other must not
		for _, sc := range []struct {
			scenario
			stores string // the memory text the request stores, if it succeeds
		}{
			// Bodies must be JSON.
			{scenario: scenario{name: "TextPlain", method: "POST", url: mems, header: h("Content-Type", "text/plain"),
				body: `{"text":"planted by text/plain"}`, wantStatus: 415, wantBody: "application/json"}},
			{scenario: scenario{name: "FormURLEncoded", method: "POST", url: mems, header: h("Content-Type", "application/x-www-form-urlencoded"),
				body: `{"text":"planted by a form"}`, wantStatus: 415, wantBody: `"code":"invalid"`}},
			{scenario: scenario{name: "NoContentType", method: "POST", url: mems, header: h("Content-Type", ""),
				body: `{"text":"planted without a type"}`, wantStatus: 415, wantBody: "Content-Type"}},
			{scenario: scenario{name: "JSONNotUTF8", method: "POST", url: mems, header: h("Content-Type", "application/json; charset=latin1"),
				body: `{"text":"in latin1"}`, wantStatus: 415, wantBody: "charset"}},
			{scenario: scenario{name: "JSON", method: "POST", url: mems, header: h("Content-Type", "application/json"),
				body: `{"text":"plain json"}`, wantStatus: 201}, stores: "plain json"},
			{scenario: scenario{name: "JSONCharset", method: "POST", url: mems, header: h("Content-Type", "Application/JSON; charset=UTF-8"),
				body: `{"text":"json with charset"}`, wantStatus: 201}, stores: "json with charset"},
			{scenario: scenario{name: "SuffixJSON", method: "PATCH", url: "/v1/users/victim/threads/t", header: h("Content-Type", "application/merge-patch+json"),
				body: `{"title":"patched"}`, wantStatus: 200}},
			{scenario: scenario{name: "BodylessPOST", method: "POST", url: "/v1/users/victim/threads/t/end", header: h(), wantStatus: 200}},
			{scenario: scenario{name: "BodylessPOSTAnyType", method: "POST", url: "/v1/users/victim/profile/refresh", header: h("Content-Type", "text/plain"), wantStatus: 200}},

			// Origins: the server's own and the allowed ones only.
			{scenario: scenario{name: "CrossSiteOrigin", method: "POST", url: mems, header: h("Content-Type", "application/json", "Origin", "https://evil.example"),
				body: `{"text":"planted cross-site"}`, wantStatus: 403, wantBody: "https://evil.example"}},
			{scenario: scenario{name: "CrossSiteOriginTextPlain", method: "POST", url: mems, header: h("Content-Type", "text/plain", "Origin", "https://evil.example"),
				body: `{"text":"planted cross-site, text/plain"}`, wantStatus: 403}},
			{scenario: scenario{name: "NullOrigin", method: "POST", url: mems, header: h("Content-Type", "application/json", "Origin", "null"),
				body: `{"text":"planted from a sandbox"}`, wantStatus: 403, wantBody: "--allowed-origins"}},
			{scenario: scenario{name: "OtherPortOrigin", method: "POST", url: mems, header: h("Content-Type", "application/json", "Origin", "http://127.0.0.1:1"),
				body: `{"text":"planted from another port"}`, wantStatus: 403}},
			{scenario: scenario{name: "CrossSiteOriginGET", method: "GET", url: mems, header: h("Origin", "https://evil.example"), wantStatus: 403}},
			{scenario: scenario{name: "SecFetchSiteCrossSite", method: "POST", url: mems, header: h("Content-Type", "application/json", "Sec-Fetch-Site", "cross-site"),
				body: `{"text":"planted, Sec-Fetch-Site only"}`, wantStatus: 403}},
			{scenario: scenario{name: "SecFetchSiteCrossSiteNavigation", method: "GET", url: "/healthz", header: h("Sec-Fetch-Site", "cross-site"), wantStatus: 200}},
			{scenario: scenario{name: "SameOrigin", method: "POST", url: mems, header: h("Content-Type", "application/json", "Origin", own, "Sec-Fetch-Site", "same-origin"),
				body: `{"text":"same origin"}`, wantStatus: 201}, stores: "same origin"},
			{scenario: scenario{name: "ProxiedSameOrigin", method: "POST", url: mems, header: h("Content-Type", "application/json", "Origin", "https://mem.example", "Sec-Fetch-Site", "same-origin"),
				body: `{"text":"same origin, Host rewritten by a proxy"}`, wantStatus: 201}, stores: "same origin, Host rewritten by a proxy"},
			{scenario: scenario{name: "SameOriginIPv6", method: "GET", url: mems, header: h("Host", "[::1]:8080", "Origin", "http://[::1]:8080"), wantStatus: 200}},
			{scenario: scenario{name: "SameOriginDefaultPort", method: "GET", url: mems, header: h("Host", "localhost", "Origin", "http://localhost:80"), wantStatus: 200}},
			{scenario: scenario{name: "AllowedOrigin", method: "POST", url: mems, header: h("Content-Type", "application/json", "Origin", "https://app.example", "Sec-Fetch-Site", "cross-site"),
				body: `{"text":"allowed origin"}`, wantStatus: 201}, stores: "allowed origin"},
			{scenario: scenario{name: "AllowedOriginDefaultPort", method: "POST", url: mems, header: h("Content-Type", "application/json", "Origin", "https://APP.example:443"),
				body: `{"text":"allowed origin, port"}`, wantStatus: 201}, stores: "allowed origin, port"},

			// Hosts, without authentication: loopback names and the allowed ones.
			{scenario: scenario{name: "RebindingHost", method: "GET", url: "/v1/users/victim/threads", header: h("Host", "evil.example"),
				wantStatus: 403, wantBody: "--allowed-hosts"}},
			{scenario: scenario{name: "RebindingHostPort", method: "POST", url: mems, header: h("Host", "evil.example:8080", "Content-Type", "application/json", "Origin", "http://evil.example:8080"),
				body: `{"text":"planted by rebinding"}`, wantStatus: 403, wantBody: "evil.example"}},
			{scenario: scenario{name: "RebindingHostIP", method: "GET", url: "/v1/users/victim/threads", header: h("Host", "192.168.1.10:8080"), wantStatus: 403}},
			{scenario: scenario{name: "RebindingHostLocalhostSuffix", method: "GET", url: "/v1/users/victim/threads", header: h("Host", "localhost.evil.example"), wantStatus: 403}},
			{scenario: scenario{name: "HostLocalhost", method: "GET", url: "/v1/users/victim/threads", header: h("Host", "localhost:8080"), wantStatus: 200}},
			{scenario: scenario{name: "HostLocalhostNoPort", method: "GET", url: "/v1/users/victim/threads", header: h("Host", "LOCALHOST"), wantStatus: 200}},
			{scenario: scenario{name: "HostSubLocalhost", method: "GET", url: "/v1/users/victim/threads", header: h("Host", "agentmem.localhost:8080"), wantStatus: 200}},
			{scenario: scenario{name: "HostLoopbackV4", method: "GET", url: "/v1/users/victim/threads", header: h("Host", "127.0.0.2:9"), wantStatus: 200}},
			{scenario: scenario{name: "HostLoopbackV6", method: "GET", url: "/v1/users/victim/threads", header: h("Host", "[::1]:8080"), wantStatus: 200}},
			{scenario: scenario{name: "HostAllowed", method: "GET", url: "/v1/users/victim/threads", header: h("Host", "agentmem.internal:8080"), wantStatus: 200}},
			{scenario: scenario{name: "HostAllowedSameOrigin", method: "POST", url: mems, header: h("Host", "agentmem.internal", "Content-Type", "application/json", "Origin", "http://agentmem.internal"),
				body: `{"text":"allowed host, same origin"}`, wantStatus: 201}, stores: "allowed host, same origin"},
			{scenario: scenario{name: "HealthzAnyHost", method: "GET", url: "/healthz", header: h("Host", "evil.example"), wantStatus: 200}},
			{scenario: scenario{name: "ReadyzAnyHost", method: "GET", url: "/readyz", header: h("Host", "10.0.0.7:8080"), wantStatus: 200}},
		} {
			resp, body := Do(t, sc.method, srv.URL+sc.url, sc.header, sc.body)
			if resp.StatusCode != sc.wantStatus || !strings.Contains(string(body), sc.wantBody) {
				t.Errorf("%s: %s %s: %d %s, want %d with %q", sc.name, sc.method, sc.url, resp.StatusCode, body, sc.wantStatus, sc.wantBody)
			}
			if sc.stores != "" {
				stored[sc.stores] = true
			}
		}
		got, _, err := s.FindMemories(context.Background(), "victim", agentmem.MemoryFilter{Limit: agentmem.MaxPageSize})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range got {
			if !stored[m.Text] {
				t.Errorf("memory %q stored by a refused request", m.Text)
			}
			delete(stored, m.Text)
		}
		for text := range stored {
			t.Errorf("memory %q not stored", text)
		}
	})
}

// TestHandler_CrossSite_Auth: with authentication, every Host is served
// (a rebinding page has no key), unless AllowedHosts names some; the
// Origin check applies in every mode (header mode's proxy may
// authenticate by cookie).
func TestHandler_CrossSite_Auth(t *testing.T) {
	store := testutil.MustOpenSQLite(t)
	key, _ := mustKey(t, store, "admin", time.Now(), 0)
	auth := httpapi.Auth{Mode: httpapi.AuthAPIKey}
	open := MustServe(t, store, httpapi.Options{Auth: auth})
	pinned := MustServe(t, store, httpapi.Options{Auth: auth, AllowedHosts: []string{"agentmem.example.com"}})
	header := func(host, origin string) http.Header {
		hd := bearerHeader(key)
		if host != "" {
			hd.Set("Host", host)
		}
		if origin != "" {
			hd.Set("Origin", origin)
		}
		return hd
	}
	for _, c := range []struct {
		name         string
		srv          string
		host, origin string
		want         int
	}{
		{"AnyHost", open.URL, "agentmem.example.com", "", 200},
		{"AnyHostSameOrigin", open.URL, "agentmem.example.com", "https://agentmem.example.com", 200},
		{"CrossSiteOrigin", open.URL, "agentmem.example.com", "https://evil.example", 403},
		{"PinnedHost", pinned.URL, "agentmem.example.com", "", 200},
		{"PinnedLoopback", pinned.URL, "", "", 200},
		{"PinnedOtherHost", pinned.URL, "evil.example", "", 403},
	} {
		resp, body := Do(t, "GET", c.srv+"/v1/users/alice/threads", header(c.host, c.origin), "")
		if resp.StatusCode != c.want {
			t.Errorf("%s: %d %s, want %d", c.name, resp.StatusCode, body, c.want)
		}
	}
}
