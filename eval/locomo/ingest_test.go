package locomo_test

import (
	"context"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/eval/locomo"
	"github.com/agentmem/agentmem/internal/testutil"
	"github.com/google/go-cmp/cmp"
)

func TestIngest(t *testing.T) {
	ctx := context.Background()
	store := testutil.MustOpenSQLite(t)
	sample := mustReadFixture(t)
	c, err := locomo.Ingest(ctx, store, sample)
	if err != nil {
		t.Fatal(err)
	}
	if c.UserID != "locomo-conv-demo" || c.Turns() != 13 || len(c.DiaIDs) != 13 {
		t.Fatalf("UserID, Turns, len(DiaIDs) = %q, %d, %d", c.UserID, c.Turns(), len(c.DiaIDs))
	}

	threads, _, err := store.FindThreads(ctx, c.UserID, agentmem.ThreadFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, th := range threads {
		ids = append(ids, th.ID+" "+th.Title)
	}
	want := []string{ // newest updated first
		"session-3 Session 3, 9:05 pm on 3 July, 2023",
		"session-2 Session 2, 10:37 am on 27 June, 2023",
		"session-1 Session 1, 1:56 pm on 8 May, 2023",
	}
	if diff := cmp.Diff(want, ids); diff != "" {
		t.Fatalf("threads mismatch (-want +got):\n%s", diff)
	}

	msgs, _, err := store.FindMessages(ctx, c.UserID, "session-2", agentmem.MessageFilter{})
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		Seq      int64
		Role     string
		Name     string
		Content  string
		Created  string
		Metadata string
	}
	var got []row
	for _, m := range msgs {
		got = append(got, row{m.Seq, m.Role, m.Name, m.Content, m.CreatedAt.Format(time.RFC3339), string(m.Metadata)})
	}
	wantRows := []row{
		{1, "assistant", "Marek", "We adopted a greyhound from the shelter last Tuesday; her name is Mist.", "2023-06-27T10:37:00Z", `{"dia_id":"D2:1"}`},
		{2, "user", "Ines", "How lovely! I played my first duet with my cello teacher yesterday.", "2023-06-27T10:37:01Z", `{"dia_id":"D2:2"}`},
		{3, "assistant", "Marek", "Here is Mist after her first walk. [shared an image: a photo of a grey dog sleeping on a blue couch]", "2023-06-27T10:37:02Z", `{"dia_id":"D2:3"}`},
		{4, "user", "Ines", "Greyhounds are the fastest dog breed, right?", "2023-06-27T10:37:03Z", `{"dia_id":"D2:4"}`},
	}
	if diff := cmp.Diff(wantRows, got); diff != "" {
		t.Fatalf("session-2 mismatch (-want +got):\n%s", diff)
	}
	for key, dia := range map[locomo.TurnKey]string{{"session-1", 1}: "D1:1", {"session-1", 5}: "D1:5", {"session-2", 3}: "D2:3", {"session-3", 4}: "D3:4"} {
		if c.DiaIDs[key] != dia {
			t.Errorf("DiaIDs[%v] = %q, want %q", key, c.DiaIDs[key], dia)
		}
	}
	if !c.HasTurn("D3:4") || c.HasTurn("D3:5") {
		t.Errorf("HasTurn(D3:4), HasTurn(D3:5) = %v, %v", c.HasTurn("D3:4"), c.HasTurn("D3:5"))
	}

	// A second ingestion of the same sample conflicts.
	if _, err := locomo.Ingest(ctx, store, sample); agentmem.ErrorCode(err) != agentmem.ECONFLICT {
		t.Fatalf("second Ingest: %v, want ECONFLICT", err)
	}
}

func TestConversation_Rank(t *testing.T) {
	c, err := locomo.Ingest(context.Background(), testutil.MustOpenSQLite(t), mustReadFixture(t))
	if err != nil {
		t.Fatal(err)
	}
	msg := func(thread string, seq int64) locomo.Hit {
		return locomo.Hit{Scope: agentmem.ScopeMessages, ThreadID: thread, SeqFrom: seq, SeqTo: seq}
	}
	for name, tc := range map[string]struct {
		hits         []locomo.Hit
		want         []locomo.Ranked
		wantUnmapped int
	}{
		"Messages": {
			hits: []locomo.Hit{msg("session-2", 4), msg("session-1", 1), {Scope: agentmem.ScopeMessages, ThreadID: "session-3", SeqFrom: 2}},
			want: []locomo.Ranked{{DiaID: "D2:4", Rank: 1, Hit: 1}, {DiaID: "D1:1", Rank: 2, Hit: 2}, {DiaID: "D3:2", Rank: 3, Hit: 3}},
		},
		"ChunkCoveringThreeTurns": {
			hits: []locomo.Hit{
				msg("session-1", 2),
				{Scope: agentmem.ScopeChunks, ThreadID: "session-1", SeqFrom: 1, SeqTo: 3}, // D1:2 is already ranked
				msg("session-3", 1),
			},
			want: []locomo.Ranked{{DiaID: "D1:2", Rank: 1, Hit: 1}, {DiaID: "D1:1", Rank: 2, Hit: 2}, {DiaID: "D1:3", Rank: 3, Hit: 2}, {DiaID: "D3:1", Rank: 4, Hit: 3}},
		},
		"SummaryAndMemory": {
			hits: []locomo.Hit{
				{Scope: agentmem.ScopeSummaries, ThreadID: "session-2", SeqFrom: 3, SeqTo: 4},
				{Scope: agentmem.ScopeMemories, ThreadID: "session-3", SeqFrom: 2, SeqTo: 2},
				msg("session-2", 4), // a duplicate keeps its first rank
			},
			want: []locomo.Ranked{{DiaID: "D2:3", Rank: 1, Hit: 1}, {DiaID: "D2:4", Rank: 2, Hit: 1}, {DiaID: "D3:2", Rank: 3, Hit: 2}},
		},
		"Unmapped": {
			hits: []locomo.Hit{
				{Scope: agentmem.ScopeMemories, Text: "a memory with no provenance"},
				msg("session-9", 1),
				{Scope: agentmem.ScopeChunks, ThreadID: "session-3", SeqFrom: 3, SeqTo: 1 << 60}, // clipped to the thread
				msg("session-1", 99),
			},
			want:         []locomo.Ranked{{DiaID: "D3:3", Rank: 1, Hit: 3}, {DiaID: "D3:4", Rank: 2, Hit: 3}},
			wantUnmapped: 3,
		},
		"MessageHitIgnoresSeqTo": {
			hits: []locomo.Hit{{Scope: agentmem.ScopeMessages, ThreadID: "session-1", SeqFrom: 4, SeqTo: 5}},
			want: []locomo.Ranked{{DiaID: "D1:4", Rank: 1, Hit: 1}},
		},
	} {
		t.Run(name, func(t *testing.T) {
			got, unmapped := c.Rank(tc.hits)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Rank mismatch (-want +got):\n%s", diff)
			}
			if unmapped != tc.wantUnmapped {
				t.Errorf("unmapped = %d, want %d", unmapped, tc.wantUnmapped)
			}
		})
	}
}
