// Package postgres implements agentmem.Store on PostgreSQL with pgx/v5: a
// connection pool, one transaction per call, row locks on the thread so
// that any number of server processes append gap-free, and embedded
// forward-only migrations taken under an advisory lock.
//
// It mirrors package sqlite, the reference backend: the same tables,
// cursors and errors, and the same conformance suite (storetest).
package postgres

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"net"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

//go:embed migration/*.sql
var migrationFS embed.FS

var _ agentmem.Store = (*Store)(nil)

// Store is an agentmem.Store on one PostgreSQL schema: the first schema of
// the connection's search_path.
type Store struct {
	pool   *pgxpool.Pool
	closed atomic.Bool
	// ready is closed once the schema is migrated: at once by Open, in
	// the background by OpenInBackground. Until then every call answers
	// errNotReady.
	ready chan struct{}
	// stopConnect ends OpenInBackground's loop, and connected is closed
	// when it has returned (both nil after Open).
	stopConnect context.CancelFunc
	connected   chan struct{}
	// connectTimeout bounds a new connection, and how long a call waits
	// for one of the pool's (see begin).
	connectTimeout time.Duration
	// spaceIDs maps a vector space's name to its committed
	// vector_spaces.id (see vectorSpaceIDs).
	spaceIDs sync.Map

	// Now returns the current time; tests replace it.
	Now func() time.Time
	// Tokens counts message tokens at write (agentmem.EstimateTokens when nil).
	Tokens agentmem.TokenCounter
	// MaxMessageBytes bounds one message (agentmem.DefaultMaxMessageBytes when 0).
	MaxMessageBytes int
}

// DefaultConnectTimeout bounds a new connection, from the dial to the
// end of authentication, when the DSN sets no connect_timeout: a server
// that accepts connections and never answers (down behind a proxy or a
// load balancer that still listens) then fails a request in seconds,
// EUNAVAILABLE, rather than holding it for as long as the client waits.
const DefaultConnectTimeout = 3 * time.Second

// Open connects to the PostgreSQL database of dsn (a postgres:// URL or
// key=value string, as pgx reads them: search_path selects the schema,
// pool_max_conns sizes the pool, connect_timeout bounds a new connection,
// DefaultConnectTimeout when absent) and applies the pending migrations.
// Returns EUNAVAILABLE if the database cannot be reached.
func Open(ctx context.Context, dsn string) (*Store, error) {
	s, err := newStore(ctx, dsn)
	if err != nil {
		return nil, err
	}
	if err := s.migrate(ctx); err != nil {
		s.pool.Close()
		return nil, err
	}
	close(s.ready)
	return s, nil
}

// queryTracer, when set (by a test, before any store opens), sees every
// statement of the stores opened after.
var queryTracer pgx.QueryTracer

// newStore returns a store on a pool of dsn, not connected yet (pgxpool
// connects on first use) and not ready.
func newStore(ctx context.Context, dsn string) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("parse postgres dsn: %w", err) // pgx masks the password
	}
	if cfg.ConnConfig.ConnectTimeout == 0 { // libpq's default: none
		cfg.ConnConfig.ConnectTimeout = DefaultConnectTimeout
	}
	if !strings.Contains(dsn, "pool_max_conns") {
		// pgxpool's default (the CPU count, at least 4) starves concurrent
		// appenders: each waits for a connection while others wait on fsync.
		cfg.MaxConns = max(cfg.MaxConns, 16)
	}
	cfg.ConnConfig.Tracer = queryTracer
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open postgres: %w", formatError(err))
	}
	return &Store{pool: pool, Now: time.Now, connectTimeout: cfg.ConnConfig.ConnectTimeout, ready: make(chan struct{})}, nil
}

// OpenInBackground is Open for a server, which must start whether the
// database answers or not. It tries once as Open does; when the database
// cannot be reached (EUNAVAILABLE: refused, silent, starting up, out of
// connections), it returns the store all the same, and connects and
// migrates in the background, waiting backoff(attempt) before attempt
// number attempt (from 1; ConnectBackoff when nil), until it has or
// Close is called. Until then
// every call, Ping included, answers EUNAVAILABLE (agentmem.ErrStoreDown),
// and Ready's channel is open. Each failed attempt is logged at Warn, the
// success at Info. Any other error of the first attempt (a malformed DSN,
// a refused password, a database that does not exist, a migration that
// fails) is returned as Open returns it: a mistake to fix, not an outage
// to wait out.
func OpenInBackground(ctx context.Context, dsn string, log *slog.Logger, backoff func(attempt int) time.Duration) (*Store, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if backoff == nil {
		backoff = ConnectBackoff
	}
	s, err := newStore(ctx, dsn)
	if err != nil {
		return nil, err
	}
	err = s.migrate(ctx)
	if err == nil {
		close(s.ready)
		return s, nil
	}
	if !isDown(err) || ctx.Err() != nil {
		s.pool.Close()
		return nil, err
	}
	log.Warn("the database does not answer: serving 503 until it does, connecting in the background", "err", err)
	bg, stop := context.WithCancel(context.WithoutCancel(ctx))
	s.stopConnect, s.connected = stop, make(chan struct{})
	go func() {
		defer close(s.connected)
		for attempt := 1; ; attempt++ {
			delay := backoff(attempt)
			select {
			case <-bg.Done():
				return
			case <-time.After(delay):
			}
			err := s.migrate(bg)
			if err == nil {
				close(s.ready)
				log.Info("the database answers: connected and migrated", "attempts", attempt+1)
				return
			}
			if bg.Err() != nil {
				return
			}
			log.Warn("the database does not answer yet", "attempt", attempt+1, "err", err, "retry_in", backoff(attempt+1))
		}
	}()
	return s, nil
}

// ConnectBackoff is OpenInBackground's wait before its attempt number
// attempt (from 1) to connect again: 250 ms doubling up to 5 s, so that a
// database back after a long outage is found within seconds, and one that
// stays away costs one connection attempt every 5 s.
func ConnectBackoff(attempt int) time.Duration {
	return min(250*time.Millisecond<<min(attempt-1, 5), 5*time.Second)
}

// isDown reports whether err, of an attempt to connect and migrate, says
// the database cannot be reached now: EUNAVAILABLE, and not an answer of
// the server that will not change by waiting (a refused password, an
// unknown database or role), which pgx reports as a failed connection too.
func isDown(err error) bool {
	if agentmem.ErrorCode(err) != agentmem.EUNAVAILABLE {
		return false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		// formatError's EUNAVAILABLE codes: the server is there but cannot
		// serve yet (starting up, shutting down, out of connections, busy).
		return strings.HasPrefix(pe.Code, "08") || pe.Code == "53300" || pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03" ||
			pe.Code == "40001" || pe.Code == "40P01" || pe.Code == "55P03"
	}
	return true
}

// Ready returns a channel closed once the store is connected and
// migrated: at once after Open; after OpenInBackground, when its
// background loop has succeeded (never, if it is closed first).
func (s *Store) Ready() <-chan struct{} { return s.ready }

// Close waits for the calls in flight and closes the connections; it
// stops OpenInBackground's loop first. Calls after Close return
// EUNAVAILABLE.
func (s *Store) Close() error {
	if s.closed.CompareAndSwap(false, true) {
		if s.stopConnect != nil {
			s.stopConnect()
			<-s.connected
		}
		s.pool.Close()
	}
	return nil
}

// usable returns the error of a call to a store that is closed, or not
// connected and migrated yet; nil when it may be used.
func (s *Store) usable() error {
	if s.closed.Load() {
		return errClosed()
	}
	select {
	case <-s.ready:
		return nil
	default:
		return errNotReady()
	}
}

// Ping implements agentmem.Store.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.usable(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, s.connectTimeout) // see begin
	defer cancel()
	if err := s.pool.Ping(ctx); err != nil {
		return errors.Join(agentmem.Errorf(agentmem.EUNAVAILABLE, "The database does not answer."), err)
	}
	return nil
}

func errClosed() error { return agentmem.Errorf(agentmem.EUNAVAILABLE, "The store is closed.") }

func errNotReady() error {
	return errors.Join(agentmem.Errorf(agentmem.EUNAVAILABLE, "The database has not answered since the server started; retry."), agentmem.ErrStoreDown)
}

func (s *Store) now() time.Time { return agentmem.Timestamp(s.Now()) }

func (s *Store) tokens() agentmem.TokenCounter {
	if s.Tokens == nil {
		return agentmem.EstimateTokens{}
	}
	return s.Tokens
}

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

// referenceTables hold data shared by all users (API keys, the audit log):
// not user data, so DeleteUser leaves them (see migration/0002_auth.sql).
var referenceTables = []string{"api_keys", "audit_log"}

// storeTables are the tables of a store: the user data, the reference
// tables and the migrations.
var storeTables = slices.Concat([]string{"migrations"}, userTables, referenceTables)

// Size returns the bytes the store's tables take, indexes and TOAST
// included (pg_total_relation_size of each table of its schema).
func (s *Store) Size(ctx context.Context) (int64, error) {
	var n int64
	err := s.read(ctx, func(tx pgx.Tx) (err error) {
		n, err = size(ctx, tx)
		return err
	})
	return n, err
}

// size sums pg_total_relation_size over the tables that the search_path
// resolves, which are the ones this store reads and writes.
func size(ctx context.Context, tx pgx.Tx) (int64, error) {
	var n int64
	err := tx.QueryRow(ctx, `SELECT COALESCE(SUM(pg_total_relation_size(to_regclass(t))), 0)::bigint FROM unnest($1::text[]) AS t`,
		storeTables).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("measure tables: %w", err)
	}
	return n, nil
}

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

// jsonValue returns JSON read from a jsonb column compacted, the form
// agentmem writes (jsonb prints spaces after colons and commas).
func jsonValue(b []byte) json.RawMessage {
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return json.RawMessage(b)
	}
	return buf.Bytes()
}

// utc returns t in UTC; pgx reads timestamptz in the local time zone.
func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// Analyze refreshes the planner's statistics of the store's tables. Run it
// after a bulk import: until autovacuum has analyzed a freshly filled
// table, PostgreSQL plans it as nearly empty and may sort a user's whole
// thread list instead of reading its first page from the index.
func (s *Store) Analyze(ctx context.Context) error {
	if err := s.usable(); err != nil {
		return err
	}
	if _, err := s.pool.Exec(ctx, `ANALYZE `+strings.Join(userTables, ", ")); err != nil {
		return fmt.Errorf("analyze: %w", formatError(err))
	}
	return nil
}
