package postgres_test

import (
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/jackc/pgx/v5"
)

// TestMigration_ChunkLabels: the migration that indexes chunks' topics and
// entities indexes those of the chunks stored before it, and the index
// follows them from then on.
func TestMigration_ChunkLabels(t *testing.T) {
	t.Parallel()
	dsn := migratedBefore(t, "_chunk_labels_search.sql")
	MustExec(t, dsn, `INSERT INTO users (user_id, created_at) VALUES ('alice', now());
		INSERT INTO threads (user_id, id, message_count, last_seq, created_at, updated_at) VALUES ('alice', 't1', 2, 2, now(), now());
		INSERT INTO chunks (user_id, id, thread_id, seq_from, seq_to, turns, text, summary, topics, entities, created_at)
			VALUES ('alice', 'c1', 't1', 1, 2, 2, 'user: look at the numbers', 'The numbers.', '["retirement savings"]', '["Vanguard"]', now())`)

	s := MustOpen(t, dsn)
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
	c := &agentmem.Chunk{ThreadID: "t1", SeqFrom: 1, SeqTo: 2, Turns: 2, Text: "user: look at the numbers", Topics: []string{"mortgage"}, CreatedAt: time.Now()}
	if err := s.PutChunks(ctx, "alice", []*agentmem.Chunk{c}); err != nil {
		t.Fatal(err)
	}
	if hits := search("retirement vanguard"); len(hits) != 0 {
		t.Fatalf("after the chunk was written again: %+v, want its old labels gone", hits)
	}
	if hits := search("mortgage"); len(hits) != 1 || hits[0].ID != "c1" {
		t.Fatalf("mortgage: %+v, want the chunk (its ID kept)", hits)
	}
}

// TestPutMessageWindows_Turns: a window is kept as its other turns'
// seqs less its own and its length in words, its own turn's twice (names
// and a tool message between turns included), and search finds a turn by
// its neighbours' words, a name among them.
func TestPutMessageWindows_Turns(t *testing.T) {
	t.Parallel()
	dsn := MustCreateSchema(t)
	s := MustOpen(t, dsn)
	if err := s.CreateThread(ctx, &agentmem.Thread{UserID: "alice", ID: "t"}); err != nil {
		t.Fatal(err)
	}
	msgs := []*agentmem.Message{
		{Role: agentmem.RoleUser, Name: "Caroline", Content: "I painted a sunset by the lake last week, painting is my calm."},
		{Role: agentmem.RoleAssistant, Content: "Lovely! What colours did you paint it in?"},
		{Role: agentmem.RoleTool, ToolCallID: "c1", Content: "weather: rain at the lake"},
		{Role: agentmem.RoleUser, Name: "Caroline", Content: "Mostly orange, and a deep purple for the lake's edge."},
		{Role: agentmem.RoleAssistant, Content: "That sounds striking. Will you frame it for the hall?"},
	}
	if _, err := s.AppendMessages(ctx, "alice", "t", msgs, agentmem.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutMessageWindows(ctx, "alice", "t", agentmem.TurnWindows([]int64{1, 2, 4, 5})); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var near string
	var length int
	if err := conn.QueryRow(ctx, `SELECT window_near, window_len FROM messages WHERE user_id = 'alice' AND thread_id = 't' AND seq = 2`).Scan(&near, &length); err != nil {
		t.Fatal(err)
	}
	// 14 words (its name one), 8 twice, 11 (its name one), 10.
	if near != "-1,2,3" || length != 14+2*8+11+10 {
		t.Errorf("window of 2: near %q, len %d; want -1,2,3 and %d", near, length, 14+2*8+11+10)
	}
	hits, err := s.SearchText(ctx, "alice", agentmem.TextQuery{Query: "purple sunset", Scopes: []string{agentmem.ScopeMessages}})
	if err != nil || len(hits) != 4 {
		t.Fatalf("purple sunset: %d hits, %v; want the four turns, found by their windows", len(hits), err)
	}
	hits, err = s.SearchText(ctx, "alice", agentmem.TextQuery{Query: "caroline", Scopes: []string{agentmem.ScopeMessages}})
	if err != nil || len(hits) != 4 || hits[3].Role != agentmem.RoleAssistant {
		t.Fatalf("caroline: %+v, %v; want her turns, then the assistant's, found by her name beside them", hits, err)
	}
}
