package storetest

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/google/go-cmp/cmp"
)

// MustPutSummary puts a summary of the thread through seq and returns the
// newest summary afterwards.
func MustPutSummary(tb testing.TB, s agentmem.SummaryStore, user, thread string, through int64, text string) *agentmem.Summary {
	tb.Helper()
	out, err := s.PutSummary(ctx, &agentmem.Summary{UserID: user, ThreadID: thread, ThroughSeq: through, Text: text, Method: agentmem.SummaryLLM, Model: "m"})
	if err != nil {
		tb.Fatalf("PutSummary: %v", err)
	}
	return out
}

// mustFindSummary returns a thread's summary, failing tb if it cannot.
func mustFindSummary(tb testing.TB, s agentmem.SummaryStore, user, thread string) *agentmem.Summary {
	tb.Helper()
	sum, err := s.FindSummary(ctx, user, thread)
	if err != nil {
		tb.Fatalf("FindSummary(%q, %q): %v", user, thread, err)
	}
	return sum
}

// mustAppendN appends n user messages to a thread.
func mustAppendN(tb testing.TB, s agentmem.Store, user, thread string, n int) {
	tb.Helper()
	var pairs []string
	for i := range n {
		pairs = append(pairs, agentmem.RoleUser, fmt.Sprintf("message %d", i+1))
	}
	MustAppend(tb, s, user, thread, pairs...)
}

func testPutSummary(t *testing.T, s agentmem.Store) {
	th := MustCreateThread(t, s, &agentmem.Thread{UserID: "alice"})
	mustAppendN(t, s, "alice", th.ID, 10)
	_, err := s.FindSummary(ctx, "alice", th.ID)
	wantCode(t, err, agentmem.ENOTFOUND)

	before := time.Now().Truncate(time.Microsecond)
	in := &agentmem.Summary{UserID: "alice", ThreadID: th.ID, ThroughSeq: 4, Text: "Alice asked about trains.", Method: agentmem.SummaryLLM, Model: "gpt-x"}
	first, err := s.PutSummary(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if first.Version != 1 || first.ThroughSeq != 4 || first.TokenCount <= 0 || first.CreatedAt.Before(before) || first.CreatedAt.After(time.Now()) ||
		first.Text != in.Text || first.Method != agentmem.SummaryLLM || first.Model != "gpt-x" {
		t.Fatalf("first summary = %+v", first)
	}
	got, err := s.FindSummary(ctx, "alice", th.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(first, got); diff != "" {
		t.Fatalf("FindSummary mismatch (-want +got):\n%s", diff)
	}

	t.Run("Stale", func(t *testing.T) {
		// A summary reaching no further than the newest stores nothing.
		for _, through := range []int64{4, 2} {
			got := MustPutSummary(t, s, "alice", th.ID, through, "older")
			if diff := cmp.Diff(first, got); diff != "" {
				t.Fatalf("stale put (through %d) mismatch (-newest +got):\n%s", through, diff)
			}
		}
		if got := mustFindSummary(t, s, "alice", th.ID); got.Version != 1 || got.Text != first.Text {
			t.Fatalf("after stale puts: %+v", got)
		}
	})
	t.Run("Newer", func(t *testing.T) {
		second := MustPutSummary(t, s, "alice", th.ID, 8, "Alice booked a train.")
		if second.Version != 2 || second.ThroughSeq != 8 || second.Text != "Alice booked a train." {
			t.Fatalf("second summary = %+v", second)
		}
		got, err := s.FindSummary(ctx, "alice", th.ID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(second, got); diff != "" {
			t.Fatalf("FindSummary mismatch (-want +got):\n%s", diff)
		}
		// The last seq itself may be covered.
		if third := MustPutSummary(t, s, "alice", th.ID, 10, "All of it."); third.Version != 3 {
			t.Fatalf("third summary = %+v", third)
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		for _, bad := range []*agentmem.Summary{
			{UserID: "alice", ThreadID: th.ID, ThroughSeq: 11, Text: "beyond", Method: agentmem.SummaryLLM},
			{UserID: "alice", ThreadID: th.ID, ThroughSeq: 0, Text: "none", Method: agentmem.SummaryLLM},
			{UserID: "alice", ThreadID: th.ID, ThroughSeq: -1, Text: "negative", Method: agentmem.SummaryLLM},
			{UserID: "alice", ThreadID: th.ID, ThroughSeq: 5, Text: "x", Method: "magic"},
			{UserID: "alice", ThreadID: th.ID, ThroughSeq: 5, Text: " ", Method: agentmem.SummaryExtractive},
			{UserID: "alice", ThreadID: th.ID, ThroughSeq: 5, Text: "nul \x00", Method: agentmem.SummaryExtractive},
			{UserID: "", ThreadID: th.ID, ThroughSeq: 5, Text: "x", Method: agentmem.SummaryLLM},
		} {
			_, err := s.PutSummary(ctx, bad)
			wantCode(t, err, agentmem.EINVALID)
		}
		_, err := s.PutSummary(ctx, &agentmem.Summary{UserID: "alice", ThreadID: th.ID, ThroughSeq: 5, Text: strings.Repeat("x", agentmem.MaxSummaryBytes+1), Method: agentmem.SummaryLLM})
		wantCode(t, err, agentmem.ETOOLARGE)
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		_, err := s.PutSummary(ctx, &agentmem.Summary{UserID: "alice", ThreadID: "nope", ThroughSeq: 1, Text: "x", Method: agentmem.SummaryLLM})
		wantCode(t, err, agentmem.ENOTFOUND)
		_, err = s.PutSummary(ctx, &agentmem.Summary{UserID: "bob", ThreadID: th.ID, ThroughSeq: 1, Text: "x", Method: agentmem.SummaryLLM})
		wantCode(t, err, agentmem.ENOTFOUND)
		_, err = s.FindSummary(ctx, "bob", th.ID)
		wantCode(t, err, agentmem.ENOTFOUND)
		_, err = s.FindSummary(ctx, "alice", "nope")
		wantCode(t, err, agentmem.ENOTFOUND)
	})
	t.Run("SoftDeleted", func(t *testing.T) {
		gone := MustCreateThread(t, s, &agentmem.Thread{UserID: "alice"})
		mustAppendN(t, s, "alice", gone.ID, 2)
		MustPutSummary(t, s, "alice", gone.ID, 2, "soon gone")
		if err := s.DeleteThread(ctx, "alice", gone.ID, false); err != nil {
			t.Fatal(err)
		}
		_, err := s.FindSummary(ctx, "alice", gone.ID)
		wantCode(t, err, agentmem.ENOTFOUND)
		_, err = s.PutSummary(ctx, &agentmem.Summary{UserID: "alice", ThreadID: gone.ID, ThroughSeq: 2, Text: "x", Method: agentmem.SummaryLLM})
		wantCode(t, err, agentmem.ENOTFOUND)
	})
}

// testPutSummaryConcurrent: puts of one thread racing with each other
// never fail and leave the one reaching furthest as the newest.
func testPutSummaryConcurrent(t *testing.T, s agentmem.Store) {
	const n = 20
	th := MustCreateThread(t, s, &agentmem.Thread{UserID: "alice"})
	mustAppendN(t, s, "alice", th.ID, n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			_, err := s.PutSummary(ctx, &agentmem.Summary{UserID: "alice", ThreadID: th.ID, ThroughSeq: int64(i + 1), Text: fmt.Sprintf("through %d", i+1), Method: agentmem.SummaryExtractive})
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.FindSummary(ctx, "alice", th.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.ThroughSeq != n || got.Text != fmt.Sprintf("through %d", n) || got.Version < 1 || got.Version > n {
		t.Fatalf("newest summary after racing puts = %+v", got)
	}
}

// testSummaryErasure: permanent thread deletion, clean-up and user erasure
// remove summaries; a thread recreated with the same ID starts without one.
func testSummaryErasure(t *testing.T, s agentmem.Store) {
	fill := func(user, thread string) {
		t.Helper()
		MustCreateThread(t, s, &agentmem.Thread{UserID: user, ID: thread})
		mustAppendN(t, s, user, thread, 3)
		MustPutSummary(t, s, user, thread, 2, "summary of "+user+"/"+thread)
	}
	wantNone := func(user, thread string) {
		t.Helper()
		fill(user, thread)
		// The first put after the recreation is version 1 again.
		if got, err := s.FindSummary(ctx, user, thread); err != nil || got.Version != 1 {
			t.Fatalf("summary of recreated %s/%s = %+v, %v; want version 1", user, thread, got, err)
		}
	}
	for _, user := range []string{"alice", "bob"} {
		fill(user, "t1")
		fill(user, "t2")
		MustPutSummary(t, s, user, "t1", 3, "newer")
	}

	if err := s.DeleteThread(ctx, "alice", "t1", true); err != nil {
		t.Fatal(err)
	}
	MustCreateThread(t, s, &agentmem.Thread{UserID: "alice", ID: "t1"})
	_, err := s.FindSummary(ctx, "alice", "t1")
	wantCode(t, err, agentmem.ENOTFOUND)
	if err := s.DeleteThread(ctx, "alice", "t1", true); err != nil {
		t.Fatal(err)
	}
	wantNone("alice", "t1")

	if _, err := s.DeleteThreadsBefore(ctx, "alice", time.Now().Add(time.Hour), false); err != nil {
		t.Fatal(err)
	}
	wantNone("alice", "t2")

	if _, err := s.DeleteUser(ctx, "alice"); err != nil {
		t.Fatal(err)
	}
	wantNone("alice", "t1")
	for thread, want := range map[string]int64{"t1": 2, "t2": 1} {
		if got, err := s.FindSummary(ctx, "bob", thread); err != nil || got.Version != want {
			t.Fatalf("bob's summary of %s = %+v, %v; want version %d untouched", thread, got, err, want)
		}
	}
}
