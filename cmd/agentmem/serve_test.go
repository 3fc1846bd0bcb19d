package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/client"
)

// server is agentmem serve running in-process, as a user would start it.
type server struct {
	URL    string
	cancel context.CancelFunc
	done   chan error
}

// MustServe runs `agentmem serve --addr 127.0.0.1:0 --db DB` in a
// goroutine, reads the address it prints, and waits for /healthz.
func MustServe(tb testing.TB, db string, extra ...string) *server {
	tb.Helper()
	return MustServeEnv(tb, db, nil, extra...)
}

// MustServeEnv is MustServe with environment variables.
func MustServeEnv(tb testing.TB, db string, env map[string]string, extra ...string) *server {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	s := &server{cancel: cancel, done: make(chan error, 1)}
	args := append([]string{"serve", "--addr", "127.0.0.1:0", "--db", db, "--log-level", "warn"}, extra...)
	go func() {
		err := run(ctx, args, func(k string) string { return env[k] }, strings.NewReader(""), pw, io.Discard)
		pw.CloseWithError(fmt.Errorf("serve returned: %v", err))
		s.done <- err
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		cancel()
		tb.Fatalf("serve printed no address: %v", err)
	}
	go io.Copy(io.Discard, pr)
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	if !ok {
		cancel()
		tb.Fatalf("serve printed %q, want listening on http://ADDR", line)
	}
	s.URL = addr
	for i := 0; ; i++ {
		resp, err := http.Get(s.URL + "/healthz")
		if err == nil && resp.StatusCode == http.StatusOK {
			resp.Body.Close()
			break
		}
		if i == 100 {
			cancel()
			tb.Fatalf("healthz never answered: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	tb.Cleanup(func() { s.Stop(tb) })
	return s
}

// Stop shuts the server down as SIGTERM does and waits for run to return.
func (s *server) Stop(tb testing.TB) {
	tb.Helper()
	if s.cancel == nil {
		return
	}
	s.cancel()
	s.cancel = nil
	select {
	case err := <-s.done:
		if err != nil {
			tb.Errorf("serve returned %v", err)
		}
	case <-time.After(30 * time.Second):
		tb.Errorf("serve did not stop")
	}
}

// TestServe drives a real `serve` on SQLite through the Go client as a user
// would: create, append (concurrently, and retried), read; then restarts
// the server on the same file and checks that everything survived.
func TestServe(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "agentmem.db")
	srv := MustServe(t, db)
	c := client.New(srv.URL, nil)

	th := &agentmem.Thread{ID: "trip", AgentID: "planner"}
	if err := c.CreateThread(ctx, "alice", th); err != nil {
		t.Fatal(err)
	}
	first, err := c.AppendMessages(ctx, "alice", th.ID, []*agentmem.Message{{Role: "user", Content: "Plan three days in Lisbon."}}, "turn-1")
	if err != nil {
		t.Fatal(err)
	}
	again, err := c.AppendMessages(ctx, "alice", th.ID, []*agentmem.Message{{Role: "user", Content: "Plan three days in Lisbon."}}, "turn-1")
	if err != nil {
		t.Fatal(err)
	} else if again[0].ID != first[0].ID || again[0].Seq != 1 {
		t.Fatalf("retry stored again: first %+v, retry %+v", first[0], again[0])
	}

	// 20 clients append 25 messages each, one at a time.
	const clients, each = 20, 25
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range each {
				msg := &agentmem.Message{Role: "assistant", Content: fmt.Sprintf("client %d message %d", i, j)}
				if _, err := c.AppendMessages(ctx, "alice", th.ID, []*agentmem.Message{msg}, fmt.Sprintf("c%d-%d", i, j)); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	const total = 1 + clients*each

	srv.Stop(t)
	srv = MustServe(t, db)
	c = client.New(srv.URL, nil)

	got, err := c.FindThreadByID(ctx, "alice", "trip")
	if err != nil {
		t.Fatal(err)
	}
	if got.MessageCount != total || got.Title != "Plan three days in Lisbon." {
		t.Fatalf("after restart: message_count=%d title=%q, want %d and the first message", got.MessageCount, got.Title, total)
	}
	var seqs []int64
	for cursor := ""; ; {
		page, next, err := c.FindMessages(ctx, "alice", "trip", agentmem.MessageFilter{Limit: 100, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range page {
			seqs = append(seqs, m.Seq)
		}
		if cursor = next; cursor == "" {
			break
		}
	}
	for i, seq := range seqs {
		if seq != int64(i+1) {
			t.Fatalf("seq[%d]=%d, want %d (seqs must run 1..n without gaps)", i, seq, i+1)
		}
	}
	if len(seqs) != total {
		t.Fatalf("%d messages after restart, want %d", len(seqs), total)
	}
	if _, err := c.FindThreadByID(ctx, "bob", "trip"); agentmem.ErrorCode(err) != agentmem.ENOTFOUND {
		t.Fatalf("bob reads alice's thread: err=%v, want not_found", err)
	}
}

// TestServe_GracefulShutdown stops the server while a request is still
// sending its body: the server must finish that request (the message is
// stored and acknowledged) before it exits, and refuse new connections.
func TestServe_GracefulShutdown(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "agentmem.db")
	srv := MustServe(t, db)
	c := client.New(srv.URL, nil)
	if err := c.CreateThread(ctx, "alice", &agentmem.Thread{ID: "t"}); err != nil {
		t.Fatal(err)
	}

	body, bodyW := io.Pipe()
	req, err := http.NewRequest(http.MethodPost, srv.URL+"/v1/users/alice/threads/t/messages", body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	type result struct {
		status int
		body   string
		err    error
	}
	done := make(chan result, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			done <- result{err: err}
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		done <- result{status: resp.StatusCode, body: string(b)}
	}()
	if _, err := io.WriteString(bodyW, `{"messages":[{"role":"user","content":`); err != nil {
		t.Fatal(err)
	}
	// A gap, not a wait on a result: the server has read the headers and
	// the start of the body by now. (Were it later, the connection would
	// still count: shutdown leaves a new connection 5 s to send its
	// request.)
	time.Sleep(100 * time.Millisecond)

	stopped := make(chan struct{})
	go func() { srv.Stop(t); close(stopped) }()
	// Shutdown has begun once the listener refuses new connections.
	addr := strings.TrimPrefix(srv.URL, "http://")
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			break
		}
		conn.Close()
		if time.Now().After(deadline) {
			t.Fatal("new connections still accepted 10 s after shutdown began")
		}
	}
	// A gap: serve, were it not waiting for the request, would have
	// returned by now.
	time.Sleep(100 * time.Millisecond)
	select {
	case <-stopped:
		t.Fatal("serve returned while a request was in flight")
	default:
	}
	if _, err := http.Get(srv.URL + "/healthz"); err == nil {
		t.Fatal("a new connection was accepted after shutdown began")
	}
	if _, err := io.WriteString(bodyW, `"sent during shutdown"}]}`); err != nil {
		t.Fatal(err)
	}
	bodyW.Close()
	res := <-done
	if res.err != nil || res.status != http.StatusCreated {
		t.Fatalf("in-flight append: status %d, body %s, err %v; want 201", res.status, res.body, res.err)
	}
	<-stopped

	srv = MustServe(t, db)
	msgs, _, err := client.New(srv.URL, nil).FindMessages(ctx, "alice", "t", agentmem.MessageFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 1 || msgs[0].Content != "sent during shutdown" {
		t.Fatalf("after restart: %+v, want the message sent during shutdown", msgs)
	}
}

// TestServe_CrossSite: a server on loopback without authentication refuses
// what a web page could send it (a text/plain body, another site's
// Origin, a rebound Host), and serves the hosts and origins its
// --allowed-hosts and AGENTMEM_ALLOWED_ORIGINS name; malformed lists are
// refused at start, naming their flag.
func TestServe_CrossSite(t *testing.T) {
	db := filepath.Join(t.TempDir(), "agentmem.db")
	srv := MustServeEnv(t, db, map[string]string{"AGENTMEM_ALLOWED_ORIGINS": "https://app.example, https://ui.example:8443"},
		"--allowed-hosts", "agentmem.internal")
	do := func(method, path, host, origin, contentType, body string) int {
		req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if host != "" {
			req.Host = host
		}
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	const mems = "/v1/users/alice/memories"
	for _, c := range []struct {
		name                                 string
		method, path, host, origin, ct, body string
		want                                 int
	}{
		{"TextPlain", "POST", mems, "", "", "text/plain", `{"text":"planted"}`, 415},
		{"JSON", "POST", mems, "", "", "application/json", `{"text":"mine"}`, 201},
		{"CrossSiteOrigin", "POST", mems, "", "https://evil.example", "application/json", `{"text":"planted"}`, 403},
		{"AllowedOrigin", "POST", mems, "", "https://app.example", "application/json", `{"text":"from the app"}`, 201},
		{"AllowedOriginWithPort", "GET", mems, "", "https://ui.example:8443", "", "", 200},
		{"RebindingHost", "GET", mems, "evil.example", "", "", "", 403},
		{"AllowedHost", "GET", mems, "agentmem.internal:8080", "", "", "", 200},
		{"HealthzAnyHost", "GET", "/healthz", "evil.example", "", "", "", 200},
	} {
		if got := do(c.method, c.path, c.host, c.origin, c.ct, c.body); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
	srv.Stop(t)

	for _, bad := range [][]string{
		{"--allowed-origins", "app.example"},
		{"--allowed-origins", "https://app.example/ui"},
		{"--allowed-hosts", "http://agentmem.internal"},
	} {
		if _, err := runCmd(t, append([]string{"serve", "--db", db, "--addr", "127.0.0.1:0"}, bad...)...); err == nil || !strings.Contains(err.Error(), bad[0]) {
			t.Errorf("serve %s %s: %v, want an error naming %s", bad[0], bad[1], err, bad[0])
		}
	}
}
