package postgres_test

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/internal/testutil"
	"github.com/agentmem/agentmem/postgres"
	"github.com/agentmem/agentmem/storetest"
	"github.com/jackc/pgx/v5"
)

// statements records the SQL of every statement a store runs.
type statements struct {
	mu   sync.Mutex
	seen map[string]bool
}

func (s *statements) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	s.mu.Lock()
	s.seen[data.SQL] = true
	s.mu.Unlock()
	return ctx
}

func (s *statements) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// tableRef finds the tables a statement reads or writes.
var tableRef = regexp.MustCompile(`(?i)\b(?:FROM|JOIN|UPDATE|INTO)\s+([a-z_]+)`)

// TestQueries_ScopedByUser runs the conformance suite on a store that
// records its statements (those pgx traces one by one: not batches or
// COPY) and fails if one that reads or writes a user's table does not say
// user_id: every query is scoped by user, the property
// that keeps tenants apart and lets PostgreSQL be distributed by user_id
// (Citus). The reference tables (see TestSchema_UserIDFirst) and the
// statements that work across users by design are named below.
func TestQueries_ScopedByUser(t *testing.T) { // not parallel: the tracer is set while the parallel tests wait
	rec := &statements{seen: map[string]bool{}}
	postgres.SetQueryTracer(rec)
	schemas := testutil.NewSchemas(t)
	t.Run("suite", func(t *testing.T) {
		storetest.Run(t, func(tb testing.TB) agentmem.Store { return schemas.MustOpen(tb) })
	})
	postgres.SetQueryTracer(nil)

	userTables := map[string]bool{}
	for _, table := range postgres.UserTables {
		userTables[table] = true
	}
	var unscoped []string
	for sql := range rec.seen {
		if strings.Contains(sql, "user_id") || acrossUsers(sql) {
			continue
		}
		for _, m := range tableRef.FindAllStringSubmatch(sql, -1) {
			if userTables[strings.ToLower(m[1])] {
				unscoped = append(unscoped, sql)
				break
			}
		}
	}
	slices.Sort(unscoped)
	for _, sql := range unscoped {
		t.Errorf("a statement on a user's table without user_id:\n%s", sql)
	}
	if len(rec.seen) < 100 {
		t.Fatalf("%d statements recorded: the tracer saw too little", len(rec.seen))
	}
}

// acrossUsers tells the statements that work across users by design:
// the store's totals (GET /v1/stats, an operator's) and the job queue's
// backlog by kind (/metrics). Scaled out, they fan out to every shard.
func acrossUsers(sql string) bool {
	for _, s := range []string{
		"SELECT (SELECT COUNT(*) FROM users), (SELECT COUNT(*) FROM threads)",
		"SELECT kind, count(*), min(created_at) FROM jobs",
	} {
		if strings.HasPrefix(sql, s) {
			return true
		}
	}
	return false
}
