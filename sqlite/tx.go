package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/agentmem/agentmem"
)

// write runs fn in a write transaction and returns once that transaction
// has committed (or fn failed). Concurrent calls share transactions: each
// fn runs in its own savepoint, so one caller's failure rolls back only its
// own changes, and one fsync makes a whole group durable.
//
// Background work's writes (agentmem.IsBackground(ctx)) wait while the
// request path has writes queued, and each commits in a transaction with
// no other background write: a request's write waits for at most one of
// them (see writeSlices).
//
// A job's write (agentmem.WithJob) first checks, in its transaction, that
// the job is still there and leased to its owner (see checkJobRun), and a
// write with a requirement (agentmem.WithRequired) that it holds.
func (s *Store) write(ctx context.Context, fn func(tx *sql.Tx) error) error {
	if run, ok := agentmem.JobRunFromContext(ctx); ok {
		write := fn
		fn = func(tx *sql.Tx) error {
			if err := checkJobRun(ctx, tx, run); err != nil {
				return err
			}
			return write(tx)
		}
	}
	if r, ok := agentmem.RequiredFromContext(ctx); ok {
		write := fn
		fn = func(tx *sql.Tx) error {
			if err := checkRequired(ctx, tx, r); err != nil {
				return err
			}
			return write(tx)
		}
	}
	op := &writeOp{ctx: ctx, fn: fn, done: make(chan error, 1), background: agentmem.IsBackground(ctx)}
	queue := s.writes
	if op.background {
		queue = s.background
	}
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return agentmem.Errorf(agentmem.EUNAVAILABLE, "The store is closed.")
	}
	select {
	case queue <- op:
	case <-ctx.Done():
		s.mu.RUnlock()
		return ctx.Err()
	}
	s.mu.RUnlock()
	// Wait for the outcome even if ctx ends meanwhile: once queued, the
	// write may commit, and the caller must not be told otherwise.
	return formatError(<-op.done)
}

// sliceBytes bounds what one transaction of background work (windows,
// chunks, vectors) writes, in bytes of text and vectors: an append
// queued behind it waits for a millisecond or two, not for a thousand
// windows (a hundred everyday windows, 110 KB of text for the full-text
// index, took 14 ms).
const sliceBytes = 16 << 10

// writeSlices writes n items with fn, which writes items [from, to) in
// tx: in one transaction, or, for background work (agentmem.IsBackground),
// in slices of about sliceBytes (size(i) is item i's bytes), each a write
// of its own, so that the request path's writes go between them. A
// failure leaves the slices before it written.
func (s *Store) writeSlices(ctx context.Context, n int, size func(i int) int, fn func(tx *sql.Tx, from, to int) error) error {
	background := agentmem.IsBackground(ctx)
	for from := 0; ; {
		to := n
		if background {
			to = from + 1
			for bytes := size(from); to < n && bytes+size(to) <= sliceBytes; to++ {
				bytes += size(to)
			}
		}
		if err := s.write(ctx, func(tx *sql.Tx) error { return fn(tx, from, to) }); err != nil || to >= n {
			return err
		}
		from = to
	}
}

func (s *Store) inSavepoint(tx *sql.Tx, fn func(tx *sql.Tx) error) error {
	ctx := context.Background()
	if _, err := s.writeExec(ctx, tx, `SAVEPOINT op`); err != nil {
		return formatError(fmt.Errorf("savepoint: %w", err))
	}
	if err := fn(tx); err != nil {
		if _, rerr := s.writeExec(ctx, tx, `ROLLBACK TO op`); rerr != nil {
			return errors.Join(err, formatError(rerr))
		}
		_, _ = s.writeExec(ctx, tx, `RELEASE op`)
		return err
	}
	if _, err := s.writeExec(ctx, tx, `RELEASE op`); err != nil {
		return formatError(fmt.Errorf("release: %w", err))
	}
	return nil
}

// read runs fn in a read transaction on a reader connection: a consistent
// snapshot of the database.
func (s *Store) read(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := s.reader.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return formatError(fmt.Errorf("begin: %w", err))
	}
	defer tx.Rollback()
	err = fn(tx)
	if err == nil {
		err = tx.Commit()
	}
	if errors.Is(err, sql.ErrTxDone) && ctx.Err() != nil {
		// database/sql rolled the transaction back when ctx ended, and a
		// statement or the commit after that says so, not why.
		return ctx.Err()
	}
	if err != nil {
		return formatError(err)
	}
	return nil
}
