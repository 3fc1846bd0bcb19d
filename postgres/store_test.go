package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/internal/testutil"
	"github.com/agentmem/agentmem/postgres"
	"github.com/agentmem/agentmem/storetest"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

var ctx = context.Background()

// testDSN, MustCreateSchema, MustOpen and MustExec are shared with other
// packages' PostgreSQL tests.
var (
	testDSN          = testutil.PostgresDSN
	MustCreateSchema = testutil.MustCreateSchema
	MustOpen         = testutil.MustOpenPostgresDSN
	MustExec         = testutil.MustExec
)

func TestStore(t *testing.T) {
	t.Parallel()
	schemas := testutil.NewSchemas(t)
	storetest.Run(t, func(tb testing.TB) agentmem.Store { return schemas.MustOpen(tb) })
}

func BenchmarkStore(b *testing.B) {
	testDSN(b)
	storetest.Bench(b, func(tb testing.TB) agentmem.Store { return MustOpen(tb, MustCreateSchema(tb)) })
}

// referenceTables are the tables that hold no user data, exempt from the
// user_id-first rule and from DeleteUser: the schema's own bookkeeping
// (migrations), API keys (looked up by key ID before any user is known),
// the audit log (which must survive the erasure of the user it records)
// and the names of the vector spaces (embedders and their dimensions,
// numbered for vectors). Scaled out with Citus, they are reference tables.
var referenceTables = []string{"migrations", "api_keys", "audit_log", "vector_spaces"}

// TestSchema_UserIDFirst fails if a table's primary key does not start
// with user_id (the distribution column when PostgreSQL is scaled out with
// Citus, and the guarantee that every lookup is scoped to one user), if a
// table has no primary key, or if DeleteUser does not know a table. Only
// the named referenceTables are exempt (though they need a primary key
// too), and DeleteUser must not know them.
func TestSchema_UserIDFirst(t *testing.T) {
	t.Parallel()
	dsn := MustCreateSchema(t)
	MustOpen(t, dsn)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT c.relname::text, COALESCE(a.attname::text, '')
		FROM pg_class c
		JOIN pg_namespace n ON n.oid = c.relnamespace
		LEFT JOIN pg_constraint p ON p.conrelid = c.oid AND p.contype = 'p'
		LEFT JOIN LATERAL unnest(p.conkey) WITH ORDINALITY AS k(attnum, pos) ON true
		LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum
		WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p')
		ORDER BY c.relname, k.pos`)
	if err != nil {
		t.Fatal(err)
	}
	tables := map[string][]string{}
	for rows.Next() {
		var table, col string
		if err := rows.Scan(&table, &col); err != nil {
			t.Fatal(err)
		}
		tables[table] = append(tables[table], col)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(tables) < 9 {
		t.Fatalf("found %d tables, want at least 9: %v", len(tables), tables)
	}
	for _, table := range referenceTables {
		if _, ok := tables[table]; !ok {
			t.Errorf("reference table %s does not exist", table)
		}
		if slices.Contains(postgres.UserTables, table) {
			t.Errorf("reference table %s is in userTables: DeleteUser would erase it", table)
		}
	}
	for table, cols := range tables {
		if cols[0] == "" {
			t.Errorf("table %s has no primary key", table)
		}
		if slices.Contains(referenceTables, table) {
			continue
		}
		if cols[0] != "" && cols[0] != "user_id" {
			t.Errorf("table %s: primary key %v does not start with user_id", table, cols)
		}
		if !slices.Contains(postgres.UserTables, table) {
			t.Errorf("table %s is not in userTables: DeleteUser would not erase it", table)
		}
	}
}

// TestAppendMessages_TwoProcesses: two stores on one schema, as two server
// processes would be, each with 25 writers appending 40 single messages to
// one thread, end with seqs 1..2000, each message once.
func TestAppendMessages_TwoProcesses(t *testing.T) {
	t.Parallel()
	dsn := MustCreateSchema(t)
	stores := []*postgres.Store{MustOpen(t, dsn), MustOpen(t, dsn)}
	th := storetest.MustCreateThread(t, stores[0], &agentmem.Thread{UserID: "alice"})
	const writers, each = 25, 40
	total := len(stores) * writers * each
	var wg sync.WaitGroup
	errs := make(chan error, len(stores)*writers)
	for p, s := range stores {
		for w := range writers {
			wg.Go(func() {
				for i := range each {
					msg := &agentmem.Message{Role: agentmem.RoleUser, Content: fmt.Sprintf("p%d-w%d-%d", p, w, i)}
					if _, err := s.AppendMessages(ctx, "alice", th.ID, []*agentmem.Message{msg}, agentmem.AppendOptions{}); err != nil {
						errs <- err
						return
					}
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	var msgs []*agentmem.Message
	for cursor := ""; ; {
		page, next, err := stores[1].FindMessages(ctx, "alice", th.ID, agentmem.MessageFilter{Limit: agentmem.MaxPageSize, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, page...)
		if cursor = next; cursor == "" {
			break
		}
	}
	if len(msgs) != total {
		t.Fatalf("len(messages)=%d, want %d", len(msgs), total)
	}
	seen := map[string]bool{}
	for i, m := range msgs {
		if m.Seq != int64(i+1) {
			t.Fatalf("messages[%d].Seq=%d, want %d", i, m.Seq, i+1)
		}
		if seen[m.Content] {
			t.Fatalf("message %q stored twice", m.Content)
		}
		seen[m.Content] = true
	}
	got, err := stores[0].FindThreadByID(ctx, "alice", th.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.MessageCount != int64(total) || got.LastSeq != int64(total) {
		t.Fatalf("message_count=%d last_seq=%d, want %d", got.MessageCount, got.LastSeq, total)
	}
}

// TestAppendMessages_IndexLock: while an index job's write holds its
// thread (windows, chunks, entity references: the lock they take), an
// append to the thread goes through, and a deletion of the thread waits
// until it ends.
func TestAppendMessages_IndexLock(t *testing.T) {
	t.Parallel()
	s := MustOpen(t, MustCreateSchema(t))
	th := storetest.MustCreateThread(t, s, &agentmem.Thread{UserID: "alice"})
	release, err := postgres.HoldIndexLock(ctx, s, "alice", th.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	// Waiting on the lock would run into the deadline (it is never let go
	// before the append returns).
	actx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := s.AppendMessages(actx, "alice", th.ID, []*agentmem.Message{{Role: agentmem.RoleUser, Content: "hi"}}, agentmem.AppendOptions{}); err != nil {
		t.Fatalf("append while the index lock is held: %v", err)
	}
	dctx, cancel2 := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel2()
	if err := s.DeleteThread(dctx, "alice", th.ID, true); err == nil {
		t.Fatal("the thread was deleted while an index job's write held it")
	}
	release()
	if err := s.DeleteThread(ctx, "alice", th.ID, true); err != nil {
		t.Fatalf("delete after the index lock: %v", err)
	}
}

// TestOpen_ConcurrentMigrations: processes starting at once on a fresh
// schema migrate it once, without errors.
func TestOpen_ConcurrentMigrations(t *testing.T) {
	t.Parallel()
	dsn := MustCreateSchema(t)
	const n = 4
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Go(func() {
			s, err := postgres.Open(ctx, dsn)
			if err != nil {
				errs <- err
				return
			}
			s.Close()
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	s := MustOpen(t, dsn)
	if err := s.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	files, err := filepath.Glob("migration/*.sql")
	if err != nil || len(files) == 0 {
		t.Fatalf("migration files: %v, %v", files, err)
	}
	var versions, distinct int
	if err := conn.QueryRow(ctx, `SELECT COUNT(*), COUNT(DISTINCT version) FROM migrations`).Scan(&versions, &distinct); err != nil {
		t.Fatal(err)
	}
	if versions != len(files) || distinct != len(files) {
		t.Fatalf("migrations recorded %d times (%d distinct), want each of %d once", versions, distinct, len(files))
	}
}

// TestStore_Reopen: data outlives the store, a closed store says
// unavailable, and reopening migrates nothing twice.
func TestStore_Reopen(t *testing.T) {
	t.Parallel()
	dsn := MustCreateSchema(t)
	s, err := postgres.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	th := storetest.MustCreateThread(t, s, &agentmem.Thread{UserID: "alice", Title: "kept"})
	storetest.MustAppend(t, s, "alice", th.ID, "user", "remember me", "assistant", "I will")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendMessages(ctx, "alice", th.ID, []*agentmem.Message{{Role: "user"}}, agentmem.AppendOptions{}); agentmem.ErrorCode(err) != agentmem.EUNAVAILABLE {
		t.Fatalf("append to closed store: %v, want unavailable", err)
	}
	if err := s.Ping(ctx); agentmem.ErrorCode(err) != agentmem.EUNAVAILABLE {
		t.Fatalf("ping closed store: %v, want unavailable", err)
	}

	s = MustOpen(t, dsn)
	got, err := s.FindThreadByID(ctx, "alice", th.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Title != "kept" || got.MessageCount != 2 {
		t.Fatalf("after reopening: thread %+v", got)
	}
	if next := storetest.MustAppend(t, s, "alice", th.ID, "user", "again"); next[0].Seq != 3 {
		t.Fatalf("seq after reopening=%d, want 3", next[0].Seq)
	}
}

// TestAppendMessages_NUL: PostgreSQL text cannot hold NUL characters; such
// a message is refused as invalid, not as an internal error.
func TestAppendMessages_NUL(t *testing.T) {
	t.Parallel()
	s := MustOpen(t, MustCreateSchema(t))
	th := storetest.MustCreateThread(t, s, &agentmem.Thread{UserID: "alice"})
	for _, m := range []*agentmem.Message{
		{Role: agentmem.RoleUser, Content: "a\x00b"},
		{Role: agentmem.RoleUser, Content: "ok", Metadata: []byte(`{"k":"\u0000"}`)},
	} {
		_, err := s.AppendMessages(ctx, "alice", th.ID, []*agentmem.Message{m}, agentmem.AppendOptions{})
		if code := agentmem.ErrorCode(err); code != agentmem.EINVALID {
			t.Fatalf("append %q: code %q (%v), want %q", m.Content, code, err, agentmem.EINVALID)
		}
	}
	storetest.MustAppend(t, s, "alice", th.ID, "user", "the transaction was rolled back")
}

// TestAppendMessages_TimeOutOfRange: a time that timestamptz cannot hold
// is invalid, not an internal error.
func TestAppendMessages_TimeOutOfRange(t *testing.T) {
	t.Parallel()
	s := MustOpen(t, MustCreateSchema(t))
	th := storetest.MustCreateThread(t, s, &agentmem.Thread{UserID: "alice"})
	for _, at := range []time.Time{time.Date(295000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(-5000, 1, 1, 0, 0, 0, 0, time.UTC)} {
		m := &agentmem.Message{Role: agentmem.RoleUser, Content: "dated", CreatedAt: at}
		_, err := s.AppendMessages(ctx, "alice", th.ID, []*agentmem.Message{m}, agentmem.AppendOptions{})
		if code := agentmem.ErrorCode(err); code != agentmem.EINVALID {
			t.Fatalf("created_at %v: code %q (%v), want %q", at, code, err, agentmem.EINVALID)
		}
	}
}

// TestOpen_Unavailable: a database that refuses connections is
// EUNAVAILABLE, and its error text stays out of the client message.
func TestOpen_Unavailable(t *testing.T) {
	t.Parallel()
	_, err := postgres.Open(ctx, "postgres://postgres@127.0.0.1:1/test?sslmode=disable&connect_timeout=2")
	if code := agentmem.ErrorCode(err); code != agentmem.EUNAVAILABLE {
		t.Fatalf("Open on a closed port: code %q (%v), want %q", code, err, agentmem.EUNAVAILABLE)
	}
	if msg := agentmem.ErrorMessage(err); msg != "The database is unavailable; retry." {
		t.Fatalf("client message %q", msg)
	}
}

// TestOpen_Blackhole: a server that accepts connections and never answers
// (a database down behind a proxy that still listens) fails within
// DefaultConnectTimeout, EUNAVAILABLE, when the DSN sets no
// connect_timeout, rather than holding the caller until it gives up.
func TestOpen_Blackhole(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted := make(chan net.Conn, 16)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				close(accepted)
				return
			}
			accepted <- c
		}
	}()
	defer func() {
		ln.Close()
		for c := range accepted {
			c.Close()
		}
	}()
	ctx, cancel := context.WithTimeout(ctx, 4*postgres.DefaultConnectTimeout)
	defer cancel()
	start := time.Now()
	_, err = postgres.Open(ctx, "postgres://postgres@"+ln.Addr().String()+"/test?sslmode=disable")
	took := time.Since(start)
	if code := agentmem.ErrorCode(err); code != agentmem.EUNAVAILABLE {
		t.Fatalf("Open on a silent server: code %q (%v), want %q", code, err, agentmem.EUNAVAILABLE)
	}
	if took < postgres.DefaultConnectTimeout || took > postgres.DefaultConnectTimeout+2*time.Second {
		t.Fatalf("Open gave up after %v, want about %v", took, postgres.DefaultConnectTimeout)
	}
}

// TestFormatError_LostConnection: the errors of a connection lost while
// idle in the pool, which the driver finds closed before it sends
// anything, are EUNAVAILABLE (503 and Retry-After), not internal errors.
func TestFormatError_LostConnection(t *testing.T) {
	for _, err := range []error{
		fmt.Errorf("begin: %w", pgconn.ErrConnClosed),
		fmt.Errorf("begin: %w", safeToRetry{}),
		&pgconn.ConnectError{},
		fmt.Errorf("query: %w", io.ErrUnexpectedEOF),
	} {
		if code := agentmem.ErrorCode(postgres.FormatError(err)); code != agentmem.EUNAVAILABLE {
			t.Errorf("%v: code %q, want %q", err, code, agentmem.EUNAVAILABLE)
		}
	}
	if err := postgres.FormatError(errors.New("something else")); agentmem.ErrorCode(err) != agentmem.EINTERNAL {
		t.Errorf("an unknown error: %v, want it internal", err)
	}
}

// safeToRetry is an error the driver marks as raised before the server
// saw the statement.
type safeToRetry struct{}

func (safeToRetry) Error() string     { return "conn uninitialized" }
func (safeToRetry) SafeToRetry() bool { return true }

// TestStore_ConnectionWait: a call waits for a connection of the pool at
// most the connect timeout, then fails EUNAVAILABLE (503), whatever holds
// the pool's connections: here a transaction on the only one; during an
// outage, connections being made to a server that does not answer, which
// a caller queued behind several of them would otherwise wait for in turn.
func TestStore_ConnectionWait(t *testing.T) {
	t.Parallel()
	s := MustOpen(t, testutil.WithParams(MustCreateSchema(t), map[string]string{"pool_max_conns": "1", "connect_timeout": "1"}))
	th := storetest.MustCreateThread(t, s, &agentmem.Thread{UserID: "alice"})
	release, err := postgres.HoldIndexLock(ctx, s, "alice", th.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	start := time.Now()
	_, err = s.FindThreadByID(ctx, "alice", th.ID)
	if took := time.Since(start); agentmem.ErrorCode(err) != agentmem.EUNAVAILABLE || took < time.Second || took > 3*time.Second {
		t.Fatalf("with the pool's connection held: %v after %v, want EUNAVAILABLE after about 1s", err, took)
	}
	if err := s.Ping(ctx); agentmem.ErrorCode(err) != agentmem.EUNAVAILABLE {
		t.Fatalf("Ping with the pool's connection held: %v, want EUNAVAILABLE", err)
	}
	release()
	if _, err := s.FindThreadByID(ctx, "alice", th.ID); err != nil {
		t.Fatalf("once the connection is free: %v", err)
	}
}

// TestCitusDDL: citus/distribute.sql distributes every user table by
// user_id, colocated with users, and makes every reference table a
// reference table, and names no other table.
func TestCitusDDL(t *testing.T) {
	body, err := os.ReadFile(filepath.Join("citus", "distribute.sql"))
	if err != nil {
		t.Fatal(err)
	}
	distributed := regexp.MustCompile(`create_distributed_table\('([a-z_]+)', 'user_id'(, colocate_with => 'users')?\)`)
	reference := regexp.MustCompile(`create_reference_table\('([a-z_]+)'\)`)
	var gotUser, gotRef []string
	for _, m := range distributed.FindAllStringSubmatch(string(body), -1) {
		if m[1] != "users" && m[2] == "" {
			t.Errorf("%s is not colocated with users", m[1])
		}
		gotUser = append(gotUser, m[1])
	}
	for _, m := range reference.FindAllStringSubmatch(string(body), -1) {
		gotRef = append(gotRef, m[1])
	}
	slices.Sort(gotUser)
	slices.Sort(gotRef)
	wantUser := slices.Sorted(slices.Values(postgres.UserTables))
	wantRef := slices.Sorted(slices.Values(slices.DeleteFunc(slices.Clone(referenceTables), func(t string) bool {
		return t == "migrations" // the schema's bookkeeping stays on the coordinator
	})))
	if !slices.Equal(gotUser, wantUser) {
		t.Errorf("distributed tables %v, want the user tables %v", gotUser, wantUser)
	}
	if !slices.Equal(gotRef, wantRef) {
		t.Errorf("reference tables %v, want %v", gotRef, wantRef)
	}
}
