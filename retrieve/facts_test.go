package retrieve_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/index"
	"github.com/agentmem/agentmem/internal/testutil"
	"github.com/agentmem/agentmem/llm/lexical"
	"github.com/agentmem/agentmem/llm/llmtest"
	"github.com/agentmem/agentmem/llm/openai"
	"github.com/agentmem/agentmem/retrieve"
)

// retirement is alice's memory of every kind about her retirement: a fact,
// an insight, the two turns of an ended thread, their chunk (whose topic
// names it) and the thread's summary; memories and the summary embedded.
type retirement struct {
	search                        *retrieve.Searcher
	fact, insight, chunk, summary string   // IDs
	messages                      []string // IDs
}

func mustStoreRetirement(t *testing.T) *retirement {
	t.Helper()
	ctx := context.Background()
	s := testutil.MustOpenSQLite(t)
	emb := lexical.New(0)
	ix := &index.Indexer{Store: s, Emb: emb, Space: emb.Space()}
	r := &retirement{search: retrieve.New(s, emb, emb.Space(), retrieve.Options{})}
	r.fact = mustMemory(t, s, ix, &agentmem.Memory{UserID: "alice", Text: "User saves for retirement in a pension fund."})
	r.insight = mustMemory(t, s, ix, &agentmem.Memory{UserID: "alice", Kind: agentmem.MemoryInsight, Text: "User worries that her retirement savings are too small."})
	if err := s.CreateThread(ctx, &agentmem.Thread{UserID: "alice", ID: "t"}); err != nil {
		t.Fatal(err)
	}
	msgs, err := s.AppendMessages(ctx, "alice", "t", []*agentmem.Message{
		{Role: agentmem.RoleUser, Content: "When could I stop working, do you think? Retirement feels far away."},
		{Role: agentmem.RoleAssistant, Content: "Let us look at your savings first."},
	}, agentmem.AppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		r.messages = append(r.messages, m.ID)
	}
	c := &agentmem.Chunk{ThreadID: "t", SeqFrom: 1, SeqTo: 2, Turns: 2, Text: "user: When could I stop working?\nassistant: Let us look first.",
		Topics: []string{"retirement"}, CreatedAt: time.Now()}
	if err := s.PutChunks(ctx, "alice", []*agentmem.Chunk{c}); err != nil {
		t.Fatal(err)
	}
	r.chunk = c.ID
	sum, err := s.PutSummary(ctx, &agentmem.Summary{UserID: "alice", ThreadID: "t", ThroughSeq: 2, Text: "Alice asked when her retirement could begin.", Method: agentmem.SummaryExtractive})
	if err != nil {
		t.Fatal(err)
	}
	if err := ix.EmbedSummary(ctx, sum); err != nil {
		t.Fatal(err)
	}
	r.summary = "t"
	return r
}

// found returns the results as "kind/id", sorted.
func found(rs []agentmem.SearchResult) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Kind + "/" + r.ID
	}
	slices.Sort(out)
	return out
}

func sorted(keys ...string) []string {
	slices.Sort(keys)
	return keys
}

// TestSearch_Kinds: a search by kind finds insights alone, facts without
// insights, chunks, summaries, or several of them; an unknown kind, or
// kinds beside scopes, is refused naming the field.
func TestSearch_Kinds(t *testing.T) {
	ctx := context.Background()
	r := mustStoreRetirement(t)
	for _, tt := range []struct {
		kinds []string
		want  []string
	}{
		{[]string{agentmem.KindInsights}, []string{"memory/" + r.insight}},
		{[]string{agentmem.KindMemories}, []string{"memory/" + r.fact}},
		{[]string{agentmem.KindMemories, agentmem.KindInsights}, []string{"memory/" + r.fact, "memory/" + r.insight}},
		{[]string{agentmem.KindInsights, agentmem.KindChunks}, []string{"memory/" + r.insight, "chunk/" + r.chunk}},
		{[]string{agentmem.KindSummaries}, []string{"summary/" + r.summary}},
		{nil, []string{"memory/" + r.fact, "memory/" + r.insight, "message/" + r.messages[0], "message/" + r.messages[1]}},
	} {
		resp, err := r.search.Search(ctx, "alice", retrieve.Request{Query: "retirement savings", Kinds: tt.kinds, TopK: 10})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(sorted(tt.want...), found(resp.Results)); diff != "" {
			t.Errorf("kinds %v: mismatch (-want +got):\n%s", tt.kinds, diff)
		}
	}
	for _, tt := range []struct {
		req  retrieve.Request
		want string
	}{
		{retrieve.Request{Query: "x", Kinds: []string{"facts"}}, `kinds must be among memories, insights, messages, chunks, summaries, not "facts".`},
		{retrieve.Request{Query: "x", Kinds: []string{"insights"}, Scopes: []string{"memories"}}, "Give scopes or kinds, not both."},
	} {
		_, err := r.search.Search(ctx, "alice", tt.req)
		if agentmem.ErrorCode(err) != agentmem.EINVALID || agentmem.ErrorMessage(err) != tt.want {
			t.Errorf("%+v: %v, want EINVALID %q", tt.req, err, tt.want)
		}
	}
}

// model is a fake model server behind the production client: tools
// answers each request that offers tools (the choice of stores), and the
// answer request ("Facts: …") gets a sentence citing [1].
type model struct {
	srv  *llmtest.Server
	chat agentmem.Chat
}

func newModel(t *testing.T, tools func(req llmtest.ChatCompletionRequest) llmtest.Reply) *model {
	t.Helper()
	srv := llmtest.NewServer(t)
	srv.Script(func(req llmtest.ChatCompletionRequest) llmtest.Reply {
		if len(req.Tools) > 0 {
			return tools(req)
		}
		if strings.HasPrefix(req.LastUserMessage(), "Facts:") {
			return llmtest.Text("She worries about her savings [1].")
		}
		return llmtest.DefaultReply(req)
	})
	c, err := openai.New(openai.Config{APIKey: "k", BaseURL: srv.BaseURL(), Model: "fake-chat", Timeout: 5 * time.Second,
		RetryBaseDelay: time.Millisecond, RetryMaxDelay: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return &model{srv: srv, chat: c}
}

// toolRequests returns the requests that offered tools.
func (m *model) toolRequests() []llmtest.ChatCompletionRequest {
	var out []llmtest.ChatCompletionRequest
	for _, r := range m.srv.ChatRequests() {
		if len(r.Tools) > 0 {
			out = append(out, r)
		}
	}
	return out
}

func call(id, name, args string) llmtest.ToolCall {
	return llmtest.ToolCall{ID: id, Type: "function", Function: llmtest.FunctionCall{Name: name, Arguments: args}}
}

// answered reports whether req carries the answer to a tool call.
func answered(req llmtest.ChatCompletionRequest) bool {
	return slices.ContainsFunc(req.Messages, func(m llmtest.ChatMessage) bool { return m.Role == "tool" })
}

// TestFacts_ModelChoosesStores: with a model, a facts question lets the
// model choose the stores through tool calls: one that calls
// search_insights gets insights only, answered from them with citations;
// it sees what its searches found, and searches at most MaxToolRounds
// rounds.
func TestFacts_ModelChoosesStores(t *testing.T) {
	ctx := context.Background()
	r := mustStoreRetirement(t)

	t.Run("Insights", func(t *testing.T) {
		m := newModel(t, func(req llmtest.ChatCompletionRequest) llmtest.Reply {
			if answered(req) {
				return llmtest.Text("DONE")
			}
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("c1", "search_insights", `{"query":"retirement worries"}`)}}
		})
		resp, err := r.search.Facts(ctx, m.chat, "", "alice", retrieve.Request{Query: "What worries her about retirement?"})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"memory/" + r.insight}, found(resp.Facts)); diff != "" {
			t.Fatalf("facts mismatch (-want +got):\n%s", diff)
		}
		if !cmp.Equal(resp.Kinds, []string{agentmem.KindInsights}) || resp.Answer != "She worries about her savings [1]." || resp.Model != "fake-chat" || len(resp.Warnings) != 0 {
			t.Fatalf("response %+v", resp)
		}
		reqs := m.toolRequests()
		if len(reqs) != 2 {
			t.Fatalf("%d requests with tools, want 2 (the call, then DONE)", len(reqs))
		}
		var names []string
		for _, tool := range reqs[0].Tools {
			names = append(names, tool.Function.Name)
		}
		if want := []string{"search_memories", "search_insights", "search_messages", "search_chunks", "search_summaries"}; !cmp.Equal(names, want) {
			t.Fatalf("tools %v, want %v", names, want)
		}
		last := reqs[1].Messages[len(reqs[1].Messages)-1]
		if last.Role != "tool" || last.ToolCallID != "c1" || !strings.Contains(last.Content, "retirement savings are too small") {
			t.Fatalf("the model was sent %+v, want the insight found", last)
		}
	})

	t.Run("Several", func(t *testing.T) {
		// Two searches in one round, then one more: what they found, each
		// once.
		m := newModel(t, func(req llmtest.ChatCompletionRequest) llmtest.Reply {
			switch n := len(slices.DeleteFunc(slices.Clone(req.Messages), func(m llmtest.ChatMessage) bool { return m.Role != "tool" })); n {
			case 0:
				return llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("a", "search_memories", `{"query":"retirement"}`), call("b", "search_chunks", `{"query":"retirement","top_k":3}`)}}
			case 2:
				return llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("c", "search_memories", `{"query":"pension savings"}`)}}
			}
			return llmtest.Text("DONE")
		})
		resp, err := r.search.Facts(ctx, m.chat, "", "alice", retrieve.Request{Query: "How is her retirement going?", TopK: 10})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(sorted("memory/"+r.fact, "chunk/"+r.chunk), found(resp.Facts)); diff != "" {
			t.Fatalf("facts mismatch (-want +got):\n%s", diff)
		}
		if !cmp.Equal(resp.Kinds, []string{agentmem.KindMemories, agentmem.KindChunks}) || len(resp.Warnings) != 0 {
			t.Fatalf("response %+v", resp)
		}
	})

	t.Run("Rounds", func(t *testing.T) {
		// A model that never stops searching is answered after
		// MaxToolRounds rounds.
		var mu sync.Mutex
		n := 0
		m := newModel(t, func(req llmtest.ChatCompletionRequest) llmtest.Reply {
			mu.Lock()
			defer mu.Unlock()
			n++
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{call(strings.Repeat("c", n), "search_insights", `{"query":"retirement"}`)}}
		})
		resp, err := r.search.Facts(ctx, m.chat, "", "alice", retrieve.Request{Query: "What worries her about retirement?"})
		if err != nil {
			t.Fatal(err)
		}
		if got := len(m.toolRequests()); got != retrieve.MaxToolRounds {
			t.Fatalf("%d rounds, want %d", got, retrieve.MaxToolRounds)
		}
		if diff := cmp.Diff([]string{"memory/" + r.insight}, found(resp.Facts)); diff != "" || resp.Answer != "She worries about her savings [1]." {
			t.Fatalf("response %+v; facts mismatch (-want +got):\n%s", resp, diff)
		}
	})

	t.Run("Chosen", func(t *testing.T) {
		// A question that names its kinds or scopes asks the model nothing
		// about stores.
		m := newModel(t, func(llmtest.ChatCompletionRequest) llmtest.Reply { return llmtest.Text("DONE") })
		for _, req := range []retrieve.Request{
			{Query: "retirement", Kinds: []string{agentmem.KindSummaries}},
			{Query: "retirement", Scopes: []string{agentmem.ScopeSummaries}},
		} {
			resp, err := r.search.Facts(ctx, m.chat, "", "alice", req)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{"summary/" + r.summary}, found(resp.Facts)); diff != "" || len(resp.Warnings) != 0 || len(resp.Kinds) != 0 {
				t.Fatalf("%+v: %+v; facts mismatch (-want +got):\n%s", req, resp, diff)
			}
		}
		if n := len(m.toolRequests()); n != 0 {
			t.Fatalf("%d requests offered tools, want none", n)
		}
	})
}

// TestFacts_ModelFallsBack: a model that does not choose the stores (it
// answers text, calls an unknown tool, sends arguments that are not JSON
// or without a query, or fails) leaves the default scopes, searched as
// without tools, with a warning; the client gets an answer, not an error.
func TestFacts_ModelFallsBack(t *testing.T) {
	ctx := context.Background()
	r := mustStoreRetirement(t)
	req := retrieve.Request{Query: "What about her retirement savings?", TopK: 10}
	without, err := r.search.Facts(ctx, nil, "", "alice", req)
	if err != nil {
		t.Fatal(err)
	}
	want := found(without.Facts)
	if !slices.Contains(want, "memory/"+r.fact) || !slices.Contains(want, "memory/"+r.insight) || !slices.Contains(want, "message/"+r.messages[0]) {
		t.Fatalf("without a model: %v, want both memories and the messages", want)
	}
	for name, reply := range map[string]llmtest.Reply{
		"Text":        llmtest.Text("Her retirement is in 2040, I think."),
		"UnknownTool": {ToolCalls: []llmtest.ToolCall{call("c1", "search_everything", `{"query":"retirement"}`)}},
		"NotJSON":     {ToolCalls: []llmtest.ToolCall{call("c1", "search_insights", `retirement please`)}},
		"NoQuery":     {ToolCalls: []llmtest.ToolCall{call("c1", "search_insights", `{"q":"retirement"}`)}},
		"BadTopK":     {ToolCalls: []llmtest.ToolCall{call("c1", "search_insights", `{"query":"retirement","top_k":1000}`)}},
		"Fails":       llmtest.Fail(503),
		"Malformed":   llmtest.Malformed(),
	} {
		t.Run(name, func(t *testing.T) {
			m := newModel(t, func(llmtest.ChatCompletionRequest) llmtest.Reply { return reply })
			resp, err := r.search.Facts(ctx, m.chat, "", "alice", req)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, found(resp.Facts)); diff != "" {
				t.Fatalf("facts mismatch (-want +got):\n%s", diff)
			}
			if len(resp.Kinds) != 0 || len(resp.Warnings) != 1 || !strings.HasPrefix(resp.Warnings[0], "The model did not choose where to search") ||
				resp.Answer != "She worries about her savings [1]." {
				t.Fatalf("response %+v", resp)
			}
		})
	}
}
