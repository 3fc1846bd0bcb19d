package agentmem_test

import (
	"encoding/base64"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/google/go-cmp/cmp"
)

// Run a fuzz target with, for example,
//
//	go test -run '^$' -fuzz '^FuzzDecodeCursor$' -fuzztime 60s -parallel 1 .
//
// Inputs that once failed are kept in testdata/fuzz/<FuzzName>/. (A bare
// "context deadline exceeded" failure at the end of -fuzztime, with no
// input written, is Go 1.26's golang.org/issue/75804, not a finding.)

// The lists FuzzDecodeCursor decodes cursors for.
var (
	fuzzThreads  = agentmem.ListOf(agentmem.ListThreads, "u")
	fuzzMessages = agentmem.ListOf(agentmem.ListMessages, "u", "t")
	fuzzDesc     = agentmem.ListOf(agentmem.ListMessagesDesc, "u", "t")
	fuzzElements = agentmem.ListOf(agentmem.ListElements, "u", "t")
)

// FuzzDecodeCursor decodes arbitrary cursors into each cursor type, and
// resolves them with MessageRange: neither panics, errors are EINVALID, and
// what DecodeCursor accepts re-encodes to a cursor that decodes to the same
// position.
func FuzzDecodeCursor(f *testing.F) {
	for _, c := range []string{
		"",
		agentmem.EncodeCursor(fuzzThreads, agentmem.ThreadCursor{UpdatedAt: 1700000000000000, ID: "t1"}),
		agentmem.EncodeCursor(fuzzThreads, agentmem.ThreadCursor{UpdatedAt: math.MinInt64, ID: "\x00\xff"}),
		agentmem.EncodeCursor(fuzzMessages, agentmem.SeqCursor{Seq: 42}),
		agentmem.EncodeCursor(fuzzDesc, agentmem.SeqCursor{Seq: math.MaxInt64}),
		agentmem.EncodeCursor(fuzzMessages, agentmem.SeqCursor{Seq: -1}),
		agentmem.EncodeCursor(agentmem.ListOf(agentmem.ListMessages, "u", "other"), agentmem.SeqCursor{Seq: 3}),
		agentmem.EncodeCursor(fuzzElements, agentmem.TimeIDCursor{Time: -62135596800000000, ID: "日本"}),
		agentmem.EncodeCursor(fuzzThreads, nil),
		agentmem.EncodeCursor(fuzzMessages, []int{1, 2}),
		agentmem.EncodeCursor(fuzzThreads, "a string"),
		agentmem.EncodeCursor(fuzzMessages, map[string]any{"s": 1.5, "u": "1", "i": 7}),
		agentmem.EncodeCursor(fuzzMessages, map[string]any{"S": 3, "s": 4}), // keys match case-insensitively; the last wins
		b64(`{"s":99999999999999999999}`),
		b64(`{"l":"messages (oldest first)","p":{"s":1e400}}`),
		b64(`{"l":"elements","p":{"i":"\ud800","t":0}}`),
		b64("{\"l\":\"threads\",\"p\":{\"i\":\"\xff\"}}"),
		b64(`{"l":"messages (oldest first)","p":{"s":1}}{"s":2}`),
		b64(`{"l":"nothing","p":{"s":1}} `),
		b64(` {"s":` + strings.Repeat("[", 10001) + `}`),
		"e30=",  // "{}" padded: RawURLEncoding wants no padding
		"e30",   // "{}"
		"e3\n0", // newlines are skipped by base64
		"e+0/",  // the standard alphabet, not the URL one
		"!!!",
		"\x00",
	} {
		f.Add(c, int64(0), int64(0), 0, false)
	}
	f.Add(agentmem.EncodeCursor(fuzzMessages, agentmem.SeqCursor{Seq: 5}), int64(2), int64(9), 10, false)
	f.Add(agentmem.EncodeCursor(fuzzDesc, agentmem.SeqCursor{Seq: 5}), int64(2), int64(9), 10, true)
	f.Add(agentmem.EncodeCursor(fuzzDesc, agentmem.SeqCursor{Seq: -5}), int64(0), int64(0), 1000, true)
	f.Add("", int64(-1), int64(0), 0, false)
	f.Add("", int64(0), int64(-1), 0, false)
	f.Add("", int64(math.MaxInt64), int64(1), 1001, false)
	f.Add("", int64(0), int64(0), -1, false)
	f.Add("", int64(0), int64(0), math.MinInt, true)

	f.Fuzz(func(t *testing.T, cursor string, after, before int64, limit int, desc bool) {
		checkCursor[agentmem.ThreadCursor](t, fuzzThreads, cursor)
		checkCursor[agentmem.SeqCursor](t, fuzzMessages, cursor)
		checkCursor[agentmem.TimeIDCursor](t, fuzzElements, cursor)

		filter := agentmem.MessageFilter{Cursor: cursor, AfterSeq: after, BeforeSeq: before, Limit: limit, Desc: desc}
		gotLimit, gotAfter, gotBefore, err := agentmem.MessageRange(agentmem.MessageList("u", "t", filter), filter)
		if err != nil {
			if code := agentmem.ErrorCode(err); code != agentmem.EINVALID {
				t.Fatalf("MessageRange(%+v): code %q, want %q (%v)", filter, code, agentmem.EINVALID, err)
			}
			return
		}
		if gotLimit < 1 || gotLimit > agentmem.MaxPageSize {
			t.Fatalf("MessageRange(%+v): limit %d, want 1 to %d", filter, gotLimit, agentmem.MaxPageSize)
		}
		// The cursor only narrows the range the filter asks for.
		wantBefore := before
		if wantBefore == 0 {
			wantBefore = math.MaxInt64
		}
		if gotAfter < after || gotBefore > wantBefore {
			t.Fatalf("MessageRange(%+v) = (after %d, before %d), wider than the filter's (%d, %d)", filter, gotAfter, gotBefore, after, wantBefore)
		}
	})
}

// checkCursor decodes cursor of list into a T and checks DecodeCursor's
// contract: a cursor it accepts is one of list, whose position re-encodes
// to a cursor that decodes to the same position, and that every other list
// refuses.
func checkCursor[T any](t *testing.T, list agentmem.CursorList, cursor string) {
	t.Helper()
	var v T
	if err := agentmem.DecodeCursor(cursor, list, &v); err != nil {
		if code := agentmem.ErrorCode(err); code != agentmem.EINVALID {
			t.Fatalf("DecodeCursor(%q, %T): code %q, want %q (%v)", cursor, v, code, agentmem.EINVALID, err)
		}
		return
	}
	for _, other := range []agentmem.CursorList{fuzzThreads, fuzzMessages, fuzzDesc, fuzzElements, agentmem.ListOf(list.Name, "other")} {
		if other.Name == list.Name && slices.Equal(other.Scope, list.Scope) {
			continue
		}
		var w T
		if err := agentmem.DecodeCursor(cursor, other, &w); err == nil {
			t.Fatalf("DecodeCursor(%q) accepted a cursor of %v for %v", cursor, list, other)
		}
	}
	again := agentmem.EncodeCursor(list, v)
	var w T
	if err := agentmem.DecodeCursor(again, list, &w); err != nil {
		t.Fatalf("DecodeCursor(%q) accepted %+v, but not its encoding %q: %v", cursor, v, again, err)
	}
	if diff := cmp.Diff(v, w); diff != "" {
		t.Fatalf("DecodeCursor(EncodeCursor(%+v)) mismatch (-want +got):\n%s", v, diff)
	}
}

// b64 is the cursor encoding of text, which EncodeCursor would compact or
// refuse.
func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

// FuzzPrepareImport prepares arbitrary JSON-decoded exports: no panic, a
// client error (never EINTERNAL) for what it refuses, and what it accepts
// is a live thread of the user whose messages are numbered 1..n, and can be
// encoded as JSON and rendered as Markdown, as an export must.
func FuzzPrepareImport(f *testing.F) {
	for _, s := range []string{
		`{"version":1,"thread":{"id":"t","title":"T","status":"ended","tags":["a"," a"],"metadata":{"k":1}},` +
			`"messages":[{"id":"m1","role":"user","content":"hi"},{"role":"assistant","tool_calls":[{"function":{"name":"f","arguments":"{}"}}]},` +
			`{"role":"tool","tool_call_id":"c","content":"ok"}],"elements":[{"message_id":"m1","name":"e"}]}`,
		`{"thread":{}}`,
		`{"thread":null}`,
		`{}`,
		`null`,
		`{"thread":{"user_id":"someone","deleted_at":"2020-01-01T00:00:00Z","status":"active","ended_at":"2020-01-01T00:00:00Z"}}`,
		`{"thread":{"created_at":"9999-12-31T23:59:59-01:00"}}`,
		`{"thread":{"updated_at":"0001-01-01T00:30:00+01:00"}}`,
		`{"thread":{"status":"ended","ended_at":"9999-12-31T23:00:00-02:00"}}`,
		`{"thread":{},"messages":[{"role":"user","created_at":"9999-12-31T23:59:59.9999999-00:01"}]}`,
		`{"thread":{},"elements":[{"created_at":"9999-12-31T23:59:59-01:00"}]}`,
		`{"thread":{},"messages":[null]}`,
		`{"thread":{},"elements":[null]}`,
		`{"thread":{},"messages":[{"role":""}]}`,
		`{"thread":{},"messages":[{"role":"user","seq":3},{"role":"user","seq":2}]}`,
		`{"thread":{},"messages":[{"role":"user","content":"a\u0000"}]}`,
		`{"thread":{"metadata":[]},"messages":[{"role":"user","metadata":"x"}]}`,
		`{"version":99,"thread":{}}`,
		`{"thread":{"id":"` + strings.Repeat("i", 201) + `"}}`,
	} {
		f.Add([]byte(s))
	}
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, data []byte) {
		var x *agentmem.ThreadExport
		if json.Unmarshal(data, &x) != nil {
			return
		}
		th, err := agentmem.PrepareImport("user", x, now, agentmem.EstimateTokens{})
		if err != nil {
			if code := agentmem.ErrorCode(err); code == agentmem.EINTERNAL {
				t.Fatalf("PrepareImport(%s): %v, want a client error", data, err)
			}
			return
		}
		if th.UserID != "user" || th.ID == "" || th.DeletedAt != nil || th.Status == "" {
			t.Fatalf("PrepareImport(%s) = thread %+v, want a live thread of user with an id and a status", data, th)
		}
		if th.MessageCount != int64(len(x.Messages)) || th.LastSeq != th.MessageCount {
			t.Fatalf("message_count %d, last_seq %d, want both %d", th.MessageCount, th.LastSeq, len(x.Messages))
		}
		for i, m := range x.Messages {
			if m.Seq != int64(i+1) || m.ThreadID != th.ID || m.ID == "" || m.CreatedAt.IsZero() {
				t.Fatalf("messages[%d] = %+v, want seq %d of thread %q with an id and a time", i, m, i+1, th.ID)
			}
		}
		for i, e := range x.Elements {
			if e.ThreadID != th.ID || e.ID == "" || e.CreatedAt.IsZero() {
				t.Fatalf("elements[%d] = %+v, want of thread %q with an id and a time", i, e, th.ID)
			}
		}
		if x.Thread != th {
			t.Fatalf("x.Thread is not the thread returned")
		}
		if _, err := json.Marshal(x); err != nil {
			t.Fatalf("the prepared export %s cannot be encoded: %v", data, err)
		}
		_ = x.Markdown()
	})
}
