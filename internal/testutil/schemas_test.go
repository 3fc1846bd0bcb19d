package testutil

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/storetest"
	"github.com/jackc/pgx/v5"
)

// TestSchemas: a schema is lent again once its subtest ends, with every
// table empty but the migrations, which stay all recorded; the schemas
// are dropped when the test ends.
func TestSchemas(t *testing.T) {
	ctx := context.Background()
	dsn := PostgresDSN(t)
	migrations, err := filepath.Glob("../../postgres/migration/*.sql")
	if err != nil || len(migrations) == 0 {
		t.Fatalf("migration files: %v, %v", migrations, err)
	}
	var schema string
	t.Run("Lend", func(t *testing.T) {
		p := NewSchemas(t)
		for i := range 3 {
			t.Run(fmt.Sprint(i), func(t *testing.T) {
				s := p.MustOpen(t)
				if st, err := s.Stats(ctx); err != nil || st.Users != 0 || st.Threads != 0 || st.Messages != 0 {
					t.Fatalf("a lent store holds %+v (%v), want nothing", st, err)
				}
				th := storetest.MustCreateThread(t, s, &agentmem.Thread{UserID: "alice"})
				storetest.MustAppend(t, s, "alice", th.ID, agentmem.RoleUser, "hello")
				storetest.MustEnqueueJob(t, s, &agentmem.Job{UserID: "alice", Kind: "summarize"})
				storetest.MustCreateKey(t, s, agentmem.Scope{Kind: agentmem.ScopeAdmin}, time.Now(), 0)
			})
			if len(p.all) != 1 || len(p.idle) != 1 {
				t.Fatalf("after %d subtests: %d schemas, %d idle; want the one lent again", i+1, len(p.all), len(p.idle))
			}
			schema = p.all[0]
			wantEmpty(t, schemaDSN(t, dsn, schema), len(migrations))
		}
	})
	var n int
	if err := mustConnect(t, dsn).QueryRow(ctx, `SELECT COUNT(*) FROM pg_namespace WHERE nspname = $1`, schema).Scan(&n); err != nil || n != 0 {
		t.Fatalf("schema %s: %d of it (%v), want it dropped", schema, n, err)
	}
}

// wantEmpty fails unless every table of the schema that dsn selects is
// empty but the migrations, which hold a row for each of n files.
func wantEmpty(t *testing.T, dsn string, n int) {
	t.Helper()
	ctx := context.Background()
	conn := mustConnect(t, dsn)
	rows, err := conn.Query(ctx, `SELECT tablename::text FROM pg_tables WHERE schemaname = current_schema()`)
	if err != nil {
		t.Fatal(err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || len(tables) < 10 {
		t.Fatalf("tables %v, %v", tables, err)
	}
	for _, table := range tables {
		var got int
		if err := conn.QueryRow(ctx, `SELECT COUNT(*) FROM `+pgx.Identifier{table}.Sanitize()).Scan(&got); err != nil {
			t.Fatal(err)
		}
		want := 0
		if table == "migrations" {
			want = n
		}
		if got != want {
			t.Errorf("table %s holds %d rows after its subtest, want %d", table, got, want)
		}
	}
}

// mustConnect opens a connection to dsn, closed when the test ends.
func mustConnect(tb testing.TB, dsn string) *pgx.Conn {
	tb.Helper()
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		tb.Fatalf("connect: %v", err)
	}
	tb.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}
