package postgres_test

import (
	"slices"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/storetest"
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
		INSERT INTO messages (user_id, thread_id, seq, id, role, content, token_count, created_at) VALUES ('alice', 't1', 1, 'm1', 'user', 'look at the numbers', 1, now());
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

// TestMigration_ChunkTurns: the migration after which chunks read their
// turns rather than keep their text drops the text (rewriting the table)
// and keeps the chunks stored before it found by it (their tsv, computed
// from the text they kept, is kept): reads return the text as the indexer
// built it, from the turns (a name, a tool message in the range), and tsv
// follows a chunk written again, as the generated column did.
func TestMigration_ChunkTurns(t *testing.T) {
	t.Parallel()
	dsn := migratedBefore(t, "_chunk_turns.sql")
	want := map[string]string{"c1": "Caroline: I painted a sunset\nassistant: Lovely colours", "c2": "user: see you", "c3": "user: a sunset too"}
	MustExec(t, dsn, `INSERT INTO users (user_id, created_at) VALUES ('alice', now()), ('bob', now());
		INSERT INTO threads (user_id, id, message_count, last_seq, created_at, updated_at) VALUES ('alice', 't1', 4, 4, now(), now()), ('bob', 't1', 1, 1, now(), now());
		INSERT INTO messages (user_id, thread_id, seq, id, role, name, content, token_count, created_at) VALUES
			('alice', 't1', 1, 'm1', 'user', 'Caroline', 'I painted a sunset', 1, now()),
			('alice', 't1', 2, 'm2', 'tool', '', 'drizzle over the lake', 1, now()),
			('alice', 't1', 3, 'm3', 'assistant', '', 'Lovely colours', 1, now()),
			('alice', 't1', 4, 'm4', 'user', '', 'see you', 1, now()),
			('bob', 't1', 1, 'm1', 'user', '', 'a sunset too', 1, now());
		INSERT INTO chunks (user_id, id, thread_id, seq_from, seq_to, turns, text, summary, topics, created_at) VALUES
			('alice', 'c1', 't1', 1, 3, 2, E'Caroline: I painted a sunset\nassistant: Lovely colours', 'A painting.', '["art"]', now()),
			('alice', 'c2', 't1', 4, 4, 1, 'user: see you', 'Goodbye.', '[]', now()),
			('bob', 'c3', 't1', 1, 1, 1, 'user: a sunset too', 'Bob''s sunset.', '[]', now())`)

	s := MustOpen(t, dsn)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var text, generated bool
	err = conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'chunks' AND column_name = 'text'),
		EXISTS (SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'chunks' AND column_name = 'tsv' AND is_generated = 'ALWAYS')`).Scan(&text, &generated)
	if err != nil || text || generated {
		t.Fatalf("chunks: text column %v, tsv generated %v (%v); want neither", text, generated, err)
	}
	var opts []string
	if err := conn.QueryRow(ctx, `SELECT reloptions FROM pg_class WHERE oid = 'chunks_tsv'::regclass`).Scan(&opts); err != nil || !slices.Contains(opts, "gin_pending_list_limit=64") {
		t.Fatalf("chunks_tsv's options %q (%v), want its pending list of 64 kB", opts, err)
	}
	search := storetest.CheckMigratedChunks(t, s, want)
	// Written again: its tsv is what the generated column made of the
	// text it kept, and the new summary and labels.
	var before string
	if err := conn.QueryRow(ctx, `SELECT tsv::text FROM chunks WHERE user_id = 'alice' AND id = 'c2'`).Scan(&before); err != nil {
		t.Fatal(err)
	}
	c := &agentmem.Chunk{ThreadID: "t1", SeqFrom: 4, SeqTo: 4, Turns: 1, Summary: "Goodbye.", CreatedAt: time.Now()}
	if err := s.PutChunks(ctx, "alice", []*agentmem.Chunk{c}); err != nil {
		t.Fatal(err)
	}
	var after string
	if err := conn.QueryRow(ctx, `SELECT tsv::text FROM chunks WHERE user_id = 'alice' AND id = 'c2'`).Scan(&after); err != nil {
		t.Fatal(err)
	}
	if c.ID != "c2" || c.Text != want["c2"] || after != before {
		t.Fatalf("written again: %s, %q, tsv %s; want c2 with its turns' text and tsv %s", c.ID, c.Text, after, before)
	}
	c = &agentmem.Chunk{ThreadID: "t1", SeqFrom: 1, SeqTo: 3, Turns: 2, Summary: "A walk.", Topics: []string{"outdoors"}, CreatedAt: time.Now()}
	if err := s.PutChunks(ctx, "alice", []*agentmem.Chunk{c}); err != nil {
		t.Fatal(err)
	}
	if got := search("alice", "art"); len(got) != 0 {
		t.Fatalf("art: %v, want the old topic gone", got)
	}
	if got := search("alice", "outdoors walk sunset"); !slices.Equal(got, []string{"c1"}) {
		t.Fatalf("outdoors walk sunset: %v, want c1", got)
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
	if err := conn.QueryRow(ctx, `SELECT near, len FROM message_windows WHERE user_id = 'alice' AND thread_id = 't' AND seq = 2`).Scan(&near, &length); err != nil {
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
