package postgres

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"

	"github.com/agentmem/agentmem"
	"github.com/jackc/pgx/v5/pgconn"
)

// formatError turns driver errors into agentmem errors: a unique violation
// is ECONFLICT; a lost or refused connection (also one the driver had
// already closed when the pool handed it out), a deadlock or a lock
// timeout EUNAVAILABLE; NUL characters, which PostgreSQL text cannot hold, and
// times beyond the range of timestamptz EINVALID. Others pass as they are (clients see them as internal errors,
// never their text). agentmem errors and context errors pass unchanged,
// except a connection that timed out (DefaultConnectTimeout): the
// database did not answer, EUNAVAILABLE.
func formatError(err error) error {
	var ae *agentmem.Error
	var ce *pgconn.ConnectError
	switch {
	case err == nil || errors.As(err, &ae) || errors.Is(err, context.Canceled):
		return err
	case errors.As(err, &ce):
		return unavailable(err)
	case errors.Is(err, context.DeadlineExceeded):
		return err
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case pe.Code == "23505": // unique_violation
			return agentmem.Errorf(agentmem.ECONFLICT, "The record already exists.")
		case pe.Code == "40001" || pe.Code == "40P01" || pe.Code == "55P03": // serialization_failure, deadlock_detected, lock_not_available
			return errors.Join(agentmem.Errorf(agentmem.EUNAVAILABLE, "The database is busy; retry."), err)
		case pe.Code == "22021" || pe.Code == "22P05": // character_not_in_repertoire (0x00 in text), untranslatable_character (\u0000 in jsonb)
			return errors.Join(agentmem.Errorf(agentmem.EINVALID, "Text may not contain NUL characters."), err)
		case pe.Code == "22008": // datetime_field_overflow: a client's time outside 4713 BC to 294276 AD
			return errors.Join(agentmem.Errorf(agentmem.EINVALID, "A time is out of range."), err)
		case strings.HasPrefix(pe.Code, "08"), // connection_exception
			pe.Code == "53300",                                         // too_many_connections
			pe.Code == "57P01", pe.Code == "57P02", pe.Code == "57P03": // admin_shutdown, crash_shutdown, cannot_connect_now
			return unavailable(err)
		}
		return err
	}
	var ne net.Error
	if errors.As(err, &ne) || pgconn.Timeout(err) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		// A connection found closed (its socket went away while idle in
		// the pool), or any error the driver says happened before the
		// server saw the statement.
		errors.Is(err, pgconn.ErrConnClosed) || pgconn.SafeToRetry(err) {
		return unavailable(err)
	}
	return err
}

func unavailable(err error) error {
	return errors.Join(agentmem.Errorf(agentmem.EUNAVAILABLE, "The database is unavailable; retry."), agentmem.ErrStoreDown, err)
}

// isUniqueViolation reports whether err is PostgreSQL's unique_violation,
// of the named constraint or index if one is given.
func isUniqueViolation(err error, constraint ...string) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505" && (len(constraint) == 0 || pe.ConstraintName == constraint[0])
}

func errClosed() error { return agentmem.Errorf(agentmem.EUNAVAILABLE, "The store is closed.") }

func errNotReady() error {
	return errors.Join(agentmem.Errorf(agentmem.EUNAVAILABLE, "The database has not answered since the server started; retry."), agentmem.ErrStoreDown)
}
