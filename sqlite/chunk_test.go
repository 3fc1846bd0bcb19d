package sqlite_test

import (
	"context"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/internal/testutil"
)

// TestMigration_ChunkLabels: the migration that indexes chunks' topics and
// entities indexes those of the chunks stored before it, and the index
// follows them from then on.
func TestMigration_ChunkLabels(t *testing.T) {
	path, db, exec := migratedBefore(t, "_chunk_labels_search.sql")
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
