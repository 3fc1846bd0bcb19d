package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/agentmem/agentmem"
)

// Backup writes a consistent copy of the database to path while the store
// is in use (online): SQLite's VACUUM INTO reads one snapshot, so the copy
// holds every write committed before it began and none after, and writes
// go on meanwhile. The copy is checked (PRAGMA integrity_check) and only
// then named path, so path never holds half a backup. Returns the copy's
// size; EINVALID when path exists (a backup never overwrites a file).
func (s *Store) Backup(ctx context.Context, path string) (int64, error) {
	if _, err := os.Stat(path); err == nil {
		return 0, agentmem.Errorf(agentmem.EINVALID, "%s exists: a backup is written to a new file.", path)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return 0, err
	}
	partial := path + ".partial"
	os.Remove(partial) // a previous attempt's
	// A connection of its own: the readers are query_only, which refuses
	// VACUUM INTO; read-only still reads every committed write (WAL).
	db, err := sqlOpenReadOnly(s.path)
	if err != nil {
		return 0, err
	}
	_, err = db.ExecContext(ctx, `VACUUM INTO ?`, partial)
	db.Close()
	if err != nil {
		os.Remove(partial)
		return 0, fmt.Errorf("backup: %w", err)
	}
	if err := check(ctx, partial); err != nil {
		os.Remove(partial)
		return 0, err
	}
	if err := os.Rename(partial, path); err != nil {
		os.Remove(partial)
		return 0, err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// check runs SQLite's integrity check on the database file at path.
func check(ctx context.Context, path string) error {
	db, err := sqlOpenReadOnly(path)
	if err != nil {
		return err
	}
	defer db.Close()
	var result string
	if err := db.QueryRowContext(ctx, `PRAGMA integrity_check`).Scan(&result); err != nil {
		return fmt.Errorf("backup: check the copy: %w", err)
	}
	if result != "ok" {
		return fmt.Errorf("backup: the copy fails SQLite's integrity check: %s", result)
	}
	return nil
}

// sqlOpenReadOnly opens the database file at path read-only, without the
// store's write loop or migrations.
func sqlOpenReadOnly(path string) (*sql.DB, error) {
	return sql.Open("sqlite", fileDSN(path)+"mode=ro&_pragma=busy_timeout(10000)")
}
