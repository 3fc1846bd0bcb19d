package llmtest_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentmem/agentmem/llm/llmtest"
)

// post sends body as JSON and returns the status, headers and body.
func post(t *testing.T, url, body string, header ...string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, b
}

func decode[T any](t *testing.T, b []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	return v
}

const hello = `{"model":"m","messages":[{"role":"system","content":"be brief"},{"role":"user","content":[{"type":"text","text":"hello "},{"type":"text","text":"there"}]}]}`

func TestServer_Chat(t *testing.T) {
	t.Run("Default", func(t *testing.T) {
		s := llmtest.NewServer(t)
		status, _, body := post(t, s.BaseURL()+"/chat/completions", hello)
		if status != http.StatusOK {
			t.Fatalf("status=%d, want 200: %s", status, body)
		}
		got := decode[llmtest.ChatCompletion](t, body)
		want := llmtest.ChatCompletion{
			ID: "chatcmpl-1", Object: "chat.completion", Created: 1700000000, Model: "m",
			Choices: []llmtest.Choice{{Message: llmtest.ChatMessage{Role: "assistant", Content: "echo: hello there"}, FinishReason: "stop"}},
			Usage:   &llmtest.Usage{PromptTokens: 4, CompletionTokens: 3, TotalTokens: 7},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("mismatch (-want +got):\n%s", diff)
		}
		reqs := s.ChatRequests()
		if len(reqs) != 1 || reqs[0].LastUserMessage() != "hello there" || reqs[0].Messages[0].Content != "be brief" {
			t.Fatalf("ChatRequests=%+v", reqs)
		}
	})

	t.Run("JSONModeAndMaxTokens", func(t *testing.T) {
		s := llmtest.NewServer(t)
		_, _, body := post(t, s.BaseURL()+"/chat/completions", `{"model":"m","response_format":{"type":"json_object"},"messages":[{"role":"user","content":"a \"b\""}]}`)
		if got, want := decode[llmtest.ChatCompletion](t, body).Choices[0].Message.Content, `{"echo":"a \"b\""}`; got != want {
			t.Fatalf("Content=%s, want %s", got, want)
		}
		_, _, body = post(t, s.BaseURL()+"/chat/completions", `{"model":"m","max_tokens":2,"messages":[{"role":"user","content":"one two three"}]}`)
		c := decode[llmtest.ChatCompletion](t, body).Choices[0]
		if c.Message.Content != "echo: one" || c.FinishReason != "length" {
			t.Fatalf("Choice=%+v, want echo: one / length", c)
		}
	})

	t.Run("PushThenScript", func(t *testing.T) {
		s := llmtest.NewServer(t)
		s.Push(llmtest.Text("first"), llmtest.Reply{Content: "second", FinishReason: "length", Model: "other"})
		s.Script(func(req llmtest.ChatCompletionRequest) llmtest.Reply {
			return llmtest.Text("scripted for " + req.LastUserMessage())
		})
		var got []string
		for range 3 {
			_, _, body := post(t, s.BaseURL()+"/chat/completions", hello)
			c := decode[llmtest.ChatCompletion](t, body)
			got = append(got, c.Model+"/"+c.Choices[0].FinishReason+"/"+c.Choices[0].Message.Content)
		}
		want := []string{"m/stop/first", "other/length/second", "m/stop/scripted for hello there"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("mismatch (-want +got):\n%s", diff)
		}
	})

	t.Run("Faults", func(t *testing.T) {
		s := llmtest.NewServer(t)
		s.Push(llmtest.RateLimited("7"), llmtest.Fail(503), llmtest.Malformed(), llmtest.Empty())
		status, h, body := post(t, s.BaseURL()+"/chat/completions", hello)
		if status != 429 || h.Get("Retry-After") != "7" || decode[llmtest.ErrorBody](t, body).Error.Type != "rate_limit_error" {
			t.Fatalf("status=%d Retry-After=%q body=%s", status, h.Get("Retry-After"), body)
		}
		if status, _, _ := post(t, s.BaseURL()+"/chat/completions", hello); status != 503 {
			t.Fatalf("status=%d, want 503", status)
		}
		if _, _, body := post(t, s.BaseURL()+"/chat/completions", hello); json.Valid(body) {
			t.Fatalf("Malformed body is valid JSON: %s", body)
		}
		if _, _, body := post(t, s.BaseURL()+"/chat/completions", hello); len(decode[llmtest.ChatCompletion](t, body).Choices) != 0 {
			t.Fatalf("Empty has choices: %s", body)
		}
		if n := len(s.Requests()); n != 4 {
			t.Fatalf("len(Requests)=%d, want 4", n)
		}
	})

	t.Run("NotJSON", func(t *testing.T) {
		s := llmtest.NewServer(t)
		s.Push(llmtest.NotJSON())
		status, h, body := post(t, s.BaseURL()+"/chat/completions", hello)
		if status != http.StatusOK || !strings.HasPrefix(h.Get("Content-Type"), "text/html") || json.Valid(body) || !strings.HasPrefix(string(body), "<html>") {
			t.Fatalf("status=%d Content-Type=%q body=%s", status, h.Get("Content-Type"), body)
		}
	})

	t.Run("DownAndUp", func(t *testing.T) {
		s := llmtest.NewServer(t)
		s.Push(llmtest.Text("queued"))
		s.Down(llmtest.Fail(http.StatusInternalServerError))
		for _, path := range []string{"/chat/completions", "/embeddings", "/chat/completions"} {
			body := hello
			if path == "/embeddings" {
				body = `{"model":"e","input":["a"]}`
			}
			if status, _, _ := post(t, s.BaseURL()+path, body); status != http.StatusInternalServerError {
				t.Fatalf("%s while down: status=%d, want 500", path, status)
			}
		}
		s.Down(llmtest.Malformed())
		if _, _, body := post(t, s.BaseURL()+"/embeddings", `{"model":"e","input":["a"]}`); json.Valid(body) {
			t.Fatalf("embeddings while down with Malformed: valid JSON %s", body)
		}
		s.Up()
		_, _, body := post(t, s.BaseURL()+"/chat/completions", hello)
		if got := decode[llmtest.ChatCompletion](t, body).Choices[0].Message.Content; got != "queued" {
			t.Fatalf("after Up: content=%q, want the queued reply", got)
		}
		if status, _, _ := post(t, s.BaseURL()+"/embeddings", `{"model":"e","input":["a"]}`); status != http.StatusOK {
			t.Fatalf("embeddings after Up: status=%d, want 200", status)
		}
		if n := len(s.Requests()); n != 6 {
			t.Fatalf("len(Requests)=%d, want 6: requests are recorded while down", n)
		}
	})

	t.Run("Hang", func(t *testing.T) {
		s := llmtest.NewServer(t)
		s.Push(llmtest.Hang())
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.BaseURL()+"/chat/completions", strings.NewReader(hello))
		start := time.Now()
		if _, err := http.DefaultClient.Do(req); err == nil {
			t.Fatal("Hang answered")
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("gave up after %v", d)
		}
	})

	t.Run("HangAtEndOfTest", func(t *testing.T) {
		// A request still hanging when the test ends must not block the
		// server's cleanup.
		s := llmtest.NewServer(t)
		s.Push(llmtest.Hang())
		go http.Post(s.BaseURL()+"/chat/completions", "application/json", strings.NewReader(hello))
		for len(s.Requests()) == 0 {
			time.Sleep(time.Millisecond)
		}
	})

	t.Run("Stream", func(t *testing.T) {
		s := llmtest.NewServer(t)
		s.Push(llmtest.Text("a b c"))
		resp, err := http.Post(s.BaseURL()+"/chat/completions", "application/json",
			strings.NewReader(`{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"x"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var content, finish string
		var usage *llmtest.Usage
		var done bool
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			if data == "[DONE]" {
				done = true
				break
			}
			c := decode[llmtest.ChatCompletionChunk](t, []byte(data))
			for _, ch := range c.Choices {
				content += ch.Delta.Content
				if ch.FinishReason != nil {
					finish = *ch.FinishReason
				}
			}
			if c.Usage != nil {
				usage = c.Usage
			}
		}
		if content != "a b c" || finish != "stop" || usage == nil || usage.CompletionTokens != 3 || !done {
			t.Fatalf("content=%q finish=%q usage=%+v done=%v", content, finish, usage, done)
		}
	})

	t.Run("Errors", func(t *testing.T) {
		s := llmtest.NewServer(t)
		for _, body := range []string{`{`, `{"messages":[{"role":"user","content":"x"}]}`, `{"model":"m","messages":[]}`} {
			if status, _, _ := post(t, s.BaseURL()+"/chat/completions", body); status != http.StatusBadRequest {
				t.Errorf("%s: status=%d, want 400", body, status)
			}
		}
		s.RequireAPIKey("k")
		if status, _, _ := post(t, s.BaseURL()+"/chat/completions", hello); status != http.StatusUnauthorized {
			t.Errorf("no key: status=%d, want 401", status)
		}
		if status, _, _ := post(t, s.BaseURL()+"/chat/completions", hello, "Authorization", "Bearer k"); status != http.StatusOK {
			t.Errorf("key: status=%d, want 200", status)
		}
		if status, _, _ := post(t, s.URL+"/v2/nothing", hello); status != http.StatusNotFound {
			t.Errorf("unknown path: status=%d, want 404", status)
		}
	})
}

func TestServer_Azure(t *testing.T) {
	s := llmtest.NewServer(t)
	if status, _, _ := post(t, s.URL+"/openai/deployments/dep/chat/completions", hello); status != http.StatusBadRequest {
		t.Fatalf("without api-version: status=%d, want 400", status)
	}
	status, _, body := post(t, s.URL+"/openai/deployments/dep/chat/completions?api-version=2024-10-21", hello, "api-key", "k")
	if status != http.StatusOK {
		t.Fatalf("status=%d: %s", status, body)
	}
	reqs := s.Requests()
	last := reqs[len(reqs)-1]
	if last.Chat == nil || last.Chat.Deployment != "dep" || last.Query.Get("api-version") != "2024-10-21" || last.Header.Get("Api-Key") != "k" {
		t.Fatalf("recorded %+v", last)
	}
	status, _, body = post(t, s.URL+"/openai/deployments/emb/embeddings?api-version=x", `{"model":"emb","input":"hi"}`)
	if status != http.StatusOK || s.EmbeddingRequests()[0].Deployment != "emb" {
		t.Fatalf("status=%d: %s", status, body)
	}
}

func TestServer_Embeddings(t *testing.T) {
	t.Run("Default", func(t *testing.T) {
		s := llmtest.NewServer(t)
		_, _, body := post(t, s.BaseURL()+"/embeddings", `{"model":"e","input":["the cat sat","a dog"]}`)
		var got struct {
			Data []struct {
				Index     int
				Embedding []float32
			}
		}
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatal(err)
		}
		if len(got.Data) != 2 {
			t.Fatalf("len(Data)=%d, want 2", len(got.Data))
		}
		for i, text := range []string{"the cat sat", "a dog"} {
			if diff := cmp.Diff(llmtest.Vector(text, llmtest.DefaultDimensions), got.Data[i].Embedding); diff != "" || got.Data[i].Index != i {
				t.Fatalf("vector %d mismatch (-want +got):\n%s", i, diff)
			}
		}
	})

	t.Run("DimensionsAndBase64", func(t *testing.T) {
		s := llmtest.NewServer(t)
		_, _, body := post(t, s.BaseURL()+"/embeddings", `{"model":"e","input":"x y","dimensions":8,"encoding_format":"base64"}`)
		var got struct{ Data []struct{ Embedding string } }
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatal(err)
		}
		if len(got.Data) != 1 || len(got.Data[0].Embedding) != 44 { // 8 float32 = 32 bytes = 44 base64 characters
			t.Fatalf("body=%s", body)
		}
		s.SetDimensions(16)
		_, _, body = post(t, s.BaseURL()+"/embeddings", `{"model":"e","input":"x y"}`)
		var floats struct {
			Data []struct{ Embedding []float32 }
		}
		if err := json.Unmarshal(body, &floats); err != nil || len(floats.Data[0].Embedding) != 16 {
			t.Fatalf("body=%s err=%v", body, err)
		}
	})

	t.Run("Scripted", func(t *testing.T) {
		s := llmtest.NewServer(t)
		s.PushEmbedding(llmtest.Fail(500), llmtest.Reply{Vectors: [][]float32{{1, 2}}})
		if status, _, _ := post(t, s.BaseURL()+"/embeddings", `{"model":"e","input":["a","b"]}`); status != 500 {
			t.Fatalf("status=%d, want 500", status)
		}
		_, _, body := post(t, s.BaseURL()+"/embeddings", `{"model":"e","input":["a","b"]}`)
		if !strings.Contains(string(body), `"embedding":[1,2]`) || strings.Count(string(body), `"embedding":`) != 1 {
			t.Fatalf("body=%s", body)
		}
		if status, _, _ := post(t, s.BaseURL()+"/embeddings", `{"model":"e","input":["a",""]}`); status != http.StatusBadRequest {
			t.Fatalf("empty input: status=%d, want 400", status)
		}
	})
}

func TestVector(t *testing.T) {
	cos := func(a, b []float32) float64 {
		var dot float64
		for i := range a {
			dot += float64(a[i]) * float64(b[i])
		}
		return dot
	}
	a, b, c := llmtest.Vector("The cat sat on the mat", 64), llmtest.Vector("the CAT sat", 64), llmtest.Vector("quarterly revenue report", 64)
	if got := cos(a, a); math.Abs(got-1) > 1e-6 {
		t.Fatalf("|v|²=%v, want 1", got)
	}
	if cos(a, b) <= cos(a, c) {
		t.Fatalf("cos(shared words)=%v <= cos(unrelated)=%v", cos(a, b), cos(a, c))
	}
	if v := llmtest.Vector("", 4); cos(v, v) < 0.99 {
		t.Fatalf("Vector(\"\")=%v, want unit length", v)
	}
}
