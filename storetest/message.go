package storetest

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/google/go-cmp/cmp"
)

// MustAppend appends messages built from role/content pairs.
func MustAppend(tb testing.TB, s agentmem.Store, user, thread string, pairs ...string) []*agentmem.Message {
	tb.Helper()
	var msgs []*agentmem.Message
	for i := 0; i+1 < len(pairs); i += 2 {
		msgs = append(msgs, &agentmem.Message{Role: pairs[i], Content: pairs[i+1]})
	}
	out, err := s.AppendMessages(ctx, user, thread, msgs, agentmem.AppendOptions{})
	if err != nil {
		tb.Fatalf("AppendMessages: %v", err)
	}
	return out
}

func allMessages(tb testing.TB, s agentmem.Store, user, thread string) []*agentmem.Message {
	tb.Helper()
	var all []*agentmem.Message
	for cursor := ""; ; {
		page, next, err := s.FindMessages(ctx, user, thread, agentmem.MessageFilter{Limit: agentmem.MaxPageSize, Cursor: cursor})
		if err != nil {
			tb.Fatalf("FindMessages: %v", err)
		}
		all = append(all, page...)
		if cursor = next; cursor == "" {
			return all
		}
	}
}

func wantSeqs(tb testing.TB, msgs []*agentmem.Message, n int) {
	tb.Helper()
	if len(msgs) != n {
		tb.Fatalf("len(messages)=%d, want %d", len(msgs), n)
	}
	for i, m := range msgs {
		if m.Seq != int64(i+1) {
			tb.Fatalf("messages[%d].Seq=%d, want %d", i, m.Seq, i+1)
		}
	}
}

func testAppendMessages(t *testing.T, s agentmem.Store) {
	th := MustCreateThread(t, s, &agentmem.Thread{UserID: "alice"})
	long := strings.Repeat("abcdefghijk ", 8) + "\n\n  tail"
	in := []*agentmem.Message{
		{Role: agentmem.RoleSystem, Content: "You are helpful."},
		{Role: agentmem.RoleUser, Content: long, Name: "al", Metadata: json.RawMessage(`{"lang":"en"}`)},
		{Role: agentmem.RoleAssistant, Content: "", ToolCalls: []agentmem.ToolCall{{ID: "call_1", Function: agentmem.FunctionCall{Name: "lookup", Arguments: `{"q":"x"}`}}}},
		{Role: agentmem.RoleTool, Content: `{"answer":42}`, ToolCallID: "call_1"},
	}
	out, err := s.AppendMessages(ctx, "alice", th.ID, in, agentmem.AppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantSeqs(t, out, 4)
	for _, m := range out {
		if m.ID == "" || m.ThreadID != th.ID || m.CreatedAt.IsZero() {
			t.Fatalf("appended message = %+v", m)
		}
		if m.TokenCount <= 0 && m.Content != "" {
			t.Fatalf("message %d has token_count %d", m.Seq, m.TokenCount)
		}
	}
	stored := allMessages(t, s, "alice", th.ID)
	if diff := cmp.Diff(out, stored, jsonEqual()); diff != "" {
		t.Fatalf("stored messages mismatch (-want +got):\n%s", diff)
	}
	if stored[2].ToolCalls[0].Type != "function" || stored[3].ToolCallID != "call_1" {
		t.Fatalf("tool call fields not kept: %+v %+v", stored[2], stored[3])
	}

	got := mustFindThread(t, s, "alice", th.ID)
	if want := agentmem.AutoTitle(long); got.Title != want || len([]rune(want)) != agentmem.AutoTitleRunes {
		t.Fatalf("auto title=%q, want %q (80 characters)", got.Title, want)
	}
	if got.MessageCount != 4 || got.LastSeq != 4 || !got.UpdatedAt.After(th.UpdatedAt) && !got.UpdatedAt.Equal(th.UpdatedAt) {
		t.Fatalf("thread after append = %+v", got)
	}
	next := MustAppend(t, s, "alice", th.ID, agentmem.RoleUser, "second question")
	if next[0].Seq != 5 {
		t.Fatalf("next seq=%d, want 5", next[0].Seq)
	}
	if got := mustFindThread(t, s, "alice", th.ID); got.Title != agentmem.AutoTitle(long) {
		t.Fatalf("title changed to %q by a later message", got.Title)
	}

	t.Run("ClientCreatedAt", func(t *testing.T) {
		at := time.Date(2023, 5, 8, 13, 56, 0, 123456789, time.FixedZone("x", 3600))
		out, err := s.AppendMessages(ctx, "alice", th.ID, []*agentmem.Message{{Role: "user", Content: "dated", CreatedAt: at}}, agentmem.AppendOptions{})
		if err != nil {
			t.Fatal(err)
		}
		stored := allMessages(t, s, "alice", th.ID)
		if last := stored[len(stored)-1]; !last.CreatedAt.Equal(at.Truncate(time.Microsecond)) || !out[0].CreatedAt.Equal(last.CreatedAt) {
			t.Fatalf("created_at=%v, want %v", last.CreatedAt, at)
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		_, err := s.AppendMessages(ctx, "bob", th.ID, []*agentmem.Message{{Role: "user", Content: "x"}}, agentmem.AppendOptions{})
		wantCode(t, err, agentmem.ENOTFOUND)
	})
}

func testAppendInvalid(t *testing.T, s agentmem.Store) {
	th := MustCreateThread(t, s, &agentmem.Thread{UserID: "alice"})
	MustAppend(t, s, "alice", th.ID, agentmem.RoleUser, "kept")
	for _, tt := range []struct {
		name string
		msgs []*agentmem.Message
		code string
		want string // in the message
	}{
		{"Empty", nil, agentmem.EINVALID, "at least one"},
		{"UnknownRole", []*agentmem.Message{{Role: "robot", Content: "x"}}, agentmem.EINVALID, "messages[0].role"},
		{"MissingRole", []*agentmem.Message{{Content: "x"}}, agentmem.EINVALID, "messages[0].role"},
		{"BadUTF8", []*agentmem.Message{{Role: "user", Content: "ok"}, {Role: "user", Content: "bad \xff"}}, agentmem.EINVALID, "messages[1].content"},
		{"TooLarge", []*agentmem.Message{{Role: "user", Content: strings.Repeat("x", agentmem.DefaultMaxMessageBytes+1)}}, agentmem.ETOOLARGE, "1048576"},
		{"ToolWithoutCallID", []*agentmem.Message{{Role: "tool", Content: "x"}}, agentmem.EINVALID, "tool_call_id"},
		{"DuplicateID", []*agentmem.Message{{ID: "m", Role: "user"}, {ID: "m", Role: "user"}}, agentmem.EINVALID, "twice"},
		{"BadMetadata", []*agentmem.Message{{Role: "user", Metadata: json.RawMessage(`"s"`)}}, agentmem.EINVALID, "messages[0].metadata"},
		{"BadKey", []*agentmem.Message{{Role: "user"}}, agentmem.EINVALID, "Idempotency-Key"},
		{"NUL", []*agentmem.Message{{Role: "user", Content: "a\x00b"}}, agentmem.EINVALID, "messages[0].content"},
		{"NULMetadata", []*agentmem.Message{{Role: "user", Metadata: json.RawMessage(`{"k":"\u0000"}`)}}, agentmem.EINVALID, "messages[0].metadata"},
		{"TimeOutOfRange", []*agentmem.Message{{Role: "user", CreatedAt: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}}, agentmem.EINVALID, "messages[0].created_at"},
		{"TimeInYear9999", []*agentmem.Message{{Role: "user"}, {Role: "user", CreatedAt: time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)}}, agentmem.EINVALID,
			"messages[1].created_at 9999-01-01T00:00:00Z is in the future; it may be at most 5 minutes ahead of the server's clock."},
		{"TimeAnHourAhead", []*agentmem.Message{{Role: "user", CreatedAt: time.Now().Add(time.Hour)}}, agentmem.EINVALID, "messages[0].created_at"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			opt := agentmem.AppendOptions{}
			if tt.name == "BadKey" {
				opt.IdempotencyKey = "has space"
			}
			_, err := s.AppendMessages(ctx, "alice", th.ID, tt.msgs, opt)
			wantCode(t, err, tt.code)
			if msg := agentmem.ErrorMessage(err); !strings.Contains(msg, tt.want) {
				t.Fatalf("message %q does not name %q", msg, tt.want)
			}
		})
	}
	// A batch that fails in the database writes none of its messages.
	MustAppend(t, s, "alice", th.ID, agentmem.RoleUser, "second")
	msgs := allMessages(t, s, "alice", th.ID)
	taken := msgs[0].ID
	_, err := s.AppendMessages(ctx, "alice", th.ID, []*agentmem.Message{{ID: "fresh", Role: "user", Content: "a"}, {ID: taken, Role: "user", Content: "different"}}, agentmem.AppendOptions{})
	wantCode(t, err, agentmem.ECONFLICT)
	wantSeqs(t, allMessages(t, s, "alice", th.ID), 2)
	if got := allMessages(t, s, "alice", th.ID); got[0].Content != "kept" {
		t.Fatalf("stored message changed to %q", got[0].Content)
	}
}

func testIdempotency(t *testing.T, s agentmem.Store) {
	th := MustCreateThread(t, s, &agentmem.Thread{UserID: "alice"})
	batch := func(content string) []*agentmem.Message {
		return []*agentmem.Message{{Role: "user", Content: content}, {Role: "assistant", Content: "reply"}}
	}
	opt := agentmem.AppendOptions{IdempotencyKey: "req-1"}
	first, err := s.AppendMessages(ctx, "alice", th.ID, batch("q"), opt)
	if err != nil {
		t.Fatal(err)
	}
	again, err := s.AppendMessages(ctx, "alice", th.ID, batch("q"), opt)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(first, again, jsonEqual()); diff != "" {
		t.Fatalf("retry returned different messages (-first +retry):\n%s", diff)
	}
	wantSeqs(t, allMessages(t, s, "alice", th.ID), 2)
	_, err = s.AppendMessages(ctx, "alice", th.ID, batch("other"), opt)
	wantCode(t, err, agentmem.ECONFLICT)
	// The same key on another thread is another request.
	th2 := MustCreateThread(t, s, &agentmem.Thread{UserID: "alice"})
	if _, err := s.AppendMessages(ctx, "alice", th2.ID, batch("q"), opt); err != nil {
		t.Fatal(err)
	}
	wantSeqs(t, allMessages(t, s, "alice", th2.ID), 2)
	wantSeqs(t, allMessages(t, s, "alice", th.ID), 2)
}

func testClientIDs(t *testing.T, s agentmem.Store) {
	th := MustCreateThread(t, s, &agentmem.Thread{UserID: "alice"})
	batch := func() []*agentmem.Message {
		return []*agentmem.Message{{ID: "m1", Role: "user", Content: "q"}, {ID: "m2", Role: "assistant", Content: "a"}}
	}
	first, err := s.AppendMessages(ctx, "alice", th.ID, batch(), agentmem.AppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	again, err := s.AppendMessages(ctx, "alice", th.ID, batch(), agentmem.AppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(first, again, jsonEqual()); diff != "" {
		t.Fatalf("retry by message ids mismatch (-first +retry):\n%s", diff)
	}
	wantSeqs(t, allMessages(t, s, "alice", th.ID), 2)
	for _, bad := range [][]*agentmem.Message{
		{{ID: "m1", Role: "user", Content: "changed"}, {ID: "m2", Role: "assistant", Content: "a"}},
		{{ID: "m1", Role: "user", Content: "q"}, {ID: "m3", Role: "assistant", Content: "a"}},
		{{ID: "m2", Role: "assistant", Content: "a"}, {ID: "m1", Role: "user", Content: "q"}},
	} {
		_, err := s.AppendMessages(ctx, "alice", th.ID, bad, agentmem.AppendOptions{})
		wantCode(t, err, agentmem.ECONFLICT)
	}
	other := MustCreateThread(t, s, &agentmem.Thread{UserID: "alice"})
	_, err = s.AppendMessages(ctx, "alice", other.ID, batch(), agentmem.AppendOptions{})
	wantCode(t, err, agentmem.ECONFLICT)
	// Message IDs are per user.
	bobs := MustCreateThread(t, s, &agentmem.Thread{UserID: "bob"})
	if _, err := s.AppendMessages(ctx, "bob", bobs.ID, batch(), agentmem.AppendOptions{}); err != nil {
		t.Fatalf("bob reusing alice's message ids: %v", err)
	}
	wantSeqs(t, allMessages(t, s, "alice", th.ID), 2)
}

// testConcurrentAppends: 50 writers × 100 single appends to one thread
// must end with seqs 1..5000, each message exactly once.
func testConcurrentAppends(t *testing.T, s agentmem.Store) {
	const writers, each = 50, 100
	th := MustCreateThread(t, s, &agentmem.Thread{UserID: "alice"})
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				msg := &agentmem.Message{Role: "user", Content: fmt.Sprintf("w%d-%d", w, i)}
				if _, err := s.AppendMessages(ctx, "alice", th.ID, []*agentmem.Message{msg}, agentmem.AppendOptions{}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	msgs := allMessages(t, s, "alice", th.ID)
	wantSeqs(t, msgs, writers*each)
	seen := map[string]bool{}
	for _, m := range msgs {
		if seen[m.Content] {
			t.Fatalf("message %q stored twice", m.Content)
		}
		seen[m.Content] = true
	}
	got := mustFindThread(t, s, "alice", th.ID)
	if got.MessageCount != writers*each || got.LastSeq != writers*each {
		t.Fatalf("thread count=%d last_seq=%d, want %d", got.MessageCount, got.LastSeq, writers*each)
	}
}

// testConcurrentRetries: many clients retrying the same keyed batches at
// once store each batch once and all get the same answer.
func testConcurrentRetries(t *testing.T, s agentmem.Store) {
	const keys, retries = 20, 5
	th := MustCreateThread(t, s, &agentmem.Thread{UserID: "alice"})
	results := make([][][]*agentmem.Message, keys)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for k := range keys {
		results[k] = make([][]*agentmem.Message, retries)
		for r := range retries {
			wg.Add(1)
			go func() {
				defer wg.Done()
				msgs := []*agentmem.Message{{Role: "user", Content: fmt.Sprintf("k%d", k)}, {Role: "assistant", Content: "ok"}}
				out, err := s.AppendMessages(ctx, "alice", th.ID, msgs, agentmem.AppendOptions{IdempotencyKey: fmt.Sprintf("key-%d", k)})
				mu.Lock()
				defer mu.Unlock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				results[k][r] = out
			}()
		}
	}
	wg.Wait()
	if firstErr != nil {
		t.Fatal(firstErr)
	}
	wantSeqs(t, allMessages(t, s, "alice", th.ID), 2*keys)
	for k := range keys {
		for r := 1; r < retries; r++ {
			if results[k][r][0].ID != results[k][0][0].ID || results[k][r][0].Seq != results[k][0][0].Seq {
				t.Fatalf("key %d: retries got different messages", k)
			}
		}
	}
}

func testFindMessages(t *testing.T, s agentmem.Store) {
	th := MustCreateThread(t, s, &agentmem.Thread{UserID: "alice"})
	var msgs []*agentmem.Message
	for i := range 30 {
		msgs = append(msgs, &agentmem.Message{Role: "user", Content: fmt.Sprint(i + 1)})
	}
	if _, err := s.AppendMessages(ctx, "alice", th.ID, msgs, agentmem.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	seqs := func(f agentmem.MessageFilter) ([]int64, string) {
		t.Helper()
		page, next, err := s.FindMessages(ctx, "alice", th.ID, f)
		if err != nil {
			t.Fatal(err)
		}
		var out []int64
		for _, m := range page {
			out = append(out, m.Seq)
		}
		return out, next
	}
	for _, tt := range []struct {
		name     string
		f        agentmem.MessageFilter
		want     []int64
		wantNext bool
	}{
		{"AfterSeq", agentmem.MessageFilter{AfterSeq: 27}, []int64{28, 29, 30}, false},
		{"BeforeSeq", agentmem.MessageFilter{BeforeSeq: 3}, []int64{1, 2}, false},
		{"Between", agentmem.MessageFilter{AfterSeq: 10, BeforeSeq: 14}, []int64{11, 12, 13}, false},
		{"Limit", agentmem.MessageFilter{Limit: 2}, []int64{1, 2}, true},
		{"Newest", agentmem.MessageFilter{Desc: true, Limit: 3}, []int64{30, 29, 28}, true},
		{"NewestBefore", agentmem.MessageFilter{Desc: true, Limit: 2, BeforeSeq: 10}, []int64{9, 8}, true},
		{"ExactPage", agentmem.MessageFilter{AfterSeq: 25, Limit: 5}, []int64{26, 27, 28, 29, 30}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, next := seqs(tt.f)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Fatalf("seqs mismatch (-want +got):\n%s", diff)
			}
			if (next != "") != tt.wantNext {
				t.Fatalf("next cursor %q, want one: %v", next, tt.wantNext)
			}
		})
	}
	t.Run("CursorBothWays", func(t *testing.T) {
		for _, desc := range []bool{false, true} {
			var all []int64
			for cursor := ""; ; {
				page, next := seqs(agentmem.MessageFilter{Limit: 7, Cursor: cursor, Desc: desc})
				all = append(all, page...)
				if cursor = next; cursor == "" {
					break
				}
			}
			if len(all) != 30 {
				t.Fatalf("desc=%v: paged through %d messages, want 30", desc, len(all))
			}
			for i := 1; i < len(all); i++ {
				if (all[i] > all[i-1]) == desc {
					t.Fatalf("desc=%v: order broken at %d: %v", desc, i, all)
				}
			}
		}
	})
	t.Run("Errors", func(t *testing.T) {
		_, _, err := s.FindMessages(ctx, "alice", th.ID, agentmem.MessageFilter{Cursor: "%%%"})
		wantCode(t, err, agentmem.EINVALID)
		_, _, err = s.FindMessages(ctx, "alice", th.ID, agentmem.MessageFilter{AfterSeq: -1})
		wantCode(t, err, agentmem.EINVALID)
		_, _, err = s.FindMessages(ctx, "bob", th.ID, agentmem.MessageFilter{})
		wantCode(t, err, agentmem.ENOTFOUND)
	})
}

func testElements(t *testing.T, s agentmem.Store) {
	th := MustCreateThread(t, s, &agentmem.Thread{UserID: "alice"})
	msgs := MustAppend(t, s, "alice", th.ID, agentmem.RoleUser, "q", agentmem.RoleAssistant, "a [1]")
	ref := &agentmem.Element{Type: "text", Name: "Ref #1", Content: "### Ref #1 — Article", Display: "side", MessageID: msgs[1].ID, Metadata: json.RawMessage(`{"score":0.9}`)}
	if err := s.CreateElement(ctx, "alice", th.ID, ref); err != nil {
		t.Fatal(err)
	}
	file := &agentmem.Element{ID: "el-file", Type: "file", Name: "report.pdf", URL: "https://example.com/r.pdf", MimeType: "application/pdf"}
	if err := s.CreateElement(ctx, "alice", th.ID, file); err != nil {
		t.Fatal(err)
	}
	if ref.ID == "" || ref.ThreadID != th.ID || ref.CreatedAt.IsZero() {
		t.Fatalf("created element = %+v", ref)
	}
	wantCode(t, s.CreateElement(ctx, "alice", th.ID, &agentmem.Element{ID: "el-file"}), agentmem.ECONFLICT)
	wantCode(t, s.CreateElement(ctx, "alice", th.ID, &agentmem.Element{MessageID: "nope"}), agentmem.ENOTFOUND)
	wantCode(t, s.CreateElement(ctx, "bob", th.ID, &agentmem.Element{}), agentmem.ENOTFOUND)
	wantCode(t, s.CreateElement(ctx, "alice", th.ID, &agentmem.Element{Name: "\xff"}), agentmem.EINVALID)

	page, next, err := s.FindElements(ctx, "alice", th.ID, agentmem.ElementFilter{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	rest, last, err := s.FindElements(ctx, "alice", th.ID, agentmem.ElementFilter{Limit: 1, Cursor: next})
	if err != nil {
		t.Fatal(err)
	}
	if next == "" || last != "" || len(page)+len(rest) != 2 {
		t.Fatalf("element pages: %d (next %q), %d (next %q)", len(page), next, len(rest), last)
	}
	if diff := cmp.Diff([]*agentmem.Element{ref, file}, append(page, rest...), jsonEqual()); diff != "" {
		t.Fatalf("elements mismatch (-want +got):\n%s", diff)
	}
	onMsg, _, err := s.FindElements(ctx, "alice", th.ID, agentmem.ElementFilter{MessageID: &msgs[1].ID})
	if err != nil || len(onMsg) != 1 || onMsg[0].ID != ref.ID {
		t.Fatalf("elements of message: %v, %v", onMsg, err)
	}
	_, _, err = s.FindElements(ctx, "bob", th.ID, agentmem.ElementFilter{})
	wantCode(t, err, agentmem.ENOTFOUND)
}
