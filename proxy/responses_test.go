package proxy_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem/llm/llmtest"
	"github.com/agentmem/agentmem/proxy"
	"github.com/google/go-cmp/cmp"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
)

func textInput(s string) responses.ResponseNewParamsInputUnion {
	return responses.ResponseNewParamsInputUnion{OfString: openai.String(s)}
}

// respond calls the Responses API, streamed or not, and returns the
// response and the thread header.
func respond(t *testing.T, c openai.Client, streamed bool, params responses.ResponseNewParams, opts ...option.RequestOption) (*responses.Response, string) {
	t.Helper()
	var res *http.Response
	opts = append(opts, option.WithResponseInto(&res))
	if !streamed {
		got, err := c.Responses.New(ctx, params, opts...)
		if err != nil {
			t.Fatal(err)
		}
		return got, res.Header.Get(proxy.HeaderThreadOut)
	}
	stream := c.Responses.NewStreaming(ctx, params, opts...)
	var done *responses.Response
	var deltas strings.Builder
	for stream.Next() {
		ev := stream.Current()
		switch ev.Type {
		case "response.output_text.delta":
			deltas.WriteString(ev.Delta)
		case "response.completed":
			r := ev.Response
			done = &r
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if done == nil {
		t.Fatal("no response.completed event")
	}
	if deltas.String() != done.OutputText() {
		t.Errorf("deltas %q, completed %q", deltas.String(), done.OutputText())
	}
	return done, res.Header.Get(proxy.HeaderThreadOut)
}

// TestResponses_Continue: a client of the Responses API that continues by
// previous_response_id, as OpenAI's own server-side state works, gets the
// thread's history from agentmem: the upstream is sent the history and the
// new input, never the previous_response_id, and each turn is stored
// once; streamed and not.
func TestResponses_Continue(t *testing.T) {
	t.Parallel()
	for _, streamed := range []bool{false, true} {
		t.Run(map[bool]string{false: "Complete", true: "Stream"}[streamed], func(t *testing.T) {
			e := newEnv(t)
			c := e.client()
			first, thread := respond(t, c, streamed, responses.ResponseNewParams{Model: "gpt-4o", Instructions: openai.String("Be brief."), Input: textInput("I collect stamps from Japan.")})
			if first.OutputText() != "echo: I collect stamps from Japan." || !strings.HasPrefix(first.ID, "resp_") || thread == "" {
				t.Fatalf("first: %q, id %q, thread %q", first.OutputText(), first.ID, thread)
			}
			second, thread2 := respond(t, c, streamed, responses.ResponseNewParams{Model: "gpt-4o", Instructions: openai.String("Be brief."),
				Input: textInput("What do I collect?"), PreviousResponseID: openai.String(first.ID)})
			if thread2 != thread || second.ID == first.ID {
				t.Errorf("second: thread %q (want %q), id %q", thread2, thread, second.ID)
			}
			sent := e.fake.ResponsesRequests()[1]
			if sent.PreviousResponseID != "" || sent.Instructions != "Be brief." {
				t.Errorf("upstream got previous_response_id %q, instructions %q", sent.PreviousResponseID, sent.Instructions)
			}
			var items []string
			for _, it := range sent.Items {
				items = append(items, it.Role+": "+it.Text)
			}
			want := []string{"user: I collect stamps from Japan.", "assistant: echo: I collect stamps from Japan.", "user: What do I collect?"}
			if len(items) < 3 || !cmp.Equal(want, items[len(items)-3:]) {
				t.Errorf("upstream input:\n%s", strings.Join(items, "\n"))
			}
			wantStored := []string{want[0], want[1], want[2], "assistant: echo: What do I collect?"}
			if diff := cmp.Diff(wantStored, e.thread(t, proxy.DefaultLocalUser, thread)); diff != "" {
				t.Errorf("stored (-want +got):\n%s", diff)
			}
		})
	}
}

// TestResponses_ToolCalls: a function call reaches the client; its output,
// sent with previous_response_id, reaches the model paired with the call.
func TestResponses_ToolCalls(t *testing.T) {
	t.Parallel()
	for _, streamed := range []bool{false, true} {
		t.Run(map[bool]string{false: "Complete", true: "Stream"}[streamed], func(t *testing.T) {
			e := newEnv(t)
			c := e.client()
			e.fake.Push(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_9", Function: llmtest.FunctionCall{Name: "get_time", Arguments: `{"tz":"Asia/Tokyo"}`}}}},
				llmtest.Text("It is noon in Tokyo."))
			first, thread := respond(t, c, streamed, responses.ResponseNewParams{Model: "gpt-4o", Input: textInput("What time is it in Tokyo?")})
			var call responses.ResponseOutputItemUnion
			for _, o := range first.Output {
				if o.Type == "function_call" {
					call = o
				}
			}
			if call.CallID != "call_9" || call.Name != "get_time" {
				t.Fatalf("output %+v", first.Output)
			}
			out := responses.ResponseInputItemParamOfFunctionCallOutput("12:00")
			out.OfFunctionCallOutput.CallID = openai.String("call_9")
			second, _ := respond(t, c, streamed, responses.ResponseNewParams{Model: "gpt-4o", PreviousResponseID: openai.String(first.ID),
				Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{out}}})
			if second.OutputText() != "It is noon in Tokyo." {
				t.Errorf("final %q", second.OutputText())
			}
			items := e.fake.ResponsesRequests()[1].Items
			n := len(items)
			if n < 3 || items[n-2].Type != "function_call" || items[n-2].CallID != "call_9" || items[n-1].Type != "function_call_output" || items[n-1].Output != "12:00" {
				t.Errorf("upstream input: %+v", items)
			}
			want := []string{"user: What time is it in Tokyo?", `assistant:  →get_time({"tz":"Asia/Tokyo"})`, "tool: [call_9] 12:00", "assistant: It is noon in Tokyo."}
			if diff := cmp.Diff(want, e.thread(t, proxy.DefaultLocalUser, thread)); diff != "" {
				t.Errorf("stored (-want +got):\n%s", diff)
			}
		})
	}
}

// TestResponses_Stateless: a client that keeps the conversation itself
// and resends every item (store: false) is augmented, and nothing is
// stored twice.
func TestResponses_Stateless(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.client(header(proxy.HeaderThread, "stateless"))
	input := responses.ResponseInputParam{responses.ResponseInputItemParamOfMessage("My cat is called Miso.", responses.EasyInputMessageRoleUser)}
	for _, q := range []string{"What is my cat called?", "And how old is she?"} {
		got, _ := respond(t, c, false, responses.ResponseNewParams{Model: "gpt-4o", Store: openai.Bool(false), Input: responses.ResponseNewParamsInputUnion{OfInputItemList: input}})
		input = append(input, responses.ResponseInputItemParamOfMessage(got.OutputText(), responses.EasyInputMessageRoleAssistant),
			responses.ResponseInputItemParamOfMessage(q, responses.EasyInputMessageRoleUser))
	}
	want := []string{"user: My cat is called Miso.", "assistant: echo: My cat is called Miso.", "user: What is my cat called?", "assistant: echo: What is my cat called?"}
	if diff := cmp.Diff(want, e.thread(t, proxy.DefaultLocalUser, "stateless")); diff != "" {
		t.Errorf("stored (-want +got):\n%s", diff)
	}
}

// TestResponses_ForeignOrStolenID: a previous_response_id agentmem did
// not give passes through untouched (the upstream holds that history); one
// that names another user's thread is refused.
func TestResponses_ForeignOrStolenID(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.client()
	if _, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-4o", Input: textInput("hi"), PreviousResponseID: openai.String("resp_upstream123")}); err != nil {
		t.Fatal(err)
	}
	if got := e.fake.ResponsesRequests()[0].PreviousResponseID; got != "resp_upstream123" {
		t.Errorf("forwarded previous_response_id %q", got)
	}
	mine, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-4o", Input: textInput("secret plans")}, header(proxy.HeaderUser, "alice"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-4o", Input: textInput("what were the plans?"), PreviousResponseID: openai.String(mine.ID)},
		header(proxy.HeaderUser, "mallory"))
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || !strings.Contains(apiErr.Message, "previous_response_id") {
		t.Errorf("another user's response: %v", err)
	}
}

// TestResponses_ClientGoesAway: a streamed response whose client leaves
// has what arrived stored, marked incomplete.
func TestResponses_ClientGoesAway(t *testing.T) {
	e := newEnv(t)
	e.fake.Push(llmtest.Reply{Content: "alpha beta gamma delta epsilon zeta eta theta", ChunkDelay: 30 * time.Millisecond})
	cctx, cancel := context.WithCancel(ctx)
	c := e.client(header(proxy.HeaderThread, "gone"))
	stream := c.Responses.NewStreaming(cctx, responses.ResponseNewParams{Model: "gpt-4o", Input: textInput("recite")})
	deltas := 0
	for deltas < 3 && stream.Next() {
		if stream.Current().Type == "response.output_text.delta" {
			deltas++
		}
	}
	cancel()
	stream.Close()
	e.partialAnswer(t, "gone", "alpha beta", "theta")
}
