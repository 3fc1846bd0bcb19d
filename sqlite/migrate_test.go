package sqlite_test

import (
	"database/sql"
	"os"
	"path/filepath"
	"testing"
)

// migratedBefore returns the path of a new database file to which the
// migrations before the one named *suffix ("_memory_source_ranges.sql",
// found whatever its number) are applied, as a server of that time left
// it, open as db, and exec, which runs a statement on it or fails the
// test: the caller stores what the migration must carry over, closes db,
// and opens the file with the store, which applies the rest.
func migratedBefore(t *testing.T, suffix string) (path string, db *sql.DB, exec func(q string, args ...any)) {
	t.Helper()
	found, err := filepath.Glob(filepath.Join("migration", "*"+suffix))
	if err != nil || len(found) != 1 {
		t.Fatalf("the migration *%s: %v, %v", suffix, found, err)
	}
	mine := filepath.Base(found[0])
	path = filepath.Join(t.TempDir(), "agentmem.db")
	if db, err = sql.Open("sqlite", "file:"+path); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	exec = func(q string, args ...any) {
		t.Helper()
		if _, err := db.Exec(q, args...); err != nil {
			t.Fatalf("%.60s: %v", q, err)
		}
	}
	exec(`CREATE TABLE migrations (version TEXT NOT NULL PRIMARY KEY, applied_at INTEGER NOT NULL)`)
	names, err := filepath.Glob(filepath.Join("migration", "*.sql"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if filepath.Base(name) >= mine {
			continue
		}
		body, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		exec(string(body))
		exec(`INSERT INTO migrations (version, applied_at) VALUES (?, 0)`, "migration/"+filepath.Base(name))
	}
	return path, db, exec
}
