// Package testutil holds test helpers shared by several packages' tests.
package testutil

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
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
func MustCreateSchema(tb testing.TB) string {
	tb.Helper()
	dsn := PostgresDSN(tb)
	var b [8]byte
	_, _ = rand.Read(b[:])
	schema := "am_test_" + hex.EncodeToString(b[:])
	MustExec(tb, dsn, `CREATE SCHEMA `+schema)
	// Registered before any store of the schema opens, so it runs after
	// their Close (cleanups run last in, first out).
	tb.Cleanup(func() { MustExec(tb, dsn, `DROP SCHEMA `+schema+` CASCADE`) })
	return WithSearchPath(dsn, schema)
}

// WithSearchPath adds search_path to a URL or key=value DSN; pgx sends it
// as a run-time parameter of every connection.
func WithSearchPath(dsn, schema string) string {
	if u, err := url.Parse(dsn); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		q := u.Query()
		q.Set("search_path", schema)
		u.RawQuery = q.Encode()
		return u.String()
	}
	return dsn + " search_path=" + schema
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
// needed) with exact token counts, closed when the test ends.
func MustOpenPostgresDSN(tb testing.TB, dsn string) *postgres.Store {
	tb.Helper()
	s, err := postgres.Open(context.Background(), dsn)
	if err != nil {
		tb.Fatalf("open postgres: %v", err)
	}
	s.Tokens = tokens.Default()
	tb.Cleanup(func() { s.Close() })
	return s
}
