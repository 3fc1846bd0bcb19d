package sqlite_test

import (
	"context"
	"fmt"
	"slices"
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

// TestMigration_WindowUser: the migrations that give message windows'
// index the user (0018) and index each turn once (0020) make every
// turn's window from the turns themselves (as the index writes them), so
// that a search finds each by its neighbours' words, its own turn first,
// and never another user's.
func TestMigration_WindowUser(t *testing.T) {
	path, db, exec := migratedBefore(t, "_window_user.sql")
	words := []string{"apple", "banana", "cherry", "damson", "elderberry", "fig"}
	exec(`INSERT INTO users (user_id, created_at) VALUES ('alice', 1), ('bob', 1)`)
	exec(`INSERT INTO threads (user_id, id, message_count, last_seq, created_at, updated_at) VALUES ('alice', 't1', 7, 7, 1, 1), ('bob', 't1', 1, 1, 1, 1)`)
	seq := 0
	add := func(user, role, content string, window bool) {
		seq++
		exec(`INSERT INTO messages (user_id, thread_id, seq, id, role, content, token_count, created_at) VALUES (?, 't1', ?, ?, ?, ?, 1, 1)`,
			user, seq, fmt.Sprint("m", seq), role, content)
		if window {
			exec(`INSERT INTO message_windows_fts (rowid, text) SELECT rowid, 'stale' FROM messages WHERE user_id = ? AND seq = ?`, user, seq)
			exec(`INSERT INTO message_windows (user_id, doc) SELECT user_id, rowid FROM messages WHERE user_id = ? AND seq = ?`, user, seq)
		}
	}
	for i, w := range words {
		role := agentmem.RoleUser
		if i%2 == 1 {
			role = agentmem.RoleAssistant
		}
		add("alice", role, w, i < 5) // fig has no window yet
		if i == 2 {
			add("alice", agentmem.RoleTool, "cherry cherry cherry", false) // no turn
		}
	}
	seq = 0
	add("bob", agentmem.RoleUser, "cherry", true)
	exec(`INSERT INTO messages_fts (rowid, content) SELECT m.rowid, m.content FROM messages_fts_queue q JOIN messages m ON m.rowid = q.doc ORDER BY q.doc`)
	exec(`DELETE FROM messages_fts_queue`)
	db.Close()

	s := testutil.MustOpenSQLiteFile(t, path)
	ctx := context.Background()
	search := func(user, q string) []string {
		t.Helper()
		hits, err := s.SearchText(ctx, user, agentmem.TextQuery{Query: q, Scopes: []string{agentmem.ScopeMessages}, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, h := range hits {
			got = append(got, h.Text)
		}
		return got
	}
	if got := search("alice", "stale"); len(got) != 0 {
		t.Fatalf("stale: %q, want the windows rebuilt", got)
	}
	// cherry's window and the two on each side hold it; its own first.
	if got := search("alice", "cherry"); len(got) != 5 || got[0] != "cherry" || slices.Contains(got, "cherry cherry cherry") {
		t.Fatalf("alice, cherry: %q, want the five windows around cherry's turn, cherry first", got)
	}
	// fig, which had no window, has one now.
	if got := search("alice", "fig"); !slices.Equal(got[:1], []string{"fig"}) || len(got) != 3 {
		t.Fatalf("alice, fig: %q, want fig first, then damson and elderberry", got)
	}
	if got := search("bob", "cherry"); !slices.Equal(got, []string{"cherry"}) {
		t.Fatalf("bob, cherry: %q, want his turn alone", got)
	}
	mustIntegrity(t, s)
}
