package app_test

import (
	"path/filepath"
	"testing"

	"github.com/agentmem/agentmem/internal/testutil"
)

// backends make a new database of each backend for a test: an SQLite
// file in its temporary directory, or a PostgreSQL schema dropped when it
// ends.
var backends = map[string]func(t *testing.T) string{
	"SQLite":     func(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "a.db") },
	"PostgreSQL": func(t *testing.T) string { return testutil.MustCreateSchema(t) },
}

// onBackends runs test on a new database of each backend, in parallel;
// test opens agentmem on db with the configuration it is testing.
func onBackends(t *testing.T, test func(t *testing.T, db string)) {
	t.Helper()
	for name, db := range backends {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			test(t, db(t))
		})
	}
}
