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

// TestKeys_Expires: --expires takes a positive lifetime or never; 0d (which
// once made a key that never expired, silently), 0 and negative lifetimes
// are refused, naming the flag and --expires never, and create no key.
func TestKeys_Expires(t *testing.T) {
	db := filepath.Join(t.TempDir(), "agentmem.db")
	for _, bad := range []string{"0d", "0", "0s", "-1d", "-12h"} {
		_, err := runCmd(t, "keys", "create", "--db", db, "--scope", "user:alice", "--expires", bad)
		if err == nil || !strings.Contains(err.Error(), "--expires") || !strings.Contains(err.Error(), "never") {
			t.Errorf("keys create --expires %s: %v, want an error naming --expires and never", bad, err)
		}
	}
	if _, err := runCmd(t, "keys", "create", "--db", db, "--scope", "user:alice", "--expires", "never", "--name", "forever"); err != nil {
		t.Fatalf("keys create --expires never: %v", err)
	}
	if _, err := runCmd(t, "keys", "create", "--db", db, "--scope", "user:alice", "--expires", "30d", "--name", "month"); err != nil {
		t.Fatalf("keys create --expires 30d: %v", err)
	}
	list, err := runCmd(t, "keys", "list", "--db", db)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(list), "\n")
	if len(lines) != 3 { // the header, forever and month
		t.Fatalf("keys list has %d keys, want 2:\n%s", len(lines)-1, list)
	}
	for _, l := range lines[1:] {
		fields := strings.Fields(l) // ID SCOPE NAME CREATED EXPIRES REVOKED
		if forever := fields[2] == "forever"; forever != (fields[4] == "-") {
			t.Errorf("key %s expires %s", fields[2], fields[4])
		}
	}
}
