package main

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"
)

// TestKeys bootstraps a secured server as an operator would: create an
// admin key with the command line, serve with --auth apikey, call with the
// key, revoke it, and find the key's life in the audit log.
func TestKeys(t *testing.T) {
	db := filepath.Join(t.TempDir(), "agentmem.db")
	token, err := runCmd(t, "keys", "create", "--db", db, "--scope", "user:alice", "--expires", "90d", "--name", "laptop")
	if err != nil {
		t.Fatal(err)
	}
	token = strings.TrimSpace(token)
	admin, err := runCmd(t, "keys", "create", "--db", db, "--scope", "admin")
	if err != nil {
		t.Fatal(err)
	}
	admin = strings.TrimSpace(admin)
	list, err := runCmd(t, "keys", "list", "--db", db)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(list, "user:alice") || !strings.Contains(list, "laptop") || strings.Contains(list, token[len(token)-20:]) {
		t.Fatalf("keys list:\n%s", list)
	}

	srv := MustServe(t, db, "--auth", "apikey")
	get := func(key, path string) int {
		req, _ := http.NewRequest("GET", srv.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := get(token, "/v1/users/alice/threads"); got != 200 {
		t.Fatalf("alice's key on alice: %d, want 200", got)
	}
	if got := get(token, "/v1/users/bob/threads"); got != 404 {
		t.Fatalf("alice's key on bob: %d, want 404", got)
	}
	if got := get("", "/v1/users/alice/threads"); got != 401 {
		t.Fatalf("no key: %d, want 401", got)
	}

	id := strings.TrimPrefix(token, "am_")[:16]
	if out, err := runCmd(t, "keys", "revoke", "--db", db, id); err != nil || !strings.Contains(out, "revoked key "+id) {
		t.Fatalf("revoke: %q, %v", out, err)
	}
	if got := get(token, "/v1/users/alice/threads"); got != 401 {
		t.Fatalf("revoked key: %d, want 401", got)
	}
	if got := get(admin, "/v1/audit?action=key.revoke"); got != 200 {
		t.Fatalf("audit with the admin key: %d", got)
	}
	if _, err := runCmd(t, "keys", "create", "--db", db, "--scope", "root"); err == nil {
		t.Fatal("keys create --scope root succeeded")
	}
	if _, err := runCmd(t, "keys", "revoke", "--db", db, "0000000000000000"); err == nil {
		t.Fatal("revoking an unknown key succeeded")
	}
}

// TestServe_RefusesOpenAddressWithoutAuth: --auth none serves loopback
// only, unless --insecure says the operator means it.
func TestServe_RefusesOpenAddressWithoutAuth(t *testing.T) {
	db := filepath.Join(t.TempDir(), "agentmem.db")
	_, err := runCmd(t, "serve", "--db", db, "--addr", "0.0.0.0:0")
	if err == nil || !strings.Contains(err.Error(), "--auth none") {
		t.Fatalf("serve --addr 0.0.0.0:0: %v, want a refusal naming --auth none", err)
	}
	if _, err := runCmd(t, "serve", "--db", db, "--auth", "header"); err == nil || !strings.Contains(err.Error(), "--trusted-proxies") {
		t.Fatalf("serve --auth header without proxies: %v, want a refusal naming --trusted-proxies", err)
	}
	srv := MustServe(t, db, "--addr", "0.0.0.0:0", "--insecure")
	if !strings.HasPrefix(srv.URL, "http://") {
		t.Fatalf("serve --insecure: %s", srv.URL)
	}
}
