package main

import (
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
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
