package faults_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem/internal/testutil"
	"github.com/agentmem/agentmem/llm/llmtest"
	"github.com/agentmem/agentmem/proxy"
)

// TestStartWhileDown_PostgreSQL: `agentmem serve` starts while
// PostgreSQL refuses connections, or accepts them and never answers (a
// TCP proxy between them; the machine's PostgreSQL is never stopped). It must listen
// all the same: /healthz 200, /readyz 503, the API 503 with Retry-After,
// and the proxy in passthrough mode forwards a turn without memory and
// says in its X-Agentmem-Memory-Unavailable header that the turn was not
// stored. Once connections go through, without a restart, serve connects
// and migrates in the background: /readyz answers 200, an append is
// stored and indexed (its jobs run), and the turn made during the
// outage is indeed not stored, as the client was told, until the
// client's next turn, which carries it in its history, stores it.
func TestStartWhileDown_PostgreSQL(t *testing.T) {
	Long(t)
	for _, tc := range []struct {
		name string
		mode int
	}{{"Refused", proxyRefuse}, {"Blackholed", proxyBlackhole}} {
		t.Run(tc.name, func(t *testing.T) {
			testStartWhileDown(t, tc.name, tc.mode)
		})
	}
}

func testStartWhileDown(t *testing.T, name string, mode int) {
	dsn := testutil.MustCreateSchema(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	pgProxy := newTCPProxy(t, u.Host)
	pgProxy.Cut(mode)
	fake := llmtest.NewServer(t)

	Binary(t) // built before the clock starts
	begin := time.Now()
	srv := StartServe(t, proxiedDSN(t, dsn, pgProxy.addr), "--proxy-upstream", fake.BaseURL(), "--proxy-degrade", "passthrough")
	listenMs := time.Since(begin).Milliseconds()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := NewClient(srv.URL)

	expect := func(name, method, path string, body any, want int, headers ...string) (http.Header, []byte) {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, method, srv.URL+path, jsonBody(t, body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		for i := 0; i+1 < len(headers); i += 2 {
			req.Header.Set(headers[i], headers[i+1])
		}
		resp, err := c.HTTP.Do(req)
		if err != nil {
			t.Fatalf("%s while PostgreSQL is down: %v", name, err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("%s while PostgreSQL is down: %d, want %d", name, resp.StatusCode, want)
		}
		if want == http.StatusServiceUnavailable && resp.Header.Get("Retry-After") == "" {
			t.Errorf("%s while PostgreSQL is down: 503 without Retry-After", name)
		}
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatalf("%s while PostgreSQL is down: %v", name, err)
		}
		return resp.Header, b
	}
	expect("/healthz", http.MethodGet, "/healthz", nil, http.StatusOK)
	expect("/readyz", http.MethodGet, "/readyz", nil, http.StatusServiceUnavailable)
	expect("append", http.MethodPost, "/v1/users/alice/threads/t/messages",
		map[string]any{"messages": []map[string]string{{"role": "user", "content": "I pack the tent."}}}, http.StatusServiceUnavailable)
	expect("search", http.MethodPost, "/v1/users/alice/search", map[string]any{"query": "tent"}, http.StatusServiceUnavailable)
	question := map[string]string{"role": "user", "content": "What did I say about the outage canoe?"}
	h, b := expect("proxied turn", http.MethodPost, "/openai/v1/chat/completions",
		map[string]any{"model": "gpt-4o-mini", "messages": []map[string]string{question}},
		http.StatusOK, "X-Agentmem-User", "bob", "X-Agentmem-Thread", "during")
	told := h.Get(proxy.HeaderUnavailable)
	if !strings.Contains(told, "not stored") {
		t.Errorf("proxied turn during the outage: %s %q, want it to say the turn was not stored", proxy.HeaderUnavailable, told)
	}
	answer := decodeAs[struct {
		Choices []struct{ Message map[string]string }
	}](t, b)
	if len(answer.Choices) != 1 || answer.Choices[0].Message["content"] == "" {
		t.Fatalf("proxied turn during the outage: %s, want the model's answer", b)
	}

	// The database is reachable again: serve becomes ready by itself.
	pgProxy.Restore()
	restored := time.Now()
	if err := srv.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	readyMs := time.Since(restored).Milliseconds()
	status, body, err := c.Do(ctx, http.MethodPost, "/v1/users/alice/threads", map[string]string{"id": "t"}, nil)
	if err != nil || status != http.StatusCreated {
		t.Fatalf("create thread once PostgreSQL is back: %d %s %v", status, body, err)
	}
	status, body, err = c.Do(ctx, http.MethodPost, "/v1/users/alice/threads/t/messages",
		map[string]any{"messages": []map[string]string{{"role": "user", "content": "I pack the canoe paddles."}}}, nil)
	if err != nil || status != http.StatusCreated {
		t.Fatalf("append once PostgreSQL is back: %d %s %v", status, body, err)
	}
	if err := WaitJobs(ctx, c); err != nil {
		t.Fatal(err)
	}
	var res struct{ Results []struct{ Text string } }
	status, body, err = c.Do(ctx, http.MethodPost, "/v1/users/alice/search", map[string]any{"query": "paddles", "scopes": []string{"messages"}}, &res)
	if err != nil || status != http.StatusOK || len(res.Results) == 0 {
		t.Fatalf("search once PostgreSQL is back: %d %s %v: want the appended message found", status, body, err)
	}
	// What the header said: the turn made during the outage is not stored.
	var threads struct{ Data []struct{ ID string } }
	status, body, err = c.Do(ctx, http.MethodGet, "/v1/users/bob/threads", nil, &threads)
	if err != nil || status != http.StatusOK {
		t.Fatalf("list bob's threads: %d %s %v", status, body, err)
	}
	if len(threads.Data) != 0 {
		t.Errorf("bob has threads %v after a turn the proxy said was not stored", threads.Data)
	}
	// The client's next turn carries the outage's in its history, which
	// the proxy stores as the thread does not hold it yet.
	next := []map[string]string{question, {"role": "assistant", "content": answer.Choices[0].Message["content"]},
		{"role": "user", "content": "And the tent?"}}
	status, body, err = c.Do(ctx, http.MethodPost, "/openai/v1/chat/completions", map[string]any{"model": "gpt-4o-mini", "messages": next}, nil,
		"X-Agentmem-User", "bob", "X-Agentmem-Thread", "during")
	if err != nil || status != http.StatusOK {
		t.Fatalf("proxied turn once PostgreSQL is back: %d %s %v", status, body, err)
	}
	var msgs struct {
		Data []struct{ Role, Content string }
	}
	status, body, err = c.Do(ctx, http.MethodGet, "/v1/users/bob/threads/during/messages", nil, &msgs)
	if err != nil || status != http.StatusOK {
		t.Fatalf("list the proxied thread: %d %s %v", status, body, err)
	}
	if len(msgs.Data) != 4 || msgs.Data[0].Content != question["content"] || msgs.Data[1].Content != next[1]["content"] {
		t.Errorf("the proxied thread holds %+v, want the outage's turn, then the next turn and its answer (4 messages)", msgs.Data)
	}
	t.Logf("faults: start while postgres down %s: listen_ms=%d readyz_down=503 api_down=503 retry_after=yes proxy_passthrough=200 proxy_header=%q ready_after_restore_ms=%d append_after=201 indexed=yes",
		name, listenMs, told, readyMs)
}

// jsonBody returns body as a JSON request body (none when nil).
func jsonBody(t *testing.T, body any) io.Reader {
	t.Helper()
	if body == nil {
		return nil
	}
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.NewReader(b)
}
