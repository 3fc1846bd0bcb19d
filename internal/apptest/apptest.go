// Package apptest opens agentmem in process for the tests of its faces
// (MCP, langchaingo, the web UI): app.Open on a fresh SQLite file, with
// its workers running, closed when the test ends.
package apptest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/agentmem/agentmem/app"
)

// Open opens agentmem on a new SQLite file in the test's temporary
// directory (cfg.DB, "sqlite:PATH", when the options look), each option
// changing the configuration first; it is closed when the test ends.
func Open(tb testing.TB, options ...func(cfg *app.Config)) *app.App {
	tb.Helper()
	cfg := app.Config{DB: "sqlite:" + filepath.Join(tb.TempDir(), "agentmem.db")}
	for _, o := range options {
		o(&cfg)
	}
	mem, err := app.Open(context.Background(), cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { mem.Close() })
	return mem
}
