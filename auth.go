package agentmem

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"strings"
	"time"
)

// Key scopes: what an API key may reach.
const (
	ScopeAdmin  = "admin"  // every route and every user
	ScopeTenant = "tenant" // the users of one tenant, and nothing else
	ScopeUser   = "user"   // one user's routes (within a tenant when TenantID is set)
)

// Scope says what an identity may reach.
type Scope struct {
	Kind     string `json:"kind"`                // ScopeAdmin, ScopeTenant or ScopeUser
	TenantID string `json:"tenant_id,omitempty"` // set for ScopeTenant; optional for ScopeUser
	UserID   string `json:"user_id,omitempty"`   // set for ScopeUser
}

// ParseScope reads the command line's scope: "admin", "tenant:ID",
// "user:ID" or "tenant:ID/user:ID" (a user of a tenant).
func ParseScope(s string) (Scope, error) {
	bad := Errorf(EINVALID, "scope %q is not admin, user:ID, tenant:ID or tenant:ID/user:ID.", s)
	if s == ScopeAdmin {
		return Scope{Kind: ScopeAdmin}, nil
	}
	var sc Scope
	rest := s
	if t, ok := strings.CutPrefix(rest, "tenant:"); ok {
		sc.Kind, sc.TenantID = ScopeTenant, t
		if tenant, user, ok := strings.Cut(t, "/"); ok {
			u, ok := strings.CutPrefix(user, "user:")
			if !ok {
				return Scope{}, bad
			}
			if tenant == "" {
				return Scope{}, bad
			}
			sc.Kind, sc.TenantID, sc.UserID = ScopeUser, tenant, u
		}
	} else if u, ok := strings.CutPrefix(rest, "user:"); ok {
		sc.Kind, sc.UserID = ScopeUser, u
	} else {
		return Scope{}, bad
	}
	return sc, sc.Validate()
}

// String returns the scope in ParseScope's form.
func (sc Scope) String() string {
	switch {
	case sc.Kind == ScopeAdmin:
		return ScopeAdmin
	case sc.Kind == ScopeTenant:
		return "tenant:" + sc.TenantID
	case sc.TenantID != "":
		return "tenant:" + sc.TenantID + "/user:" + sc.UserID
	}
	return "user:" + sc.UserID
}

// Validate checks that the scope's fields fit its kind.
func (sc Scope) Validate() error {
	switch sc.Kind {
	case ScopeAdmin:
		if sc.TenantID != "" || sc.UserID != "" {
			return Errorf(EINVALID, "An admin scope names no tenant and no user.")
		}
		return nil
	case ScopeTenant:
		if sc.UserID != "" {
			return Errorf(EINVALID, "A tenant scope names no user; use tenant:ID/user:ID.")
		}
		return ValidateClientID("tenant id", sc.TenantID)
	case ScopeUser:
		if sc.TenantID != "" {
			if err := ValidateClientID("tenant id", sc.TenantID); err != nil {
				return err
			}
		}
		return ValidateClientID("user id", sc.UserID)
	}
	return Errorf(EINVALID, "scope kind %q is not admin, tenant or user.", sc.Kind)
}

// StoredUserID returns the user ID under which the store keeps the data of
// the user that a request with this scope calls userID. A tenant's users
// live in a namespace of their own, "TENANT/USER", so that tenants never
// see each other's users however they name them; ValidateID forbids the
// slash in any ID a client sends, so no request can name another tenant's
// user directly.
func (sc Scope) StoredUserID(userID string) string {
	if sc.TenantID == "" {
		return userID
	}
	return sc.TenantID + "/" + userID
}

// APIKeyPrefix starts every API key, so that a leaked key is recognisable
// (secret scanners) and a malformed one is refused before any lookup.
const APIKeyPrefix = "am_"

// APIKey is the stored form of an API key: its public ID, the SHA-256 of
// its secret (the secret itself is shown once, at creation, and never
// stored), its scope and validity.
type APIKey struct {
	ID        string     `json:"id"`
	Hash      string     `json:"-"`
	Scope     Scope      `json:"scope"`
	Name      string     `json:"name,omitempty"`
	CreatedAt time.Time  `json:"created_at"`
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
	RevokedAt *time.Time `json:"revoked_at,omitempty"`
	CreatedBy string     `json:"created_by,omitempty"`
}

// KeyNeverExpires is the lifetime of a key that never expires (see
// ParseKeyLifetime).
const KeyNeverExpires = "never"

// ParseKeyLifetime reads how long a new API key lasts: a positive
// duration as ParseAge reads it ("90d", "12h"), or KeyNeverExpires (and
// "", its default), for which it returns 0. field names it in the
// EINVALID error. A zero or negative lifetime is refused rather than read
// as "never": "0d" once made a key that never expired, silently.
func ParseKeyLifetime(field, s string) (time.Duration, error) {
	if s == "" || s == KeyNeverExpires {
		return 0, nil
	}
	d, err := ParseAge(field, s)
	if (err == nil && d == 0) || (err != nil && strings.HasPrefix(s, "-")) {
		return 0, Errorf(EINVALID, "%s %q is not a positive lifetime such as 90d or 12h; for a key that never expires, use %s %s.", field, s, field, KeyNeverExpires)
	}
	return d, err
}

// NewAPIKey makes a key of the given scope and returns it with the token
// to hand to its holder: APIKeyPrefix, the key's ID, "_", and 32 random
// bytes in base64url. The secret has 256 bits of entropy, so a plain
// SHA-256 of it is as strong to store as a slow password hash.
func NewAPIKey(sc Scope, name string, now time.Time, ttl time.Duration) (token string, k *APIKey, err error) {
	if err := sc.Validate(); err != nil {
		return "", nil, err
	}
	if err := ValidateText("name", name); err != nil {
		return "", nil, err
	}
	var id [8]byte
	var secret [32]byte
	_, _ = rand.Read(id[:])
	_, _ = rand.Read(secret[:])
	k = &APIKey{ID: hex.EncodeToString(id[:]), Scope: sc, Name: name, CreatedAt: Timestamp(now)}
	s := base64.RawURLEncoding.EncodeToString(secret[:])
	k.Hash = hashSecret(s)
	if ttl > 0 {
		exp := Timestamp(now.Add(ttl))
		k.ExpiresAt = &exp
	}
	return APIKeyPrefix + k.ID + "_" + s, k, nil
}

func hashSecret(secret string) string {
	h := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(h[:])
}

// ParseAPIKey splits a token into the key's ID and secret. Returns
// EUNAUTHORIZED for anything that is not shaped like a key.
func ParseAPIKey(token string) (id, secret string, err error) {
	rest, ok := strings.CutPrefix(token, APIKeyPrefix)
	if ok {
		id, secret, ok = strings.Cut(rest, "_")
	}
	if !ok || len(id) != 16 || len(secret) != 43 || strings.ContainsFunc(id+secret, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_')
	}) {
		return "", "", Errorf(EUNAUTHORIZED, "The API key is malformed.")
	}
	return id, secret, nil
}

// Verify checks secret against the key in constant time and the key's
// validity at now. Returns EUNAUTHORIZED, with the same message for every
// failure so that a caller learns nothing about which keys exist.
func (k *APIKey) Verify(secret string, now time.Time) error {
	got, want := hashSecret(secret), k.Hash
	ok := subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
	if !ok || k.RevokedAt != nil || (k.ExpiresAt != nil && !now.Before(*k.ExpiresAt)) {
		return Errorf(EUNAUTHORIZED, "The API key is unknown, revoked or expired.")
	}
	return nil
}

// KeyFilter selects API keys for FindKeys, newest first.
type KeyFilter struct {
	TenantID *string // only keys of this tenant ("" means keys of no tenant)
	Limit    int
	Cursor   string
}

// Validate checks the filter's text (see validateTextFilters).
func (f *KeyFilter) Validate() error {
	return validateTextFilters(textFilter{"tenant_id", f.TenantID})
}

// KeyStore stores API keys. Keys are not user data: the table is shared by
// all users (a reference table when scaled out).
type KeyStore interface {
	// CreateKey stores a key made by NewAPIKey, setting CreatedAt when
	// zero. Returns EINVALID for a malformed ID or an invalid scope, and
	// ECONFLICT if the ID is taken.
	CreateKey(ctx context.Context, k *APIKey) error

	// FindKeyByID returns a key, revoked and expired ones included.
	// Returns ENOTFOUND if there is none, with a message that does not
	// echo the ID (it comes from a presented token).
	FindKeyByID(ctx context.Context, id string) (*APIKey, error)

	// FindKeys returns a page of keys, newest created first (ties by ID,
	// descending), and the cursor of the next page ("" on the last page).
	// Returns EINVALID for a malformed cursor or limit.
	FindKeys(ctx context.Context, filter KeyFilter) ([]*APIKey, string, error)

	// RevokeKey marks the key revoked at the store's current time
	// (idempotent: a revoked key keeps its first revocation time) and
	// returns it. Returns ENOTFOUND if there is none.
	RevokeKey(ctx context.Context, id string) (*APIKey, error)
}

// Audit actions.
const (
	AuditKeyCreate    = "key.create"
	AuditKeyRevoke    = "key.revoke"
	AuditUserErase    = "user.erase"
	AuditThreadErase  = "thread.erase" // permanent deletion of a thread
	AuditCleanup      = "cleanup"
	AuditThreadImport = "thread.import"
	AuditUserExport   = "user.export"
	AuditJobRetry     = "job.retry" // a dead job queued again
)

// AuditEvent records an administrative action or an erasure: who did it,
// what, to whom, and when. The audit log outlives the data it speaks of: an
// erased user's erasure stays recorded.
type AuditEvent struct {
	ID       string          `json:"id"`
	At       time.Time       `json:"at"`
	Actor    string          `json:"actor"`               // Identity.Actor() of who did it
	Action   string          `json:"action"`              // one of the Audit* constants
	TenantID string          `json:"tenant_id,omitempty"` // the tenant acted on, if any
	UserID   string          `json:"user_id,omitempty"`   // the user acted on (as the caller named it)
	Target   string          `json:"target,omitempty"`    // e.g. a thread or key ID
	Detail   json.RawMessage `json:"detail"`              // what the action reported (counts…)
}

// AuditFilter selects audit events for FindAuditEvents, newest first.
type AuditFilter struct {
	Action   *string
	TenantID *string
	UserID   *string
	Since    *time.Time // only events at or after
	Limit    int
	Cursor   string
}

// Validate checks the filter's text (see validateTextFilters) and time.
func (f *AuditFilter) Validate() error {
	if err := validateTextFilters(textFilter{"action", f.Action}, textFilter{"tenant_id", f.TenantID}, textFilter{"user_id", f.UserID}); err != nil {
		return err
	}
	if f.Since != nil {
		return ValidateTime("since", *f.Since)
	}
	return nil
}

// AuditStore stores the audit log.
type AuditStore interface {
	// CreateAuditEvent appends an event, assigning ID when empty and At
	// when zero; Detail defaults to {}. Returns EINVALID for a malformed ID
	// or a Detail that is not a JSON object, ECONFLICT if the ID is taken.
	CreateAuditEvent(ctx context.Context, e *AuditEvent) error

	// FindAuditEvents returns a page of events, newest first (by At, then
	// ID, descending), and the cursor of the next page ("" on the last
	// page). Returns EINVALID for a malformed cursor or limit.
	FindAuditEvents(ctx context.Context, filter AuditFilter) ([]*AuditEvent, string, error)
}

// Identity is who is making a request: set by the HTTP layer's
// authentication, read by authorisation and the audit log.
type Identity struct {
	Scope Scope
	// Via is how the identity was established: "none" (auth disabled),
	// "apikey" or "header" (a trusted proxy's header).
	Via   string
	KeyID string // the API key's ID when Via is "apikey"
}

// Actor names the identity in the audit log: "key:ID", "header:USER",
// "local" when authentication is off, "cli" for the command line.
func (id *Identity) Actor() string {
	switch {
	case id == nil:
		return "unknown"
	case id.Via == "apikey":
		return "key:" + id.KeyID
	case id.Via == "header":
		return "header:" + id.Scope.StoredUserID(id.Scope.UserID)
	case id.Via == "cli":
		return "cli"
	}
	return "local"
}

// LocalUser is the user of a request that names none while
// authentication is off (seed 000's local user): the proxy's and the MCP
// server's, and the web UI's.
const LocalUser = "local-user"

// Caller describes an identity as the caller sees it (GET /v1/me).
type Caller struct {
	Kind     string `json:"kind"`             // ScopeAdmin, ScopeTenant or ScopeUser
	UserID   string `json:"user_id"`          // the identity's own user, as it names them ("" for an admin or a tenant)
	TenantID string `json:"tenant_id"`        // its tenant ("" for none)
	Via      string `json:"via"`              // how it was established: "none" (authentication off), "apikey", "header" (or "cli")
	KeyID    string `json:"key_id,omitempty"` // the API key's ID when Via is "apikey"
	// DefaultUser is the user of a request that names none, for an
	// identity without a user of its own: LocalUser while authentication
	// is off, "" otherwise (a user must be named).
	DefaultUser string `json:"default_user,omitempty"`
}

// CallerOf describes id; nil, the in-process owner of the store, is an
// admin without authentication.
func CallerOf(id *Identity) *Caller {
	if id == nil {
		return &Caller{Kind: ScopeAdmin, Via: "none", DefaultUser: LocalUser}
	}
	c := &Caller{Kind: id.Scope.Kind, UserID: id.Scope.UserID, TenantID: id.Scope.TenantID, Via: id.Via, KeyID: id.KeyID}
	if c.UserID == "" && c.Via == "none" {
		c.DefaultUser = LocalUser
	}
	return c
}

type identityKey struct{}

// NewContextWithIdentity returns ctx carrying id.
func NewContextWithIdentity(ctx context.Context, id *Identity) context.Context {
	return context.WithValue(ctx, identityKey{}, id)
}

// IdentityFromContext returns the identity of ctx, nil if none.
func IdentityFromContext(ctx context.Context) *Identity {
	id, _ := ctx.Value(identityKey{}).(*Identity)
	return id
}

// Prepare checks a key about to be stored and fills in what the store
// sets, for every backend: a valid ID, scope and name; CreatedAt now when
// zero; all times in the precision the stores keep.
func (k *APIKey) Prepare(now time.Time) error {
	if err := ValidateID("id", k.ID); err != nil {
		return err
	}
	if err := k.Scope.Validate(); err != nil {
		return err
	}
	if err := ValidateText("name", k.Name); err != nil {
		return err
	}
	if k.CreatedAt.IsZero() {
		k.CreatedAt = now
	}
	k.CreatedAt = Timestamp(k.CreatedAt)
	k.ExpiresAt, k.RevokedAt = timestampPtr(k.ExpiresAt), timestampPtr(k.RevokedAt)
	return nil
}

// Prepare checks an event about to be stored and fills in what the store
// sets, for every backend: an ID when empty, At now when zero, Detail {}
// when empty; text fields must be valid UTF-8 without NUL.
func (e *AuditEvent) Prepare(now time.Time) error {
	if e.ID != "" {
		if err := ValidateID("id", e.ID); err != nil {
			return err
		}
	}
	for _, f := range []struct{ name, v string }{{"actor", e.Actor}, {"action", e.Action}, {"tenant_id", e.TenantID}, {"user_id", e.UserID}, {"target", e.Target}} {
		if err := ValidateText(f.name, f.v); err != nil {
			return err
		}
	}
	detail, err := NormalizeMetadata("detail", e.Detail)
	if err != nil {
		return err
	}
	if e.ID == "" {
		e.ID = NewID()
	}
	if e.At.IsZero() {
		e.At = now
	}
	e.At, e.Detail = Timestamp(e.At), detail
	return nil
}

// timestampPtr returns *t as Timestamp does, nil for nil.
func timestampPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := Timestamp(*t)
	return &u
}
