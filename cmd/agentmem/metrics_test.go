package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/agentmem/agentmem/llm/llmtest"
)

// getMetrics returns the text of srv's /metrics.
func getMetrics(t *testing.T, srv *server) string {
	t.Helper()
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestServe_ModelMetrics: serve counts the calls of its model and
// embedder, and the model's tokens, in /metrics.
func TestServe_ModelMetrics(t *testing.T) {
	fake := llmtest.NewServer(t)
	srv := MustServeEnv(t, filepath.Join(t.TempDir(), "agentmem.db"), map[string]string{"OPENAI_BASE_URL": fake.BaseURL()}, "--embedder", "lexical")
	// A facts question asks the model where to search, searches (the
	// query embedded), and answers with the model if anything is found.
	resp, err := http.Post(srv.URL+"/v1/users/alice/facts", "application/json", strings.NewReader(`{"query":"Where does Alice live?"}`))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("facts: %d", resp.StatusCode)
	}
	if len(fake.ChatRequests()) == 0 {
		t.Fatal("the facts question called no model: the test checks nothing")
	}
	body := getMetrics(t, srv)
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^agentmem_model_calls_total\{kind="chat",model="gpt-4o-mini"\} [1-9]`),
		regexp.MustCompile(`(?m)^agentmem_model_tokens_total\{kind="chat",model="gpt-4o-mini",type="prompt"\} [1-9]`),
		regexp.MustCompile(`(?m)^agentmem_model_calls_total\{kind="embed",model="lexical[^"]*"\} [1-9]`),
	} {
		if !want.MatchString(body) {
			t.Errorf("/metrics lacks %s:\n%s", want, grepLines(body, "agentmem_model"))
		}
	}
}

// TestServe_Tracing: with OTEL_EXPORTER_OTLP_ENDPOINT, serve exports its
// spans over OTLP/HTTP to ENDPOINT/v1/traces, flushing them as it stops:
// a request's span under its route, the store's call under it, the
// service named by OTEL_SERVICE_NAME.
func TestServe_Tracing(t *testing.T) {
	var mu sync.Mutex
	var received []byte
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/traces" {
			http.NotFound(w, r)
			return
		}
		var body io.Reader = r.Body
		if r.Header.Get("Content-Encoding") == "gzip" {
			gz, err := gzip.NewReader(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			body = gz
		}
		b, _ := io.ReadAll(body)
		mu.Lock()
		received = append(received, b...)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer collector.Close()

	srv := MustServeEnv(t, filepath.Join(t.TempDir(), "agentmem.db"), map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT": collector.URL,
		"OTEL_SERVICE_NAME":           "agentmem-traced",
	})
	resp, err := http.Post(srv.URL+"/v1/users/alice/threads", "application/json", strings.NewReader(`{"id":"t"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create thread: %d", resp.StatusCode)
	}
	srv.Stop(t)

	mu.Lock()
	defer mu.Unlock()
	// The spans are protobuf, whose strings are their bytes.
	for _, want := range []string{"POST /v1/users/{user}/threads", "store.create_thread", "agentmem-traced"} {
		if !bytes.Contains(received, []byte(want)) {
			t.Errorf("the collector received no %q (%d bytes)", want, len(received))
		}
	}
}

// TestServe_TracingEndpoint: an OTLP endpoint that is not an http(s) URL
// stops serve at start, rather than exporting nowhere.
func TestServe_TracingEndpoint(t *testing.T) {
	env := map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "localhost:4318"}
	err := run(context.Background(), []string{"serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(t.TempDir(), "agentmem.db")},
		func(k string) string { return env[k] }, strings.NewReader(""), io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "OTLP traces endpoint") {
		t.Fatalf("serve returned %v, want the endpoint refused", err)
	}
}
