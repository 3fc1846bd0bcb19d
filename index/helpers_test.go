package index_test

import (
	"context"
	"testing"
	"time"

	"github.com/agentmem/agentmem/internal/testutil"
	"github.com/agentmem/agentmem/llm/llmtest"
	"github.com/agentmem/agentmem/llm/openai"
	"github.com/agentmem/agentmem/sqlite"
)

var ctx = context.Background()

// mustStore returns an empty SQLite store, closed when the test ends.
func mustStore(t *testing.T) *sqlite.Store {
	t.Helper()
	s := testutil.MustOpenSQLite(t)
	return s
}

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
