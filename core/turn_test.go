package core_test

import (
	"fmt"
	"testing"

	"github.com/agentmem/agentmem"
	"github.com/google/go-cmp/cmp"
)

func user(s string) *agentmem.Message { return &agentmem.Message{Role: agentmem.RoleUser, Content: s} }
func assistant(s string) *agentmem.Message {
	return &agentmem.Message{Role: agentmem.RoleAssistant, Content: s}
}

// stored returns the thread's messages as "role: content" lines.
func (f *fixture) stored(t *testing.T, userID, threadID string) []string {
	t.Helper()
	msgs, _, err := f.svc.FindMessages(ctx, userID, threadID, agentmem.MessageFilter{Limit: agentmem.MaxPageSize})
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, m := range msgs {
		lines = append(lines, m.Role+": "+m.Content)
	}
	return lines
}

// fresh copies msgs, as a client sends them anew with each request.
func fresh(msgs []*agentmem.Message) []*agentmem.Message {
	out := make([]*agentmem.Message, len(msgs))
	for i, m := range msgs {
		out[i] = &agentmem.Message{Role: m.Role, Content: m.Content, ToolCalls: m.ToolCalls, ToolCallID: m.ToolCallID}
	}
	return out
}

// TestBeginTurn_ResentHistory: a client that resends its whole history
// on every call (as most OpenAI apps do) has each message stored once;
// the first call, with only the new turn, is built in full, the others
// augmented. A retry, a request for another answer and an edited last
// turn store no duplicate either.
func TestBeginTurn_ResentHistory(t *testing.T) {
	backends(t, func(t *testing.T, f *fixture) {
		begin := func(msgs []*agentmem.Message) *agentmem.Turn {
			t.Helper()
			turn, err := f.svc.BeginTurn(ctx, "alice", agentmem.TurnRequest{ThreadID: "chat", Messages: fresh(msgs)})
			if err != nil {
				t.Fatal(err)
			}
			return turn
		}
		var history []*agentmem.Message
		var want []string
		for i := range 3 {
			q := fmt.Sprintf("question %d", i)
			history = append(history, user(q))
			turn := begin(history)
			wantMode := agentmem.MemoryAugment
			if i == 0 {
				wantMode = agentmem.MemoryFull
			}
			if turn.Mode != wantMode || turn.Held != 2*i || len(turn.Stored) != 1 {
				t.Fatalf("call %d: mode %s, held %d, stored %d; want %s, %d, 1", i, turn.Mode, turn.Held, len(turn.Stored), wantMode, 2*i)
			}
			a := fmt.Sprintf("answer %d", i)
			if _, err := f.svc.AppendMessages(ctx, "alice", "chat", []*agentmem.Message{assistant(a)}, ""); err != nil {
				t.Fatal(err)
			}
			history = append(history, assistant(a))
			want = append(want, "user: "+q, "assistant: "+a)
		}
		// Another answer to the last question: the history without the
		// answer given.
		if turn := begin(history[:len(history)-1]); len(turn.Stored) != 0 || turn.Held != len(history)-1 {
			t.Errorf("asking again stored %d, held %d", len(turn.Stored), turn.Held)
		}
		// The last question edited: only the edit is new.
		edited := append(fresh(history[:len(history)-2]), user("question 2, edited"))
		if turn := begin(edited); len(turn.Stored) != 1 || turn.Stored[0].Content != "question 2, edited" {
			t.Errorf("edit stored %d messages", len(turn.Stored))
		}
		want = append(want, "user: question 2, edited")
		// A retry of that (its answer lost) stores nothing.
		if turn := begin(edited); len(turn.Stored) != 0 {
			t.Errorf("retry stored %d messages", len(turn.Stored))
		}
		if diff := cmp.Diff(want, f.stored(t, "alice", "chat")); diff != "" {
			t.Errorf("thread (-want +got):\n%s", diff)
		}
	})
}

// TestBeginTurn_EditedAnswer: a client whose copy of an answer differs
// from the stored one (it edits answers, or re-renders them: markdown
// stripped, citations dropped) is matched to the thread by its user
// turns and tool calls: the edited answer and the turns before it are
// not stored again, the stored answer stays as the model gave it, and an
// augmented context carries the client's version. An answer whose tool
// calls differ is another turn.
func TestBeginTurn_EditedAnswer(t *testing.T) {
	backends(t, func(t *testing.T, f *fixture) {
		begin := func(msgs ...*agentmem.Message) *agentmem.Turn {
			t.Helper()
			turn, err := f.svc.BeginTurn(ctx, "erin", agentmem.TurnRequest{ThreadID: "edits", Messages: fresh(msgs)})
			if err != nil {
				t.Fatal(err)
			}
			return turn
		}
		answer := func(m *agentmem.Message) {
			t.Helper()
			if _, err := f.svc.AppendMessages(ctx, "erin", "edits", []*agentmem.Message{m}, ""); err != nil {
				t.Fatal(err)
			}
		}
		sent := func(turn *agentmem.Turn) []string {
			var lines []string
			for _, m := range turn.Context.Messages {
				if m.Role != agentmem.RoleSystem {
					lines = append(lines, m.Role+": "+m.Content)
				}
			}
			return lines
		}
		call := func(id string) *agentmem.Message {
			return &agentmem.Message{Role: agentmem.RoleAssistant, Content: "Let me look.",
				ToolCalls: []agentmem.ToolCall{{ID: id, Type: "function", Function: agentmem.FunctionCall{Name: "weather", Arguments: `{"city":"Oslo"}`}}}}
		}
		toolAnswer := &agentmem.Message{Role: agentmem.RoleTool, Content: "-3°C", ToolCallID: "c1"}

		begin(user("Plan a trip."))
		answer(assistant("**Day 1:** the fjords."))
		// Re-rendered without markdown.
		turn := begin(user("Plan a trip."), assistant("Day 1: the fjords."), user("And day 2?"))
		if turn.Held != 2 || len(turn.Stored) != 1 || turn.Stored[0].Content != "And day 2?" {
			t.Errorf("re-rendered answer: held %d, stored %d", turn.Held, len(turn.Stored))
		}
		if diff := cmp.Diff([]string{"user: Plan a trip.", "assistant: Day 1: the fjords.", "user: And day 2?"}, sent(turn)); diff != "" {
			t.Errorf("context (-want +got):\n%s", diff)
		}
		// Asked again with the same edit (its answer lost): nothing new.
		if turn := begin(user("Plan a trip."), assistant("Day 1: the fjords."), user("And day 2?")); len(turn.Stored) != 0 {
			t.Errorf("retry stored %d", len(turn.Stored))
		}
		answer(call("c1"))
		answer(toolAnswer)
		answer(assistant("It is -3°C: pack warm."))
		// Both answers edited, the tool call's text too; its call the same.
		edited := []*agentmem.Message{user("Plan a trip."), assistant("Day 1: fjords"), user("And day 2?"), call("c1"), toolAnswer,
			assistant("-3°C. Pack warm!"), user("Thanks.")}
		edited[3].Content = "Checking the weather…"
		if turn := begin(edited...); turn.Held != 6 || len(turn.Stored) != 1 {
			t.Errorf("edited answers: held %d, stored %d", turn.Held, len(turn.Stored))
		}
		want := []string{"user: Plan a trip.", "assistant: **Day 1:** the fjords.", "user: And day 2?", "assistant: Let me look.",
			"tool: -3°C", "assistant: It is -3°C: pack warm.", "user: Thanks."}
		if diff := cmp.Diff(want, f.stored(t, "erin", "edits")); diff != "" {
			t.Errorf("thread (-want +got):\n%s", diff)
		}
		// A call of another ID is not the stored one but a new answer: the
		// client went on from "And day 2?" another way (as when it asks
		// for another answer).
		other := append(fresh(edited[:3]), call("c9"))
		if turn := begin(other...); turn.Held != 3 || len(turn.Stored) != 1 || turn.Stored[0].ToolCalls[0].ID != "c9" {
			t.Errorf("another call: held %d, stored %d", turn.Held, len(turn.Stored))
		}
	})
}

// TestBeginTurn_AnotherAnswer: a client that asked for another answer
// and goes on from it stores only its new turn.
func TestBeginTurn_AnotherAnswer(t *testing.T) {
	backends(t, func(t *testing.T, f *fixture) {
		for _, msgs := range [][]*agentmem.Message{
			{user("Hi.")}, {assistant("Hello!")},
			{user("Hi."), assistant("Hello!"), user("Name a fruit.")}, {assistant("Apple.")},
			{user("Hi."), assistant("Hello!"), user("Name a fruit.")}, {assistant("Pear.")}, // asked again
			{user("Hi."), assistant("Hello!"), user("Name a fruit."), assistant("Pear."), user("Another?")},
		} {
			if msgs[0].Role == agentmem.RoleAssistant {
				if _, err := f.svc.AppendMessages(ctx, "finn", "t", msgs, ""); err != nil {
					t.Fatal(err)
				}
			} else if _, err := f.svc.BeginTurn(ctx, "finn", agentmem.TurnRequest{ThreadID: "t", Messages: fresh(msgs)}); err != nil {
				t.Fatal(err)
			}
		}
		want := []string{"user: Hi.", "assistant: Hello!", "user: Name a fruit.", "assistant: Apple.", "assistant: Pear.", "user: Another?"}
		if diff := cmp.Diff(want, f.stored(t, "finn", "t")); diff != "" {
			t.Errorf("thread (-want +got):\n%s", diff)
		}
	})
}

// TestBeginTurn_SameWordsTwice: a client that sends only its new turn
// may repeat what the user said a few turns ago; it is a new turn.
func TestBeginTurn_SameWordsTwice(t *testing.T) {
	backends(t, func(t *testing.T, f *fixture) {
		for _, m := range []*agentmem.Message{user("ok"), assistant("Shall I book it?"), user("ok")} {
			if m.Role == agentmem.RoleAssistant {
				if _, err := f.svc.AppendMessages(ctx, "dan", "t", []*agentmem.Message{m}, ""); err != nil {
					t.Fatal(err)
				}
				continue
			}
			if _, err := f.svc.BeginTurn(ctx, "dan", agentmem.TurnRequest{ThreadID: "t", Messages: []*agentmem.Message{m}}); err != nil {
				t.Fatal(err)
			}
		}
		if diff := cmp.Diff([]string{"user: ok", "assistant: Shall I book it?", "user: ok"}, f.stored(t, "dan", "t")); diff != "" {
			t.Errorf("thread (-want +got):\n%s", diff)
		}
	})
}

// TestBeginTurn_Full: with only the new turn, the context is the stored
// thread: the client's system prompt first, the history, the new turn
// last.
func TestBeginTurn_Full(t *testing.T) {
	backends(t, func(t *testing.T, f *fixture) {
		f.talk(t, "alice", "t1", "My dog is called Rex.")
		turn, err := f.svc.BeginTurn(ctx, "alice", agentmem.TurnRequest{
			ThreadID: "t1", Mode: agentmem.MemoryFull, Messages: []*agentmem.Message{user("What is my dog called?")},
			Context: agentmem.ContextRequest{System: "Be brief."},
		})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, m := range turn.Context.Messages {
			got = append(got, m.Role+": "+m.Content)
		}
		want := []string{"system: Be brief.", "user: My dog is called Rex.", "user: What is my dog called?"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("context (-want +got):\n%s", diff)
		}
		if turn.Thread.LastSeq != 2 || turn.Thread.UserID != "alice" {
			t.Errorf("thread: last seq %d, user %q", turn.Thread.LastSeq, turn.Thread.UserID)
		}
	})
}

// TestBeginTurn_Augment: the client's messages are kept, the oldest
// trimmed to the budget; the summary is not added while the client holds
// the thread's start.
func TestBeginTurn_Augment(t *testing.T) {
	backends(t, func(t *testing.T, f *fixture) {
		var msgs []*agentmem.Message
		for i := range 20 {
			msgs = append(msgs, user(fmt.Sprintf("question number %d about the weather in Lisbon", i)),
				assistant(fmt.Sprintf("answer number %d: it is sunny in Lisbon today", i)))
		}
		msgs = append(msgs, user("and tomorrow?"))
		turn, err := f.svc.BeginTurn(ctx, "bob", agentmem.TurnRequest{
			ThreadID: "t", Messages: msgs, Context: agentmem.ContextRequest{BudgetTokens: 200, Strategy: agentmem.StrategyTrim},
		})
		if err != nil {
			t.Fatal(err)
		}
		c := turn.Context
		if turn.Mode != agentmem.MemoryAugment || len(turn.Stored) != len(msgs) {
			t.Fatalf("mode %s, stored %d", turn.Mode, len(turn.Stored))
		}
		kept := c.Telemetry.IncludedMessages
		if kept == 0 || kept >= len(msgs) || c.Telemetry.UsedTokens > 200 {
			t.Fatalf("kept %d of %d messages in %d tokens", kept, len(msgs), c.Telemetry.UsedTokens)
		}
		// The kept messages are the client's newest, in order.
		tail := c.Messages[len(c.Messages)-kept:]
		for i, m := range tail {
			want := msgs[len(msgs)-kept+i]
			if m.Role != want.Role || m.Content != want.Content {
				t.Errorf("kept[%d] = %s %q, want %s %q", i, m.Role, m.Content, want.Role, want.Content)
			}
		}
		if tail[0].Role != agentmem.RoleUser && tail[0].Role != agentmem.RoleAssistant {
			t.Errorf("kept history begins with a %s message", tail[0].Role)
		}
		if _, ok := c.Telemetry.Sections["summary"]; ok {
			t.Error("a summary was added although the client holds the thread's start")
		}
	})
}

// TestBeginTurn_Session: without a thread, the active session of the
// user and agent is used, opened on the first call; another agent has
// another thread; off stores and builds nothing.
func TestBeginTurn_Session(t *testing.T) {
	backends(t, func(t *testing.T, f *fixture) {
		first, err := f.svc.BeginTurn(ctx, "carol", agentmem.TurnRequest{Messages: []*agentmem.Message{user("hi")}})
		if err != nil {
			t.Fatal(err)
		}
		again, err := f.svc.BeginTurn(ctx, "carol", agentmem.TurnRequest{Mode: agentmem.MemoryOff, Messages: []*agentmem.Message{user("hello again")}})
		if err != nil {
			t.Fatal(err)
		}
		other, err := f.svc.BeginTurn(ctx, "carol", agentmem.TurnRequest{AgentID: "coach", Messages: []*agentmem.Message{user("hi coach")}})
		if err != nil {
			t.Fatal(err)
		}
		if first.Thread.ID != again.Thread.ID || other.Thread.ID == first.Thread.ID {
			t.Errorf("threads: %s, %s, %s", first.Thread.ID, again.Thread.ID, other.Thread.ID)
		}
		if again.Context != nil || again.Thread.LastSeq != 2 {
			t.Errorf("off: context %v, last seq %d", again.Context, again.Thread.LastSeq)
		}
		if other.Thread.AgentID != "coach" {
			t.Errorf("agent %q", other.Thread.AgentID)
		}
	})
}

// TestBeginTurn_Errors: a bad mode, a bad thread ID, another user's
// thread and a bad message are refused, and nothing is stored.
func TestBeginTurn_Errors(t *testing.T) {
	backends(t, func(t *testing.T, f *fixture) {
		f.talk(t, "alice", "private", "my secret")
		aliceKey := agentmem.NewContextWithIdentity(ctx, &agentmem.Identity{Scope: agentmem.Scope{Kind: agentmem.ScopeUser, UserID: "alice"}})
		for name, c := range map[string]struct {
			ctx  func() agentmem.TurnRequest
			user string
			code string
		}{
			"mode":      {func() agentmem.TurnRequest { return agentmem.TurnRequest{Mode: "most"} }, "alice", agentmem.EINVALID},
			"thread ID": {func() agentmem.TurnRequest { return agentmem.TurnRequest{ThreadID: "a b"} }, "alice", agentmem.EINVALID},
			"role": {func() agentmem.TurnRequest {
				return agentmem.TurnRequest{ThreadID: "private", Messages: []*agentmem.Message{{Role: "robot"}}}
			}, "alice", agentmem.EINVALID},
			"null":  {func() agentmem.TurnRequest { return agentmem.TurnRequest{Messages: []*agentmem.Message{nil}} }, "alice", agentmem.EINVALID},
			"agent": {func() agentmem.TurnRequest { return agentmem.TurnRequest{AgentID: "a/b"} }, "alice", agentmem.EINVALID},
			"tool answer": {func() agentmem.TurnRequest {
				return agentmem.TurnRequest{ThreadID: "private", Messages: []*agentmem.Message{{Role: "tool"}}}
			}, "alice", agentmem.EINVALID},
		} {
			req := c.ctx()
			req.Messages = append(req.Messages, user("x"))
			callCtx := ctx
			if c.user == "mallory" {
				callCtx = agentmem.NewContextWithIdentity(ctx, &agentmem.Identity{Scope: agentmem.Scope{Kind: agentmem.ScopeUser, UserID: "mallory"}})
			}
			_, err := f.svc.BeginTurn(callCtx, c.user, req)
			if got := agentmem.ErrorCode(err); got != c.code {
				t.Errorf("%s: %v (%s), want %s", name, err, got, c.code)
			}
		}
		// A user's key cannot reach another user's thread by naming it.
		if _, err := f.svc.BeginTurn(aliceKey, "mallory", agentmem.TurnRequest{Messages: []*agentmem.Message{user("x")}}); agentmem.ErrorCode(err) != agentmem.ENOTFOUND {
			t.Errorf("alice's key as mallory: %v", err)
		}
		if diff := cmp.Diff([]string{"user: my secret"}, f.stored(t, "alice", "private")); diff != "" {
			t.Errorf("private thread changed (-want +got):\n%s", diff)
		}
	})
}
