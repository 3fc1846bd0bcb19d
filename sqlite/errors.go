package sqlite

import (
	"errors"

	"github.com/agentmem/agentmem"
	sqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// formatError turns driver errors into agentmem errors: a constraint
// violation is ECONFLICT, a busy database EUNAVAILABLE, a full disk (or
// a file at its SetMaxPageCount) EUNAVAILABLE saying so; agentmem errors
// and others pass as they are (clients see the others as internal
// errors). write and read apply it to what their fn returns.
func formatError(err error) error {
	var ae *agentmem.Error
	var e *sqlite.Error
	if errors.As(err, &ae) {
		return err
	}
	if errors.As(err, &e) {
		switch e.Code() & 0xff {
		case sqlite3.SQLITE_CONSTRAINT:
			return agentmem.Errorf(agentmem.ECONFLICT, "The record already exists.")
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
			return errors.Join(agentmem.Errorf(agentmem.EUNAVAILABLE, "The database is busy; retry."), err)
		case sqlite3.SQLITE_FULL:
			return errors.Join(errDiskFull, agentmem.ErrStoreDown, err)
		}
	}
	return err
}

// errDiskFull is a write that found the database's disk full: nothing of
// it is stored, what is stored stays readable, and the same write succeeds
// once there is room again.
var errDiskFull = agentmem.Errorf(agentmem.EUNAVAILABLE, "The database's disk is full: nothing was written; reads still work. Retry once space is freed.")
