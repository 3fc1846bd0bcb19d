package langchaingo_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/app"
	"github.com/agentmem/agentmem/client"
	"github.com/agentmem/agentmem/httpapi"
	"github.com/agentmem/agentmem/internal/apptest"
	"github.com/agentmem/agentmem/langchaingo"
	"github.com/agentmem/agentmem/llm/llmtest"
	"github.com/google/go-cmp/cmp"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/openai"
	"github.com/tmc/langchaingo/schema"
)

var ctx = context.Background()

// TestConversationChain: langchaingo's own conversation chain, with its
// OpenAI model pointed at the fake server, swaps in agentmem as its memory
// in one line: every turn is stored, and the model gets agentmem's context
// (the earlier turns, and what is remembered of the user from another
// conversation).
func TestConversationChain(t *testing.T) {
	mem := apptest.Open(t)
	if _, err := mem.CreateMemory(ctx, "alice", agentmem.MemoryInput{Text: "User is allergic to shellfish."}); err != nil {
		t.Fatal(err)
	}
	fake := llmtest.NewServer(t)
	llm, err := openai.New(openai.WithBaseURL(fake.BaseURL()), openai.WithToken("k"), openai.WithModel("gpt-4o"))
	if err != nil {
		t.Fatal(err)
	}
	memory := langchaingo.NewMemory(mem.Service, "alice")
	chain := chains.NewConversation(llm, memory)
	for _, q := range []string{"I am planning a dinner in Lisbon.", "Which shellfish dishes should I avoid?"} {
		if _, err := chains.Run(ctx, chain, q); err != nil {
			t.Fatal(err)
		}
	}
	reqs := fake.ChatRequests()
	prompt := reqs[len(reqs)-1].Messages[len(reqs[len(reqs)-1].Messages)-1].Content
	for _, want := range []string{"I am planning a dinner in Lisbon.", "allergic to shellfish", "Which shellfish dishes should I avoid?"} {
		if !strings.Contains(prompt, want) {
			t.Errorf("the model's prompt lacks %q:\n%s", want, prompt)
		}
	}
	thread, err := memory.History.Thread(ctx)
	if err != nil {
		t.Fatal(err)
	}
	msgs, _, err := mem.FindMessages(ctx, "alice", thread, agentmem.MessageFilter{})
	if err != nil || len(msgs) != 4 || msgs[2].Content != "Which shellfish dishes should I avoid?" || msgs[3].Role != agentmem.RoleAssistant {
		t.Errorf("stored: %d messages, %v", len(msgs), err)
	}
}

// TestHistory: the chat message history round-trips every kind of message
// langchaingo has, tool calls included; Clear starts a new thread and
// keeps the old one, ended.
func TestHistory(t *testing.T) {
	for _, over := range []string{"in process", "over REST"} {
		t.Run(over, func(t *testing.T) {
			mem := apptest.Open(t)
			var svc agentmem.Service = mem.Service
			if over == "over REST" {
				srv := httptest.NewServer(httpapi.NewHandler(nil, mem.Service, httpapi.Options{}))
				t.Cleanup(srv.Close)
				svc = client.New(srv.URL, nil)
			}
			testHistory(t, mem, svc)
		})
	}
}

func testHistory(t *testing.T, mem *app.App, svc agentmem.Service) {
	var h schema.ChatMessageHistory = langchaingo.NewHistory(svc, "bob", "coach", "")
	want := []llms.ChatMessage{
		llms.SystemChatMessage{Content: "You are a running coach."},
		llms.HumanChatMessage{Content: "How far should I run today?"},
		llms.AIChatMessage{ToolCalls: []llms.ToolCall{{ID: "c1", Type: "function", FunctionCall: &llms.FunctionCall{Name: "plan", Arguments: `{"week":3}`}}}},
		llms.ToolChatMessage{ID: "c1", Content: "10K easy"},
		llms.AIChatMessage{Content: "10K, easy pace."},
		llms.GenericChatMessage{Role: "human", Name: "bob", Content: "Thanks!"},
	}
	for _, m := range want[:4] {
		if err := h.AddMessage(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.AddAIMessage(ctx, "10K, easy pace."); err != nil {
		t.Fatal(err)
	}
	if err := h.AddMessage(ctx, want[5]); err != nil {
		t.Fatal(err)
	}
	got, err := h.Messages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	old, _ := h.(*langchaingo.History).Thread(ctx)
	if err := h.SetMessages(ctx, []llms.ChatMessage{llms.HumanChatMessage{Content: "New week."}}); err != nil {
		t.Fatal(err)
	}
	got, err = h.Messages(ctx)
	if err != nil || len(got) != 1 || got[0].GetContent() != "New week." {
		t.Errorf("after SetMessages: %v, %v", got, err)
	}
	th, err := mem.FindThreadByID(ctx, "bob", old)
	if err != nil || th.Status != agentmem.ThreadEnded || th.MessageCount != 6 {
		t.Errorf("the old thread: %+v, %v", th, err)
	}
	if s, err := mem.FindSession(ctx, "bob", "coach"); err != nil || s.ThreadID == old {
		t.Errorf("the session: %+v, %v", s, err)
	}
}
