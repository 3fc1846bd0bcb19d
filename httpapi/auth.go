package httpapi

import (
	"cmp"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentmem/agentmem"
	"golang.org/x/time/rate"
)

// Authentication modes.
const (
	AuthNone   = agentmem.ViaNone   // every request is the local admin: for a loopback address only
	AuthAPIKey = agentmem.ViaAPIKey // Authorization: Bearer KEY or X-API-Key: KEY
	AuthHeader = agentmem.ViaHeader // a trusted proxy's identity header (or an API key)
)

// DefaultUserHeader is the header of Azure App Service's Easy Auth (seed
// 000), read in header mode unless Auth.UserHeader says otherwise.
const DefaultUserHeader = "X-MS-CLIENT-PRINCIPAL-ID"

// Auth configures authentication. The zero value is AuthNone.
type Auth struct {
	Mode string
	// UserHeader names the header holding the user ID in header mode.
	UserHeader string
	// TrustedProxies are the addresses whose UserHeader is believed in
	// header mode. A request from anywhere else that carries the header
	// is refused, never trusted.
	TrustedProxies []netip.Prefix
	// Rate and Burst limit each identity's requests (token bucket);
	// Rate 0 means no limit.
	Rate  float64 // requests per second
	Burst int     // bucket size; at least 1 when Rate is set
	// Keys are the API keys callers present: required with AuthAPIKey
	// and AuthHeader (which takes keys too); NewHandler panics without.
	Keys agentmem.KeyStore
}

// access says who may call a route.
type access int

const (
	accessPublic     access = iota // anyone, even without credentials (health checks)
	accessUser                     // the user of the path, its tenant, or an admin
	accessUserAdmin                // the tenant of the path's user, or an admin (erasing a user)
	accessAdmin                    // admin keys only (operators' routes)
	accessIdentified               // any identified caller, whoever it is (who am I)
)

func (a access) String() string {
	return [...]string{"public", "user", "user-admin", "admin", "identified"}[a]
}

// authenticate establishes who is calling and stores it in the request's
// info and context (agentmem.IdentityFromContext); a failure is stored
// too and answered by authorize, since only the route knows whether it
// needs an identity. It also applies the per-identity rate limit.
func authenticate(opt Auth) func(http.Handler) http.Handler {
	limiter := newRateLimiter(opt.Rate, opt.Burst)
	header := http.CanonicalHeaderKey(cmp.Or(opt.UserHeader, DefaultUserHeader))
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			info, w, r := track(w, r)
			id, err := identify(r, opt, header, opt.Keys)
			if err != nil {
				info.authErr = err
			} else {
				info.identity = id
				r = r.WithContext(agentmem.NewContextWithIdentity(r.Context(), id))
				if wait, ok := limiter.allow(id.Actor()); !ok {
					secs := int(math.Ceil(wait.Seconds()))
					w.Header().Set("Retry-After", strconv.Itoa(max(secs, 1)))
					writeErrorBody(w, r, http.StatusTooManyRequests, agentmem.ERATELIMIT, "Too many requests: the limit is "+
						strconv.FormatFloat(opt.Rate, 'g', -1, 64)+" per second (burst "+strconv.Itoa(limiter.burst)+") per key; retry after "+strconv.Itoa(max(secs, 1))+" s.")
					return
				}
			}
			next.ServeHTTP(w, r)
		})
	}
}

// identify returns the identity of r, or EUNAUTHORIZED.
func identify(r *http.Request, opt Auth, header string, keys agentmem.KeyStore) (*agentmem.Identity, error) {
	switch opt.Mode {
	case "", AuthNone:
		return &agentmem.Identity{Scope: agentmem.Scope{Kind: agentmem.ScopeAdmin}, Via: AuthNone}, nil
	case AuthHeader:
		if values := r.Header.Values(header); len(values) > 0 {
			if !trusted(r.RemoteAddr, opt.TrustedProxies) {
				return nil, agentmem.Errorf(agentmem.EUNAUTHORIZED, "The %s header is accepted only from a trusted proxy.", header)
			}
			if len(values) > 1 {
				return nil, agentmem.Errorf(agentmem.EUNAUTHORIZED, "The %s header appears more than once.", header)
			}
			if agentmem.ValidateID(header, values[0]) != nil {
				return nil, agentmem.Errorf(agentmem.EUNAUTHORIZED, "The %s header does not hold a valid user ID.", header)
			}
			return &agentmem.Identity{Scope: agentmem.Scope{Kind: agentmem.ScopeUser, UserID: values[0]}, Via: AuthHeader}, nil
		}
	case AuthAPIKey:
	default:
		return nil, agentmem.Errorf(agentmem.EUNAUTHORIZED, "Authentication is misconfigured.")
	}
	token, err := bearer(r)
	if err != nil {
		return nil, err
	}
	keyID, secret, err := agentmem.ParseAPIKey(token)
	if err != nil {
		return nil, err
	}
	k, err := keys.FindKeyByID(r.Context(), keyID)
	if agentmem.ErrorCode(err) == agentmem.ENOTFOUND {
		// Spend the time of a comparison anyway, so that an unknown key
		// and a wrong secret take as long.
		k, err = &agentmem.APIKey{Hash: strings.Repeat("0", 64)}, nil
	}
	if err != nil {
		return nil, err // the store failed: 5xx, not the client's fault
	}
	if err := k.Verify(secret, time.Now()); err != nil {
		return nil, err
	}
	return &agentmem.Identity{Scope: k.Scope, Via: AuthAPIKey, KeyID: k.ID}, nil
}

// bearer returns the API key of Authorization: Bearer KEY or X-API-Key.
func bearer(r *http.Request) (string, error) {
	auth, apiKey := r.Header.Values("Authorization"), r.Header.Values("X-API-Key")
	switch {
	case len(auth)+len(apiKey) == 0:
		return "", agentmem.Errorf(agentmem.EUNAUTHORIZED, "An API key is required: send Authorization: Bearer KEY or X-API-Key: KEY.")
	case len(auth)+len(apiKey) > 1:
		return "", agentmem.Errorf(agentmem.EUNAUTHORIZED, "Send one API key, in Authorization or X-API-Key, not several.")
	case len(apiKey) == 1:
		return apiKey[0], nil
	}
	scheme, token, ok := strings.Cut(auth[0], " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", agentmem.Errorf(agentmem.EUNAUTHORIZED, "The Authorization header must be Bearer KEY.")
	}
	return strings.TrimSpace(token), nil
}

// trusted reports whether remoteAddr (host:port) is in one of prefixes.
func trusted(remoteAddr string, prefixes []netip.Prefix) bool {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		host = remoteAddr
	}
	addr, err := netip.ParseAddr(host)
	if err != nil {
		return false
	}
	addr = addr.Unmap()
	for _, p := range prefixes {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

// authorize lets a request through to h when its identity may call the
// route: it answers 401 without a valid identity and 403 when an identity
// of another kind is needed (a user or tenant key on an operator's
// route). Whose data a user route may reach is the service's to decide
// (core.Service resolves the path's user against the identity in the
// request's context, answering 404 for a user the caller may not see).
func authorize(log *slog.Logger, a access, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info, w, r := track(w, r)
		if a == accessPublic {
			h.ServeHTTP(w, r)
			return
		}
		if info.authErr != nil || info.identity == nil {
			err := info.authErr
			if err == nil {
				err = agentmem.Errorf(agentmem.EUNAUTHORIZED, "Authentication is required.")
			}
			if agentmem.ErrorCode(err) == agentmem.EUNAUTHORIZED {
				w.Header().Set("WWW-Authenticate", `Bearer realm="agentmem"`)
			}
			writeError(w, r, log, err)
			return
		}
		if a == accessAdmin && info.identity.Scope.Kind != agentmem.ScopeAdmin {
			writeError(w, r, log, agentmem.Errorf(agentmem.EFORBIDDEN, "This route needs an admin key."))
			return
		}
		h.ServeHTTP(w, r)
	})
}

// rateLimiter keeps a token bucket per identity.
type rateLimiter struct {
	limit rate.Limit
	burst int
	mu    sync.Mutex
	// buckets grows with the number of identities that made requests
	// since the last sweep; idle full buckets are dropped by sweep.
	buckets   map[string]*rate.Limiter
	lastSweep time.Time
}

func newRateLimiter(perSecond float64, burst int) *rateLimiter {
	if perSecond <= 0 {
		return nil
	}
	return &rateLimiter{limit: rate.Limit(perSecond), burst: max(burst, 1), buckets: map[string]*rate.Limiter{}}
}

// allow takes a token of key's bucket, or says how long until one is
// available.
func (l *rateLimiter) allow(key string) (time.Duration, bool) {
	if l == nil {
		return 0, true
	}
	now := time.Now()
	l.mu.Lock()
	if now.Sub(l.lastSweep) > time.Minute {
		l.sweep(now) // before the lookup: it may drop this key's full bucket
	}
	b := l.buckets[key]
	if b == nil {
		b = rate.NewLimiter(l.limit, l.burst)
		l.buckets[key] = b
	}
	l.mu.Unlock()
	res := b.ReserveN(now, 1)
	if d := res.DelayFrom(now); d > 0 {
		res.CancelAt(now)
		return d, false
	}
	return 0, true
}

// sweep drops the buckets that are full again: forgetting them changes
// nothing, since a new bucket starts full.
func (l *rateLimiter) sweep(now time.Time) {
	for k, b := range l.buckets {
		if b.TokensAt(now) >= float64(l.burst) {
			delete(l.buckets, k)
		}
	}
	l.lastSweep = now
}
