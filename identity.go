package agentmem

import "context"

// Identity is who is making a request: set by the HTTP layer's
// authentication, read by authorisation and the audit log.
type Identity struct {
	Scope Scope
	// Via is how the identity was established: "none" (auth disabled),
	// "apikey" or "header" (a trusted proxy's header).
	Via   string
	KeyID string // the API key's ID when Via is "apikey"
}

// How an identity was established (Identity.Via, Caller.Via).
const (
	ViaNone   = "none"   // authentication off: the local admin
	ViaAPIKey = "apikey" // an API key
	ViaHeader = "header" // a trusted proxy's header
	ViaCLI    = "cli"    // the command line
)

// Actor names the identity in the audit log: "key:ID", "header:USER",
// "local" when authentication is off, "cli" for the command line.
func (id *Identity) Actor() string {
	switch {
	case id == nil:
		return "unknown"
	case id.Via == ViaAPIKey:
		return "key:" + id.KeyID
	case id.Via == ViaHeader:
		return "header:" + id.Scope.StoredUserID(id.Scope.UserID)
	case id.Via == ViaCLI:
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
		return &Caller{Kind: ScopeAdmin, Via: ViaNone, DefaultUser: LocalUser}
	}
	c := &Caller{Kind: id.Scope.Kind, UserID: id.Scope.UserID, TenantID: id.Scope.TenantID, Via: id.Via, KeyID: id.KeyID}
	if c.UserID == "" && c.Via == ViaNone {
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
