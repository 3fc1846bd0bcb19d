package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentmem/agentmem"
)

// A backup to PATH writes its copy to PATH.partial (SQLite adds
// PATH.partial-journal while it writes) and holds PATH.partial.lock while
// it runs: the lock says which process writes PATH.partial, and lets the
// next backup tell a running one from one that was killed.
const (
	partialSuffix = ".partial"
	journalSuffix = "-journal"
	lockSuffix    = ".lock"
	// lockMark starts the text of a backup's lock file (then its process
	// ID): a file named so that holds anything else is not a backup's.
	lockMark = "agentmem backup pid "
)

// BackupPartial is the file a backup to path writes its copy to, before
// the copy is checked and renamed path: its size says how far the copy is.
func BackupPartial(path string) string { return path + partialSuffix }

// BackupResult is what Backup did.
type BackupResult struct {
	// Size is the size of the copy in bytes.
	Size int64
	// Removed are the partial copies of backups that did not finish (a
	// backup killed or on a machine that stopped) which Backup found
	// beside path, to path or another file, and removed.
	Removed []string
}

// Backup writes a consistent copy of the database to path while the store
// is in use (online): SQLite's VACUUM INTO reads one snapshot, so the copy
// holds every write committed before it began and none after, and writes
// go on meanwhile. The copy is checked (PRAGMA integrity_check) and only
// then named path, so path never holds half a backup.
//
// One backup at a time writes to path: another one running is ECONFLICT,
// at once. The partial copies of backups that were killed (whose lock no
// process holds), to path or to other files of its directory, are
// removed first. Returns EINVALID when path exists (a backup never
// overwrites a file).
func (s *Store) Backup(ctx context.Context, path string) (BackupResult, error) {
	var res BackupResult
	partial := path + partialSuffix
	lock, busy, err := lockFile(partial+lockSuffix, true)
	if err != nil {
		return res, fmt.Errorf("backup: lock %s: %w", partial+lockSuffix, err)
	}
	if busy {
		return res, agentmem.Errorf(agentmem.ECONFLICT, "Another backup to %s is running%s; wait for it to finish, or back up to another file.%s",
			path, holder(partial+lockSuffix), busyHint(partial+lockSuffix))
	}
	defer unlock(lock)
	if _, err := os.Stat(path); err == nil {
		return res, agentmem.Errorf(agentmem.EINVALID, "%s exists: a backup is written to a new file.", path)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return res, err
	}
	if err := lock.Truncate(0); err != nil {
		return res, fmt.Errorf("backup: lock %s: %w", partial+lockSuffix, err)
	}
	if _, err := fmt.Fprintf(lock, "%s%d\n", lockMark, os.Getpid()); err != nil {
		return res, fmt.Errorf("backup: lock %s: %w", partial+lockSuffix, err)
	}
	// Holding the lock, a partial copy of path is a dead backup's.
	if removePartial(partial) {
		res.Removed = append(res.Removed, partial)
	}
	res.Removed = append(res.Removed, removeDeadPartials(filepath.Dir(path), partial)...)
	slices.Sort(res.Removed)

	// A connection of its own: the readers are query_only, which refuses
	// VACUUM INTO; read-only still reads every committed write (WAL).
	db, err := sqlOpenReadOnly(s.path)
	if err != nil {
		return res, err
	}
	_, err = db.ExecContext(ctx, `VACUUM INTO ?`, partial)
	db.Close()
	if err != nil {
		removePartial(partial)
		return res, fmt.Errorf("backup: %w", err)
	}
	if err := check(ctx, partial); err != nil {
		removePartial(partial)
		return res, err
	}
	if err := os.Rename(partial, path); err != nil {
		removePartial(partial)
		return res, err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return res, err
	}
	res.Size = fi.Size()
	return res, nil
}

// removePartial removes the partial copy name and its journal, and
// reports whether there was a copy.
func removePartial(name string) bool {
	os.Remove(name + journalSuffix)
	return os.Remove(name) == nil
}

// removeDeadPartials removes the partial copies in dir of backups that
// were killed: each beside a lock file of a backup (its name and its
// text say so) that no process holds. own is the caller's, skipped.
// Returns the copies removed; what cannot be read or removed is left.
func removeDeadPartials(dir, own string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var removed []string
	for _, e := range entries {
		name := filepath.Join(dir, e.Name())
		partial, ok := strings.CutSuffix(name, partialSuffix+lockSuffix)
		if !ok || !e.Type().IsRegular() || partial+partialSuffix == own {
			continue
		}
		partial += partialSuffix
		f, busy, err := lockFile(name, false)
		if err != nil || busy {
			continue // gone meanwhile, or a backup that runs
		}
		if isBackupLock(f) {
			if removePartial(partial) {
				removed = append(removed, partial)
			}
			unlock(f)
		} else {
			f.Close() // not a backup's: left as it is
		}
	}
	return removed
}

// isBackupLock reports whether f holds the text of a backup's lock.
func isBackupLock(f *os.File) bool {
	b := make([]byte, len(lockMark))
	_, err := io.ReadFull(io.NewSectionReader(f, 0, int64(len(lockMark))), b)
	return err == nil && string(b) == lockMark
}

// holder returns " (process N)" for the process a backup's lock file
// names, or "" when it names none.
func holder(name string) string {
	b, err := os.ReadFile(name)
	if err != nil {
		return ""
	}
	pid, ok := strings.CutPrefix(strings.TrimSpace(string(b)), lockMark)
	if !ok || pid == "" {
		return ""
	}
	return " (process " + pid + ")"
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
