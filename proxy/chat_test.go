package proxy_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/httpapi"
	"github.com/agentmem/agentmem/internal/testutil"
	"github.com/agentmem/agentmem/llm/llmtest"
	"github.com/agentmem/agentmem/proxy"
	"github.com/google/go-cmp/cmp"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"
)

func chatParams(msgs ...openai.ChatCompletionMessageParamUnion) openai.ChatCompletionNewParams {
	return openai.ChatCompletionNewParams{Model: "gpt-4o-mini", Messages: msgs}
}

// TestChat_RemembersAcrossSessions: an application that sends only the
// new turn, as the SDK's simplest use does, gets the thread's history in
// full mode, and in a new thread what it told agentmem before.
func TestChat_RemembersAcrossSessions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.client()
	var res *http.Response
	got, err := c.Chat.Completions.New(ctx, chatParams(openai.SystemMessage("You are a travel agent."), openai.UserMessage("I live in Lisbon and I am allergic to peanuts.")),
		option.WithResponseInto(&res))
	if err != nil {
		t.Fatal(err)
	}
	if want := "echo: I live in Lisbon and I am allergic to peanuts."; got.Choices[0].Message.Content != want {
		t.Errorf("answer %q, want %q", got.Choices[0].Message.Content, want)
	}
	thread := res.Header.Get(proxy.HeaderThreadOut)
	if thread == "" || res.Header.Get(proxy.HeaderMode) != agentmem.MemoryFull || res.Header.Get(proxy.HeaderContextTokens) == "" {
		t.Errorf("headers: thread %q, mode %q, tokens %q", thread, res.Header.Get(proxy.HeaderMode), res.Header.Get(proxy.HeaderContextTokens))
	}
	if diff := cmp.Diff([]string{"user: I live in Lisbon and I am allergic to peanuts.", "assistant: echo: I live in Lisbon and I am allergic to peanuts."},
		e.thread(t, proxy.DefaultLocalUser, thread)); diff != "" {
		t.Errorf("stored (-want +got):\n%s", diff)
	}

	// The same session, the next turn: the history comes from agentmem.
	if _, err := c.Chat.Completions.New(ctx, chatParams(openai.UserMessage("What should I eat tonight?"))); err != nil {
		t.Fatal(err)
	}
	sent := e.fake.ChatRequests()[1].Messages
	var roles []string
	for _, m := range sent {
		roles = append(roles, m.Role+": "+m.Content)
	}
	want := []string{"user: I live in Lisbon and I am allergic to peanuts.", "assistant: echo: I live in Lisbon and I am allergic to peanuts.", "user: What should I eat tonight?"}
	if len(roles) < 3 || !cmp.Equal(want, roles[len(roles)-3:]) {
		t.Errorf("second call sent:\n%s", strings.Join(roles, "\n"))
	}

	// Another thread, once the first is indexed: the memory of Lisbon
	// comes with the question.
	eventually(t, "the memory of Lisbon", func() bool {
		ms, _, err := e.mem.FindMemories(ctx, proxy.DefaultLocalUser, agentmem.MemoryFilter{})
		return err == nil && contains(memoryTexts(ms), "Lisbon")
	})
	if _, err := c.Chat.Completions.New(ctx, chatParams(openai.UserMessage("Where do I live?")), header(proxy.HeaderThread, "next-week")); err != nil {
		t.Fatal(err)
	}
	reqs := e.fake.ChatRequests()
	var texts []string
	for _, m := range reqs[len(reqs)-1].Messages {
		texts = append(texts, m.Role+": "+m.Content)
	}
	if !contains(texts, "Lisbon") || contains(texts, "What should I eat tonight?") {
		t.Errorf("a new thread sent:\n%s", strings.Join(texts, "\n"))
	}
}

func memoryTexts(ms []*agentmem.Memory) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Text)
	}
	return out
}

// TestChat_Stream: a streamed answer reaches the client chunk by chunk
// and is stored once it ends.
func TestChat_Stream(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.client()
	stream := c.Chat.Completions.NewStreaming(ctx, chatParams(openai.UserMessage("tell me a story about a cat")), header(proxy.HeaderThread, "s1"))
	var acc openai.ChatCompletionAccumulator
	chunks := 0
	for stream.Next() {
		acc.AddChunk(stream.Current())
		chunks++
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	want := "echo: tell me a story about a cat"
	if acc.Choices[0].Message.Content != want || chunks < 5 {
		t.Errorf("streamed %q in %d chunks", acc.Choices[0].Message.Content, chunks)
	}
	if diff := cmp.Diff([]string{"user: tell me a story about a cat", "assistant: " + want}, e.thread(t, proxy.DefaultLocalUser, "s1")); diff != "" {
		t.Errorf("stored (-want +got):\n%s", diff)
	}
}

// TestChat_ToolCalls: a tool call the model asks for reaches the client,
// streamed and not; the client's tool answer and the model's final answer
// are stored in order, each once, although the client resends them.
func TestChat_ToolCalls(t *testing.T) {
	t.Parallel()
	for _, streamed := range []bool{false, true} {
		name := map[bool]string{false: "Complete", true: "Stream"}[streamed]
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			c := e.client(header(proxy.HeaderThread, "tools"))
			call := llmtest.ToolCall{ID: "call_1", Type: "function", Function: llmtest.FunctionCall{Name: "get_weather", Arguments: `{"city":"Lisbon"}`}}
			e.fake.Push(llmtest.Reply{ToolCalls: []llmtest.ToolCall{call}}, llmtest.Text("It is sunny in Lisbon."))
			params := chatParams(openai.UserMessage("What is the weather in Lisbon?"))
			params.Tools = []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
				Name: "get_weather", Parameters: shared.FunctionParameters{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}},
			})}
			var msg openai.ChatCompletionMessage
			if streamed {
				stream := c.Chat.Completions.NewStreaming(ctx, params)
				var acc openai.ChatCompletionAccumulator
				for stream.Next() {
					acc.AddChunk(stream.Current())
				}
				if err := stream.Err(); err != nil {
					t.Fatal(err)
				}
				msg = acc.Choices[0].Message
			} else {
				got, err := c.Chat.Completions.New(ctx, params)
				if err != nil {
					t.Fatal(err)
				}
				msg = got.Choices[0].Message
			}
			if len(msg.ToolCalls) != 1 || msg.ToolCalls[0].ID != "call_1" || msg.ToolCalls[0].Function.Arguments != `{"city":"Lisbon"}` {
				t.Fatalf("tool calls %+v", msg.ToolCalls)
			}
			params.Messages = append(params.Messages, msg.ToParam(), openai.ToolMessage("sunny, 24°C", "call_1"))
			got, err := c.Chat.Completions.New(ctx, params)
			if err != nil {
				t.Fatal(err)
			}
			if got.Choices[0].Message.Content != "It is sunny in Lisbon." {
				t.Errorf("final answer %q", got.Choices[0].Message.Content)
			}
			want := []string{
				"user: What is the weather in Lisbon?",
				`assistant:  →get_weather({"city":"Lisbon"})`,
				"tool: [call_1] sunny, 24°C",
				"assistant: It is sunny in Lisbon.",
			}
			if diff := cmp.Diff(want, e.thread(t, proxy.DefaultLocalUser, "tools")); diff != "" {
				t.Errorf("stored (-want +got):\n%s", diff)
			}
			// The model saw the call and its answer, paired.
			last := e.fake.ChatRequests()[1].Messages
			n := len(last)
			if n < 3 || len(last[n-2].ToolCalls) != 1 || last[n-1].ToolCallID != "call_1" {
				t.Errorf("second request's messages: %+v", last)
			}
		})
	}
}

// TestChat_ClientGoesAway: a client that leaves mid-stream has what
// arrived stored, marked incomplete.
func TestChat_ClientGoesAway(t *testing.T) {
	e := newEnv(t)
	e.fake.Push(llmtest.Reply{Content: "one two three four five six seven eight nine ten", ChunkDelay: 30 * time.Millisecond})
	cctx, cancel := context.WithCancel(ctx)
	c := e.client()
	stream := c.Chat.Completions.NewStreaming(cctx, chatParams(openai.UserMessage("count")), header(proxy.HeaderThread, "gone"))
	for i := 0; i < 4 && stream.Next(); i++ {
	}
	cancel()
	stream.Close()
	e.partialAnswer(t, "gone", "one two", "ten")
}

// TestChat_UpstreamFails: the upstream's errors reach the client in
// OpenAI's shape with its status and Retry-After (and the proxy's own
// message: TestUpstreamErrors_Hidden), the user's turn is
// stored all the same, and a timeout or a missing upstream says what
// happened.
func TestChat_UpstreamFails(t *testing.T) {
	e := newEnv(t, func(o *envOptions) { o.proxy.Timeout = 300 * time.Millisecond })
	c := e.client(header(proxy.HeaderThread, "fails"))
	for _, tc := range []struct {
		reply  llmtest.Reply
		status int
		retry  string
		msg    string
	}{
		{llmtest.RateLimited("7"), 429, "7", "The model server answered 429 Too Many Requests"},
		{llmtest.Fail(500), 500, "", "The model server answered 500 Internal Server Error"},
		{llmtest.Hang(), 504, "", "did not answer within 300ms"},
	} {
		e.fake.Push(tc.reply)
		_, err := c.Chat.Completions.New(ctx, chatParams(openai.UserMessage("status "+http.StatusText(tc.status))))
		var apiErr *openai.Error
		if !errors.As(err, &apiErr) {
			t.Fatalf("%d: %v", tc.status, err)
		}
		if apiErr.StatusCode != tc.status || apiErr.Response.Header.Get("Retry-After") != tc.retry || !strings.Contains(apiErr.Message, tc.msg) {
			t.Errorf("got %d %q (Retry-After %q), want %d %q (%q)", apiErr.StatusCode, apiErr.Message, apiErr.Response.Header.Get("Retry-After"), tc.status, tc.msg, tc.retry)
		}
	}
	want := []string{"user: status Too Many Requests", "user: status Internal Server Error", "user: status Gateway Timeout"}
	if diff := cmp.Diff(want, e.thread(t, proxy.DefaultLocalUser, "fails")); diff != "" {
		t.Errorf("stored (-want +got):\n%s", diff)
	}

	none := newEnv(t, func(o *envOptions) { o.noUp = true })
	nc := none.client()
	_, err := nc.Chat.Completions.New(ctx, chatParams(openai.UserMessage("hello")))
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 503 || !strings.Contains(apiErr.Message, "--proxy-upstream") {
		t.Errorf("no upstream: %v", err)
	}
}

// TestChat_ResendsHistory: an application that keeps its conversation
// and resends it whole on every call, as most do, has each turn stored
// once, on SQLite and PostgreSQL.
func TestChat_ResendsHistory(t *testing.T) {
	t.Parallel()
	for _, backend := range []string{"SQLite", "PostgreSQL"} {
		t.Run(backend, func(t *testing.T) {
			e := newEnv(t, func(o *envOptions) {
				if backend == "PostgreSQL" {
					o.db = testutil.MustCreateSchema(t)
				}
			})
			c := e.client(header(proxy.HeaderThread, "resend"))
			msgs := []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("You are a coach.")}
			var want []string
			for _, q := range []string{"I want to run a marathon.", "How often should I train?", "And what should I eat?"} {
				msgs = append(msgs, openai.UserMessage(q))
				got, err := c.Chat.Completions.New(ctx, chatParams(msgs...))
				if err != nil {
					t.Fatal(err)
				}
				msgs = append(msgs, got.Choices[0].Message.ToParam())
				want = append(want, "user: "+q, "assistant: "+got.Choices[0].Message.Content)
			}
			if diff := cmp.Diff(want, e.thread(t, proxy.DefaultLocalUser, "resend")); diff != "" {
				t.Errorf("stored (-want +got):\n%s", diff)
			}
		})
	}
}

// TestChat_EditedAnswers: an application that shows the answers
// re-rendered (or lets its user edit them) and resends them so has each
// turn stored once, the answers as the model gave them, while the model
// is sent the application's versions; on SQLite and PostgreSQL.
func TestChat_EditedAnswers(t *testing.T) {
	t.Parallel()
	for _, backend := range []string{"SQLite", "PostgreSQL"} {
		t.Run(backend, func(t *testing.T) {
			e := newEnv(t, func(o *envOptions) {
				if backend == "PostgreSQL" {
					o.db = testutil.MustCreateSchema(t)
				}
			})
			c := e.client(header(proxy.HeaderThread, "edited"))
			msgs := []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("You are a coach.")}
			var want []string
			for _, q := range []string{"I want to run a marathon.", "How often should I train?", "And what should I eat?"} {
				msgs = append(msgs, openai.UserMessage(q))
				got, err := c.Chat.Completions.New(ctx, chatParams(msgs...))
				if err != nil {
					t.Fatal(err)
				}
				a := got.Choices[0].Message.Content
				msgs = append(msgs, openai.AssistantMessage(strings.ToUpper(strings.TrimPrefix(a, "echo: ")))) // re-rendered
				want = append(want, "user: "+q, "assistant: "+a)
			}
			if diff := cmp.Diff(want, e.thread(t, proxy.DefaultLocalUser, "edited")); diff != "" {
				t.Errorf("stored (-want +got):\n%s", diff)
			}
			last := e.fake.ChatRequests()[2]
			var sent []string
			for _, m := range last.Messages {
				if m.Role != "system" {
					sent = append(sent, m.Role+": "+m.Content)
				}
			}
			wantSent := []string{"user: I want to run a marathon.", "assistant: I WANT TO RUN A MARATHON.", "user: How often should I train?",
				"assistant: HOW OFTEN SHOULD I TRAIN?", "user: And what should I eat?"}
			if diff := cmp.Diff(wantSent, sent); diff != "" {
				t.Errorf("sent upstream (-want +got):\n%s", diff)
			}
		})
	}
}

// TestChat_Passthrough: fields agentmem does not read reach the upstream
// untouched, and an Azure OpenAI upstream is called at its deployment's
// path with its api-key.
func TestChat_Passthrough(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.client()
	_, err := c.Chat.Completions.New(ctx, chatParams(openai.UserMessage("hi")),
		option.WithJSONSet("x_vendor", map[string]any{"a": []any{1.5, "b"}}), option.WithJSONSet("seed", 42))
	if err != nil {
		t.Fatal(err)
	}
	body := string(e.upstreamBodies("/v1/chat/completions")[0])
	if !strings.Contains(body, `"x_vendor":{"a":[1.5,"b"]}`) || !strings.Contains(body, `"seed":42`) {
		t.Errorf("upstream body %s", body)
	}

	az := newEnv(t, func(o *envOptions) { o.noUp = true })
	fake := llmtest.NewServer(t)
	fake.RequireAPIKey("az-key")
	az.srv.Close()
	az.srv = httptest.NewServer(httpapi.NewHandler(nil, az.mem.Service, httpapi.Options{Proxy: proxy.NewHandler(nil, az.mem.Service, proxy.Options{
		Upstream: &proxy.Upstream{AzureEndpoint: fake.URL, APIKey: "az-key"},
	})}))
	t.Cleanup(az.srv.Close)
	ac := az.client()
	got, err := ac.Chat.Completions.New(ctx, chatParams(openai.UserMessage("hello Azure")))
	if err != nil {
		t.Fatal(err)
	}
	reqs := fake.Requests()
	if got.Choices[0].Message.Content != "echo: hello Azure" || len(reqs) != 1 || reqs[0].Path != "/openai/deployments/gpt-4o-mini/chat/completions" ||
		reqs[0].Query.Get("api-version") != proxy.DefaultAzureAPIVersion {
		t.Errorf("Azure: %q, requests %+v", got.Choices[0].Message.Content, reqs)
	}
}

// TestChat_LongerThanWriteTimeout: a stream outlasts the server's write
// timeout (which bounds REST answers): the proxy lifts it.
func TestChat_LongerThanWriteTimeout(t *testing.T) {
	e := newEnv(t)
	e.srv.Close()
	e.srv = httptest.NewUnstartedServer(httpapi.NewHandler(nil, e.mem.Service, httpapi.Options{Proxy: proxy.NewHandler(nil, e.mem.Service, proxy.Options{
		Upstream: &proxy.Upstream{BaseURL: e.fake.BaseURL()},
	})}))
	e.srv.Config.WriteTimeout = 200 * time.Millisecond
	e.srv.Start()
	t.Cleanup(e.srv.Close)
	e.fake.Push(llmtest.Reply{Content: "one two three four five six seven eight", ChunkDelay: 60 * time.Millisecond})
	c := e.client()
	stream := c.Chat.Completions.NewStreaming(ctx, chatParams(openai.UserMessage("slowly")))
	var acc openai.ChatCompletionAccumulator
	for stream.Next() {
		acc.AddChunk(stream.Current())
	}
	got := ""
	if len(acc.Choices) > 0 {
		got = acc.Choices[0].Message.Content
	}
	if err := stream.Err(); err != nil || got != "one two three four five six seven eight" {
		t.Fatalf("stream: %v, %q", err, got)
	}
}

// TestChat_LegacyFunctions: the legacy function-calling messages (an
// assistant's function_call, a "function" answer) reach the model in
// place; the call and its answer are not stored, the turns around them
// are.
func TestChat_LegacyFunctions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	body := `{"model":"gpt-4o","messages":[` +
		`{"role":"user","content":"Weather in Oslo?"},` +
		`{"role":"assistant","content":null,"function_call":{"name":"weather","arguments":"{\"city\":\"Oslo\"}"}},` +
		`{"role":"function","name":"weather","content":"snow"}]}`
	res, err := http.Post(e.srv.URL+"/openai/v1/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	thread := res.Header.Get(proxy.HeaderThreadOut)
	if res.StatusCode != 200 {
		t.Fatalf("status %d", res.StatusCode)
	}
	sent := string(e.upstreamBodies("/v1/chat/completions")[0])
	if !strings.Contains(sent, `"function_call":{"name":"weather"`) || !strings.HasSuffix(strings.TrimSpace(sent[:strings.Index(sent, `],"model"`)]), `{"role":"function","name":"weather","content":"snow"}`) {
		t.Errorf("upstream got %s", sent)
	}
	want := []string{"user: Weather in Oslo?", "assistant: echo: Weather in Oslo?"}
	if diff := cmp.Diff(want, e.thread(t, proxy.DefaultLocalUser, thread)); diff != "" {
		t.Errorf("stored (-want +got):\n%s", diff)
	}
}
