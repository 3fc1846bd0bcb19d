package mcp_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/internal/apptest"
	"github.com/agentmem/agentmem/mcp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

var ctx = context.Background()

// connect returns an MCP client session, through the SDK's own client over
// its in-memory transport, to a server acting for user.
func connect(t *testing.T, svc agentmem.Service, user string) *sdk.ClientSession {
	t.Helper()
	srv := mcp.NewServer(svc, mcp.Options{User: user, Agent: "assistant"})
	ct, st := sdk.NewInMemoryTransports()
	if _, err := srv.Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test-host", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// call calls a tool and decodes its structured result into out (nil:
// ignored); it fails the test on a tool error.
func call(t *testing.T, cs *sdk.ClientSession, name string, args any, out any) {
	t.Helper()
	if msg := callErr(t, cs, name, args, out); msg != "" {
		t.Fatalf("%s: tool error %q", name, msg)
	}
}

// callErr calls a tool and returns its error message ("" when it did not
// fail), decoding a result into out.
func callErr(t *testing.T, cs *sdk.ClientSession, name string, args any, out any) string {
	t.Helper()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error %v", name, err)
	}
	if res.IsError {
		var texts []string
		for _, c := range res.Content {
			if tc, ok := c.(*sdk.TextContent); ok {
				texts = append(texts, tc.Text)
			}
		}
		return strings.Join(texts, " ")
	}
	if out != nil {
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s: result %s: %v", name, b, err)
		}
	}
	return ""
}

// TestTools_Listed: every tool is listed with a description and an object
// input schema an LLM can act on.
func TestTools_Listed(t *testing.T) {
	cs := connect(t, apptest.Open(t).Service, "alice")
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		schema, _ := json.Marshal(tool.InputSchema)
		if len(tool.Description) < 20 || !strings.Contains(string(schema), `"type":"object"`) || tool.OutputSchema == nil {
			t.Errorf("%s: description %q, input schema %s", tool.Name, tool.Description, schema)
		}
	}
	want := []string{"append_messages", "end_thread", "find_entities", "forget", "get_context", "get_profile", "get_thread_history",
		"list_threads", "manage_notes", "remember", "retrieve_user_facts", "search_memory"}
	slices.Sort(names)
	if !slices.Equal(names, want) {
		t.Errorf("tools %v, want %v", names, want)
	}
}

// TestTools_RememberRecallForget: a fact remembered is recalled by a
// question and by search, and forgotten by its id.
func TestTools_RememberRecallForget(t *testing.T) {
	cs := connect(t, apptest.Open(t).Service, "alice")
	var m struct{ ID, Text string }
	call(t, cs, "remember", map[string]any{"text": "User is vegetarian.", "category": "preference"}, &m)
	if m.ID == "" || m.Text != "User is vegetarian." {
		t.Fatalf("remember: %+v", m)
	}
	var facts struct {
		Answer string
		Facts  []struct{ ID, Text string }
	}
	call(t, cs, "retrieve_user_facts", map[string]any{"query": "Is the user vegetarian?"}, &facts)
	if !strings.Contains(facts.Answer, "vegetarian") || len(facts.Facts) == 0 || facts.Facts[0].ID != m.ID {
		t.Errorf("facts: %+v", facts)
	}
	var found struct{ Results []struct{ Kind, ID string } }
	call(t, cs, "search_memory", map[string]any{"query": "vegetarian"}, &found)
	if len(found.Results) == 0 || found.Results[0].ID != m.ID {
		t.Errorf("search: %+v", found)
	}
	var gone struct{ MemoryID, Text string }
	call(t, cs, "forget", map[string]any{"memory_id": m.ID}, &gone)
	if gone.Text != "User is vegetarian." {
		t.Errorf("forget: %+v", gone)
	}
	call(t, cs, "search_memory", map[string]any{"query": "vegetarian", "scopes": []string{"memories"}}, &found)
	if len(found.Results) != 0 {
		t.Errorf("a forgotten memory is found: %+v", found)
	}
	if msg := callErr(t, cs, "forget", map[string]any{"memory_id": m.ID}, nil); !strings.Contains(msg, "not found") {
		t.Errorf("forgetting twice: %q", msg)
	}
}

// TestTools_FactsKinds: retrieve_user_facts and search_memory look where
// kinds say: insights alone, facts alone.
func TestTools_FactsKinds(t *testing.T) {
	mem := apptest.Open(t)
	cs := connect(t, mem.Service, "alice")
	var fact struct{ ID string }
	call(t, cs, "remember", map[string]any{"text": "User saves for retirement in a pension fund."}, &fact)
	insight, err := mem.CreateMemory(ctx, "alice", agentmem.MemoryInput{Kind: agentmem.MemoryInsight, Text: "User worries about retirement savings."})
	if err != nil {
		t.Fatal(err)
	}
	var facts struct{ Facts []struct{ ID string } }
	for _, tt := range []struct {
		kind, want string
	}{{"insights", insight.ID}, {"memories", fact.ID}} {
		call(t, cs, "retrieve_user_facts", map[string]any{"query": "retirement savings", "kinds": []string{tt.kind}}, &facts)
		if len(facts.Facts) != 1 || facts.Facts[0].ID != tt.want {
			t.Errorf("facts of kind %s: %+v, want %s alone", tt.kind, facts, tt.want)
		}
		var found struct{ Results []struct{ ID string } }
		call(t, cs, "search_memory", map[string]any{"query": "retirement savings", "kinds": []string{tt.kind}}, &found)
		if len(found.Results) != 1 || found.Results[0].ID != tt.want {
			t.Errorf("search of kind %s: %+v, want %s alone", tt.kind, found, tt.want)
		}
	}
}

// TestTools_Conversation: messages appended without a thread go to the
// session's; the history, the context and the thread list show them; the
// thread ends.
func TestTools_Conversation(t *testing.T) {
	cs := connect(t, apptest.Open(t).Service, "bob")
	var app struct {
		ThreadID          string `json:"thread_id"`
		FirstSeq, LastSeq int64
	}
	call(t, cs, "append_messages", map[string]any{"messages": []map[string]string{
		{"role": "user", "content": "I am training for the Berlin marathon."}, {"role": "assistant", "content": "Great goal!"},
	}}, &app)
	if app.ThreadID == "" {
		t.Fatalf("append: %+v", app)
	}
	var again struct {
		ThreadID string `json:"thread_id"`
	}
	call(t, cs, "append_messages", map[string]any{"messages": []map[string]string{{"role": "user", "content": "What should I eat before it?"}}}, &again)
	if again.ThreadID != app.ThreadID {
		t.Errorf("second append went to %q, not the session's %q", again.ThreadID, app.ThreadID)
	}
	var hist struct {
		Messages []struct {
			Seq           int64
			Role, Content string
		}
	}
	call(t, cs, "get_thread_history", map[string]any{"thread_id": app.ThreadID, "limit": 2}, &hist)
	if len(hist.Messages) != 2 || hist.Messages[0].Seq != 2 || hist.Messages[1].Content != "What should I eat before it?" {
		t.Errorf("history: %+v", hist)
	}
	var c struct {
		Text       string
		UsedTokens int `json:"used_tokens"`
	}
	call(t, cs, "get_context", map[string]any{"input": "And after it?", "budget_tokens": 2000}, &c)
	if !strings.Contains(c.Text, "Berlin marathon") || !strings.Contains(c.Text, "And after it?") || c.UsedTokens == 0 || c.UsedTokens > 2000 {
		t.Errorf("context: %+v", c)
	}
	var list struct {
		Threads []struct{ ID, Title string }
	}
	call(t, cs, "list_threads", map[string]any{}, &list)
	if len(list.Threads) != 1 || list.Threads[0].ID != app.ThreadID {
		t.Errorf("threads: %+v", list)
	}
	var ended struct{ Status string }
	call(t, cs, "end_thread", map[string]any{"thread_id": app.ThreadID}, &ended)
	if ended.Status != agentmem.ThreadEnded {
		t.Errorf("end: %+v", ended)
	}
}

// TestTools_NotesProfileEntities: the agent's notes through seed 003's
// operations; the profile before there is one; entities by name.
func TestTools_NotesProfileEntities(t *testing.T) {
	mem := apptest.Open(t)
	cs := connect(t, mem.Service, "carol")
	var n struct {
		Content string
		Version int64
	}
	call(t, cs, "manage_notes", map[string]any{"operation": "overwrite", "content": "# Carol\n\n## Goals\n- Learn Go"}, &n)
	call(t, cs, "manage_notes", map[string]any{"operation": "replace_section_by_header", "section_header": "## Goals", "content": "## Goals\n- Learn Go\n- Run 10K"}, &n)
	call(t, cs, "manage_notes", map[string]any{"operation": "read"}, &n)
	if n.Version != 2 || !strings.Contains(n.Content, "- Learn Go") || !strings.Contains(n.Content, "- Run 10K") {
		t.Errorf("notes: %+v", n)
	}
	if notes, err := mem.FindNotes(ctx, "carol", "assistant"); err != nil || notes.Version != 2 {
		t.Errorf("the notes are not the agent's: %+v, %v", notes, err)
	}
	var p struct {
		Found bool
		Text  string
	}
	call(t, cs, "get_profile", map[string]any{}, &p)
	if p.Found || p.Text == "" {
		t.Errorf("profile: %+v", p)
	}
	if _, err := mem.PutEntity(ctx, "carol", agentmem.EntityInput{Name: "Task Management", Type: "workflow"}); err != nil {
		t.Fatal(err)
	}
	var ents struct{ Entities []struct{ Name, Type string } }
	call(t, cs, "find_entities", map[string]any{"query": "my task management"}, &ents)
	if len(ents.Entities) != 1 || ents.Entities[0].Name != "Task Management" {
		t.Errorf("entities: %+v", ents)
	}
}

// TestTools_Errors: bad arguments are tool errors with a message naming
// what is wrong, never a crash or a protocol error; nothing is stored.
func TestTools_Errors(t *testing.T) {
	mem := apptest.Open(t)
	cs := connect(t, mem.Service, "dave")
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"remember", map[string]any{"text": ""}, "text"},
		{"remember", map[string]any{"text": "x", "importance": 7}, "importance"},
		{"search_memory", map[string]any{"query": "x", "scopes": []string{"everything"}}, "scope"},
		{"get_thread_history", map[string]any{"thread_id": "nope"}, "not found"},
		{"get_thread_history", map[string]any{}, "thread_id"},
		{"append_messages", map[string]any{"messages": []map[string]string{{"role": "robot", "content": "x"}}}, "role"},
		{"append_messages", map[string]any{"messages": []map[string]string{}}, "messages"},
		{"end_thread", map[string]any{"thread_id": "nope"}, "not found"},
		{"manage_notes", map[string]any{"operation": "shred"}, "operation"},
		{"manage_notes", map[string]any{"operation": "append"}, "content"},
		{"get_context", map[string]any{"thread_id": "nope"}, "not found"},
		{"get_context", map[string]any{"budget_tokens": 3}, "budget"},
		{"find_entities", map[string]any{"query": "!!"}, "query"},
		{"forget", map[string]any{"memory_id": "nope"}, "not found"},
		{"forget", map[string]any{}, "memory_id"},
		{"retrieve_user_facts", map[string]any{"query": 42}, "query"},
		{"retrieve_user_facts", map[string]any{"query": "x", "kinds": []string{"facts"}}, "kinds must be among memories, insights"},
		{"search_memory", map[string]any{"query": "x", "kinds": []string{"insights"}, "scopes": []string{"memories"}}, "scopes or kinds"},
	} {
		msg := callErr(t, cs, tc.tool, tc.args, nil)
		if !strings.Contains(strings.ToLower(msg), tc.want) {
			t.Errorf("%s %v: %q, want a message about %s", tc.tool, tc.args, msg, tc.want)
		}
	}
	if ms, _, err := mem.FindMemories(ctx, "dave", agentmem.MemoryFilter{}); err != nil || len(ms) != 0 {
		t.Errorf("memories after refused calls: %v, %v", ms, err)
	}
}

// TestTools_Isolation: a server acting for one user never reaches
// another's memory, by search or by id.
func TestTools_Isolation(t *testing.T) {
	mem := apptest.Open(t)
	alice, mallory := connect(t, mem.Service, "alice"), connect(t, mem.Service, "mallory")
	var m struct{ ID string }
	call(t, alice, "remember", map[string]any{"text": "User's bank PIN hint is the cat's birthday."}, &m)
	var found struct{ Results []struct{ ID, Text string } }
	call(t, mallory, "search_memory", map[string]any{"query": "bank PIN hint cat birthday"}, &found)
	for _, r := range found.Results {
		if r.ID == m.ID || strings.Contains(r.Text, "PIN") {
			t.Errorf("mallory found %+v", found)
		}
	}
	if msg := callErr(t, mallory, "forget", map[string]any{"memory_id": m.ID}, nil); !strings.Contains(msg, "not found") {
		t.Errorf("mallory forgetting alice's memory: %q", msg)
	}
	// Alice's thread, named by mallory, is not found, or is mallory's own.
	var app struct {
		ThreadID string `json:"thread_id"`
	}
	call(t, alice, "append_messages", map[string]any{"thread_id": "diary", "messages": []map[string]string{{"role": "user", "content": "Dear diary, SECRET."}}}, &app)
	for _, tool := range []string{"get_thread_history", "get_context", "end_thread"} {
		if msg := callErr(t, mallory, tool, map[string]any{"thread_id": "diary"}, nil); !strings.Contains(msg, "not found") {
			t.Errorf("mallory's %s on alice's thread: %q", tool, msg)
		}
	}
	call(t, mallory, "append_messages", map[string]any{"thread_id": "diary", "messages": []map[string]string{{"role": "user", "content": "mine"}}}, nil)
	var hist struct{ Messages []struct{ Content string } }
	call(t, alice, "get_thread_history", map[string]any{"thread_id": "diary"}, &hist)
	if len(hist.Messages) != 1 || hist.Messages[0].Content != "Dear diary, SECRET." {
		t.Errorf("alice's diary: %+v", hist)
	}
	var list struct{ Threads []struct{ ID string } }
	call(t, mallory, "list_threads", map[string]any{}, &list)
	call(t, mallory, "get_thread_history", map[string]any{"thread_id": "diary"}, &hist)
	if len(list.Threads) != 1 || len(hist.Messages) != 1 || hist.Messages[0].Content != "mine" {
		t.Errorf("mallory's threads %+v, diary %+v", list, hist)
	}
	var facts struct{ Facts []struct{ ID string } }
	call(t, alice, "retrieve_user_facts", map[string]any{"query": "bank PIN hint"}, &facts)
	if len(facts.Facts) == 0 || facts.Facts[0].ID != m.ID {
		t.Errorf("alice's memory is gone: %+v", facts)
	}
}
