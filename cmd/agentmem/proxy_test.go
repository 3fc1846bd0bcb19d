package main

import (
	"context"
	"errors"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem/llm/llmtest"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// TestServe_Proxy: an application on the official OpenAI SDK gets memory
// by changing its base URL to serve's /openai/v1: what its user said in
// one session, before a restart, reaches the model in the next. The
// proxy's key to the upstream is its own, never the application's.
func TestServe_Proxy(t *testing.T) {
	fake := llmtest.NewServer(t)
	fake.RequireAPIKey("sk-upstream")
	db := "sqlite:" + filepath.Join(t.TempDir(), "agentmem.db")
	env := map[string]string{"AGENTMEM_PROXY_API_KEY": "sk-upstream"}
	args := []string{"--proxy-upstream", fake.BaseURL(), "--proxy-budgets", "my-llama=6000"}
	ctx := context.Background()
	ask := func(s *server, thread, q string) string {
		t.Helper()
		c := openai.NewClient(option.WithBaseURL(s.URL+"/openai/v1"), option.WithAPIKey("sk-app"), option.WithMaxRetries(0),
			option.WithHeader("X-Agentmem-User", "ada"), option.WithHeader("X-Agentmem-Thread", thread))
		var res *http.Response
		got, err := c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "my-llama", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(q)}},
			option.WithResponseInto(&res))
		if err != nil {
			t.Fatal(err)
		}
		if b := res.Header.Get("X-Agentmem-Budget-Tokens"); b != "6000" {
			t.Errorf("budget %q, want the configured 6000", b)
		}
		return got.Choices[0].Message.Content
	}

	s := MustServeEnv(t, db, env, args...)
	if got := ask(s, "monday", "I am vegetarian and I live in Porto."); got != "echo: I am vegetarian and I live in Porto." {
		t.Fatalf("answer %q", got)
	}
	// Wait for the memories, then restart.
	deadline := time.Now().Add(10 * time.Second)
	idle := func() bool { // no index job queued or running: the memories and their vectors are written
		return strings.Contains(get(t, s.URL+"/v1/jobs?status=queued"), `"data":[]`) && strings.Contains(get(t, s.URL+"/v1/jobs?status=running"), `"data":[]`)
	}
	for !strings.Contains(get(t, s.URL+"/v1/users/ada/memories"), "Porto") || !idle() {
		if time.Now().After(deadline) {
			t.Fatal("no memory of Porto")
		}
		time.Sleep(50 * time.Millisecond)
	}
	s.Stop(t)

	s = MustServeEnv(t, db, env, args...)
	ask(s, "tuesday", "Which restaurants near where I live suit my diet?")
	reqs := fake.ChatRequests()
	last := reqs[len(reqs)-1]
	var sent []string
	for _, m := range last.Messages {
		sent = append(sent, m.Role+": "+m.Content)
	}
	joined := strings.Join(sent, "\n")
	if !strings.Contains(joined, "Porto") || !strings.Contains(joined, "vegetarian") || strings.Contains(joined, "user: I am vegetarian") {
		t.Errorf("the next session sent:\n%s", joined)
	}
	for _, r := range fake.Requests() {
		if got := r.Header.Get("Authorization"); got != "Bearer sk-upstream" {
			t.Errorf("upstream got Authorization %q", got)
		}
	}

	// A model server that is down: its status reaches the client.
	fake.Push(llmtest.Fail(503))
	cl := openai.NewClient(option.WithBaseURL(s.URL+"/openai/v1"), option.WithMaxRetries(0), option.WithHeader("X-Agentmem-User", "ada"))
	_, err := cl.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "my-llama", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hello?")}})
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 503 {
		t.Errorf("upstream 503: %v", err)
	}
}

// get returns the body of a GET.
func get(t *testing.T, url string) string {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return string(b)
}

// TestServe_ProxyAnswerBound: the proxy cuts an answer to serve's
// --max-message-bytes, the store's bound, rather than failing to store
// it: it is the bound the proxy is given.
func TestServe_ProxyAnswerBound(t *testing.T) {
	fake := llmtest.NewServer(t)
	db := "sqlite:" + filepath.Join(t.TempDir(), "agentmem.db")
	s := MustServeEnv(t, db, nil, "--proxy-upstream", fake.BaseURL(), "--max-message-bytes", "4096")
	fake.Push(llmtest.Text(strings.Repeat("word ", 2000)))
	req, _ := http.NewRequest("POST", s.URL+"/openai/v1/chat/completions", strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"talk"}]}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Agentmem-Thread", "long")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 || res.Header.Get("X-Agentmem-Answer-Truncated") != "true" {
		t.Fatalf("%d, truncated %q", res.StatusCode, res.Header.Get("X-Agentmem-Answer-Truncated"))
	}
	if body := get(t, s.URL+"/v1/users/local-user/threads/long/messages"); !strings.Contains(body, `"truncated":true`) || !strings.Contains(body, `"original_bytes":10000`) {
		t.Errorf("messages: %.500s", body)
	}
}
