// Package testutil holds test helpers shared by several packages' tests.
package testutil

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"maps"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/agentmem/agentmem/postgres"
	"github.com/agentmem/agentmem/tokens"
	"github.com/jackc/pgx/v5"
)

// PostgresDSN returns the DSN of the test database, from
// AGENTMEM_TEST_POSTGRES (e.g. postgres://postgres@127.0.0.1:5432/test).
// Without it the test is skipped, except on CI (CI=true), where a skipped
// PostgreSQL suite would pass silently: there it fails.
func PostgresDSN(tb testing.TB) string {
	tb.Helper()
	dsn := os.Getenv("AGENTMEM_TEST_POSTGRES")
	if dsn == "" {
		if os.Getenv("CI") == "true" {
			tb.Fatal("AGENTMEM_TEST_POSTGRES is not set; CI must run the PostgreSQL suite")
		}
		tb.Skip("AGENTMEM_TEST_POSTGRES not set")
	}
	return dsn
}

// MustCreateSchema creates an empty schema am_test_<random>, drops it with
// everything in it when the test ends, and returns a DSN whose search_path
// selects it.
//
// For a test, not a benchmark, the DSN also turns synchronous_commit off:
// a commit then returns before its WAL reaches the disk, which only a
// crash of the PostgreSQL server could tell apart, and costs no fsync
// (much of the time the PostgreSQL tests took). Locks, isolation and
// visibility are as they are with it on. Benchmarks keep the server's
// setting, so that they measure what a deployment gets.
func MustCreateSchema(tb testing.TB) string {
	tb.Helper()
	dsn := PostgresDSN(tb)
	schema := mustNewSchema(tb, dsn)
	// Registered before any store of the schema opens, so it runs after
	// their Close (cleanups run last in, first out).
	tb.Cleanup(func() { MustExec(tb, dsn, `DROP SCHEMA `+schema+` CASCADE`) })
	return schemaDSN(tb, dsn, schema)
}

// mustNewSchema creates an empty schema am_test_<random> and returns its
// name.
func mustNewSchema(tb testing.TB, dsn string) string {
	tb.Helper()
	var b [8]byte
	_, _ = rand.Read(b[:])
	schema := "am_test_" + hex.EncodeToString(b[:])
	MustExec(tb, dsn, `CREATE SCHEMA `+schema)
	return schema
}

// schemaDSN returns dsn with the search_path of schema and, unless tb is a
// benchmark, synchronous_commit off (see MustCreateSchema).
func schemaDSN(tb testing.TB, dsn, schema string) string {
	params := map[string]string{"search_path": schema}
	if _, bench := tb.(*testing.B); !bench {
		params["synchronous_commit"] = "off"
	}
	return withParams(dsn, params)
}

// WithSearchPath adds search_path to a URL or key=value DSN; pgx sends it
// as a run-time parameter of every connection.
func WithSearchPath(dsn, schema string) string {
	return withParams(dsn, map[string]string{"search_path": schema})
}

// WithParams sets parameters of a URL or key=value DSN (pool_max_conns,
// connect_timeout…).
func WithParams(dsn string, params map[string]string) string { return withParams(dsn, params) }

// withParams sets parameters of a URL or key=value DSN.
func withParams(dsn string, params map[string]string) string {
	if u, err := url.Parse(dsn); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		q := u.Query()
		for k, v := range params {
			q.Set(k, v)
		}
		u.RawQuery = q.Encode()
		return u.String()
	}
	for _, k := range slices.Sorted(maps.Keys(params)) {
		dsn += " " + k + "=" + params[k]
	}
	return dsn
}

// MustExec runs one statement on a connection of its own.
func MustExec(tb testing.TB, dsn, sql string) {
	tb.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		tb.Fatalf("connect: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql); err != nil {
		tb.Fatalf("%s: %v", sql, err)
	}
}

// MustOpenPostgres opens a store on a fresh schema (see MustCreateSchema)
// with exact token counts, closed when the test ends.
func MustOpenPostgres(tb testing.TB) *postgres.Store {
	tb.Helper()
	return MustOpenPostgresDSN(tb, MustCreateSchema(tb))
}

// MustOpenPostgresDSN opens a store on dsn (migrating its schema if
// needed) with exact token counts, closed when the test ends. Unless dsn
// sets pool_max_conns, the store's pool holds at most testPoolConns
// connections.
func MustOpenPostgresDSN(tb testing.TB, dsn string) *postgres.Store {
	tb.Helper()
	if !strings.Contains(dsn, "pool_max_conns") {
		dsn = withParams(dsn, map[string]string{"pool_max_conns": testPoolConns})
	}
	s, err := postgres.Open(context.Background(), dsn)
	if err != nil {
		tb.Fatalf("open postgres: %v", err)
	}
	s.Tokens = tokens.Default()
	tb.Cleanup(func() { s.Close() })
	return s
}

// testPoolConns caps the pool of a test's store (postgres.Open's default
// is 16). The tests run in parallel, two packages at a time, and a test
// may open two stores; PostgreSQL refuses connections beyond
// max_connections (100 by default), which other runs on the same server
// share. Each connection costs PostgreSQL a process start (tens of
// milliseconds of its time here), and waiters on one lock wake each
// other: with 4 the concurrency tests still run 4 transactions at once
// per store, for about a fifth less of PostgreSQL's time than with 8.
const testPoolConns = "4"
