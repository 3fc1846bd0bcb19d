package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/llm/llmtest"
	"github.com/agentmem/agentmem/llm/openai"
)

var live = flag.Bool("live", false, "also run against the real provider configured by OPENAI_* / AZURE_OPENAI_* variables")

const apiKey = "sk-test-secret-key"

// MustNew returns a client on s with fast retries; mod may change the
// configuration first.
func MustNew(tb testing.TB, s *llmtest.Server, mod func(*openai.Config)) *openai.Client {
	tb.Helper()
	cfg := openai.Config{
		APIKey:         apiKey,
		BaseURL:        s.BaseURL(),
		Model:          "fake-chat",
		EmbeddingModel: "fake-embedding",
		Timeout:        5 * time.Second,
		RetryBaseDelay: time.Millisecond,
		RetryMaxDelay:  20 * time.Millisecond,
	}
	if mod != nil {
		mod(&cfg)
	}
	c, err := openai.New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// sleeps replaces c.Sleep with a recorder that does not wait.
func sleeps(c *openai.Client) *[]time.Duration {
	var mu sync.Mutex
	var ds []time.Duration
	c.Sleep = func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		defer mu.Unlock()
		ds = append(ds, d)
		return ctx.Err()
	}
	return &ds
}

// clock replaces c.Now with a settable clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock(c *openai.Client) *clock {
	k := &clock{now: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)}
	c.Now = func() time.Time {
		k.mu.Lock()
		defer k.mu.Unlock()
		return k.now
	}
	return k
}

func (k *clock) advance(d time.Duration) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.now = k.now.Add(d)
}

func hi() agentmem.ChatRequest {
	return agentmem.ChatRequest{Messages: []agentmem.ChatMessage{{Role: "user", Content: "hi"}}}
}

// wantCode fails unless err is an *agentmem.Error with code whose message
// leaks neither the API key nor the fake's error text.
func wantCode(tb testing.TB, err error, code string) {
	tb.Helper()
	var e *agentmem.Error
	if !errors.As(err, &e) {
		tb.Fatalf("err=%v (%T), want *agentmem.Error %s", err, err, code)
	}
	if e.Code != code {
		tb.Fatalf("code=%s (%s), want %s", e.Code, e.Message, code)
	}
	if strings.Contains(e.Message, apiKey) || strings.Contains(e.Message, "Scripted failure") || strings.Contains(e.Message, "127.0.0.1") {
		tb.Fatalf("message leaks provider details: %s", e.Message)
	}
}

func TestClient_Complete(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		s := llmtest.NewServer(t)
		s.RequireAPIKey(apiKey)
		c := MustNew(t, s, nil)
		temp := 0.2
		resp, err := c.Complete(context.Background(), agentmem.ChatRequest{
			Messages: []agentmem.ChatMessage{
				{Role: "system", Content: "Be brief."},
				{Role: "user", Content: "Hello there", Name: "ann"},
				{Role: "assistant", Content: "Hi."},
				{Role: "user", Content: "How are you"},
			},
			MaxTokens:   50,
			Temperature: &temp,
		})
		if err != nil {
			t.Fatal(err)
		}
		want := &agentmem.ChatResponse{Content: "echo: How are you", Model: "fake-chat", FinishReason: "stop", PromptTokens: 8, CompletionTokens: 4}
		if diff := cmp.Diff(want, resp); diff != "" {
			t.Fatalf("mismatch (-want +got):\n%s", diff)
		}
		reqs := s.ChatRequests()
		if len(reqs) != 1 {
			t.Fatalf("len(ChatRequests)=%d, want 1", len(reqs))
		}
		got := reqs[0]
		if got.Model != "fake-chat" || got.Temperature == nil || *got.Temperature != 0.2 || got.ResponseFormat != nil {
			t.Fatalf("request=%+v", got)
		}
		// A base URL means a compatible server, which knows max_tokens only.
		if got.MaxTokens == nil || *got.MaxTokens != 50 || got.MaxCompletionTokens != nil {
			t.Fatalf("MaxTokens=%v MaxCompletionTokens=%v, want 50 and nil", got.MaxTokens, got.MaxCompletionTokens)
		}
		wantMsgs := []llmtest.ChatMessage{
			{Role: "system", Content: "Be brief."},
			{Role: "user", Content: "Hello there", Name: "ann"},
			{Role: "assistant", Content: "Hi."},
			{Role: "user", Content: "How are you"},
		}
		if diff := cmp.Diff(wantMsgs, got.Messages); diff != "" {
			t.Fatalf("messages mismatch (-want +got):\n%s", diff)
		}
	})

	t.Run("JSON", func(t *testing.T) {
		s := llmtest.NewServer(t)
		c := MustNew(t, s, nil)
		resp, err := c.Complete(context.Background(), agentmem.ChatRequest{
			Model:    "other-model",
			Messages: []agentmem.ChatMessage{{Role: "user", Content: "Answer in JSON."}},
			JSON:     true,
		})
		if err != nil {
			t.Fatal(err)
		}
		var v struct{ Echo string }
		if err := json.Unmarshal([]byte(resp.Content), &v); err != nil || v.Echo != "Answer in JSON." {
			t.Fatalf("Content=%s err=%v", resp.Content, err)
		}
		req := s.Requests()[0]
		if !req.Chat.JSONMode() || req.Chat.Model != "other-model" || !strings.Contains(string(req.Body), `"response_format":{"type":"json_object"}`) {
			t.Fatalf("body=%s", req.Body)
		}
	})

	t.Run("Tools", func(t *testing.T) {
		// The model is offered a tool, calls it, and is sent the result:
		// the calls come back as ToolCalls, and the assistant message with
		// the calls and the tool's answer go out in the wire format.
		s := llmtest.NewServer(t)
		call := llmtest.ToolCall{ID: "call_1", Type: "function", Function: llmtest.FunctionCall{Name: "search_insights", Arguments: `{"query":"goals"}`}}
		s.Push(llmtest.Reply{ToolCalls: []llmtest.ToolCall{call}}, llmtest.Text("Done."))
		c := MustNew(t, s, nil)
		tools := []agentmem.ChatTool{{Name: "search_insights", Description: "Search insights.",
			Parameters: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}`)}}
		msgs := []agentmem.ChatMessage{{Role: "user", Content: "What are my goals?"}}
		resp, err := c.Complete(context.Background(), agentmem.ChatRequest{Messages: msgs, Tools: tools})
		if err != nil {
			t.Fatal(err)
		}
		wantCalls := []agentmem.ToolCall{{ID: "call_1", Type: "function", Function: agentmem.FunctionCall{Name: "search_insights", Arguments: `{"query":"goals"}`}}}
		if diff := cmp.Diff(wantCalls, resp.ToolCalls); diff != "" || resp.FinishReason != "tool_calls" || resp.Content != "" {
			t.Fatalf("resp=%+v; tool calls mismatch (-want +got):\n%s", resp, diff)
		}
		msgs = append(msgs, agentmem.ChatMessage{Role: "assistant", ToolCalls: resp.ToolCalls},
			agentmem.ChatMessage{Role: "tool", ToolCallID: "call_1", Content: "[1] User wants to retire at 55."})
		resp, err = c.Complete(context.Background(), agentmem.ChatRequest{Messages: msgs, Tools: tools})
		if err != nil || resp.Content != "Done." || len(resp.ToolCalls) != 0 {
			t.Fatalf("resp=%+v err=%v", resp, err)
		}
		reqs := s.ChatRequests()
		if len(reqs) != 2 {
			t.Fatalf("len(ChatRequests)=%d, want 2", len(reqs))
		}
		for _, r := range reqs {
			if len(r.Tools) != 1 || r.Tools[0].Type != "function" || r.Tools[0].Function.Name != "search_insights" || r.Tools[0].Function.Description != "Search insights." ||
				!strings.Contains(string(r.Tools[0].Function.Parameters), `"required":["query"]`) {
				t.Fatalf("tools on the wire: %+v", r.Tools)
			}
		}
		wantMsgs := []llmtest.ChatMessage{
			{Role: "user", Content: "What are my goals?"},
			{Role: "assistant", ToolCalls: []llmtest.ToolCall{call}},
			{Role: "tool", Content: "[1] User wants to retire at 55.", ToolCallID: "call_1"},
		}
		if diff := cmp.Diff(wantMsgs, reqs[1].Messages); diff != "" {
			t.Fatalf("messages mismatch (-want +got):\n%s", diff)
		}
		// Parameters that are not a JSON object are refused before any request.
		_, err = c.Complete(context.Background(), agentmem.ChatRequest{Messages: msgs, Tools: []agentmem.ChatTool{{Name: "x", Parameters: json.RawMessage(`[1]`)}}})
		wantCode(t, err, agentmem.EINVALID)
		if n := len(s.Requests()); n != 2 {
			t.Fatalf("requests=%d, want 2", n)
		}
	})

	t.Run("FinishReasonLength", func(t *testing.T) {
		s := llmtest.NewServer(t)
		s.Push(llmtest.Reply{Content: "cut", FinishReason: "length"})
		resp, err := MustNew(t, s, nil).Complete(context.Background(), hi())
		if err != nil || resp.FinishReason != "length" || resp.Content != "cut" {
			t.Fatalf("resp=%+v err=%v", resp, err)
		}
	})

	t.Run("ErrInvalidRequest", func(t *testing.T) {
		s := llmtest.NewServer(t)
		c := MustNew(t, s, nil)
		_, err := c.Complete(context.Background(), agentmem.ChatRequest{})
		wantCode(t, err, agentmem.EINVALID)
		_, err = c.Complete(context.Background(), agentmem.ChatRequest{Messages: []agentmem.ChatMessage{{Role: "tool", Content: "42"}}})
		wantCode(t, err, agentmem.EINVALID)
		if n := len(s.Requests()); n != 0 {
			t.Fatalf("len(Requests)=%d, want 0", n)
		}
	})

	t.Run("Err400", func(t *testing.T) {
		s := llmtest.NewServer(t)
		s.Push(llmtest.Fail(http.StatusBadRequest))
		c := MustNew(t, s, nil)
		ds := sleeps(c)
		_, err := c.Complete(context.Background(), hi())
		wantCode(t, err, agentmem.EINVALID)
		if n := len(s.Requests()); n != 1 || len(*ds) != 0 {
			t.Fatalf("requests=%d sleeps=%v, want 1 and none", n, *ds)
		}
	})

	t.Run("ErrUnauthorized", func(t *testing.T) {
		s := llmtest.NewServer(t)
		s.RequireAPIKey("another-key")
		_, err := MustNew(t, s, nil).Complete(context.Background(), hi())
		wantCode(t, err, agentmem.EUNAVAILABLE)
		if n := len(s.Requests()); n != 1 {
			t.Fatalf("requests=%d, want 1 (a refused key is not retried)", n)
		}
	})

	t.Run("Hang", func(t *testing.T) {
		s := llmtest.NewServer(t)
		s.Push(llmtest.Hang(), llmtest.Hang(), llmtest.Hang())
		c := MustNew(t, s, func(cfg *openai.Config) { cfg.Timeout = 200 * time.Millisecond })
		start := time.Now()
		_, err := c.Complete(context.Background(), hi())
		elapsed := time.Since(start)
		wantCode(t, err, agentmem.EUNAVAILABLE)
		if elapsed < 200*time.Millisecond || elapsed > 2*time.Second {
			t.Fatalf("failed after %v, want about the 200ms timeout", elapsed)
		}
		if n := len(s.Requests()); n != 1 {
			t.Fatalf("requests=%d, want 1 (a timed-out attempt is not retried)", n)
		}
	})

	t.Run("CallerDeadline", func(t *testing.T) {
		s := llmtest.NewServer(t)
		s.Push(llmtest.Hang())
		c := MustNew(t, s, func(cfg *openai.Config) { cfg.BreakerThreshold = 1 })
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		_, err := c.Complete(ctx, hi())
		wantCode(t, err, agentmem.EUNAVAILABLE)
		// The caller gave up: that says nothing about the server, so the
		// breaker (threshold 1) stays closed.
		if _, err := c.Complete(context.Background(), hi()); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("Malformed", func(t *testing.T) {
		// A 2xx answer that does not decode, or has no choices, is the
		// server's fault: EUNAVAILABLE, and not retried, since the tokens
		// were spent.
		for name, reply := range map[string]llmtest.Reply{"Body": llmtest.Malformed(), "NoChoices": llmtest.Empty()} {
			t.Run(name, func(t *testing.T) {
				s := llmtest.NewServer(t)
				s.Push(reply)
				_, err := MustNew(t, s, nil).Complete(context.Background(), hi())
				wantCode(t, err, agentmem.EUNAVAILABLE)
				if n := len(s.Requests()); n != 1 {
					t.Fatalf("requests=%d, want 1", n)
				}
			})
		}
	})
}

func TestClient_Retry(t *testing.T) {
	t.Run("RetryAfter", func(t *testing.T) {
		s := llmtest.NewServer(t)
		c := MustNew(t, s, func(cfg *openai.Config) { cfg.RetryMaxDelay = 0 }) // the default, 20s
		ds := sleeps(c)
		k := newClock(c)
		s.Push(
			llmtest.RateLimited("2"),
			llmtest.RateLimited(k.now.Add(3*time.Second).Format(http.TimeFormat)),
		)
		resp, err := c.Complete(context.Background(), hi())
		if err != nil {
			t.Fatal(err)
		}
		if resp.Content != "echo: hi" {
			t.Fatalf("Content=%q", resp.Content)
		}
		if diff := cmp.Diff([]time.Duration{2 * time.Second, 3 * time.Second}, *ds); diff != "" {
			t.Fatalf("waits mismatch (-want +got):\n%s", diff)
		}
		if n := len(s.Requests()); n != 3 {
			t.Fatalf("requests=%d, want 3", n)
		}
	})

	t.Run("RetryAfterMs", func(t *testing.T) {
		s := llmtest.NewServer(t)
		c := MustNew(t, s, func(cfg *openai.Config) { cfg.RetryMaxDelay = time.Second })
		ds := sleeps(c)
		s.Push(llmtest.Reply{Status: 503, Header: http.Header{"Retry-After-Ms": {"250"}}})
		if _, err := c.Complete(context.Background(), hi()); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]time.Duration{250 * time.Millisecond}, *ds); diff != "" {
			t.Fatalf("waits mismatch (-want +got):\n%s", diff)
		}
	})

	t.Run("RetryAfterTooLong", func(t *testing.T) {
		// A server asking for more than RetryMaxDelay ends the retries:
		// the caller's fallback beats a long stall.
		s := llmtest.NewServer(t)
		s.Push(llmtest.RateLimited("120"))
		c := MustNew(t, s, func(cfg *openai.Config) { cfg.RetryMaxDelay = 0 })
		ds := sleeps(c)
		_, err := c.Complete(context.Background(), hi())
		wantCode(t, err, agentmem.EUNAVAILABLE)
		if n := len(s.Requests()); n != 1 || len(*ds) != 0 {
			t.Fatalf("requests=%d waits=%v, want 1 and none", n, *ds)
		}
		if msg := agentmem.ErrorMessage(err); !strings.Contains(msg, "retried after 2m0s") {
			t.Fatalf("message=%q, want the server's requested wait", msg)
		}
	})

	t.Run("ServerErrorsThenSuccess", func(t *testing.T) {
		// Real sleeps: the back-off starts at 1ms in MustNew.
		s := llmtest.NewServer(t)
		s.Push(llmtest.Fail(500), llmtest.Fail(502))
		resp, err := MustNew(t, s, nil).Complete(context.Background(), hi())
		if err != nil {
			t.Fatal(err)
		}
		if resp.Content != "echo: hi" {
			t.Fatalf("Content=%q", resp.Content)
		}
		if n := len(s.Requests()); n != 3 {
			t.Fatalf("requests=%d, want 3", n)
		}
	})

	t.Run("Backoff", func(t *testing.T) {
		s := llmtest.NewServer(t)
		s.Push(llmtest.Fail(500), llmtest.Fail(500), llmtest.Fail(500), llmtest.Fail(500))
		c := MustNew(t, s, func(cfg *openai.Config) {
			cfg.MaxRetries = 3
			cfg.RetryBaseDelay = 100 * time.Millisecond
			cfg.RetryMaxDelay = 300 * time.Millisecond
		})
		ds := sleeps(c)
		_, err := c.Complete(context.Background(), hi())
		wantCode(t, err, agentmem.EUNAVAILABLE)
		if n := len(s.Requests()); n != 4 || len(*ds) != 3 {
			t.Fatalf("requests=%d waits=%v, want 4 and 3", n, *ds)
		}
		// Doubling from 100ms, capped at 300ms, each jittered into [d/2, d].
		for i, ceil := range []time.Duration{100, 200, 300} {
			ceil *= time.Millisecond
			if d := (*ds)[i]; d < ceil/2 || d > ceil {
				t.Errorf("wait %d=%v, want in [%v, %v]", i, d, ceil/2, ceil)
			}
		}
	})

	t.Run("NonJSONErrorBody", func(t *testing.T) {
		// A proxy's HTML error page still counts by its status.
		s := llmtest.NewServer(t)
		bad := llmtest.Reply{Status: http.StatusBadGateway, Body: "<html>502 Bad Gateway</html>"}
		s.Push(bad, bad, bad)
		_, err := MustNew(t, s, nil).Complete(context.Background(), hi())
		wantCode(t, err, agentmem.EUNAVAILABLE)
		if n := len(s.Requests()); n != 3 {
			t.Fatalf("requests=%d, want 3", n)
		}
	})

	t.Run("ShouldRetryHeader", func(t *testing.T) {
		s := llmtest.NewServer(t)
		s.Push(llmtest.Reply{Status: 500, Header: http.Header{"X-Should-Retry": {"false"}}})
		_, err := MustNew(t, s, nil).Complete(context.Background(), hi())
		wantCode(t, err, agentmem.EUNAVAILABLE)
		if n := len(s.Requests()); n != 1 {
			t.Fatalf("requests=%d, want 1", n)
		}
	})

	t.Run("NoRetries", func(t *testing.T) {
		s := llmtest.NewServer(t)
		s.Push(llmtest.Fail(503))
		_, err := MustNew(t, s, func(cfg *openai.Config) { cfg.MaxRetries = -1 }).Complete(context.Background(), hi())
		wantCode(t, err, agentmem.EUNAVAILABLE)
		if n := len(s.Requests()); n != 1 {
			t.Fatalf("requests=%d, want 1", n)
		}
	})

	t.Run("ConnectionRefused", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		c, err := openai.New(openai.Config{BaseURL: "http://" + addr + "/v1", Timeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		ds := sleeps(c)
		_, err = c.Complete(context.Background(), hi())
		wantCode(t, err, agentmem.EUNAVAILABLE)
		if len(*ds) != openai.DefaultMaxRetries {
			t.Fatalf("waits=%v, want %d retries", *ds, openai.DefaultMaxRetries)
		}
	})
}

func TestClient_Breaker(t *testing.T) {
	setup := func(t *testing.T) (*llmtest.Server, *openai.Client, *clock) {
		s := llmtest.NewServer(t)
		c := MustNew(t, s, func(cfg *openai.Config) {
			cfg.MaxRetries = -1
			cfg.BreakerThreshold = 3
			cfg.BreakerCooldown = 30 * time.Second
		})
		return s, c, newClock(c)
	}
	fail := func(t *testing.T, s *llmtest.Server, c *openai.Client, n int) {
		t.Helper()
		for range n {
			s.Push(llmtest.Fail(500))
			_, err := c.Complete(context.Background(), hi())
			wantCode(t, err, agentmem.EUNAVAILABLE)
		}
	}

	t.Run("OpensAndCloses", func(t *testing.T) {
		s, c, k := setup(t)
		fail(t, s, c, 3)
		_, err := c.Complete(context.Background(), hi())
		wantCode(t, err, agentmem.EUNAVAILABLE)
		if n := len(s.Requests()); n != 3 {
			t.Fatalf("requests=%d, want 3: an open breaker fails fast", n)
		}
		// Embeddings have their own breaker.
		if _, err := c.Embed(context.Background(), []string{"x"}); err != nil {
			t.Fatal(err)
		}

		k.advance(29 * time.Second)
		_, err = c.Complete(context.Background(), hi())
		wantCode(t, err, agentmem.EUNAVAILABLE)

		k.advance(time.Second) // half-open: the trial succeeds and closes it
		if _, err := c.Complete(context.Background(), hi()); err != nil {
			t.Fatal(err)
		}
		fail(t, s, c, 2) // closed again: two failures are below the threshold
		if _, err := c.Complete(context.Background(), hi()); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("TrialFails", func(t *testing.T) {
		s, c, k := setup(t)
		fail(t, s, c, 3)
		k.advance(30 * time.Second)
		fail(t, s, c, 1) // the trial
		before := len(s.Requests())
		_, err := c.Complete(context.Background(), hi())
		wantCode(t, err, agentmem.EUNAVAILABLE)
		if n := len(s.Requests()); n != before {
			t.Fatalf("requests=%d, want %d: a failed trial reopens the breaker", n, before)
		}
	})

	t.Run("OneTrialAtATime", func(t *testing.T) {
		s, c, k := setup(t)
		fail(t, s, c, 3)
		k.advance(30 * time.Second)
		s.Push(llmtest.Reply{Content: "slow", Delay: 300 * time.Millisecond})
		before := len(s.Requests())
		trial := make(chan error)
		go func() {
			_, err := c.Complete(context.Background(), hi())
			trial <- err
		}()
		for len(s.Requests()) == before {
			time.Sleep(time.Millisecond)
		}
		_, err := c.Complete(context.Background(), hi())
		wantCode(t, err, agentmem.EUNAVAILABLE)
		if err := <-trial; err != nil {
			t.Fatal(err)
		}
		if n := len(s.Requests()); n != before+1 {
			t.Fatalf("requests=%d, want %d: one trial call", n, before+1)
		}
	})

	t.Run("InvalidDoesNotCount", func(t *testing.T) {
		s, c, _ := setup(t)
		for range 5 {
			s.Push(llmtest.Fail(http.StatusBadRequest))
			_, err := c.Complete(context.Background(), hi())
			wantCode(t, err, agentmem.EINVALID)
		}
		if _, err := c.Complete(context.Background(), hi()); err != nil {
			t.Fatal(err)
		}
	})
}

func TestClient_Embed(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		s := llmtest.NewServer(t)
		c := MustNew(t, s, func(cfg *openai.Config) { cfg.EmbeddingBatchSize = 2 })
		texts := []string{"alpha", "beta gamma", "delta", "epsilon", "zeta"}
		vecs, err := c.Embed(context.Background(), texts)
		if err != nil {
			t.Fatal(err)
		}
		var want [][]float32
		for _, text := range texts {
			want = append(want, llmtest.Vector(text, llmtest.DefaultDimensions))
		}
		if diff := cmp.Diff(want, vecs); diff != "" {
			t.Fatalf("mismatch (-want +got):\n%s", diff)
		}
		var batches [][]string
		for _, r := range s.EmbeddingRequests() {
			if r.Model != "fake-embedding" || r.EncodingFormat != "float" {
				t.Fatalf("request=%+v", r)
			}
			batches = append(batches, r.Input)
		}
		if diff := cmp.Diff([][]string{{"alpha", "beta gamma"}, {"delta", "epsilon"}, {"zeta"}}, batches); diff != "" {
			t.Fatalf("batches mismatch (-want +got):\n%s", diff)
		}
	})

	t.Run("Dimensions", func(t *testing.T) {
		s := llmtest.NewServer(t)
		vecs, err := MustNew(t, s, func(cfg *openai.Config) { cfg.Dimensions = 16 }).Embed(context.Background(), []string{"a", "b"})
		if err != nil {
			t.Fatal(err)
		}
		if len(vecs) != 2 || len(vecs[0]) != 16 || s.EmbeddingRequests()[0].Dimensions != 16 {
			t.Fatalf("vectors of %d, request %+v", len(vecs[0]), s.EmbeddingRequests()[0])
		}
	})

	t.Run("OrderByIndex", func(t *testing.T) {
		s := llmtest.NewServer(t)
		s.PushEmbedding(llmtest.Reply{Body: `{"object":"list","model":"m","data":[` +
			`{"object":"embedding","index":1,"embedding":[0,1]},` +
			`{"object":"embedding","index":0,"embedding":[1,0]}],"usage":{"prompt_tokens":2,"total_tokens":2}}`})
		vecs, err := MustNew(t, s, nil).Embed(context.Background(), []string{"first", "second"})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([][]float32{{1, 0}, {0, 1}}, vecs); diff != "" {
			t.Fatalf("mismatch (-want +got):\n%s", diff)
		}
	})

	t.Run("Empty", func(t *testing.T) {
		s := llmtest.NewServer(t)
		c := MustNew(t, s, nil)
		if vecs, err := c.Embed(context.Background(), nil); err != nil || len(vecs) != 0 {
			t.Fatalf("vecs=%v err=%v", vecs, err)
		}
		_, err := c.Embed(context.Background(), []string{"a", ""})
		wantCode(t, err, agentmem.EINVALID)
		if n := len(s.Requests()); n != 0 {
			t.Fatalf("requests=%d, want 0", n)
		}
	})

	t.Run("ErrWrongCount", func(t *testing.T) {
		s := llmtest.NewServer(t)
		s.PushEmbedding(llmtest.Reply{Vectors: [][]float32{{1, 2}}})
		_, err := MustNew(t, s, nil).Embed(context.Background(), []string{"a", "b"})
		wantCode(t, err, agentmem.EUNAVAILABLE)
	})

	t.Run("Retry", func(t *testing.T) {
		s := llmtest.NewServer(t)
		s.PushEmbedding(llmtest.RateLimited("0"), llmtest.Fail(500))
		vecs, err := MustNew(t, s, nil).Embed(context.Background(), []string{"a"})
		if err != nil || len(vecs) != 1 {
			t.Fatalf("vecs=%v err=%v", vecs, err)
		}
		if n := len(s.Requests()); n != 3 {
			t.Fatalf("requests=%d, want 3", n)
		}
	})
}

func TestClient_Azure(t *testing.T) {
	s := llmtest.NewServer(t)
	s.RequireAPIKey("azure-key")
	c, err := openai.New(openai.Config{
		APIKey:                   "azure-key",
		AzureEndpoint:            s.URL,
		AzureAPIVersion:          "2024-10-21",
		AzureDeployment:          "chat-deployment",
		AzureEmbeddingDeployment: "embedding-deployment",
		Timeout:                  5 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Complete(context.Background(), agentmem.ChatRequest{Messages: hi().Messages, MaxTokens: 10})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != "echo: hi" {
		t.Fatalf("Content=%q", resp.Content)
	}
	if _, err := c.Embed(context.Background(), []string{"a"}); err != nil {
		t.Fatal(err)
	}

	reqs := s.Requests()
	if len(reqs) != 2 {
		t.Fatalf("len(Requests)=%d, want 2", len(reqs))
	}
	for i, want := range []string{"/openai/deployments/chat-deployment/chat/completions", "/openai/deployments/embedding-deployment/embeddings"} {
		r := reqs[i]
		if r.Path != want || r.Query.Get("api-version") != "2024-10-21" {
			t.Errorf("request %d: %s?%s, want %s?api-version=2024-10-21", i, r.Path, r.Query.Encode(), want)
		}
		if r.Header.Get("Api-Key") != "azure-key" || r.Header.Get("Authorization") != "" {
			t.Errorf("request %d: api-key=%q Authorization=%q", i, r.Header.Get("Api-Key"), r.Header.Get("Authorization"))
		}
	}
	// Azure is OpenAI's own service: max_completion_tokens.
	if chat := reqs[0].Chat; chat.MaxCompletionTokens == nil || *chat.MaxCompletionTokens != 10 || chat.MaxTokens != nil {
		t.Errorf("MaxCompletionTokens=%v MaxTokens=%v, want 10 and nil", chat.MaxCompletionTokens, chat.MaxTokens)
	}
}

func TestConfigFromEnv(t *testing.T) {
	tests := []struct {
		name           string
		env            map[string]string
		want           openai.Config
		wantConfigured bool
	}{
		{
			name: "OpenAI",
			env:  map[string]string{"OPENAI_API_KEY": "sk", "AGENTMEM_LLM_MODEL": "gpt-x", "AGENTMEM_EMBEDDING_MODEL": "emb-x"},
			want: openai.Config{APIKey: "sk", Model: "gpt-x", EmbeddingModel: "emb-x"}, wantConfigured: true,
		},
		{
			name: "Ollama",
			env:  map[string]string{"OPENAI_BASE_URL": "http://localhost:11434/v1", "AGENTMEM_LLM_MODEL": "llama3.2"},
			want: openai.Config{BaseURL: "http://localhost:11434/v1", Model: "llama3.2"}, wantConfigured: true,
		},
		{
			name: "Azure",
			env: map[string]string{
				"AZURE_OPENAI_ENDPOINT": "https://r.openai.azure.com", "AZURE_OPENAI_API_KEY": "az", "OPENAI_API_VERSION": "2024-06-01",
				"AZURE_OPENAI_DEPLOYMENT": "d", "AZURE_OPENAI_EMBEDDING_DEPLOYMENT": "e",
				"OPENAI_API_KEY": "not-for-azure", "OPENAI_BASE_URL": "http://ignored",
			},
			want: openai.Config{
				APIKey: "az", AzureEndpoint: "https://r.openai.azure.com", AzureAPIVersion: "2024-06-01",
				AzureDeployment: "d", AzureEmbeddingDeployment: "e",
			},
			wantConfigured: true,
		},
		{name: "Nothing", env: map[string]string{}, want: openai.Config{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := openai.ConfigFromEnv(func(k string) string { return tt.env[k] })
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Fatalf("mismatch (-want +got):\n%s", diff)
			}
			if c := openai.Configured(got); c != tt.wantConfigured {
				t.Fatalf("Configured=%v, want %v", c, tt.wantConfigured)
			}
		})
	}
}

func TestNew(t *testing.T) {
	for name, cfg := range map[string]openai.Config{
		"Nothing":      {},
		"AzureNoKey":   {AzureEndpoint: "https://r.openai.azure.com"},
		"BadBaseURL":   {BaseURL: "localhost:11434"},
		"BadAzureURL":  {AzureEndpoint: "r.openai.azure.com", APIKey: "k"},
		"NotHTTPAtAll": {BaseURL: "ftp://example.com/v1"},
	} {
		t.Run("Err"+name, func(t *testing.T) {
			if _, err := openai.New(cfg); err == nil {
				t.Fatal("New succeeded")
			}
		})
	}
}

// TestLive runs one chat and one embedding against the provider that the
// environment configures; go test ./llm/openai -run Live -live.
func TestLive(t *testing.T) {
	if !*live {
		t.Skip("-live not set")
	}
	cfg := openai.ConfigFromEnv(os.Getenv)
	if !openai.Configured(cfg) {
		t.Skip("no OPENAI_API_KEY, OPENAI_BASE_URL or AZURE_OPENAI_* in the environment")
	}
	c, err := openai.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	resp, err := c.Complete(ctx, agentmem.ChatRequest{
		Messages:  []agentmem.ChatMessage{{Role: "user", Content: `Reply with the JSON object {"ok": true}.`}},
		MaxTokens: 20,
		JSON:      true,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("chat: model=%s finish=%s tokens=%d+%d content=%q", resp.Model, resp.FinishReason, resp.PromptTokens, resp.CompletionTokens, resp.Content)
	vecs, err := c.Embed(ctx, []string{"hello", "world"})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("embed: %d vectors of %d", len(vecs), len(vecs[0]))
}
