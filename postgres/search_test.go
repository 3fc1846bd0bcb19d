package postgres_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/internal/vecenc"
	"github.com/agentmem/agentmem/storetest"
	"github.com/jackc/pgx/v5"
)

// TestMigration_IndexesStoredMessages: migration 0004 indexes the
// messages stored before it (user and assistant ones), and the index
// follows them from then on.
func TestMigration_IndexesStoredMessages(t *testing.T) {
	t.Parallel()
	dsn := MustCreateSchema(t)
	// The schema as the releases before memories left it, with a thread
	// of alice holding a user, an assistant and a tool message.
	MustExec(t, dsn, `CREATE TABLE migrations (version text NOT NULL PRIMARY KEY, applied_at timestamptz NOT NULL)`)
	for _, name := range []string{"0001_init.sql", "0002_auth.sql", "0003_jobs_summaries.sql"} {
		body, err := os.ReadFile(filepath.Join("migration", name))
		if err != nil {
			t.Fatal(err)
		}
		MustExec(t, dsn, string(body))
		MustExec(t, dsn, fmt.Sprintf(`INSERT INTO migrations (version, applied_at) VALUES ('migration/%s', now())`, name))
	}
	MustExec(t, dsn, `INSERT INTO users (user_id, created_at) VALUES ('alice', now());
		INSERT INTO threads (user_id, id, message_count, last_seq, created_at, updated_at) VALUES ('alice', 't1', 3, 3, now(), now());
		INSERT INTO messages (user_id, thread_id, seq, id, role, content, tool_call_id, token_count, created_at) VALUES
			('alice', 't1', 1, 'old1', 'user', 'I adopted a greyhound called Pixel.', '', 1, now()),
			('alice', 't1', 2, 'old2', 'assistant', 'Greyhounds love sprinting.', '', 1, now()),
			('alice', 't1', 3, 'old3', 'tool', 'greyhound database', 'c', 1, now())`)

	s := MustOpen(t, dsn)
	hits, err := s.SearchText(ctx, "alice", agentmem.TextQuery{Query: "greyhound"})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 2 || hits[0].ID == "old3" || hits[1].ID == "old3" {
		t.Fatalf("hits = %+v, want the user and assistant messages stored before the migration", hits)
	}
	storetest.MustAppend(t, s, "alice", "t1", agentmem.RoleUser, "Pixel the greyhound is fast.")
	if err := s.DeleteThread(ctx, "alice", "t1", true); err != nil {
		t.Fatal(err)
	}
	if hits, err := s.SearchText(ctx, "alice", agentmem.TextQuery{Query: "greyhound Pixel"}); err != nil || len(hits) != 0 {
		t.Fatalf("after deleting the thread: %+v, %v", hits, err)
	}
}

// TestMigration_VectorBytes: migration 0023 (vectors' keys made short)
// keeps every vector, its seq and its key (storetest.CheckMigratedVectors),
// and writes each ID as the store does (vecenc.EncodeID), as on SQLite.
func TestMigration_VectorBytes(t *testing.T) {
	t.Parallel()
	dsn := migratedBefore(t, "_vector_bytes.sql")
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := conn.Exec(context.Background(), q, args...); err != nil {
			t.Fatalf("%.60s: %v", q, err)
		}
	}
	for _, v := range storetest.OldVectors() {
		exec(`INSERT INTO vectors (user_id, space, scope, id, vec, seq) VALUES ($1, $2, $3, $4, $5, $6)`, v.User, v.Space, v.Scope, v.ID, vecenc.Encode(v.Vec), v.Seq)
	}
	for k, seq := range storetest.OldVectorSeqs() {
		exec(`INSERT INTO vector_versions (user_id, space, version, seq, reset_seq, epoch) VALUES ($1, $2, $3, $4, 0, 'e')`, k[0], k[1], "v"+k[0]+k[1], seq)
	}

	s := MustOpen(t, dsn)
	for _, v := range storetest.OldVectors() {
		var n int
		if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM vectors WHERE user_id = $1 AND id = $2`, v.User, vecenc.EncodeID(v.ID)).Scan(&n); err != nil || n != 1 {
			t.Errorf("%s's vector %s stored as %x: %d rows, %v; want 1", v.User, v.ID, vecenc.EncodeID(v.ID), n, err)
		}
	}
	storetest.CheckMigratedVectors(t, s)
}

// TestMigration_MemorySources: the migration of memory sources (0017)
// gives each memory stored before it its provenance as its one source,
// while its thread exists, marked invalid for an invalidated memory, as
// on SQLite.
func TestMigration_MemorySources(t *testing.T) {
	t.Parallel()
	dsn := migratedBefore(t, "_memory_source_ranges.sql")
	MustExec(t, dsn, `INSERT INTO users (user_id, created_at) VALUES ('alice', now());
		INSERT INTO threads (user_id, id, created_at, updated_at) VALUES ('alice', 't1', now(), now());
		INSERT INTO memories (user_id, id, kind, text, confidence, importance, thread_id, seq_from, seq_to, source, version, valid_from,
			invalid_at, created_at, updated_at) VALUES
			('alice', 'hull', 'fact', 'User lives in Hull.', 1, 0.5, 't1', 1, 1, 'extracted', 2, now(), now(), now(), now()),
			('alice', 'leeds', 'fact', 'User lives in Leeds.', 1, 0.5, 't1', 2, 2, 'extracted', 1, now(), NULL, now(), now()),
			('alice', 'gone', 'fact', 'User has a cat.', 1, 0.5, 't9', 1, 1, 'extracted', 1, now(), NULL, now(), now()),
			('alice', 'api', 'fact', 'User likes tea.', 1, 0.5, '', 0, 0, 'api', 1, now(), NULL, now(), now())`)

	s := MustOpen(t, dsn)
	storetest.CheckBackfilledSources(t, s)
}
