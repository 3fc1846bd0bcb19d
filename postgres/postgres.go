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
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

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
	log = agentmem.LoggerOr(log)
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
	log.Warn("the database does not answer: serving 503 until it does, connecting in the background", agentmem.LogErr, err)
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
			log.Warn("the database does not answer yet", "attempt", attempt+1, agentmem.LogErr, err, "retry_in", backoff(attempt+1))
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

func (s *Store) now() time.Time { return agentmem.Timestamp(s.Now()) }

func (s *Store) tokens() agentmem.TokenCounter {
	if s.Tokens == nil {
		return agentmem.EstimateTokens{}
	}
	return s.Tokens
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

// jsonValue returns JSON read from a jsonb column compacted, the form
// agentmem writes (jsonb prints spaces after colons and commas).
func jsonValue(b []byte) json.RawMessage {
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return json.RawMessage(b)
	}
	return buf.Bytes()
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
