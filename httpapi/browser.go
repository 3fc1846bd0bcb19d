package httpapi

import (
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"github.com/agentmem/agentmem"
)

// What a web page can make a browser send to agentmem is refused here:
// any page a developer visits may send requests to 127.0.0.1, and with
// DNS rebinding may even read the answers. Three checks, in this order:
//
//   - checkHost: without authentication, only loopback Host names (and
//     Options.AllowedHosts) are served, since a rebound name reaches the
//     server as the page's own origin;
//   - checkOrigin: a request whose Origin is neither the server's own nor
//     in Options.AllowedOrigins is refused, whatever its method;
//   - requireJSON: an API request with a body must declare it JSON. The
//     types a page may send without a CORS preflight (text/plain, forms)
//     are thereby refused, whatever the Origin check decided.

// checkHost answers 403 to a request whose Host is not served: with
// AuthNone, the loopback names (localhost, *.localhost, 127.0.0.0/8,
// [::1], with any port) and allowed; with authentication, any Host when
// allowed is empty, else the loopback names and allowed. An entry of
// allowed is a name, which matches with any port, or name:port. /healthz
// and /readyz answer every Host, for load balancers that probe by
// address.
func checkHost(mode string, allowed []string) func(http.Handler) http.Handler {
	hosts := map[string]bool{}
	for _, h := range allowed {
		hosts[normalHost(h)] = true
	}
	check := mode == "" || mode == AuthNone || len(hosts) > 0
	return func(next http.Handler) http.Handler {
		if !check {
			return next
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/healthz", "/readyz":
				next.ServeHTTP(w, r)
				return
			}
			host := normalHost(r.Host)
			name := host
			if h, _, err := net.SplitHostPort(host); err == nil {
				name = h
			}
			if isLoopbackName(name) || hosts[name] || hosts[host] {
				next.ServeHTTP(w, r)
				return
			}
			msg := "The Host " + strconv.Quote(r.Host) + " is not served: "
			if mode == "" || mode == AuthNone {
				msg += "without authentication only loopback names (localhost, 127.0.0.1, [::1]) are, against DNS rebinding; " +
					"add it with --allowed-hosts (AGENTMEM_ALLOWED_HOSTS), or require authentication (--auth)."
			} else {
				msg += "it is not a loopback name or one of --allowed-hosts (AGENTMEM_ALLOWED_HOSTS)."
			}
			writeErrorBody(w, r, http.StatusForbidden, agentmem.EFORBIDDEN, msg)
		})
	}
}

// normalHost returns a Host (host or host:port) in lower case, without a
// trailing dot on its name and without the brackets of a bare IPv6
// address.
func normalHost(h string) string {
	h = strings.ToLower(strings.TrimSpace(h))
	name, port, err := net.SplitHostPort(h)
	if err != nil {
		name, port = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]"), ""
	}
	name = strings.TrimSuffix(name, ".")
	if port == "" {
		return name
	}
	return net.JoinHostPort(name, port)
}

// isLoopbackName reports whether name (a Host without its port, see
// normalHost) can only mean this machine: localhost, a subdomain of it
// (RFC 6761), or a loopback address.
func isLoopbackName(name string) bool {
	if name == "localhost" || strings.HasSuffix(name, ".localhost") {
		return true
	}
	addr, err := netip.ParseAddr(name)
	return err == nil && addr.Unmap().IsLoopback()
}

// checkOrigin answers 403 to a request a browser sent on behalf of
// another site: one with an Origin header that is not the server's own
// (its host and port are the request's Host; "null" never is) nor one of
// allowed, or, without Origin, a request other than GET, HEAD or OPTIONS
// that a browser marks Sec-Fetch-Site cross-site or same-site. A browser's
// Sec-Fetch-Site: same-origin is believed (no page can forge it): behind a
// proxy that rewrites Host, the browser's requests still pass. Requests
// without these headers (curl, SDKs, the Go client) are not affected.
func checkOrigin(allowed []string) func(http.Handler) http.Handler {
	origins := map[string]bool{}
	for _, o := range allowed {
		if o, ok := normalOrigin(o); ok {
			origins[o] = true
		}
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			site := r.Header.Get("Sec-Fetch-Site")
			values := r.Header.Values("Origin")
			switch {
			case len(values) == 0:
				if (site == "cross-site" || site == "same-site") && !safeMethod(r.Method) {
					writeErrorBody(w, r, http.StatusForbidden, agentmem.EFORBIDDEN,
						"A "+r.Method+" request from another site (Sec-Fetch-Site: "+site+") is not served.")
					return
				}
			case len(values) > 1:
				writeErrorBody(w, r, http.StatusForbidden, agentmem.EFORBIDDEN, "The Origin header appears more than once.")
				return
			case site == "same-origin":
			default:
				o, ok := normalOrigin(values[0])
				if !ok || (!origins[o] && !sameOrigin(o, r.Host)) {
					writeErrorBody(w, r, http.StatusForbidden, agentmem.EFORBIDDEN, "Requests from the origin "+strconv.Quote(values[0])+
						" are not served: only the server's own origin and those of --allowed-origins (AGENTMEM_ALLOWED_ORIGINS) are.")
					return
				}
			}
			next.ServeHTTP(w, r)
		})
	}
}

// safeMethod reports whether a method only reads (RFC 9110, 9.2.1).
func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

// normalOrigin returns an http or https origin as scheme://host[:port] in
// lower case, without the scheme's default port; ok is false for
// anything else ("null", a path, credentials…).
func normalOrigin(s string) (string, bool) {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil || u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return "", false
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return "", false
	}
	return scheme + "://" + withoutDefaultPort(scheme, normalHost(u.Host)), true
}

// sameOrigin reports whether origin (see normalOrigin) is the origin a
// request with this Host was sent to. The scheme cannot be compared (a
// proxy may end TLS), so the Host's port counts as the origin scheme's
// default when it is absent.
func sameOrigin(origin, host string) bool {
	scheme, oh, _ := strings.Cut(origin, "://")
	return oh == withoutDefaultPort(scheme, normalHost(host))
}

// withoutDefaultPort drops the port of host when it is scheme's default.
func withoutDefaultPort(scheme, host string) string {
	if name, port, err := net.SplitHostPort(host); err == nil &&
		(scheme == "http" && port == "80" || scheme == "https" && port == "443") {
		if strings.Contains(name, ":") {
			return "[" + name + "]"
		}
		return name
	}
	return host
}

// requireJSON answers 415 to an API request (a path under /v1/) that has a
// body but does not declare it as JSON: application/json or a type with
// the +json suffix (application/merge-patch+json), charset utf-8 if any.
// Requests without a body, such as POST …/end, need no Content-Type.
func requireJSON(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength == 0 || !strings.HasPrefix(r.URL.Path, "/v1/") {
			next.ServeHTTP(w, r)
			return
		}
		ct := r.Header.Get("Content-Type")
		mt, params, err := mime.ParseMediaType(ct)
		switch {
		case ct == "":
			writeErrorBody(w, r, http.StatusUnsupportedMediaType, agentmem.EINVALID,
				"A request body needs the header Content-Type: application/json.")
		case err != nil || (mt != "application/json" && !(strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json"))):
			writeErrorBody(w, r, http.StatusUnsupportedMediaType, agentmem.EINVALID,
				"The request body is "+strconv.Quote(ct)+"; send it as Content-Type: application/json.")
		case params["charset"] != "" && !strings.EqualFold(params["charset"], "utf-8"):
			writeErrorBody(w, r, http.StatusUnsupportedMediaType, agentmem.EINVALID,
				"The request body's charset is "+strconv.Quote(params["charset"])+"; JSON must be utf-8 (Content-Type: application/json).")
		default:
			next.ServeHTTP(w, r)
		}
	})
}
