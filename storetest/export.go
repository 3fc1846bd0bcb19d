package storetest

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func testImportExport(t *testing.T, s agentmem.Store) {
	th := MustCreateThread(t, s, &agentmem.Thread{UserID: "alice", AgentID: "helper", Title: "Trip", Metadata: json.RawMessage(`{"n":12345678901234567890}`), Tags: []string{"travel"}})
	in := []*agentmem.Message{
		{ID: "m-1", Role: "system", Content: "Be brief."},
		{Role: "user", Content: "Plan a trip ✈️", Name: "alice", Metadata: json.RawMessage(`{"lang":"en"}`)},
		{Role: "assistant", ToolCalls: []agentmem.ToolCall{{ID: "c1", Type: "function", Function: agentmem.FunctionCall{Name: "search", Arguments: `{"q":"Lisbon"}`}}}},
		{Role: "tool", Content: "sunny", ToolCallID: "c1"},
		{Role: "assistant", Content: "Go to Lisbon."},
	}
	if _, err := s.AppendMessages(ctx, "alice", th.ID, in, agentmem.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateElement(ctx, "alice", th.ID, &agentmem.Element{Name: "Ref", Content: "guide", MessageID: in[4].ID}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.EndThread(ctx, "alice", th.ID); err != nil {
		t.Fatal(err)
	}
	x, err := agentmem.ExportThread(ctx, s, "alice", th.ID)
	if err != nil {
		t.Fatal(err)
	}
	b := mustMarshal(t, x)
	var copyX agentmem.ThreadExport
	if err := json.Unmarshal(b, &copyX); err != nil {
		t.Fatal(err)
	}
	imported, err := s.ImportThread(ctx, "bob", &copyX)
	if err != nil {
		t.Fatal(err)
	}
	y, err := agentmem.ExportThread(ctx, s, "bob", imported.ID)
	if err != nil {
		t.Fatal(err)
	}
	ignoreUser := cmpopts.IgnoreFields(agentmem.Thread{}, "UserID")
	if diff := cmp.Diff(x, y, jsonEqual(), ignoreUser); diff != "" {
		t.Fatalf("import of export mismatch (-exported +reimported):\n%s", diff)
	}
	if y.Thread.UserID != "bob" {
		t.Fatalf("imported thread belongs to %q", y.Thread.UserID)
	}
	// The same export again conflicts on the thread id, and writes nothing.
	_, err = s.ImportThread(ctx, "bob", &copyX)
	wantCode(t, err, agentmem.ECONFLICT)
	copyX.Thread.ID = "other"
	_, err = s.ImportThread(ctx, "bob", &copyX) // message ids are taken in bob's store
	wantCode(t, err, agentmem.ECONFLICT)
	_, err = s.FindThreadByID(ctx, "bob", "other")
	wantCode(t, err, agentmem.ENOTFOUND)

	bad := &agentmem.ThreadExport{Version: 99, Thread: &agentmem.Thread{}}
	_, err = s.ImportThread(ctx, "bob", bad)
	wantCode(t, err, agentmem.EINVALID)
	_, err = s.ImportThread(ctx, "bob", &agentmem.ThreadExport{Version: 1, Thread: &agentmem.Thread{}, Messages: []*agentmem.Message{{Role: "wizard"}}})
	wantCode(t, err, agentmem.EINVALID)
	future := &agentmem.ThreadExport{Version: 1, Thread: &agentmem.Thread{}, Messages: []*agentmem.Message{{Role: "user", CreatedAt: time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)}}}
	_, err = s.ImportThread(ctx, "bob", future)
	wantCode(t, err, agentmem.EINVALID)
	if msg := agentmem.ErrorMessage(err); !strings.Contains(msg, "messages[0].created_at 9999-01-01T00:00:00Z is in the future") {
		t.Fatalf("import of a message from year 9999: %q", msg)
	}

	md := x.Markdown()
	for _, want := range []string{"# Trip\n", "**Thread ID**: " + th.ID, "## 👤 User (alice)\n\nPlan a trip ✈️\n\n---", "## 🤖 Assistant", "Tool call `search`"} {
		if !strings.Contains(md, want) {
			t.Fatalf("markdown lacks %q:\n%s", want, md)
		}
	}
}
