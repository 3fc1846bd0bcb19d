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
// directory; it is closed when the test ends.
func Open(tb testing.TB) *app.App {
	tb.Helper()
	mem, err := app.Open(context.Background(), app.Config{DB: "sqlite:" + filepath.Join(tb.TempDir(), "agentmem.db")})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { mem.Close() })
	return mem
}
