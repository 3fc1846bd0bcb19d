package agentmem

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"strings"
	"time"
)

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
