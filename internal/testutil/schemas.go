package testutil

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/agentmem/agentmem/postgres"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Schemas lends the parallel subtests of one test migrated PostgreSQL
// schemas, each to one subtest at a time: when a subtest ends, the rows
// of its schema are deleted and the schema goes to the next subtest. The
// schemas are dropped when the test ends.
//
// Creating, migrating and dropping a schema makes PostgreSQL create and
// remove some hundred relations, half a second of its time on a small
// machine (more as dead rows pile up in its catalogs); deleting the rows
// of a test's tables takes some milliseconds. A schema lent again is as
// good as a new one to a test of the store: the migrations create no rows,
// sequences or functions, so with every row deleted but the migrations'
// it holds what migrating a new one leaves, except for the space of the
// deleted rows, which no query sees. Tests that change the schema itself,
// or look at the bytes it takes, use MustCreateSchema.
type Schemas struct {
	dsn   string
	conns *pgxpool.Pool // empties and drops the schemas

	mu     sync.Mutex
	idle   []string // migrated and empty
	all    []string
	tables []string // of a migrated schema, but migrations; read at the first emptying
}

// NewSchemas returns an empty Schemas for t's subtests (t is skipped when
// AGENTMEM_TEST_POSTGRES is not set, see PostgresDSN). It drops its
// schemas when t ends, after all of t's subtests.
func NewSchemas(t testing.TB) *Schemas {
	t.Helper()
	dsn := PostgresDSN(t)
	conns, err := pgxpool.New(context.Background(), withParams(dsn, map[string]string{"synchronous_commit": "off"}))
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	p := &Schemas{dsn: dsn, conns: conns}
	t.Cleanup(func() {
		defer conns.Close()
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, schema := range p.all {
			if _, err := conns.Exec(context.Background(), `DROP SCHEMA `+pgx.Identifier{schema}.Sanitize()+` CASCADE`); err != nil {
				t.Errorf("drop schema %s: %v", schema, err)
			}
		}
	})
	return p
}

// MustOpen opens a store on a schema lent by p, with exact token counts
// as MustOpenPostgres. When tb ends the store is closed, then the schema
// emptied and returned to p.
func (p *Schemas) MustOpen(tb testing.TB) *postgres.Store {
	tb.Helper()
	p.mu.Lock()
	var schema string
	if n := len(p.idle); n > 0 {
		schema, p.idle = p.idle[n-1], p.idle[:n-1]
		p.mu.Unlock()
	} else {
		p.mu.Unlock()
		schema = mustNewSchema(tb, p.dsn)
		p.mu.Lock()
		p.all = append(p.all, schema)
		p.mu.Unlock()
	}
	migrated := false
	// Registered before the store's Close, so it runs after it.
	tb.Cleanup(func() {
		if err := p.empty(schema, migrated); err != nil {
			tb.Errorf("empty schema %s: %v", schema, err) // not lent again; dropped with the others
			return
		}
		p.mu.Lock()
		p.idle = append(p.idle, schema)
		p.mu.Unlock()
	})
	s := MustOpenPostgresDSN(tb, schemaDSN(tb, p.dsn, schema)) // migrates a new schema, finds a lent one migrated
	migrated = true
	return s
}

// empty deletes the rows of every table of schema but the migrations, in
// one transaction. The tables of a migrated schema are those of every
// other; they are read once (the catalogs are slow to scan when dead rows
// pile up in them), from the first migrated schema emptied.
func (p *Schemas) empty(schema string, migrated bool) error {
	ctx := context.Background()
	p.mu.Lock()
	tables := p.tables
	p.mu.Unlock()
	if tables == nil {
		rows, err := p.conns.Query(ctx, `SELECT tablename::text FROM pg_tables WHERE schemaname = $1 AND tablename <> 'migrations'`, schema)
		if err != nil {
			return err
		}
		if tables, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
			return err
		}
		if migrated {
			p.mu.Lock()
			p.tables = tables
			p.mu.Unlock()
		}
	}
	var sql strings.Builder
	sql.WriteString("BEGIN;")
	for _, t := range tables {
		sql.WriteString("DELETE FROM " + pgx.Identifier{schema, t}.Sanitize() + ";")
	}
	sql.WriteString("COMMIT;")
	_, err := p.conns.Exec(ctx, sql.String()) // without arguments: the simple protocol, which runs several statements
	return err
}
