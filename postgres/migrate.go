package postgres

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"sort"
)

//go:embed migration/*.sql
var migrationFS embed.FS

// migrationLock is the first key of the advisory lock that migrations take;
// the second is the hash of the schema's name, so that the processes
// starting on one schema migrate it one at a time while other schemas of
// the database do not wait.
const migrationLock int32 = 0x616d656d // "amem"

// migrate applies the embedded migrations not yet recorded in migrations,
// each in its own transaction, in file-name order.
func (s *Store) migrate(ctx context.Context) error {
	names, err := fs.Glob(migrationFS, "migration/*.sql")
	if err != nil {
		return fmt.Errorf("list migrations: %w", err)
	}
	sort.Strings(names)
	for _, name := range names {
		if err := s.migrateFile(ctx, name); err != nil {
			return fmt.Errorf("migration %s: %w", name, formatError(err))
		}
	}
	return nil
}

func (s *Store) migrateFile(ctx context.Context, name string) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback(ctx)
	// Held until commit: a second process waits here, then finds the
	// version recorded and skips it.
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext(COALESCE(current_schema(), '')))`, migrationLock); err != nil {
		return fmt.Errorf("lock: %w", err)
	}
	if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS migrations (version text NOT NULL PRIMARY KEY, applied_at timestamptz NOT NULL)`); err != nil {
		return fmt.Errorf("create migrations table: %w", err)
	}
	var done bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM migrations WHERE version = $1)`, name).Scan(&done); err != nil {
		return fmt.Errorf("find migration: %w", err)
	} else if done {
		return nil
	}
	body, err := fs.ReadFile(migrationFS, name)
	if err != nil {
		return fmt.Errorf("read migration: %w", err)
	}
	// Without arguments pgx uses the simple protocol, which runs a file of
	// several statements.
	if _, err := tx.Exec(ctx, string(body)); err != nil {
		return fmt.Errorf("apply: %w", err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO migrations (version, applied_at) VALUES ($1, $2)`, name, s.now()); err != nil {
		return fmt.Errorf("record migration: %w", err)
	}
	return tx.Commit(ctx)
}
