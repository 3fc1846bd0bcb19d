package httpapi_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/core"
	"github.com/agentmem/agentmem/httpapi"
	"github.com/agentmem/agentmem/metrics"
	"github.com/prometheus/client_golang/prometheus"
)

// MustServe serves the real handler over store, logging into tb. Every
// answer is checked against the OpenAPI document (see Validating).
func MustServe(tb testing.TB, store agentmem.Store, opt httpapi.Options) *httptest.Server {
	tb.Helper()
	return MustServeCore(tb, store, core.Options{}, opt)
}

// MustServeCore serves the real handler over a service of store with
// copt, logging into tb.
func MustServeCore(tb testing.TB, store agentmem.Store, copt core.Options, opt httpapi.Options) *httptest.Server {
	tb.Helper()
	copt.Log = NewLogger(tb)
	opt.Auth.Keys = store
	srv := httptest.NewServer(Validating(tb, httpapi.NewHandler(copt.Log, core.New(store, copt), opt)))
	tb.Cleanup(srv.Close) // registered after the store's Close, so it runs before it
	return srv
}

// MustServeMetered is MustServeCore with the metrics of serve recorded
// into reg: the service's stats, the requests counted and timed, and
// /metrics served.
func MustServeMetered(tb testing.TB, store agentmem.Store, copt core.Options, opt httpapi.Options, reg *prometheus.Registry) *httptest.Server {
	tb.Helper()
	copt.Log = NewLogger(tb)
	svc := core.New(store, copt)
	metrics.RegisterStats(reg, svc, copt.Log)
	opt.Middleware, opt.Metrics = metrics.HTTP(reg, httpapi.Served), metrics.Handler(reg)
	opt.Auth.Keys = store
	srv := httptest.NewServer(Validating(tb, httpapi.NewHandler(copt.Log, svc, opt)))
	tb.Cleanup(srv.Close)
	return srv
}

// NewLogger logs at Debug into tb, where it shows for failing tests.
func NewLogger(tb testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(tbWriter{tb}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type tbWriter struct{ tb testing.TB }

func (w tbWriter) Write(b []byte) (int, error) {
	w.tb.Log(strings.TrimSuffix(string(b), "\n"))
	return len(b), nil
}

// Do sends a request with a body (none when empty; JSON unless header
// sets Content-Type, an empty value sending none) and returns the
// response with its body read. A Host in header is sent as the request's
// Host.
func Do(tb testing.TB, method, url string, header http.Header, body string) (*http.Response, []byte) {
	tb.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		tb.Fatalf("new request: %v", err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if req.Header.Get("Content-Type") == "" {
		req.Header.Del("Content-Type") // an empty value in header asks for none
	}
	if host := req.Header.Get("Host"); host != "" {
		req.Host = host // the client sends req.Host, not a Host header
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatalf("%s %s: read body: %v", method, url, err)
	}
	return resp, b
}

// MustCreateThread stores a thread with messages directly in the store.
func MustCreateThread(tb testing.TB, s agentmem.Store, t *agentmem.Thread, msgs ...*agentmem.Message) *agentmem.Thread {
	tb.Helper()
	ctx := context.Background()
	if err := s.CreateThread(ctx, t); err != nil {
		tb.Fatalf("create thread: %v", err)
	}
	if len(msgs) > 0 {
		if _, err := s.AppendMessages(ctx, t.UserID, t.ID, msgs, agentmem.AppendOptions{}); err != nil {
			tb.Fatalf("append messages: %v", err)
		}
	}
	t, err := s.FindThreadByID(ctx, t.UserID, t.ID)
	if err != nil {
		tb.Fatalf("find thread: %v", err)
	}
	return t
}
