package testutil

import (
	"bytes"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/llm/openai"
)

// Backends runs test on an empty SQLite store and on an empty PostgreSQL
// schema (where AGENTMEM_TEST_POSTGRES is set; on CI it must be). The test
// and both runs are parallel to other tests: each run has a store of its
// own.
func Backends(t *testing.T, test func(t *testing.T, s agentmem.Store)) {
	t.Parallel()
	t.Run("SQLite", func(t *testing.T) {
		t.Parallel()
		test(t, MustOpenSQLite(t))
	})
	t.Run("PostgreSQL", func(t *testing.T) {
		t.Parallel()
		test(t, MustOpenPostgres(t))
	})
}

// NewChat returns a model client of the (fake) server at baseURL that
// fails at once: no retries, no breaker.
func NewChat(tb testing.TB, baseURL string) *openai.Client {
	tb.Helper()
	c, err := openai.New(openai.Config{BaseURL: baseURL, APIKey: "test", MaxRetries: -1, BreakerThreshold: -1, Timeout: 2 * time.Second})
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// LogBuffer holds what a logger wrote, safe to read while written.
type LogBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *LogBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *LogBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// NewLog returns a text logger (info and above) writing to a LogBuffer.
func NewLog() (*slog.Logger, *LogBuffer) {
	lb := &LogBuffer{}
	return slog.New(slog.NewTextHandler(lb, nil)), lb
}
