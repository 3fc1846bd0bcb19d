package sqlite_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/internal/testutil"
	"github.com/agentmem/agentmem/internal/vecenc"
	"github.com/agentmem/agentmem/sqlite"
	"github.com/agentmem/agentmem/storetest"
	"github.com/google/go-cmp/cmp"
)

func TestStore(t *testing.T) {
	storetest.Run(t, func(tb testing.TB) agentmem.Store { return testutil.MustOpenSQLite(tb) })
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

	s = testutil.MustOpenSQLiteFile(t, path) // reopening migrates nothing twice
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
// (looked up by key ID before any user is known), the audit log (which
// must survive the erasure of the user it records) and the names of the
// vector spaces (embedders and their dimensions, numbered for vectors).
var referenceTables = []string{"migrations", "api_keys", "audit_log", "vector_spaces"}

// TestSchema_UserIDFirst fails if a table's primary key does not start
// with user_id: the distribution column when PostgreSQL is scaled out, and
// the guarantee that every lookup is scoped to one user. Only the named
// referenceTables are exempt.
func TestSchema_UserIDFirst(t *testing.T) {
	s := testutil.MustOpenSQLite(t)
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
	s := testutil.MustOpenSQLiteFile(t, filepath.Join(t.TempDir(), "agentmem.db"))
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
	s := testutil.MustOpenSQLite(t)
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
	storetest.Bench(b, func(tb testing.TB) agentmem.Store { return testutil.MustOpenSQLite(tb) })
}

// mustOpenAt0003 creates a database at path as the releases before
// memories left it: migrations 0001 to 0003 applied, with a thread of
// alice holding a user, an assistant and a tool message.
func mustOpenAt0003(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.Exec(q, args...); err != nil {
			t.Fatalf("%.60s: %v", q, err)
		}
	}
	exec(`CREATE TABLE migrations (version TEXT NOT NULL PRIMARY KEY, applied_at INTEGER NOT NULL)`)
	for _, name := range []string{"0001_init.sql", "0002_auth.sql", "0003_jobs_summaries.sql"} {
		body, err := os.ReadFile(filepath.Join("migration", name))
		if err != nil {
			t.Fatal(err)
		}
		exec(string(body))
		exec(`INSERT INTO migrations (version, applied_at) VALUES (?, 0)`, "migration/"+name)
	}
	exec(`INSERT INTO users (user_id, created_at) VALUES ('alice', 1)`)
	exec(`INSERT INTO threads (user_id, id, message_count, last_seq, created_at, updated_at) VALUES ('alice', 't1', 3, 3, 1, 1)`)
	for i, m := range [][2]string{{"user", "I adopted a greyhound called Pixel."}, {"assistant", "Greyhounds love sprinting."}, {"tool", "greyhound database"}} {
		exec(`INSERT INTO messages (user_id, thread_id, seq, id, role, content, tool_call_id, token_count, created_at) VALUES ('alice', 't1', ?, ?, ?, ?, 'c', 1, 1)`,
			i+1, fmt.Sprintf("old%d", i+1), m[0], m[1])
	}
}

// TestMigration_IndexesStoredMessages: migration 0004 indexes the
// messages stored before it (user and assistant ones), and the index
// follows them from then on.
func TestMigration_IndexesStoredMessages(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agentmem.db")
	mustOpenAt0003(t, path)
	s := testutil.MustOpenSQLiteFile(t, path)
	ctx := context.Background()
	hits, err := s.SearchText(ctx, "alice", agentmem.TextQuery{Query: "greyhound"})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 2 || hits[0].ThreadID != "t1" || hits[1].ThreadID != "t1" || hits[0].ID == "old3" || hits[1].ID == "old3" {
		t.Fatalf("hits = %+v, want the user and assistant messages stored before the migration", hits)
	}
	storetest.MustAppend(t, s, "alice", "t1", agentmem.RoleUser, "Pixel the greyhound is fast.")
	if err := s.DeleteThread(ctx, "alice", "t1", true); err != nil {
		t.Fatal(err)
	}
	if hits, err := s.SearchText(ctx, "alice", agentmem.TextQuery{Query: "greyhound Pixel"}); err != nil || len(hits) != 0 {
		t.Fatalf("after deleting the thread: %+v, %v", hits, err)
	}
	mustIntegrity(t, s)
}

// mustIntegrity runs FTS5's integrity check of both indexes against their
// content tables.
func mustIntegrity(t *testing.T, s *sqlite.Store) {
	t.Helper()
	if err := sqlite.CheckSearchIndexes(context.Background(), s); err != nil {
		t.Fatal(err)
	}
}

// TestSearch_Vacuum: VACUUM keeps the rowids that the external-content
// and contentless full-text indexes point at (see migration/0004_memory.sql
// and 0021_chunk_turns.sql), so search finds the same items after it,
// even after deletions left gaps.
func TestSearch_Vacuum(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "agentmem.db")
	s := testutil.MustOpenSQLiteFile(t, path)
	var keep []*agentmem.Thread
	for i := range 20 {
		th := storetest.MustCreateThread(t, s, &agentmem.Thread{UserID: "alice"})
		storetest.MustAppend(t, s, "alice", th.ID, agentmem.RoleUser, fmt.Sprintf("word%d about kites", i), agentmem.RoleSystem, "kites ignored")
		if err := s.PutChunks(ctx, "alice", []*agentmem.Chunk{{ThreadID: th.ID, SeqFrom: 1, SeqTo: 2, Turns: 1, CreatedAt: time.Now()}}); err != nil {
			t.Fatal(err)
		}
		storetest.MustCreateMemory(t, s, &agentmem.Memory{UserID: "alice", ID: fmt.Sprintf("m%d", i), Text: fmt.Sprintf("memory%d about kites", i)})
		if i%3 == 0 {
			keep = append(keep, th)
		} else if err := s.DeleteThread(ctx, "alice", th.ID, true); err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			if err := s.DeleteMemory(ctx, "alice", fmt.Sprintf("m%d", i)); err != nil {
				t.Fatal(err)
			}
		}
	}
	scopes := []string{agentmem.ScopeMemories, agentmem.ScopeMessages, agentmem.ScopeChunks}
	before, err := s.SearchText(ctx, "alice", agentmem.TextQuery{Query: "kites", Scopes: scopes})
	if err != nil {
		t.Fatal(err)
	}
	mustIntegrity(t, s)
	if len(before) != 2*len(keep)+10 {
		t.Fatalf("%d hits before VACUUM, want %d", len(before), 2*len(keep)+10)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`VACUUM`); err != nil {
		t.Fatal(err)
	}
	db.Close()

	s = testutil.MustOpenSQLiteFile(t, path)
	after, err := s.SearchText(ctx, "alice", agentmem.TextQuery{Query: "kites", Scopes: scopes})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, after); diff != "" {
		t.Fatalf("search changed by VACUUM (-before +after):\n%s", diff)
	}
	for _, h := range after {
		if !strings.Contains(h.Text, "kites") {
			t.Fatalf("hit %+v does not hold the word", h)
		}
	}
	mustIntegrity(t, s)
}

// TestSearch_GroupCommit: writers whose appends and deletions share
// transactions (group commit) leave the message index exactly in step with
// the messages, including messages deleted in the transaction that
// inserted them, before they were indexed.
func TestSearch_GroupCommit(t *testing.T) {
	ctx := context.Background()
	s := testutil.MustOpenSQLite(t)
	const writers, rounds = 16, 20
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Go(func() {
			for i := range rounds {
				th := &agentmem.Thread{UserID: fmt.Sprintf("u%d", w%4)}
				if err := s.CreateThread(ctx, th); err != nil {
					errs <- err
					return
				}
				msgs := []*agentmem.Message{{Role: agentmem.RoleUser, Content: fmt.Sprintf("kite %d %d", w, i)}, {Role: agentmem.RoleSystem, Content: "kite"}}
				if _, err := s.AppendMessages(ctx, th.UserID, th.ID, msgs, agentmem.AppendOptions{}); err != nil {
					errs <- err
					return
				}
				if i%2 == 0 {
					if err := s.DeleteThread(ctx, th.UserID, th.ID, true); err != nil {
						errs <- err
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	mustIntegrity(t, s)
	for u := range 4 {
		hits, err := s.SearchText(ctx, fmt.Sprintf("u%d", u), agentmem.TextQuery{Query: "kite", Limit: agentmem.MaxPageSize})
		if err != nil {
			t.Fatal(err)
		}
		if want := writers / 4 * rounds / 2; len(hits) != want {
			t.Fatalf("user u%d: %d hits, want %d (the messages of the threads kept)", u, len(hits), want)
		}
	}
}

// TestMigration_VectorsWithoutRowid: migration 0015 keeps the vectors
// stored before it (their bytes and seqs), and a put after it replaces a
// vector by its key as before.
func TestMigration_VectorsWithoutRowid(t *testing.T) {
	path, db, exec := migratedBefore(t, "_vectors_without_rowid.sql")
	ctx := context.Background()
	for i, id := range []string{"m1", "m2"} {
		exec(`INSERT INTO vectors (user_id, space, scope, id, vec, seq) VALUES ('alice', 'test/2', 'memories', ?, ?, ?)`,
			id, vecenc.Encode([]float32{1, float32(i)}), i+1)
	}
	db.Close()

	s := testutil.MustOpenSQLiteFile(t, path)
	got := map[string][]float32{}
	vs, err := s.FindVectors(ctx, "alice", "test/2", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		got[v.ID] = v.Vec
	}
	if len(got) != 2 || got["m1"][0] < 0.99 || got["m2"][1] < 0.99 {
		t.Fatalf("vectors after the migration: %v, want m1 (1, 0) and m2 (1, 1)", got)
	}
	since, err := s.FindVectorsSince(ctx, "alice", "test/2", 1)
	if err != nil || len(since) != 1 || since[0].ID != "m2" {
		t.Fatalf("vectors since seq 1: %v, %v; want m2 (its seq kept)", since, err)
	}
	if err := s.PutVectors(ctx, "alice", []agentmem.Vector{{Scope: agentmem.ScopeMemories, ID: "m1", Space: "test/2", Vec: []float32{0, 1}}}); err != nil {
		t.Fatal(err)
	}
	if n, err := s.CountVectors(ctx, "alice", "test/2"); err != nil || n != 2 {
		t.Fatalf("after replacing m1: %d vectors, %v; want 2", n, err)
	}
}

// TestMigration_VectorBytes: migration 0022 (vectors' keys made short)
// keeps every vector, its seq and its key (storetest.CheckMigratedVectors),
// and writes each ID as the store does (vecenc.EncodeID).
func TestMigration_VectorBytes(t *testing.T) {
	path, db, exec := migratedBefore(t, "_vector_bytes.sql")
	for _, v := range storetest.OldVectors() {
		exec(`INSERT INTO vectors (user_id, space, scope, id, vec, seq) VALUES (?, ?, ?, ?, ?, ?)`, v.User, v.Space, v.Scope, v.ID, vecenc.Encode(v.Vec), v.Seq)
	}
	for k, seq := range storetest.OldVectorSeqs() {
		exec(`INSERT INTO vector_versions (user_id, space, version, seq, reset_seq, epoch) VALUES (?, ?, ?, ?, 0, 'e')`, k[0], k[1], "v"+k[0]+k[1], seq)
	}
	db.Close()

	s := testutil.MustOpenSQLiteFile(t, path)
	raw, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	for _, v := range storetest.OldVectors() {
		var n int
		if err := raw.QueryRow(`SELECT count(*) FROM vectors WHERE user_id = ? AND id = ?`, v.User, vecenc.EncodeID(v.ID)).Scan(&n); err != nil || n != 1 {
			t.Errorf("%s's vector %s stored as %x: %d rows, %v; want 1", v.User, v.ID, vecenc.EncodeID(v.ID), n, err)
		}
	}
	storetest.CheckMigratedVectors(t, s)
}

// TestMigration_MemorySources: the migration of memory sources (0017)
// gives each memory stored before it its provenance as its one source,
// while its thread exists (not for a memory of no thread, nor of a thread
// deleted for good), marked invalid for an invalidated memory, so that
// search finds it by it.
func TestMigration_MemorySources(t *testing.T) {
	path, db, exec := migratedBefore(t, "_memory_source_ranges.sql")
	exec(`INSERT INTO threads (user_id, id, created_at, updated_at) VALUES ('alice', 't1', 0, 0)`)
	for _, m := range []struct {
		id, thread string
		seq        int64
		invalid    any
	}{{"hull", "t1", 1, 5}, {"leeds", "t1", 2, nil}, {"gone", "t9", 1, nil}, {"api", "", 0, nil}} {
		exec(`INSERT INTO memories (user_id, id, kind, text, confidence, importance, thread_id, seq_from, seq_to, source, version, valid_from,
			invalid_at, superseded_by, created_at, updated_at) VALUES ('alice', ?, 'fact', ?, 1, 0.5, ?, ?, ?, 'extracted', 1, 0, ?, '', 0, 0)`,
			m.id, "User of "+m.id+".", m.thread, m.seq, m.seq, m.invalid)
	}
	db.Close()

	storetest.CheckBackfilledSources(t, testutil.MustOpenSQLiteFile(t, path))
}

// TestMigration_MemoryUser: the migration that gives memories' full-text
// index the user (0019) indexes the memories stored before it, each for
// its user only, and the index follows them from then on.
func TestMigration_MemoryUser(t *testing.T) {
	path, db, exec := migratedBefore(t, "_memory_user.sql")
	for _, m := range []struct{ user, id, text string }{{"alice", "m1", "User lives in Leeds."}, {"bob", "m2", "User lives in Hull."}} {
		exec(`INSERT INTO memories (user_id, id, kind, text, confidence, importance, source, version, valid_from, superseded_by, created_at, updated_at)
			VALUES (?, ?, 'fact', ?, 1, 0.5, 'extracted', 1, 0, '', 0, 0)`, m.user, m.id, m.text)
	}
	db.Close()

	s := testutil.MustOpenSQLiteFile(t, path)
	ctx := context.Background()
	search := func(user, q string) []string {
		t.Helper()
		hits, err := s.SearchText(ctx, user, agentmem.TextQuery{Query: q, Scopes: []string{agentmem.ScopeMemories}, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, h := range hits {
			ids = append(ids, h.ID)
		}
		return ids
	}
	if got := search("alice", "lives leeds hull"); !slices.Equal(got, []string{"m1"}) {
		t.Fatalf("alice: %v, want her memory stored before the migration, not bob's", got)
	}
	if got := search("bob", "hull"); !slices.Equal(got, []string{"m2"}) {
		t.Fatalf("bob: %v, want his", got)
	}
	if _, err := s.UpdateMemory(ctx, "alice", "m1", agentmem.MemoryUpdate{Text: new("User lives in York.")}); err != nil {
		t.Fatal(err)
	}
	if got := search("alice", "leeds"); len(got) != 0 {
		t.Fatalf("leeds after the update: %v, want none", got)
	}
	if got := search("alice", "york"); !slices.Equal(got, []string{"m1"}) {
		t.Fatalf("york after the update: %v, want m1", got)
	}
	mustIntegrity(t, s)
}
