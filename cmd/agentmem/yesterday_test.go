package main

import (
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestServe_Yesterday is issue 6's promise, through a real serve without a
// model: a user talks in a thread and leaves it (never ending it); the
// server is stopped and started again later; a new thread's first context
// opens with what was learned — the profile and the last thread's summary.
func TestServe_Yesterday(t *testing.T) {
	t.Parallel() // a server of its own; mostly waiting for its jobs
	db := "sqlite:" + filepath.Join(t.TempDir(), "agentmem.db")
	call := func(base, method, path, body string) []byte {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode >= 300 {
			t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, b)
		}
		return b
	}

	// Yesterday: a conversation, left open; the server stops an instant later.
	srv := MustServe(t, db, "--idle-timeout", "1h")
	call(srv.URL, "POST", "/v1/users/sam/threads", `{"id":"yesterday","agent_id":"coach"}`)
	call(srv.URL, "POST", "/v1/users/sam/threads/yesterday/messages", `{"messages":[
		{"role":"user","content":"My name is Sam and I live in Oslo."},
		{"role":"assistant","content":"Hello Sam!"},
		{"role":"user","content":"I am training for a marathon in October."},
		{"role":"assistant","content":"Great goal. Let us plan your long runs."}]}`)
	waitIdle(t, srv) // the index job extracts the memories
	srv.Stop(t)

	// Today: the server starts again with an idle timeout the thread has
	// passed; the sweep at start ends it, and its jobs learn from it. (A
	// gap, not a wait on a result: the thread is idle for over 1 s.)
	time.Sleep(1100 * time.Millisecond)
	srv = MustServe(t, db, "--idle-timeout", "1s")
	defer srv.Stop(t)
	// Wait for the reflection and the profile: background jobs.
	deadline := time.Now().Add(30 * time.Second)
	for _, path := range []string{"/v1/users/sam/threads/yesterday/reflection", "/v1/users/sam/profile"} {
		for {
			resp, err := http.Get(srv.URL + path)
			if err != nil {
				t.Fatal(err)
			}
			var got struct{ Status string }
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && json.Unmarshal(b, &got) == nil && got.Status != "pending" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	call(srv.URL, "POST", "/v1/users/sam/threads", `{"id":"today","agent_id":"coach"}`)
	b := call(srv.URL, "POST", "/v1/users/sam/threads/today/context", `{"input":"What should I run this week?","format":"text","budget_tokens":2000}`)
	var c struct{ Text string }
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<session_initialization>", "### Key Insights", "User's name is Sam.", "User lives in Oslo.",
		"### Recent Session Summaries\n- At ", "marathon"} {
		if !strings.Contains(c.Text, want) {
			t.Errorf("today's first context lacks %q:\n%s", want, c.Text)
		}
	}
}
