package testutil

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/postgres"
	"github.com/agentmem/agentmem/sqlite"
)

// UserRowCounter is a store that counts a user's rows in every table of
// its schema with a user_id column (sqlite.Store.UserRows,
// postgres.Store.UserRows).
type UserRowCounter interface {
	UserRows(ctx context.Context, userID string) (map[string]int64, error)
}

// MustUserRows returns the user's rows left in each table of s that holds
// any (see UserRowCounter); an empty map when none does.
func MustUserRows(tb testing.TB, s agentmem.Store, userID string) map[string]int64 {
	tb.Helper()
	c, ok := s.(UserRowCounter)
	if !ok {
		tb.Fatalf("%T cannot count a user's rows (no UserRows method)", s)
	}
	counts, err := c.UserRows(context.Background(), userID)
	if err != nil {
		tb.Fatalf("count %s's rows: %v", userID, err)
	}
	if len(counts) < 10 {
		tb.Fatalf("found %d tables with a user_id column, want at least 10: %v", len(counts), counts)
	}
	maps.DeleteFunc(counts, func(_ string, n int64) bool { return n == 0 })
	return counts
}

// MustUserRowsOf is MustUserRows on the database db names (as serve's
// --db: sqlite:PATH, or a postgres:// DSN), opened for the count and
// closed after it. An SQLite file may be in use by a server meanwhile.
func MustUserRowsOf(tb testing.TB, db, userID string) map[string]int64 {
	tb.Helper()
	ctx := context.Background()
	var s agentmem.Store
	var err error
	if strings.HasPrefix(db, "postgres://") || strings.HasPrefix(db, "postgresql://") {
		s, err = postgres.Open(ctx, db)
	} else {
		s, err = sqlite.Open(ctx, strings.TrimPrefix(db, "sqlite:"), sqlite.Options{})
	}
	if err != nil {
		tb.Fatalf("open %s: %v", db, err)
	}
	defer s.Close()
	return MustUserRows(tb, s, userID)
}

// FormatRows lists counts as "table=n" in table order: what an erasure
// left behind.
func FormatRows(counts map[string]int64) string {
	var b strings.Builder
	for _, t := range slices.Sorted(maps.Keys(counts)) {
		if b.Len() > 0 {
			b.WriteString(" ")
		}
		b.WriteString(t + "=")
		b.WriteString(strconv.FormatInt(counts[t], 10))
	}
	return b.String()
}
