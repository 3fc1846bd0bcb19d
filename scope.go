package agentmem

import "strings"

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
