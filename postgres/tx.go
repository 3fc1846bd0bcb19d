package postgres

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Transaction modes: writes run at READ COMMITTED and lock the rows they
// depend on (the thread first); reads see one snapshot.
var (
	writeTx = pgx.TxOptions{IsoLevel: pgx.ReadCommitted}
	readTx  = pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}
)

// Row-locking clauses for findThread. forUpdate serialises writers of a
// thread (updates, deletion); forShare keeps the thread from being
// deleted or changed while something is attached to it.
//
// Appends and indexing never wait on each other: an append locks its
// thread forNoKeyUpdate (it changes the thread's counters, never its
// key), and what the index jobs attach to a thread (windows, chunks,
// entity references) locks it forKeyShare, which only a deletion of the
// thread waits for. An index job's transaction can last seconds on a
// large thread (PostgreSQL may merge a GIN index's pending list within
// it); with FOR SHARE, appends to the thread waited for it (issue 13).
const (
	noLock         = ""
	forUpdate      = " FOR UPDATE"
	forNoKeyUpdate = " FOR NO KEY UPDATE"
	forShare       = " FOR SHARE"
	forKeyShare    = " FOR KEY SHARE"

	// indexLock is how what the index jobs write locks its thread.
	indexLock = forKeyShare
)

// write runs fn in a write transaction and commits it. A job's write
// (agentmem.WithJob) first checks, in the transaction, that the job is
// still there and leased to its owner (see checkJobRun), and a write with
// a requirement (agentmem.WithRequired) that it holds (checkRequired).
func (s *Store) write(ctx context.Context, fn func(tx pgx.Tx) error) error {
	if run, ok := agentmem.JobRunFromContext(ctx); ok {
		write := fn
		fn = func(tx pgx.Tx) error {
			if err := checkJobRun(ctx, tx, run); err != nil {
				return err
			}
			return write(tx)
		}
	}
	if r, ok := agentmem.RequiredFromContext(ctx); ok {
		write := fn
		fn = func(tx pgx.Tx) error {
			if err := checkRequired(ctx, tx, r); err != nil {
				return err
			}
			return write(tx)
		}
	}
	return s.inTx(ctx, writeTx, fn)
}

// writeRetrying is write for the transactions that lock a user's rows
// of several tables: erasure, permanent thread deletion and the writers
// of vectors. Rows created while one of them waits (a vector space's
// version row, a user's row again after an erasure) can still make two
// of them wait for each other; PostgreSQL then aborts one as a deadlock
// victim, and it is run again, at most deadlockRetries more times. fn must
// start from scratch on each run: nothing it set in an aborted run may
// survive into the next.
func (s *Store) writeRetrying(ctx context.Context, fn func(tx pgx.Tx) error) error {
	for try := 0; ; try++ {
		err := s.write(ctx, fn)
		var pe *pgconn.PgError
		if try == deadlockRetries || !errors.As(err, &pe) || pe.Code != "40P01" && pe.Code != "40001" || ctx.Err() != nil {
			return err
		}
		select { // a moment, so that the other transaction goes first
		case <-ctx.Done():
			return err
		case <-time.After(time.Duration(1+rand.IntN(5)) * time.Millisecond):
		}
	}
}

// deadlockRetries bounds writeRetrying's reruns.
const deadlockRetries = 3

// read runs fn in a read-only transaction: a consistent snapshot.
func (s *Store) read(ctx context.Context, fn func(tx pgx.Tx) error) error {
	return s.inTx(ctx, readTx, fn)
}

// backgroundTxWait is how long a transaction of background work waits at
// most for a unit of background CPU work (see inTx).
const backgroundTxWait = 50 * time.Millisecond

func (s *Store) inTx(ctx context.Context, opt pgx.TxOptions, fn func(tx pgx.Tx) error) error {
	if err := s.usable(); err != nil {
		return err
	}
	// Background work's transactions are background CPU work,
	// PostgreSQL's (see agentmem.BackgroundCPU): while requests are
	// served, each waits for a unit, as the model's passes do (for
	// backgroundTxWait at most, so that a transaction whose caller holds a
	// unit is never stopped).
	defer agentmem.BackgroundCPUWithin(ctx, backgroundTxWait)()
	tx, err := s.begin(ctx, opt)
	if err != nil {
		if s.closed.Load() {
			return errClosed()
		}
		return formatError(fmt.Errorf("begin: %w", err))
	}
	// A no-op after Commit. If ctx is done, pgx closes the connection
	// instead, which ends the transaction as well.
	defer tx.Rollback(ctx)
	if err := fn(tx); err != nil {
		return formatError(err)
	}
	if err := tx.Commit(ctx); err != nil {
		return formatError(fmt.Errorf("commit: %w", err))
	}
	return nil
}

// begin begins a transaction on a connection of the pool, waiting for one
// at most connectTimeout. While the server does not answer, the pool's
// connections are all being made, each until connectTimeout, and a caller
// queued behind them would wait for several of those in turn: it gives
// up after one, EUNAVAILABLE (the statements that follow have the
// caller's ctx only).
func (s *Store) begin(ctx context.Context, opt pgx.TxOptions) (pgx.Tx, error) {
	bctx, cancel := context.WithTimeout(ctx, s.connectTimeout)
	defer cancel()
	tx, err := s.pool.BeginTx(bctx, opt)
	if err != nil && ctx.Err() == nil && bctx.Err() != nil {
		return nil, unavailable(err)
	}
	return tx, err
}
