package reflection_test

import (
	"context"
	"testing"
	"time"

	"github.com/agentmem/agentmem/llm/llmtest"
	"github.com/agentmem/agentmem/llm/openai"
)

var ctx = context.Background()

// newChat returns a client of srv that fails at once: no retries, no
// breaker.
func newChat(t *testing.T, srv *llmtest.Server) *openai.Client {
	t.Helper()
	c, err := openai.New(openai.Config{BaseURL: srv.BaseURL(), APIKey: "test", MaxRetries: -1, BreakerThreshold: -1, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
