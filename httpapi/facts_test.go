package httpapi_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/core"
	"github.com/agentmem/agentmem/httpapi"
	"github.com/agentmem/agentmem/internal/testutil"
	"github.com/agentmem/agentmem/llm/llmtest"
	"github.com/agentmem/agentmem/retrieve"
)

// factKinds returns the kinds of memory (fact, insight) of the facts of a
// facts answer, or the result kind of the others.
func factKinds(f retrieve.FactsResponse, insightIDs ...string) []string {
	var out []string
	for _, r := range f.Facts {
		k := r.Kind
		if k == "memory" {
			k = agentmem.MemoryFact
			if slices.Contains(insightIDs, r.ID) {
				k = agentmem.MemoryInsight
			}
		}
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// TestHandler_FactsKinds: a facts question (and a search) asks for kinds
// of store: insights alone, facts alone; an unknown kind, or kinds beside
// scopes, is 400 naming the field and what it takes. With a model, a
// question that names no kind lets the model choose: one that calls
// search_insights is answered from insights alone.
func TestHandler_FactsKinds(t *testing.T) {
	model := llmtest.NewServer(t)
	model.Script(func(req llmtest.ChatCompletionRequest) llmtest.Reply {
		switch {
		case len(req.Tools) == 0:
			return llmtest.Text("She fears her savings fall short [1].")
		case slices.ContainsFunc(req.Messages, func(m llmtest.ChatMessage) bool { return m.Role == "tool" }):
			return llmtest.Text("DONE")
		}
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "c1", Type: "function", Function: llmtest.FunctionCall{Name: "search_insights", Arguments: `{"query":"retirement"}`}}}}
	})
	store := testutil.MustOpenSQLite(t)
	plain := MustServeCore(t, store, core.Options{}, httpapi.Options{}).URL + "/v1/users/alice"
	withModel := MustServeCore(t, store, core.Options{Chat: testutil.NewChat(t, model.BaseURL()), ChatModel: "fake"}, httpapi.Options{}).URL + "/v1/users/alice"

	Do(t, "POST", plain+"/memories", nil, `{"text":"User saves for retirement in a pension fund."}`)
	_, body := Do(t, "POST", plain+"/memories", nil, `{"kind":"insight","text":"User worries about retirement savings."}`)
	insight := decodeJSON[agentmem.Memory](t, body).ID

	for _, tt := range []struct {
		url, body string
		want      []string
	}{
		{plain + "/facts", `{"query":"retirement savings"}`, []string{agentmem.MemoryFact, agentmem.MemoryInsight}},
		{plain + "/facts", `{"query":"retirement savings","kinds":["insights"]}`, []string{agentmem.MemoryInsight}},
		{plain + "/facts", `{"query":"retirement savings","kinds":["memories"]}`, []string{agentmem.MemoryFact}},
		{plain + "/search", `{"query":"retirement savings","kinds":["insights"]}`, []string{agentmem.MemoryInsight}},
		{withModel + "/facts", `{"query":"What worries her about retirement?"}`, []string{agentmem.MemoryInsight}},
	} {
		resp, body := Do(t, "POST", tt.url, nil, tt.body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s %s: %d %s", tt.url, tt.body, resp.StatusCode, body)
		}
		f := decodeJSON[retrieve.FactsResponse](t, body)
		if strings.HasSuffix(tt.url, "/search") {
			f.Facts = decodeJSON[searchResponse](t, body).Results
		}
		if got := factKinds(f, insight); !slices.Equal(got, tt.want) {
			t.Errorf("%s %s: kinds %v, want %v: %s", tt.url, tt.body, got, tt.want, body)
		}
		if tt.url == withModel+"/facts" && (f.Answer != "She fears her savings fall short [1]." || !slices.Equal(f.Kinds, []string{"insights"})) {
			t.Errorf("with a model: %s", body)
		}
	}

	for _, tt := range []struct{ body, want string }{
		{`{"query":"x","kinds":["facts"]}`, `kinds must be among memories, insights, messages, chunks, summaries, not \"facts\".`},
		{`{"query":"x","kinds":["insights"],"scopes":["memories"]}`, `Give scopes or kinds, not both.`},
		{`{"query":"x","kinds":"insights"}`, `kinds`},
	} {
		for _, url := range []string{plain + "/facts", withModel + "/facts", plain + "/search"} {
			resp, body := Do(t, "POST", url, nil, tt.body)
			if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), tt.want) {
				t.Errorf("%s %s: %d %s, want 400 saying %s", url, tt.body, resp.StatusCode, body, tt.want)
			}
		}
	}
	if n := len(model.ChatRequests()); n != 3 {
		t.Fatalf("%d model requests, want 3 (the call, DONE, the answer): a bad request asks the model nothing", n)
	}
}
