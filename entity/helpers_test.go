package entity_test

import (
	"bytes"
	"context"
	"flag"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/internal/goldenfile"
	"github.com/agentmem/agentmem/internal/testutil"
	"github.com/agentmem/agentmem/llm/llmtest"
	"github.com/agentmem/agentmem/llm/openai"
	"github.com/agentmem/agentmem/sqlite"
)

var ctx = context.Background()

var update = flag.Bool("update", false, "rewrite the golden files of testdata/")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenfile.Check(t, filepath.Join("testdata", name+".golden"), got, *update)
}

// mustStore returns an empty SQLite store, closed when the test ends.
func mustStore(t *testing.T) *sqlite.Store {
	t.Helper()
	s := testutil.MustOpenSQLite(t)
	return s
}

// backends runs test on an empty SQLite store and an empty PostgreSQL
// schema (skipped without AGENTMEM_TEST_POSTGRES).
func backends(t *testing.T, test func(t *testing.T, s agentmem.Store)) {
	t.Run("SQLite", func(t *testing.T) { test(t, mustStore(t)) })
	t.Run("PostgreSQL", func(t *testing.T) { test(t, testutil.MustOpenPostgres(t)) })
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

// logBuffer is a logger whose lines a test reads.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func newLog() (*slog.Logger, *logBuffer) {
	lb := &logBuffer{}
	return slog.New(slog.NewTextHandler(lb, nil)), lb
}

// turns are a thread's first messages: seqs 1 to 5.
var turns = []*agentmem.Message{
	{Seq: 1, Role: agentmem.RoleUser, Content: "Hi! We just moved to Porto, my wife Ana and I. I live in Porto now, near the river."},
	{Seq: 2, Role: agentmem.RoleAssistant, Content: "Welcome to Porto! Do you need restaurant tips?"},
	{Seq: 3, Role: agentmem.RoleTool, Content: `{"restaurants": []}`},
	{Seq: 4, Role: agentmem.RoleUser, Name: "ana", Content: "Yes please, we are both vegetarian."},
	{Seq: 5, Role: agentmem.RoleAssistant, Content: ""},
}
