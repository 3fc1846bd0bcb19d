package proxy_test

import (
	"errors"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/httpapi"
	"github.com/agentmem/agentmem/llm/llmtest"
	"github.com/agentmem/agentmem/proxy"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// sdkError returns the SDK's typed error of err, failing the test when
// err is none.
func sdkError(t testing.TB, what string, err error) *openai.Error {
	t.Helper()
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) {
		t.Fatalf("%s: %v is not an *openai.Error", what, err)
	}
	return apiErr
}

// TestErrors_OpenAIShape: every error an application on the official SDK
// meets through the proxy reaches it as the SDK's typed error with
// OpenAI's type, code and param, whoever answers it: authentication, the
// router, the proxy's checks or the upstream's absence.
func TestErrors_OpenAIShape(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(o *envOptions) { o.auth = httpapi.Auth{Mode: httpapi.AuthAPIKey} })
	k, err := e.mem.CreateKey(ctx, agentmem.KeyInput{Scope: "user:alice"})
	if err != nil {
		t.Fatal(err)
	}
	refused := refusingUpstream(t)
	down := newEnv(t, func(o *envOptions) { o.proxy.Upstream = &proxy.Upstream{BaseURL: refused + "/v1"}; o.noUp = true })
	none := newEnv(t, func(o *envOptions) { o.noUp = true })

	embed := func(c openai.Client, params openai.EmbeddingNewParams) error {
		_, err := c.Embeddings.New(ctx, params)
		return err
	}
	chat := func(c openai.Client) error {
		_, err := c.Chat.Completions.New(ctx, chatParams(openai.UserMessage("hi")))
		return err
	}
	text := openai.EmbeddingNewParamsInputUnion{OfString: openai.String("hi")}
	for _, c := range []struct {
		name             string
		call             func() error
		status           int
		typ, code, param string
	}{
		{"no key", func() error { return chat(e.client(option.WithAPIKey(""))) }, 401, "invalid_request_error", "invalid_api_key", ""},
		{"a wrong key", func() error { return chat(e.client(option.WithAPIKey("am_nope"))) }, 401, "invalid_request_error", "invalid_api_key", ""},
		{"a wrong key, embeddings", func() error {
			return embed(e.client(option.WithAPIKey("am_nope")), openai.EmbeddingNewParams{Model: "m", Input: text})
		},
			401, "invalid_request_error", "invalid_api_key", ""},
		{"a wrong key, unknown route", func() error {
			c := e.client(option.WithAPIKey("am_nope"))
			return c.Get(ctx, "fine_tuning/jobs", nil, nil)
		}, 401, "invalid_request_error", "invalid_api_key", ""},
		{"no model", func() error {
			return embed(e.client(option.WithAPIKey(k.Token)), openai.EmbeddingNewParams{Input: text})
		},
			400, "invalid_request_error", agentmem.EINVALID, "model"},
		{"empty input", func() error {
			return embed(e.client(option.WithAPIKey(k.Token)), openai.EmbeddingNewParams{Model: "m", Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: []string{}}})
		}, 400, "invalid_request_error", agentmem.EINVALID, "input"},
		{"no messages", func() error {
			c := e.client(option.WithAPIKey(k.Token))
			_, err := c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "m"})
			return err
		}, 400, "invalid_request_error", agentmem.EINVALID, "messages"},
		{"unknown route", func() error {
			c := e.client(option.WithAPIKey(k.Token))
			return c.Get(ctx, "fine_tuning/jobs", nil, nil)
		}, 404, "invalid_request_error", agentmem.ENOTFOUND, ""},
		{"a base URL without /v1", func() error {
			c := e.client(option.WithAPIKey(k.Token), option.WithBaseURL(e.srv.URL+"/openai/"))
			return chat(c)
		}, 404, "invalid_request_error", agentmem.ENOTFOUND, ""},
		{"the upstream refuses connections", func() error { return chat(down.client()) }, 502, "server_error", "upstream_unreachable", ""},
		{"the upstream refuses connections, embeddings", func() error { return embed(down.client(), openai.EmbeddingNewParams{Model: "m", Input: text}) },
			502, "server_error", "upstream_unreachable", ""},
		{"the upstream refuses connections, models", func() error {
			c := down.client()
			_, err := c.Models.List(ctx)
			return err
		}, 502, "server_error", "upstream_unreachable", ""},
		{"no upstream", func() error { return embed(none.client(), openai.EmbeddingNewParams{Model: "m", Input: text}) }, 503, "server_error", "no_upstream", ""},
	} {
		err := c.call()
		if err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		ae := sdkError(t, c.name, err)
		if ae.StatusCode != c.status || ae.Type != c.typ || ae.Code != c.code || ae.Param != c.param || ae.Message == "" {
			t.Errorf("%s: %d type %q code %q param %q (%q); want %d %q %q %q", c.name, ae.StatusCode, ae.Type, ae.Code, ae.Param, ae.Message, c.status, c.typ, c.code, c.param)
		}
		for _, f := range []string{"message", "type", "param", "code"} {
			if _, ok := ae.JSON.ExtraFields[f]; ok || !strings.Contains(ae.RawJSON(), `"`+f+`":`) {
				t.Errorf("%s: no %q in %s", c.name, f, ae.RawJSON())
			}
		}
		if strings.Contains(ae.RawJSON(), refused) || strings.Contains(ae.RawJSON(), strings.TrimPrefix(refused, "http://")) {
			t.Errorf("%s: the upstream's address in %s", c.name, ae.RawJSON())
		}
		// No model server: no retry can help, and the SDKs are told so
		// (they retry a 503 otherwise, a second and more each call).
		if c.code == "no_upstream" && ae.Response.Header.Get("X-Should-Retry") != "false" {
			t.Errorf("%s: X-Should-Retry %q, want false", c.name, ae.Response.Header.Get("X-Should-Retry"))
		}
	}
}

// TestErrors_RateLimited: the REST API's own rate limit answers a proxy
// request in OpenAI's shape too, with its Retry-After.
func TestErrors_RateLimited(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(o *envOptions) { o.auth = httpapi.Auth{Mode: httpapi.AuthAPIKey, Rate: 0.001, Burst: 1} })
	k, err := e.mem.CreateKey(ctx, agentmem.KeyInput{Scope: "user:alice"})
	if err != nil {
		t.Fatal(err)
	}
	c := e.client(option.WithAPIKey(k.Token))
	var last error
	for range 2 {
		_, last = c.Embeddings.New(ctx, openai.EmbeddingNewParams{Model: "m", Input: openai.EmbeddingNewParamsInputUnion{OfString: openai.String("hi")}})
	}
	ae := sdkError(t, "the second request", last)
	if ae.StatusCode != 429 || ae.Type != "rate_limit_error" || ae.Code != "rate_limit_exceeded" || ae.Response.Header.Get("Retry-After") == "" {
		t.Errorf("429: %d %q %q, Retry-After %q", ae.StatusCode, ae.Type, ae.Code, ae.Response.Header.Get("Retry-After"))
	}
}

// TestErrors_UpstreamAddressHidden: no error names the upstream's address
// (its URL, host or port), whether it refuses connections, times out,
// or answers 5xx with its address in the body, on every API.
func TestErrors_UpstreamAddressHidden(t *testing.T) {
	refused := refusingUpstream(t)
	e := newEnv(t, func(o *envOptions) { o.proxy.Timeout = 200 * time.Millisecond })
	down := newEnv(t, func(o *envOptions) {
		o.proxy.Upstream = &proxy.Upstream{BaseURL: refused + "/v1", APIKey: "k"}
		o.noUp = true
	})

	// What would give an upstream away: its URL, host:port, host and port.
	secrets := func(base string) []string {
		u, err := url.Parse(base)
		if err != nil {
			t.Fatal(err)
		}
		return []string{base, u.Host, u.Port(), "127.0.0.1", "localhost"}
	}
	leaks := func(name, body string, secrets []string) {
		t.Helper()
		for _, s := range secrets {
			if strings.Contains(body, s) {
				t.Errorf("%s: the body names the upstream (%q): %s", name, s, body)
			}
		}
	}
	address := e.fake.URL
	inBody := `{"error":{"message":"upstream ` + address + `/v1 (127.0.0.1:` + strings.TrimPrefix(address, "http://127.0.0.1:") + `) failed: dial tcp ` + address + `","type":"server_error","param":null,"code":null}}`
	faults := []struct {
		name  string
		reply llmtest.Reply
		want  int
	}{
		{"a 500 naming its address", llmtest.Reply{Status: 500, Body: inBody}, 500},
		{"a 503 page naming its address", llmtest.Reply{Status: 503, ContentType: "text/html", Body: "<h1>503</h1> backend " + address + " is down"}, 503},
		{"a 502 in plain text", llmtest.Reply{Status: 502, ContentType: "text/plain", Body: "dial tcp " + strings.TrimPrefix(address, "http://") + ": connection refused"}, 502},
		{"a timeout", llmtest.Hang(), 504},
	}
	apis := []struct {
		name string
		push func(llmtest.Reply)
		call func(c openai.Client) error
	}{
		{"chat", func(r llmtest.Reply) { e.fake.Push(r) }, func(c openai.Client) error {
			_, err := c.Chat.Completions.New(ctx, chatParams(openai.UserMessage("hi")))
			return err
		}},
		{"embeddings", func(r llmtest.Reply) { e.fake.PushEmbedding(r) }, func(c openai.Client) error {
			_, err := c.Embeddings.New(ctx, openai.EmbeddingNewParams{Model: "m", Input: openai.EmbeddingNewParamsInputUnion{OfString: openai.String("hi")}})
			return err
		}},
	}
	for _, api := range apis {
		for _, f := range faults {
			name := api.name + ": " + f.name
			api.push(f.reply)
			ae := sdkError(t, name, api.call(e.client()))
			if ae.StatusCode != f.want {
				t.Errorf("%s: %d, want %d", name, ae.StatusCode, f.want)
			}
			leaks(name, ae.RawJSON(), secrets(address))
			leaks(name+" (message)", ae.Message, secrets(address))
		}
		name := api.name + ": refused connections"
		ae := sdkError(t, name, api.call(down.client()))
		if ae.StatusCode != http.StatusBadGateway {
			t.Errorf("%s: %d, want 502", name, ae.StatusCode)
		}
		leaks(name, ae.RawJSON(), secrets(refused))
	}
}

// refusingUpstream returns the base URL of an address that refuses
// connections: loopback port 1, where nothing listens and which is no
// ephemeral port. (A port listened on and closed was handed again to
// another test's server, running in parallel, which answered 404.)
func refusingUpstream(t testing.TB) string {
	t.Helper()
	const addr = "127.0.0.1:1"
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Fatalf("%s accepts connections: it cannot stand for an upstream that refuses them", addr)
	}
	return "http://" + addr
}
