package sqlite_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/internal/testutil"
)

// chunkLabelsMigration returns the name of the migration that indexes
// chunks' topics and entities (found by its name, whatever its number).
func chunkLabelsMigration(t *testing.T) string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join("migration", "*_chunk_labels_search.sql"))
	if err != nil || len(names) != 1 {
		t.Fatalf("the chunk labels migration: %v, %v", names, err)
	}
	return filepath.Base(names[0])
}

// TestMigration_ChunkLabels: the migration that indexes chunks' topics and
// entities indexes those of the chunks stored before it, and the index
// follows them from then on.
func TestMigration_ChunkLabels(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agentmem.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.Exec(q, args...); err != nil {
			t.Fatalf("%.60s: %v", q, err)
		}
	}
	exec(`CREATE TABLE migrations (version TEXT NOT NULL PRIMARY KEY, applied_at INTEGER NOT NULL)`)
	names, err := filepath.Glob(filepath.Join("migration", "*.sql"))
	if err != nil {
		t.Fatal(err)
	}
	before := chunkLabelsMigration(t)
	for _, name := range names {
		if filepath.Base(name) >= before {
			continue
		}
		body, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		exec(string(body))
		exec(`INSERT INTO migrations (version, applied_at) VALUES (?, 0)`, "migration/"+filepath.Base(name))
	}
	exec(`INSERT INTO users (user_id, created_at) VALUES ('alice', 1)`)
	exec(`INSERT INTO threads (user_id, id, message_count, last_seq, created_at, updated_at) VALUES ('alice', 't1', 2, 2, 1, 1)`)
	exec(`INSERT INTO chunks (user_id, id, thread_id, seq_from, seq_to, turns, text, summary, topics, entities, created_at)
		VALUES ('alice', 'c1', 't1', 1, 2, 2, 'user: look at the numbers\nassistant: sure', 'The numbers.', '["retirement savings"]', '["Vanguard"]', 1)`)
	db.Close()

	s := testutil.MustOpenSQLiteFile(t, path)
	ctx := context.Background()
	search := func(q string) []agentmem.TextHit {
		t.Helper()
		hits, err := s.SearchText(ctx, "alice", agentmem.TextQuery{Query: q, Scopes: []string{agentmem.ScopeChunks}})
		if err != nil {
			t.Fatal(err)
		}
		return hits
	}
	for _, q := range []string{"retirement", "vanguard", "numbers"} {
		if hits := search(q); len(hits) != 1 || hits[0].ID != "c1" {
			t.Fatalf("%q: hits = %+v, want the chunk stored before the migration", q, hits)
		}
	}
	c := &agentmem.Chunk{ThreadID: "t1", SeqFrom: 1, SeqTo: 2, Turns: 2, Text: "user: look at the numbers\nassistant: sure", Topics: []string{"mortgage"}, CreatedAt: time.UnixMicro(1).UTC()}
	if err := s.PutChunks(ctx, "alice", []*agentmem.Chunk{c}); err != nil {
		t.Fatal(err)
	}
	if hits := search("retirement vanguard"); len(hits) != 0 {
		t.Fatalf("after the chunk was written again: %+v, want its old labels gone", hits)
	}
	if hits := search("mortgage"); len(hits) != 1 || hits[0].ID != "c1" {
		t.Fatalf("mortgage: %+v, want the chunk (its ID kept)", hits)
	}
	mustIntegrity(t, s)
}
