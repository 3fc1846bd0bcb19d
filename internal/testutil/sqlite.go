package testutil

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/agentmem/agentmem/sqlite"
	"github.com/agentmem/agentmem/tokens"
)

// MustOpenSQLite opens an empty, migrated store in a new file under
// tb.TempDir with exact token counts, as serve counts them, closed when
// the test ends.
//
// The file is a copy of a store migrated once per test process: copying
// it costs a few milliseconds, migrating a new file some tens of them.
// The copy is the same database as a file migrated where it lies, since
// closing the template checkpointed its WAL into the file.
//
// For a test, not a benchmark, the store runs with synchronous NORMAL: a
// commit does not wait for an fsync of the WAL, which only a power loss
// could tell apart (the same transactions, locks and WAL otherwise).
// Benchmarks keep the default, FULL, so that they measure what a
// deployment gets; tests of the file's defaults and durability open it
// with MustOpenSQLiteFile.
func MustOpenSQLite(tb testing.TB) *sqlite.Store {
	tb.Helper()
	b, err := sqliteTemplate()
	if err != nil {
		tb.Fatalf("migrate the template store: %v", err)
	}
	path := filepath.Join(tb.TempDir(), "agentmem.db")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		tb.Fatal(err)
	}
	var opt sqlite.Options
	if _, bench := tb.(*testing.B); !bench {
		opt.Synchronous = "NORMAL"
	}
	return mustOpenSQLite(tb, path, opt)
}

// sqliteTemplate returns the bytes of an empty store whose migrations have
// all been applied, made at the first call.
var sqliteTemplate = sync.OnceValues(func() ([]byte, error) {
	dir, err := os.MkdirTemp("", "agentmem-template-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "agentmem.db")
	s, err := sqlite.Open(context.Background(), path, sqlite.Options{})
	if err != nil {
		return nil, err
	}
	if err := s.Close(); err != nil {
		return nil, err
	}
	// The last connection's close checkpoints the WAL into the file and
	// removes it; the file alone is then the whole database.
	if fi, err := os.Stat(path + "-wal"); err == nil && fi.Size() > 0 {
		return nil, fmt.Errorf("the template's WAL holds %d bytes after Close", fi.Size())
	}
	return os.ReadFile(path)
})

// MustOpenSQLiteFile opens (creating and migrating if needed) the store at
// path with the default options and exact token counts. It is closed when
// the test ends; a test may close it before (Close is idempotent), to hand
// the file to a command.
func MustOpenSQLiteFile(tb testing.TB, path string) *sqlite.Store {
	tb.Helper()
	return mustOpenSQLite(tb, path, sqlite.Options{})
}

func mustOpenSQLite(tb testing.TB, path string, opt sqlite.Options) *sqlite.Store {
	tb.Helper()
	s, err := sqlite.Open(context.Background(), path, opt)
	if err != nil {
		tb.Fatalf("open sqlite: %v", err)
	}
	s.Tokens = tokens.Default()
	tb.Cleanup(func() {
		if err := s.Close(); err != nil {
			tb.Errorf("close sqlite: %v", err)
		}
	})
	return s
}
