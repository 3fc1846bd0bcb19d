package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentmem/agentmem/llm/llmtest"
)

// TestAgentLoop runs the example: without a model it prints the context a
// model would get, which holds the earlier turns; with the fake model,
// the model is sent the remembered turns and its answers are recorded.
func TestAgentLoop(t *testing.T) {
	db := "sqlite:" + filepath.Join(t.TempDir(), "agent.db")
	noEnv := func(string) string { return "" }
	var out strings.Builder
	if err := run(context.Background(), []string{"--db", db, "--user", "alice"}, noEnv, strings.NewReader("I live in Oslo.\nWhere do I live?\n"), &out); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); !strings.Contains(got, "no model configured") || strings.Count(got, "[user] I live in Oslo.") != 2 {
		t.Fatalf("without a model, want the context twice, the second holding the first turn:\n%s", got)
	}

	srv := llmtest.NewServer(t)
	srv.Script(func(req llmtest.ChatCompletionRequest) llmtest.Reply { return llmtest.DefaultReply(req) })
	srv.Push(llmtest.Text("You live in Oslo."))
	env := map[string]string{"OPENAI_BASE_URL": srv.BaseURL(), "OPENAI_API_KEY": "test", "AGENTMEM_LLM_MODEL": "gpt-4o-mini"}
	out.Reset()
	if err := run(context.Background(), []string{"--db", db, "--user", "alice"}, func(k string) string { return env[k] }, strings.NewReader("Remind me where I live.\n"), &out); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, req := range srv.ChatRequests() {
		var all strings.Builder
		for _, m := range req.Messages {
			all.WriteString(m.Content)
		}
		if strings.Contains(all.String(), "I live in Oslo.") && strings.Contains(all.String(), "Remind me where I live.") {
			found = true
		}
	}
	if !found {
		t.Fatalf("no model call carried the remembered turn and the new input; calls: %+v", srv.ChatRequests())
	}
}
