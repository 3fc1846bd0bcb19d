package agentmem_test

import (
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
)

func TestParseScope(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		for _, tt := range []struct {
			in   string
			want agentmem.Scope
		}{
			{"admin", agentmem.Scope{Kind: agentmem.ScopeAdmin}},
			{"tenant:acme", agentmem.Scope{Kind: agentmem.ScopeTenant, TenantID: "acme"}},
			{"user:bob", agentmem.Scope{Kind: agentmem.ScopeUser, UserID: "bob"}},
			{"tenant:acme/user:bob", agentmem.Scope{Kind: agentmem.ScopeUser, TenantID: "acme", UserID: "bob"}},
		} {
			got, err := agentmem.ParseScope(tt.in)
			if err != nil {
				t.Fatalf("ParseScope(%q): %v", tt.in, err)
			}
			if got != tt.want {
				t.Fatalf("ParseScope(%q)=%+v, want %+v", tt.in, got, tt.want)
			}
			if s := got.String(); s != tt.in {
				t.Fatalf("ParseScope(%q).String()=%q, want the input back", tt.in, s)
			}
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		for _, in := range []string{
			"", "Admin", "admin:x", "root", "tenant:", "user:", "tenant:acme/", "tenant:acme/bob",
			"tenant:acme/user:", "user:a/b", "tenant:acme/user:b/c", "user:has space",
			"tenant:acme/tenant:globex", "tenant:/user:bob",
		} {
			if _, err := agentmem.ParseScope(in); agentmem.ErrorCode(err) != agentmem.EINVALID {
				t.Fatalf("ParseScope(%q): %v, want invalid", in, err)
			}
		}
	})
}

func TestScope_Validate(t *testing.T) {
	for _, sc := range []agentmem.Scope{
		{Kind: agentmem.ScopeAdmin},
		{Kind: agentmem.ScopeTenant, TenantID: "acme"},
		{Kind: agentmem.ScopeUser, UserID: "bob"},
		{Kind: agentmem.ScopeUser, TenantID: "acme", UserID: "bob"},
	} {
		if err := sc.Validate(); err != nil {
			t.Fatalf("%+v: %v", sc, err)
		}
	}
	for _, tt := range []struct {
		sc   agentmem.Scope
		want string // in the message
	}{
		{agentmem.Scope{}, "kind"},
		{agentmem.Scope{Kind: "root"}, "kind"},
		{agentmem.Scope{Kind: agentmem.ScopeAdmin, TenantID: "acme"}, "admin"},
		{agentmem.Scope{Kind: agentmem.ScopeAdmin, UserID: "bob"}, "admin"},
		{agentmem.Scope{Kind: agentmem.ScopeTenant}, "tenant id"},
		{agentmem.Scope{Kind: agentmem.ScopeTenant, TenantID: "a/b"}, "tenant id"},
		{agentmem.Scope{Kind: agentmem.ScopeTenant, TenantID: "acme", UserID: "bob"}, "tenant:ID/user:ID"},
		{agentmem.Scope{Kind: agentmem.ScopeUser}, "user id"},
		{agentmem.Scope{Kind: agentmem.ScopeUser, UserID: "b\x00b"}, "user id"},
		{agentmem.Scope{Kind: agentmem.ScopeUser, TenantID: "a b", UserID: "bob"}, "tenant id"},
	} {
		err := tt.sc.Validate()
		if agentmem.ErrorCode(err) != agentmem.EINVALID {
			t.Fatalf("%+v: %v, want invalid", tt.sc, err)
		}
		if msg := agentmem.ErrorMessage(err); !strings.Contains(msg, tt.want) {
			t.Fatalf("%+v: message %q does not name %q", tt.sc, msg, tt.want)
		}
	}
}

func TestScope_StoredUserID(t *testing.T) {
	for _, tt := range []struct {
		sc   agentmem.Scope
		want string
	}{
		{agentmem.Scope{Kind: agentmem.ScopeAdmin}, "bob"},
		{agentmem.Scope{Kind: agentmem.ScopeUser, UserID: "bob"}, "bob"},
		{agentmem.Scope{Kind: agentmem.ScopeTenant, TenantID: "acme"}, "acme/bob"},
		{agentmem.Scope{Kind: agentmem.ScopeUser, TenantID: "acme", UserID: "bob"}, "acme/bob"},
	} {
		if got := tt.sc.StoredUserID("bob"); got != tt.want {
			t.Fatalf("%+v: StoredUserID(bob)=%q, want %q", tt.sc, got, tt.want)
		}
	}
}

func TestAPIKey(t *testing.T) {
	now := time.Date(2025, 6, 1, 12, 0, 0, 999, time.UTC)
	sc := agentmem.Scope{Kind: agentmem.ScopeTenant, TenantID: "acme"}
	token, k, err := agentmem.NewAPIKey(sc, "ci", now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(token, agentmem.APIKeyPrefix+k.ID+"_") || k.Scope != sc || k.Name != "ci" ||
		!k.CreatedAt.Equal(agentmem.Timestamp(now)) || k.ExpiresAt == nil || !k.ExpiresAt.Equal(agentmem.Timestamp(now.Add(time.Hour))) {
		t.Fatalf("NewAPIKey = %q, %+v", token, k)
	}
	if strings.Contains(k.Hash, token[len(agentmem.APIKeyPrefix+k.ID+"_"):]) {
		t.Fatal("the hash contains the secret")
	}
	id, secret, err := agentmem.ParseAPIKey(token)
	if err != nil || id != k.ID {
		t.Fatalf("ParseAPIKey = %q, %v; want ID %q", id, err, k.ID)
	}

	t.Run("Verify", func(t *testing.T) {
		if err := k.Verify(secret, now.Add(time.Minute)); err != nil {
			t.Fatalf("right secret: %v", err)
		}
		other, _, _ := agentmem.NewAPIKey(sc, "", now, 0)
		_, otherSecret, _ := agentmem.ParseAPIKey(other)
		revoked := *k
		revoked.RevokedAt = &now
		for _, tt := range []struct {
			name   string
			k      *agentmem.APIKey
			secret string
			at     time.Time
		}{
			{"WrongSecret", k, otherSecret, now},
			{"EmptySecret", k, "", now},
			{"Expired", k, secret, now.Add(time.Hour)},
			{"Revoked", &revoked, secret, now},
		} {
			err := tt.k.Verify(tt.secret, tt.at)
			if agentmem.ErrorCode(err) != agentmem.EUNAUTHORIZED {
				t.Fatalf("%s: %v, want unauthorized", tt.name, err)
			}
			// The same message for every failure.
			if msg := agentmem.ErrorMessage(err); msg != "The API key is unknown, revoked or expired." {
				t.Fatalf("%s: message %q", tt.name, msg)
			}
		}
	})
	t.Run("NoTTL", func(t *testing.T) {
		_, k, err := agentmem.NewAPIKey(agentmem.Scope{Kind: agentmem.ScopeAdmin}, "", now, 0)
		if err != nil || k.ExpiresAt != nil {
			t.Fatalf("NewAPIKey without ttl = %+v, %v; want no expiry", k, err)
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		if _, _, err := agentmem.NewAPIKey(agentmem.Scope{Kind: "root"}, "", now, 0); agentmem.ErrorCode(err) != agentmem.EINVALID {
			t.Fatalf("bad scope: %v, want invalid", err)
		}
		if _, _, err := agentmem.NewAPIKey(sc, "bad \xff", now, 0); agentmem.ErrorCode(err) != agentmem.EINVALID {
			t.Fatalf("bad name: %v, want invalid", err)
		}
	})
}

func TestParseAPIKey_Malformed(t *testing.T) {
	id, secret := "0123456789abcdef", strings.Repeat("A", 43)
	if _, _, err := agentmem.ParseAPIKey("am_" + id + "_" + secret); err != nil {
		t.Fatalf("well-formed token: %v", err)
	}
	for _, tt := range []struct{ name, token string }{
		{"Empty", ""},
		{"PrefixOnly", "am_"},
		{"WrongPrefix", "sk_" + id + "_" + secret},
		{"NoPrefix", id + "_" + secret},
		{"NoSeparator", "am_" + id + secret},
		{"ShortID", "am_" + id[1:] + "_" + secret},
		{"LongID", "am_" + id + "0_" + secret},
		{"ShortSecret", "am_" + id + "_" + secret[1:]},
		{"LongSecret", "am_" + id + "_" + secret + "A"},
		{"BadCharInSecret", "am_" + id + "_" + secret[1:] + "="},
		{"BadCharInID", "am_" + id[1:] + "." + "_" + secret},
		{"Space", "am_" + id + "_" + secret[1:] + " "},
		{"Bearer", "Bearer am_" + id + "_" + secret},
	} {
		_, _, err := agentmem.ParseAPIKey(tt.token)
		if agentmem.ErrorCode(err) != agentmem.EUNAUTHORIZED {
			t.Fatalf("%s: ParseAPIKey(%q): %v, want unauthorized", tt.name, tt.token, err)
		}
		if msg := agentmem.ErrorMessage(err); strings.Contains(msg, secret[:10]) {
			t.Fatalf("%s: message %q echoes the token", tt.name, msg)
		}
	}
}
