package mcp_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/httpapi"
	"github.com/agentmem/agentmem/internal/apptest"
	"github.com/agentmem/agentmem/llm/llmtest"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"
)

// TestFunctions_AgentLoop: an OpenAI function-calling loop that is not on
// MCP gets the same tools from GET /v1/tools, hands them to its model, and
// runs the model's calls with POST /v1/users/{user}/tools/{name}.
func TestFunctions_AgentLoop(t *testing.T) {
	mem := apptest.Open(t)
	srv := httptest.NewServer(httpapi.NewHandler(nil, mem.Service, httpapi.Options{}))
	t.Cleanup(srv.Close)

	res, err := http.Get(srv.URL + "/v1/tools")
	if err != nil {
		t.Fatal(err)
	}
	var listed struct {
		Tools []struct {
			Type     string
			Function struct {
				Name, Description string
				Parameters        json.RawMessage
			}
		}
	}
	if err := json.NewDecoder(res.Body).Decode(&listed); err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	var tools []openai.ChatCompletionToolUnionParam
	for _, tl := range listed.Tools {
		var schema jsonschema.Schema
		if err := json.Unmarshal(tl.Function.Parameters, &schema); err != nil {
			t.Fatalf("%s: parameters %s: %v", tl.Function.Name, tl.Function.Parameters, err)
		}
		if _, err := schema.Resolve(nil); err != nil || schema.Type != "object" || tl.Type != "function" || tl.Function.Description == "" {
			t.Errorf("%s: %s (%v)", tl.Function.Name, tl.Function.Parameters, err)
		}
		var params shared.FunctionParameters
		json.Unmarshal(tl.Function.Parameters, &params)
		tools = append(tools, openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name: tl.Function.Name, Description: openai.String(tl.Function.Description), Parameters: params,
		}))
	}
	if len(tools) != 12 {
		t.Fatalf("%d tools", len(tools))
	}

	// The agent loop, with a fake model that calls remember, then answers.
	fake := llmtest.NewServer(t)
	fake.Push(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "c1", Function: llmtest.FunctionCall{Name: "remember", Arguments: `{"text":"User is a night owl.","category":"habit"}`}}}},
		llmtest.Text("Noted: you are a night owl."))
	model := openai.NewClient(option.WithBaseURL(fake.BaseURL()), option.WithAPIKey("k"), option.WithMaxRetries(0))
	params := openai.ChatCompletionNewParams{Model: "gpt-4o", Tools: tools, Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("I do my best work at 2am.")}}
	for range 3 {
		got, err := model.Chat.Completions.New(ctx, params)
		if err != nil {
			t.Fatal(err)
		}
		msg := got.Choices[0].Message
		if len(msg.ToolCalls) == 0 {
			if msg.Content != "Noted: you are a night owl." {
				t.Errorf("final answer %q", msg.Content)
			}
			break
		}
		params.Messages = append(params.Messages, msg.ToParam())
		for _, tc := range msg.ToolCalls {
			status, body := post(t, srv.URL+"/v1/users/ada/tools/"+tc.Function.Name, tc.Function.Arguments)
			if status != 200 {
				t.Fatalf("%s: %d %s", tc.Function.Name, status, body)
			}
			params.Messages = append(params.Messages, openai.ToolMessage(body, tc.ID))
		}
	}
	if ms, _, err := mem.FindMemories(ctx, "ada", agentmem.MemoryFilter{}); err != nil || len(ms) != 1 || ms[0].Text != "User is a night owl." {
		t.Errorf("ada's memories: %v, %v", ms, err)
	}
	if n := len(fake.ChatRequests()[0].Messages); n != 1 {
		t.Errorf("first request has %d messages", n)
	}

	// Every tool runs from its JSON arguments; bad ones are 400, an
	// unknown tool 404.
	for _, c := range []struct {
		name, args string
		status     int
		want       string
	}{
		{"search_memory", `{"query":"night owl"}`, 200, "night owl"},
		{"retrieve_user_facts", `{"query":"When does the user work?"}`, 200, "night owl"},
		{"append_messages", `{"thread_id":"t1","messages":[{"role":"user","content":"hello"}]}`, 200, `"thread_id":"t1"`},
		{"get_thread_history", `{"thread_id":"t1"}`, 200, "hello"},
		{"get_context", `{"thread_id":"t1","input":"and now?"}`, 200, "hello"},
		{"list_threads", `{}`, 200, `"id":"t1"`},
		{"manage_notes", `{"operation":"append","content":"Works nights."}`, 200, "Works nights."},
		{"get_profile", ``, 200, `"found":false`},
		{"find_entities", `{}`, 200, `"entities":[]`},
		{"end_thread", `{"thread_id":"t1"}`, 200, `"ended"`},
		{"remember", `{"text":42}`, 400, "schema"},
		{"remember", `{"text":"x","colour":"red"}`, 400, "colour"},
		{"remember", `[1]`, 400, "object"},
		{"forget", `{"memory_id":"nope"}`, 404, "not found"},
		{"fly", `{}`, 404, "No tool"},
	} {
		status, body := post(t, srv.URL+"/v1/users/ada/tools/"+c.name, c.args)
		if status != c.status || !strings.Contains(body, c.want) {
			t.Errorf("%s %s: %d %s, want %d with %q", c.name, c.args, status, body, c.status, c.want)
		}
	}
}

func post(t *testing.T, url, body string) (int, string) {
	t.Helper()
	res, err := http.Post(url, "application/json", bytes.NewReader([]byte(body)))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}
