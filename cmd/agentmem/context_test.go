package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/client"
	"github.com/agentmem/agentmem/llm/llmtest"
)

type telemetry struct {
	UsedTokens        int    `json:"used_tokens"`
	SummaryThroughSeq int64  `json:"summary_through_seq"`
	SummaryBehind     bool   `json:"summary_behind"`
	SummaryJob        string `json:"summary_job"`
}

func buildContext(t *testing.T, url, body string) (int, telemetry, []agentmem.ChatMessage) {
	t.Helper()
	resp, err := http.Post(url+"/v1/users/alice/threads/t/context", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Messages  []agentmem.ChatMessage `json:"messages"`
		Telemetry telemetry              `json:"telemetry"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, out.Telemetry, out.Messages
}

// TestServe_Summaries runs serve with a fake model: a long thread's
// context is trimmed and asks for a summary; serve's workers write it with
// the model, and the next contexts carry it.
func TestServe_Summaries(t *testing.T) {
	llm := llmtest.NewServer(t)
	llm.Script(func(llmtest.ChatCompletionRequest) llmtest.Reply {
		return llmtest.Text("Alice planned a Lisbon trip in many small steps.")
	})
	srv := MustServeEnv(t, filepath.Join(t.TempDir(), "agentmem.db"), map[string]string{"OPENAI_BASE_URL": llm.BaseURL(), "OPENAI_API_KEY": "test"})
	c := client.New(srv.URL, nil)
	ctx := context.Background()
	if err := c.CreateThread(ctx, "alice", &agentmem.Thread{ID: "t"}); err != nil {
		t.Fatal(err)
	}
	var msgs []*agentmem.Message
	for i := range 60 {
		msgs = append(msgs, &agentmem.Message{Role: "user", Content: fmt.Sprintf("Step %d of the Lisbon plan: book the museum.", i)},
			&agentmem.Message{Role: "assistant", Content: fmt.Sprintf("Done with step %d.", i)})
	}
	if _, err := c.AppendMessages(ctx, "alice", "t", msgs, ""); err != nil {
		t.Fatal(err)
	}
	body := `{"input":"Where are we?","budget_tokens":500,"strategy":"summarize","summarize":{"trigger_fraction":0.7,"keep_fraction":0.3}}`
	status, tel, _ := buildContext(t, srv.URL, body)
	if status != 200 || !tel.SummaryBehind || tel.SummaryJob == "" || tel.UsedTokens > 500 {
		t.Fatalf("first context: %d %+v", status, tel)
	}
	deadline := time.Now().Add(20 * time.Second)
	for tel.SummaryThroughSeq == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no summary after 20 s: %+v", tel)
		}
		time.Sleep(50 * time.Millisecond)
		_, tel, _ = buildContext(t, srv.URL, body)
	}
	_, tel, got := buildContext(t, srv.URL, body)
	if tel.SummaryBehind || !strings.Contains(got[0].Content, "Alice planned a Lisbon trip") || tel.UsedTokens > 500 {
		t.Fatalf("context with the summary: %+v\n%+v", tel, got[0])
	}
	if n := len(llm.ChatRequests()); n == 0 {
		t.Fatal("the model was never asked")
	}
	// Bad input is named.
	resp, err := http.Post(srv.URL+"/v1/users/alice/threads/t/context", "application/json", bytes.NewReader([]byte(`{"strategy":"fifo"}`)))
	if err != nil || resp.StatusCode != 400 {
		t.Fatalf("unknown strategy: %v %v", resp.StatusCode, err)
	}
	resp, _ = http.Post(srv.URL+"/v1/users/alice/threads/t/context", "application/json", strings.NewReader(`{"budget_tokens":3,"input":"a long question about Lisbon"}`))
	if resp.StatusCode != 422 {
		t.Fatalf("tiny budget: %d, want 422", resp.StatusCode)
	}
	resp, _ = http.Post(srv.URL+"/v1/users/bob/threads/t/context", "application/json", strings.NewReader(`{}`))
	if resp.StatusCode != 404 {
		t.Fatalf("another user's thread: %d, want 404", resp.StatusCode)
	}
}
