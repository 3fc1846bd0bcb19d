package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/httpapi"
	"github.com/agentmem/agentmem/internal/testutil"
)

func TestHandler_RateLimit(t *testing.T) {
	store := testutil.MustOpenSQLite(t)
	alice, _ := mustKey(t, store, "user:alice", time.Now(), 0)
	bob, _ := mustKey(t, store, "user:bob", time.Now(), 0)
	srv := MustServe(t, store, httpapi.Options{Auth: httpapi.Auth{Mode: httpapi.AuthAPIKey, Rate: 0.5, Burst: 2}})

	for i := range 2 {
		if resp, body := Do(t, "GET", srv.URL+"/v1/users/alice/threads", bearerHeader(alice), ""); resp.StatusCode != 200 {
			t.Fatalf("request %d within the burst: %d %s", i, resp.StatusCode, body)
		}
	}
	resp, body := Do(t, "GET", srv.URL+"/v1/users/alice/threads", bearerHeader(alice), "")
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("request over the burst: %d %s, want 429", resp.StatusCode, body)
	}
	if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err != nil || s < 1 || s > 2 {
		t.Fatalf("Retry-After=%q, want 1 or 2 seconds", resp.Header.Get("Retry-After"))
	}
	var e struct {
		Error struct{ Code, Message string }
	}
	if json.Unmarshal(body, &e) != nil || e.Error.Code != agentmem.ERATELIMIT {
		t.Fatalf("body %s, want a rate_limited error", body)
	}
	// Another key has a bucket of its own.
	if resp, body := Do(t, "GET", srv.URL+"/v1/users/bob/threads", bearerHeader(bob), ""); resp.StatusCode != 200 {
		t.Fatalf("bob limited by alice's requests: %d %s", resp.StatusCode, body)
	}
	// Health checks are not rate limited for anonymous callers.
	for range 5 {
		if resp, _ := Do(t, "GET", srv.URL+"/healthz", nil, ""); resp.StatusCode != 200 {
			t.Fatalf("healthz: %d", resp.StatusCode)
		}
	}
}

func TestHandler_Audit(t *testing.T) {
	store := testutil.MustOpenSQLite(t)
	admin, adminID := mustKey(t, store, "admin", time.Now(), 0)
	acme, acmeID := mustKey(t, store, "tenant:acme", time.Now(), 0)
	MustCreateThread(t, store, &agentmem.Thread{UserID: "alice", ID: "t"})
	MustCreateThread(t, store, &agentmem.Thread{UserID: "acme/dave", ID: "t"})
	srv := MustServe(t, store, httpapi.Options{Auth: httpapi.Auth{Mode: httpapi.AuthAPIKey}})

	if resp, body := Do(t, "DELETE", srv.URL+"/v1/users/alice", bearerHeader(admin), ""); resp.StatusCode != 200 {
		t.Fatalf("erase alice: %d %s", resp.StatusCode, body)
	}
	if resp, body := Do(t, "DELETE", srv.URL+"/v1/users/dave/threads/t?permanent=true", bearerHeader(acme), ""); resp.StatusCode != 204 {
		t.Fatalf("erase acme's thread: %d %s", resp.StatusCode, body)
	}
	if resp, body := Do(t, "GET", srv.URL+"/v1/audit", bearerHeader(acme), ""); resp.StatusCode != 403 {
		t.Fatalf("tenant reads the audit log: %d %s, want 403", resp.StatusCode, body)
	}
	resp, body := Do(t, "GET", srv.URL+"/v1/audit?limit=10", bearerHeader(admin), "")
	if resp.StatusCode != 200 {
		t.Fatalf("audit: %d %s", resp.StatusCode, body)
	}
	var page struct{ Data []agentmem.AuditEvent }
	if err := json.Unmarshal(body, &page); err != nil {
		t.Fatal(err)
	}
	if len(page.Data) != 2 {
		t.Fatalf("audit log has %d events, want 2: %s", len(page.Data), body)
	}
	thread, user := page.Data[0], page.Data[1] // newest first
	if user.Action != agentmem.AuditUserErase || user.Actor != "key:"+adminID || user.UserID != "alice" || user.TenantID != "" {
		t.Fatalf("erasure event %+v", user)
	}
	var counts agentmem.Counts
	if err := json.Unmarshal(user.Detail, &counts); err != nil || counts.Threads != 1 {
		t.Fatalf("erasure detail %s, want the counts (1 thread)", user.Detail)
	}
	if thread.Action != agentmem.AuditThreadErase || thread.Actor != "key:"+acmeID || thread.UserID != "dave" || thread.TenantID != "acme" || thread.Target != "t" {
		t.Fatalf("thread erasure event %+v", thread)
	}
	resp, body = Do(t, "GET", srv.URL+"/v1/audit?action=user.erase", bearerHeader(admin), "")
	if err := json.Unmarshal(body, &page); err != nil || resp.StatusCode != 200 || len(page.Data) != 1 {
		t.Fatalf("filtered audit: %d %s", resp.StatusCode, body)
	}
}

func TestHandler_Keys(t *testing.T) {
	store := testutil.MustOpenSQLite(t)
	admin, _ := mustKey(t, store, "admin", time.Now(), 0)
	srv := MustServe(t, store, httpapi.Options{Auth: httpapi.Auth{Mode: httpapi.AuthAPIKey}})

	resp, body := Do(t, "POST", srv.URL+"/v1/keys", bearerHeader(admin), `{"scope":"user:alice","name":"alice's laptop","expires_in":"90d"}`)
	if resp.StatusCode != 201 {
		t.Fatalf("create key: %d %s", resp.StatusCode, body)
	}
	var created struct {
		Key   agentmem.APIKey
		Token string
	}
	if err := json.Unmarshal(body, &created); err != nil || created.Token == "" || created.Key.ExpiresAt == nil {
		t.Fatalf("create key: %s", body)
	}
	if resp, body := Do(t, "GET", srv.URL+"/v1/users/alice/threads", bearerHeader(created.Token), ""); resp.StatusCode != 200 {
		t.Fatalf("new key: %d %s", resp.StatusCode, body)
	}
	if _, body := Do(t, "GET", srv.URL+"/v1/keys", bearerHeader(admin), ""); containsToken(body, created.Token) || !strings.Contains(string(body), created.Key.ID) {
		t.Fatalf("key list shows a secret: %s", body)
	}
	if resp, body := Do(t, "DELETE", srv.URL+"/v1/keys/"+created.Key.ID, bearerHeader(admin), ""); resp.StatusCode != 200 {
		t.Fatalf("revoke: %d %s", resp.StatusCode, body)
	}
	if resp, body := Do(t, "GET", srv.URL+"/v1/users/alice/threads", bearerHeader(created.Token), ""); resp.StatusCode != 401 {
		t.Fatalf("revoked key: %d %s, want 401", resp.StatusCode, body)
	}
	for _, bad := range []string{`{"scope":"root"}`, `{"scope":"user:alice","expires_in":"soon"}`, `{"scope":"user:a b"}`} {
		if resp, body := Do(t, "POST", srv.URL+"/v1/keys", bearerHeader(admin), bad); resp.StatusCode != 400 {
			t.Fatalf("create key %s: %d %s, want 400", bad, resp.StatusCode, body)
		}
	}
	if resp, body := Do(t, "DELETE", srv.URL+"/v1/keys/nope", bearerHeader(admin), ""); resp.StatusCode != 404 {
		t.Fatalf("revoke unknown key: %d %s, want 404", resp.StatusCode, body)
	}
}

func containsToken(body []byte, token string) bool {
	_, secret, _ := agentmem.ParseAPIKey(token)
	return secret != "" && strings.Contains(string(body), secret)
}

// TestHandler_AdminAddressesTenantUser: an admin reaches a tenant's user
// as tenant:T/user:U (the slash escaped in the path), and answers name
// the user that way; the tenant's own key sees the plain name.
func TestHandler_AdminAddressesTenantUser(t *testing.T) {
	store := testutil.MustOpenSQLite(t)
	admin, _ := mustKey(t, store, "admin", time.Now(), 0)
	acme, _ := mustKey(t, store, "tenant:acme", time.Now(), 0)
	MustCreateThread(t, store, &agentmem.Thread{UserID: "acme/alice", ID: "t"})
	srv := MustServe(t, store, httpapi.Options{Auth: httpapi.Auth{Mode: httpapi.AuthAPIKey}})

	resp, body := Do(t, "GET", srv.URL+"/v1/users/tenant:acme%2Fuser:alice/threads/t", bearerHeader(admin), "")
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"user_id":"tenant:acme/user:alice"`) {
		t.Fatalf("admin: %d %s", resp.StatusCode, body)
	}
	resp, body = Do(t, "GET", srv.URL+"/v1/users/alice/threads/t", bearerHeader(acme), "")
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"user_id":"alice"`) {
		t.Fatalf("tenant: %d %s", resp.StatusCode, body)
	}
	// The admin's plain alice is another user.
	if resp, body := Do(t, "GET", srv.URL+"/v1/users/alice/threads/t", bearerHeader(admin), ""); resp.StatusCode != 404 {
		t.Fatalf("admin's plain alice: %d %s, want 404", resp.StatusCode, body)
	}
	// A tenant cannot use the admin's addressing to reach another tenant.
	globex, _ := mustKey(t, store, "tenant:globex", time.Now(), 0)
	if resp, body := Do(t, "GET", srv.URL+"/v1/users/tenant:acme%2Fuser:alice/threads/t", bearerHeader(globex), ""); resp.StatusCode != 400 && resp.StatusCode != 404 {
		t.Fatalf("globex addressing acme's alice: %d %s, want 400 or 404", resp.StatusCode, body)
	}
}

// TestHandler_KeyLifetime: a key's expires_in is a positive duration or
// "never"; 0 (which once made a key that never expired, silently) and
// negative lifetimes are 400, naming expires_in and "never", and create
// nothing.
func TestHandler_KeyLifetime(t *testing.T) {
	testutil.Backends(t, func(t *testing.T, s agentmem.Store) {
		admin, _ := mustKey(t, s, "admin", time.Now(), 0)
		srv := MustServe(t, s, httpapi.Options{Auth: httpapi.Auth{Mode: httpapi.AuthAPIKey}})
		for _, c := range []struct {
			expiresIn  string
			wantStatus int
			wantExpiry bool
		}{
			{"0d", 400, false},
			{"0", 400, false},
			{"0s", 400, false},
			{"-1d", 400, false},
			{"-12h", 400, false},
			{"never", 201, false},
			{"", 201, false},
			{"90d", 201, true},
			{"12h", 201, true},
		} {
			body := `{"scope":"user:alice","name":"k` + c.expiresIn + `","expires_in":"` + c.expiresIn + `"}`
			resp, b := Do(t, "POST", srv.URL+"/v1/keys", bearerHeader(admin), body)
			if resp.StatusCode != c.wantStatus {
				t.Errorf("expires_in %q: %d %s, want %d", c.expiresIn, resp.StatusCode, b, c.wantStatus)
				continue
			}
			if c.wantStatus != 201 {
				if !strings.Contains(string(b), "expires_in") || !strings.Contains(string(b), "never") {
					t.Errorf("expires_in %q: %s, want a message naming expires_in and never", c.expiresIn, b)
				}
				continue
			}
			k := decodeJSON[agentmem.NewKey](t, b)
			if got := k.Key.ExpiresAt != nil; got != c.wantExpiry {
				t.Errorf("expires_in %q: expires_at %v, want set=%v", c.expiresIn, k.Key.ExpiresAt, c.wantExpiry)
			}
		}
		keys, _, err := s.FindKeys(context.Background(), agentmem.KeyFilter{Limit: agentmem.MaxPageSize})
		if err != nil {
			t.Fatal(err)
		}
		if len(keys) != 1+4 { // the admin's and the four created
			t.Errorf("%d keys stored, want 5", len(keys))
		}
	})
}
