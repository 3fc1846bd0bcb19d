package proxy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/httpapi"
	"github.com/agentmem/agentmem/llm/llmtest"
	"github.com/agentmem/agentmem/proxy"
	"github.com/google/go-cmp/cmp"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
)

// idle waits until the background jobs are done, so that what a request
// reads (memories, profile) no longer changes.
func (e *env) idle(t testing.TB) {
	t.Helper()
	eventually(t, "the jobs to finish", func() bool {
		b, err := e.mem.JobBacklog(ctx)
		return err == nil && len(b) == 0
	})
}

// seed gives the user a thread with two earlier turns and a memory,
// indexed.
func (e *env) seed(t testing.TB, user, thread string) {
	t.Helper()
	if err := e.mem.CreateThread(ctx, user, &agentmem.Thread{ID: thread}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.mem.AppendMessages(ctx, user, thread, []*agentmem.Message{
		{Role: agentmem.RoleUser, Content: "Hello there."}, {Role: agentmem.RoleAssistant, Content: "Hi! How can I help?"},
	}, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := e.mem.CreateMemory(ctx, user, agentmem.MemoryInput{Text: "User lives in Lisbon."}); err != nil {
		t.Fatal(err)
	}
	e.idle(t)
}

// TestModes: the upstream receives exactly the request each memory mode
// makes of the same call (golden files), and the thread stores the new
// turn once in every mode.
func TestModes(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{agentmem.MemoryAuto, agentmem.MemoryFull, agentmem.MemoryAugment, agentmem.MemoryOff} {
		t.Run(mode, func(t *testing.T) {
			e := newEnv(t)
			e.seed(t, "ada", "trip")
			c := e.client(header(proxy.HeaderUser, "ada"), header(proxy.HeaderThread, "trip"), header(proxy.HeaderMemory, mode))
			var res *http.Response
			params := openai.ChatCompletionNewParams{Model: "gpt-4o", Temperature: openai.Float(0.2), Messages: []openai.ChatCompletionMessageParamUnion{
				openai.SystemMessage("You are a travel agent."),
				openai.UserMessage("Hello there."), openai.AssistantMessage("Hi! How can I help?"),
				openai.UserMessage("Where do I live?"),
			}}
			if _, err := c.Chat.Completions.New(ctx, params, option.WithResponseInto(&res)); err != nil {
				t.Fatal(err)
			}
			golden(t, "chat_"+mode, e.upstreamBodies("/v1/chat/completions")[0])
			wantMode := map[string]string{agentmem.MemoryAuto: agentmem.MemoryAugment}[mode]
			if wantMode == "" {
				wantMode = mode
			}
			if got := res.Header.Get(proxy.HeaderMode); got != wantMode {
				t.Errorf("mode header %q, want %q", got, wantMode)
			}
			want := []string{"user: Hello there.", "assistant: Hi! How can I help?", "user: Where do I live?", "assistant: echo: Where do I live?"}
			if diff := cmp.Diff(want, e.thread(t, "ada", "trip")); diff != "" {
				t.Errorf("stored (-want +got):\n%s", diff)
			}
		})
	}
}

// TestModes_Responses: the Responses API's full mode, golden.
func TestModes_Responses(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.seed(t, "ada", "trip")
	c := e.client(header(proxy.HeaderUser, "ada"), header(proxy.HeaderThread, "trip"))
	if _, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-4o", Instructions: openai.String("You are a travel agent."),
		Input: textInput("Where do I live?")}); err != nil {
		t.Fatal(err)
	}
	golden(t, "responses_full", e.upstreamBodies("/v1/responses")[0])
}

// TestAuth: with API keys, a user's key speaks for its user only; a
// tenant's names its user by header; an admin's may use the body's user.
func TestAuth(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(o *envOptions) { o.auth = httpapi.Auth{Mode: httpapi.AuthAPIKey} })
	key := func(scope string) string {
		k, err := e.mem.CreateKey(ctx, agentmem.KeyInput{Scope: scope})
		if err != nil {
			t.Fatal(err)
		}
		return k.Token
	}
	alice, tenant, admin := key("user:alice"), key("tenant:acme"), key("admin")
	ask := func(token string, opts ...option.RequestOption) (*http.Response, error) {
		var res *http.Response
		c := e.client(append([]option.RequestOption{option.WithAPIKey(token), option.WithResponseInto(&res)}, opts...)...)
		_, err := c.Chat.Completions.New(ctx, chatParams(openai.UserMessage("hi")), opts...)
		return res, err
	}
	status := func(err error) int {
		var apiErr *openai.Error
		if errors.As(err, &apiErr) {
			return apiErr.StatusCode
		}
		if err != nil {
			t.Fatalf("not an API error: %v", err)
		}
		return 200
	}
	for _, tc := range []struct {
		name  string
		token string
		opts  []option.RequestOption
		want  int
	}{
		{"user key", alice, nil, 200},
		{"user key naming itself", alice, []option.RequestOption{header(proxy.HeaderUser, "alice")}, 200},
		{"user key naming another by header", alice, []option.RequestOption{header(proxy.HeaderUser, "bob")}, 403},
		{"user key naming another in the body", alice, []option.RequestOption{option.WithJSONSet("user", "bob")}, 403},
		{"tenant key without a user", tenant, nil, 400},
		{"tenant key with a user", tenant, []option.RequestOption{header(proxy.HeaderUser, "carol")}, 200},
		{"tenant key with only the body's user", tenant, []option.RequestOption{option.WithJSONSet("user", "carol")}, 400},
		{"admin key with the body's user", admin, []option.RequestOption{option.WithJSONSet("user", "dave")}, 200},
		{"admin key without a user", admin, nil, 400},
		{"no key", "", nil, 401},
		{"a wrong key", "am_nope", nil, 401},
	} {
		_, err := ask(tc.token, tc.opts...)
		if got := status(err); got != tc.want {
			t.Errorf("%s: %d (%v), want %d", tc.name, got, err, tc.want)
		}
	}
	for user, want := range map[string]int{"alice": 4, "bob": 0, "tenant:acme/user:carol": 2, "dave": 2} {
		threads, _, err := e.mem.FindThreads(ctx, user, agentmem.ThreadFilter{})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, th := range threads {
			n += int(th.MessageCount)
		}
		if n != want {
			t.Errorf("%s has %d messages, want %d", user, n, want)
		}
	}
}

// downStore fails every call once down is set, as a database that went
// away does.
type downStore struct {
	agentmem.Store
	down *bool
}

func (s downStore) AppendMessages(ctx context.Context, userID, threadID string, msgs []*agentmem.Message, opt agentmem.AppendOptions) ([]*agentmem.Message, error) {
	if *s.down {
		return nil, fmt.Errorf("connection refused")
	}
	return s.Store.AppendMessages(ctx, userID, threadID, msgs, opt)
}

func (s downStore) OpenSession(ctx context.Context, userID, agentID string, t *agentmem.Thread) (*agentmem.Session, bool, error) {
	if *s.down {
		return nil, false, fmt.Errorf("connection refused")
	}
	return s.Store.OpenSession(ctx, userID, agentID, t)
}

func (s downStore) FindThreadByID(ctx context.Context, userID, threadID string) (*agentmem.Thread, error) {
	if *s.down {
		return nil, fmt.Errorf("connection refused")
	}
	return s.Store.FindThreadByID(ctx, userID, threadID)
}

// TestStoreDown: with the store down the proxy answers 503 with
// Retry-After, or with passthrough forwards the request unchanged and says
// memory was unavailable; either way the outage is logged once, as an
// error, with its cause.
func TestStoreDown(t *testing.T) {
	t.Parallel()
	for name, degrade := range map[string]string{"fail": "", "passthrough": proxy.DegradePassthrough} {
		t.Run(name, func(t *testing.T) {
			down := false
			var logged bytes.Buffer
			e := newEnv(t, func(o *envOptions) {
				o.proxy.Degrade = degrade
				o.wrapped = func(s agentmem.Store) agentmem.Store { return downStore{Store: s, down: &down} }
				o.log = slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelError}))
			})
			defer func() {
				if n := strings.Count(logged.String(), "level=ERROR"); n != 1 || !strings.Contains(logged.String(), "connection refused") {
					t.Errorf("the outage logged %d times (want once, with its cause):\n%s", n, logged.String())
				}
			}()
			c := e.client()
			down = true
			var res *http.Response
			params := chatParams(openai.SystemMessage("Be brief."), openai.UserMessage("still there?"))
			got, err := c.Chat.Completions.New(ctx, params, option.WithResponseInto(&res))
			if degrade == "" {
				var apiErr *openai.Error
				if !errors.As(err, &apiErr) || apiErr.StatusCode != 503 || apiErr.Response.Header.Get("Retry-After") == "" || len(e.fake.Requests()) != 0 {
					t.Fatalf("store down: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Choices[0].Message.Content != "echo: still there?" || !strings.Contains(res.Header.Get(proxy.HeaderUnavailable), "not stored") {
				t.Errorf("passthrough: %q, header %q", got.Choices[0].Message.Content, res.Header.Get(proxy.HeaderUnavailable))
			}
			var sent map[string]any
			if err := json.Unmarshal(e.upstreamBodies("/v1/chat/completions")[0], &sent); err != nil || len(sent["messages"].([]any)) != 2 {
				t.Errorf("passthrough sent %v", sent)
			}
		})
	}
}

// TestMetricsAndModels: /metrics counts the proxy's requests and tokens;
// the model list is the upstream's; an unknown path is an OpenAI-shaped
// 404.
func TestMetricsAndModels(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.client()
	if _, err := c.Chat.Completions.New(ctx, chatParams(openai.UserMessage("hello"))); err != nil {
		t.Fatal(err)
	}
	page, err := c.Models.List(ctx)
	if err != nil || len(page.Data) == 0 {
		t.Fatalf("models: %v %v", page, err)
	}
	res, err := http.Get(e.srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	for _, want := range []string{`agentmem_proxy_requests_total{api="chat",mode="auto",status="200"} 1`, `agentmem_proxy_context_tokens_total{kind="sent"}`, `agentmem_proxy_upstream_seconds_count{api="chat/completions"} 1`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	res, err = http.Post(e.srv.URL+"/openai/v1/fine_tuning/jobs", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 404 || !strings.Contains(string(b), `"type":"invalid_request_error"`) {
		t.Errorf("unknown path: %d %s", res.StatusCode, b)
	}
}

// TestUpstreamWithoutV1: an upstream base URL without its /v1 (a common
// slip with Ollama) gets a 404 that says what to check.
func TestUpstreamWithoutV1(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(o *envOptions) { o.noUp = true })
	fake := llmtest.NewServer(t)
	e.srv.Config.Handler = httpapi.NewHandler(nil, e.mem.Service, httpapi.Options{Proxy: proxy.NewHandler(nil, e.mem.Service, proxy.Options{
		Upstream: &proxy.Upstream{BaseURL: fake.URL + "/api"},
	})})
	c := e.client()
	_, err := c.Chat.Completions.New(ctx, chatParams(openai.UserMessage("hi")))
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 404 || !strings.Contains(apiErr.Message, "/v1 included") {
		t.Errorf("got %v", err)
	}
	if _, err := c.Models.Get(ctx, "gpt-4o"); err == nil {
		t.Error("models through a wrong base URL answered")
	}
	ok := newEnv(t)
	oc := ok.client()
	m, err := oc.Models.Get(ctx, "gpt-4o")
	if err != nil || m.ID != "gpt-4o" {
		t.Errorf("model: %+v, %v", m, err)
	}
}
