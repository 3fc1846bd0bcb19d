package proxy_test

import (
	"context"
	"encoding/json"
	"flag"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/app"
	"github.com/agentmem/agentmem/httpapi"
	"github.com/agentmem/agentmem/internal/goldenfile"
	"github.com/agentmem/agentmem/llm/llmtest"
	"github.com/agentmem/agentmem/metrics"
	"github.com/agentmem/agentmem/proxy"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/prometheus/client_golang/prometheus"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/")

var ctx = context.Background()

// env is agentmem in process (app.Open: the store, the workers) serving
// the REST API with the proxy in front of a fake upstream.
type env struct {
	fake *llmtest.Server
	mem  *app.App
	srv  *httptest.Server
	reg  *prometheus.Registry
}

// envOptions change newEnv's setup.
type envOptions struct {
	db      string // "" is a fresh SQLite file
	auth    httpapi.Auth
	proxy   proxy.Options
	noUp    bool // no upstream configured
	wrapped func(agentmem.Store) agentmem.Store
	log     *slog.Logger // the proxy's (nil discards)
}

func newEnv(t testing.TB, opts ...func(*envOptions)) *env {
	t.Helper()
	var o envOptions
	for _, f := range opts {
		f(&o)
	}
	e := &env{fake: llmtest.NewServer(t), reg: prometheus.NewRegistry()}
	db := o.db
	if db == "" {
		db = "sqlite:" + filepath.Join(t.TempDir(), "agentmem.db")
	}
	mem, err := app.Open(ctx, app.Config{DB: db, WrapStore: o.wrapped})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mem.Close() })
	e.mem = mem
	popt := o.proxy
	popt.Metrics = metrics.NewProxy(e.reg)
	if !o.noUp {
		popt.Upstream = &proxy.Upstream{BaseURL: e.fake.BaseURL(), APIKey: "upstream-key"}
	}
	o.auth.Keys = mem.Store()
	h := httpapi.NewHandler(nil, mem.Service, httpapi.Options{Auth: o.auth, Middleware: metrics.HTTP(e.reg, httpapi.Served), Metrics: metrics.Handler(e.reg), Proxy: proxy.NewHandler(o.log, mem.Service, popt)})
	e.srv = httptest.NewServer(h)
	t.Cleanup(e.srv.Close)
	return e
}

// client is the official OpenAI SDK pointed at the proxy, as an
// application would be after changing its base URL.
func (e *env) client(opts ...option.RequestOption) openai.Client {
	base := []option.RequestOption{option.WithBaseURL(e.srv.URL + "/openai/v1"), option.WithAPIKey("app-key"), option.WithMaxRetries(0)}
	return openai.NewClient(append(base, opts...)...)
}

// thread returns a thread's messages as "role: content" lines, with tool
// calls as "→name(args)" and tool answers as "[id] content".
func (e *env) thread(t testing.TB, userID, threadID string) []string {
	t.Helper()
	msgs, _, err := e.mem.FindMessages(ctx, userID, threadID, agentmem.MessageFilter{Limit: agentmem.MaxPageSize})
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, m := range msgs {
		line := m.Role + ": " + m.Content
		for _, c := range m.ToolCalls {
			line += " →" + c.Function.Name + "(" + c.Function.Arguments + ")"
		}
		if m.ToolCallID != "" {
			line = m.Role + ": [" + m.ToolCallID + "] " + m.Content
		}
		lines = append(lines, line)
	}
	return lines
}

// lastMessage returns the newest message of a thread.
func (e *env) lastMessage(t testing.TB, userID, threadID string) *agentmem.Message {
	t.Helper()
	msgs, _, err := e.mem.FindMessages(ctx, userID, threadID, agentmem.MessageFilter{Desc: true, Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) == 0 {
		t.Fatalf("thread %s is empty", threadID)
	}
	return msgs[0]
}

// partialAnswer waits for the answer stored in a thread after its client
// went away mid-stream, and checks that it holds the first words, not the
// last, and is marked incomplete.
func (e *env) partialAnswer(t testing.TB, thread, first, last string) {
	t.Helper()
	var m *agentmem.Message
	eventually(t, "the partial answer", func() bool {
		m = e.lastMessage(t, proxy.DefaultLocalUser, thread)
		return m.Role == agentmem.RoleAssistant
	})
	if !strings.HasPrefix(m.Content, first) || strings.Contains(m.Content, last) || !strings.Contains(string(m.Metadata), `"incomplete":true`) {
		t.Errorf("stored %q with %s", m.Content, m.Metadata)
	}
}

// eventually retries check until it passes or 10 s pass.
func eventually(t testing.TB, what string, check func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !check() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// upstreamBodies returns the bodies of the upstream's requests to path.
func (e *env) upstreamBodies(path string) [][]byte {
	var out [][]byte
	for _, r := range e.fake.Requests() {
		if r.Path == path {
			out = append(out, r.Body)
		}
	}
	return out
}

// golden compares a request body the upstream received, indented, with
// testdata/name.json (rewritten with -update).
func golden(t *testing.T, name string, body []byte) {
	t.Helper()
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("upstream body is not JSON: %v\n%s", err, body)
	}
	got, _ := json.MarshalIndent(v, "", "  ")
	goldenfile.Check(t, filepath.Join("testdata", name+".json"), append(got, '\n'), *update)
}

// header returns a request option setting an agentmem header.
func header(k, v string) option.RequestOption { return option.WithHeader(k, v) }

// contains reports whether any of msgs holds s.
func contains(lines []string, s string) bool {
	for _, l := range lines {
		if strings.Contains(l, s) {
			return true
		}
	}
	return false
}

var _ = http.StatusOK
