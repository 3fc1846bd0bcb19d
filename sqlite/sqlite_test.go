package sqlite_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/sqlite"
	"github.com/agentmem/agentmem/storetest"
	"github.com/agentmem/agentmem/tokens"
)

// MustOpen opens a store in a new file under tb.TempDir and closes it at
// the end of the test.
func MustOpen(tb testing.TB, path string) *sqlite.Store {
	tb.Helper()
	if path == "" {
		path = filepath.Join(tb.TempDir(), "agentmem.db")
	}
	s, err := sqlite.Open(context.Background(), path, sqlite.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	s.Tokens = tokens.Default()
	tb.Cleanup(func() { s.Close() })
	return s
}

func TestStore(t *testing.T) {
	storetest.Run(t, func(tb testing.TB) agentmem.Store { return MustOpen(tb, "") })
}

func TestStore_Restart(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "agentmem.db")
	s, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	th := storetest.MustCreateThread(t, s, &agentmem.Thread{UserID: "alice", Title: "kept"})
	storetest.MustAppend(t, s, "alice", th.ID, "user", "remember me", "assistant", "I will")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.FindThreadByID(ctx, "alice", th.ID); err == nil {
		t.Fatal("a closed store still answers")
	}
	if _, err := s.AppendMessages(ctx, "alice", th.ID, []*agentmem.Message{{Role: "user"}}, agentmem.AppendOptions{}); agentmem.ErrorCode(err) != agentmem.EUNAVAILABLE {
		t.Fatalf("append to closed store: %v, want unavailable", err)
	}

	s = MustOpen(t, path) // reopening migrates nothing twice
	got, err := s.FindThreadByID(ctx, "alice", th.ID)
	if err != nil {
		t.Fatal(err)
	}
	msgs, _, err := s.FindMessages(ctx, "alice", th.ID, agentmem.MessageFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Title != "kept" || got.MessageCount != 2 || len(msgs) != 2 || msgs[1].Content != "I will" {
		t.Fatalf("after reopening: thread %+v, messages %v", got, msgs)
	}
	next := storetest.MustAppend(t, s, "alice", th.ID, "user", "again")
	if next[0].Seq != 3 {
		t.Fatalf("seq after restart=%d, want 3", next[0].Seq)
	}
}

// referenceTables are the tables that hold no user data, exempt from the
// user_id-first rule: the schema's own bookkeeping (migrations), API keys
// (looked up by key ID before any user is known) and the audit log (which
// must survive the erasure of the user it records).
var referenceTables = []string{"migrations", "api_keys", "audit_log"}

// TestSchema_UserIDFirst fails if a table's primary key does not start
// with user_id: the distribution column when PostgreSQL is scaled out, and
// the guarantee that every lookup is scoped to one user. Only the named
// referenceTables are exempt.
func TestSchema_UserIDFirst(t *testing.T) {
	s := MustOpen(t, "")
	tables, err := sqlite.PrimaryKeys(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if len(tables) < 9 {
		t.Fatalf("found %d tables, want at least 9: %v", len(tables), tables)
	}
	for _, table := range referenceTables {
		if _, ok := tables[table]; !ok {
			t.Errorf("reference table %s does not exist", table)
		}
	}
	for table, cols := range tables {
		if slices.Contains(referenceTables, table) {
			continue
		}
		if len(cols) == 0 || cols[0] != "user_id" {
			t.Errorf("table %s: primary key %v does not start with user_id", table, cols)
		}
	}
}

func TestOpen_Pragmas(t *testing.T) {
	s := MustOpen(t, "")
	mode, sync, err := sqlite.Pragmas(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if mode != "wal" || sync != 2 {
		t.Fatalf("journal_mode=%s synchronous=%d, want wal and 2 (FULL)", mode, sync)
	}
	if _, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "x.db"), sqlite.Options{Synchronous: "OFF"}); agentmem.ErrorCode(err) != agentmem.EINVALID {
		t.Fatalf("synchronous=OFF: %v, want invalid", err)
	}
}

// TestGroupCommit_IsolatesFailures: writes committed together in one
// transaction fail alone; the others of the group are stored.
func TestGroupCommit_IsolatesFailures(t *testing.T) {
	s := MustOpen(t, "")
	ctx := context.Background()
	th := storetest.MustCreateThread(t, s, &agentmem.Thread{UserID: "alice"})
	storetest.MustAppend(t, s, "alice", th.ID, "user", "first")
	first, _, _ := s.FindMessages(ctx, "alice", th.ID, agentmem.MessageFilter{})
	taken := first[0].ID
	const n = 200
	errs := make(chan error, n)
	for i := range n {
		go func() {
			msg := &agentmem.Message{Role: "user", Content: "ok"}
			if i%2 == 1 {
				msg = &agentmem.Message{ID: taken, Role: "user", Content: "conflicting"}
			}
			_, err := s.AppendMessages(ctx, "alice", th.ID, []*agentmem.Message{msg}, agentmem.AppendOptions{})
			errs <- err
		}()
	}
	conflicts := 0
	for range n {
		if err := <-errs; agentmem.ErrorCode(err) == agentmem.ECONFLICT {
			conflicts++
		} else if err != nil {
			t.Fatal(err)
		}
	}
	got, _ := s.FindThreadByID(ctx, "alice", th.ID)
	if conflicts != n/2 || got.MessageCount != n/2+1 || got.LastSeq != n/2+1 {
		t.Fatalf("conflicts=%d message_count=%d last_seq=%d, want %d, %d, %d", conflicts, got.MessageCount, got.LastSeq, n/2, n/2+1, n/2+1)
	}
}

func BenchmarkStore(b *testing.B) {
	storetest.Bench(b, func(tb testing.TB) agentmem.Store { return MustOpen(tb, "") })
}
