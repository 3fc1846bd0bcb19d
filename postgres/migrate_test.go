package postgres_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// migratedBefore returns the DSN of a new schema to which the migrations
// before the one named *suffix ("_memory_source_ranges.sql", found
// whatever its number) are applied, as a server of that time left it:
// the caller stores what the migration must carry over, then opens the
// schema with the store, which applies the rest.
func migratedBefore(t *testing.T, suffix string) string {
	t.Helper()
	found, err := filepath.Glob(filepath.Join("migration", "*"+suffix))
	if err != nil || len(found) != 1 {
		t.Fatalf("the migration *%s: %v, %v", suffix, found, err)
	}
	mine := filepath.Base(found[0])
	dsn := MustCreateSchema(t)
	MustExec(t, dsn, `CREATE TABLE migrations (version text NOT NULL PRIMARY KEY, applied_at timestamptz NOT NULL)`)
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
		MustExec(t, dsn, string(body))
		MustExec(t, dsn, fmt.Sprintf(`INSERT INTO migrations (version, applied_at) VALUES ('migration/%s', now())`, filepath.Base(name)))
	}
	return dsn
}
