package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/internal/apptest"
	"github.com/agentmem/agentmem/mcp"
	"github.com/agentmem/agentmem/tools"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// singleTypes walks a JSON schema (decoded into any) and reports, as
// "path: type", every "type" that is not one type name: a union such as
// ["null","array"], which MCP hosts refuse, or "null".
func singleTypes(path string, schema any) []string {
	s, ok := schema.(map[string]any)
	if !ok {
		return nil
	}
	var bad []string
	if typ, ok := s["type"]; ok {
		if name, ok := typ.(string); !ok || name == "null" {
			b, _ := json.Marshal(typ)
			bad = append(bad, path+": "+string(b))
		}
	}
	for _, key := range []string{"properties", "$defs", "definitions", "patternProperties"} {
		if m, ok := s[key].(map[string]any); ok {
			for name, sub := range m {
				bad = append(bad, singleTypes(path+"."+name, sub)...)
			}
		}
	}
	for _, key := range []string{"items", "additionalProperties", "not", "contains"} {
		bad = append(bad, singleTypes(path+"."+key, s[key])...)
	}
	for _, key := range []string{"anyOf", "oneOf", "allOf", "prefixItems"} {
		if list, ok := s[key].([]any); ok {
			for i, sub := range list {
				bad = append(bad, singleTypes(path+"."+key+"["+strconv.Itoa(i)+"]", sub)...)
			}
		}
	}
	return bad
}

// asJSON decodes v's JSON into any.
func asJSON(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestTools_SingleTypedSchemas: every tool's input (and output) schema,
// as MCP lists it and as GET /v1/tools gives it, has one type per value,
// required field or not: hosts refuse a tool whose schema has a type
// union. A null sent for a field left out is taken as left out.
func TestTools_SingleTypedSchemas(t *testing.T) {
	mem := apptest.Open(t)
	cs := connect(t, mem.Service, "alice")
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tools) == 0 {
		t.Fatal("no tools")
	}
	for _, tool := range res.Tools {
		for _, bad := range singleTypes(tool.Name+" input", asJSON(t, tool.InputSchema)) {
			t.Errorf("type union: %s", bad)
		}
		for _, bad := range singleTypes(tool.Name+" output", asJSON(t, tool.OutputSchema)) {
			t.Errorf("type union: %s", bad)
		}
	}
	for _, f := range tools.Functions() {
		for _, bad := range singleTypes(f.Function.Name+" function", asJSON(t, f.Function.Parameters)) {
			t.Errorf("type union: %s", bad)
		}
		// Even a tool without arguments has properties ({}): LangChain
		// reads a tool's arguments from them.
		if params, _ := asJSON(t, f.Function.Parameters).(map[string]any); params["properties"] == nil {
			t.Errorf("%s: parameters without properties", f.Function.Name)
		}
	}

	// What a schema lists as optional, a host may send as null.
	call(t, cs, "remember", map[string]any{"text": "User grows tomatoes.", "category": nil, "importance": nil}, nil)
	var found struct{ Results []struct{ Text string } }
	call(t, cs, "search_memory", map[string]any{"query": "tomatoes", "scopes": nil, "kinds": nil, "top_k": nil}, &found)
	if len(found.Results) == 0 || found.Results[0].Text != "User grows tomatoes." {
		t.Errorf("search with nulls: %+v", found)
	}
	call(t, cs, "manage_notes", map[string]any{"operation": "append", "content": "- likes gardening", "expected_version": nil}, nil)
	if _, err := tools.Call(ctx, tools.Env{Service: mem.Service}, "alice", "search_memory", json.RawMessage(`{"query":"tomatoes","scopes":null,"top_k":null}`)); err != nil {
		t.Errorf("Call with nulls: %v", err)
	}
	// A required field is required all the same.
	if msg := callErr(t, cs, "remember", map[string]any{"text": nil}, nil); msg == "" {
		t.Error("remember with a null text: no error")
	}
}

// TestTools_Annotations: every tool tells hosts the truth about what a
// call does. The table is the decision for each tool: a tool added
// without one fails here.
func TestTools_Annotations(t *testing.T) {
	type hints struct{ readOnly, destructive, idempotent bool }
	want := map[string]hints{
		"search_memory":       {readOnly: true, idempotent: true},
		"retrieve_user_facts": {readOnly: true, idempotent: true},
		"list_threads":        {readOnly: true, idempotent: true},
		"get_thread_history":  {readOnly: true, idempotent: true},
		"get_profile":         {readOnly: true, idempotent: true},
		"find_entities":       {readOnly: true, idempotent: true},
		"get_context":         {idempotent: true},  // opens the agent's session when there is none
		"remember":            {},                  // each call a new memory
		"append_messages":     {},                  // each call new messages
		"end_thread":          {idempotent: true},  // ending an ended thread changes nothing
		"manage_notes":        {destructive: true}, // overwrite, delete_section_by_header, delete_all_notes
		"forget":              {destructive: true, idempotent: true},
	}
	cs := connect(t, apptest.Open(t).Service, "alice")
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, tool := range res.Tools {
		listed = append(listed, tool.Name)
		w, ok := want[tool.Name]
		if !ok {
			t.Errorf("%s: no decision on its annotations in this test's table: is it read-only, destructive, idempotent?", tool.Name)
			continue
		}
		a := tool.Annotations
		if a == nil || a.DestructiveHint == nil || a.OpenWorldHint == nil {
			t.Errorf("%s: annotations %+v: every hint must be said (the defaults are destructive and open-world)", tool.Name, a)
			continue
		}
		got := hints{readOnly: a.ReadOnlyHint, destructive: *a.DestructiveHint, idempotent: a.IdempotentHint}
		if got != w || *a.OpenWorldHint {
			t.Errorf("%s: readOnly %v, destructive %v, idempotent %v, openWorld %v; want %+v and no open world",
				tool.Name, got.readOnly, got.destructive, got.idempotent, *a.OpenWorldHint, w)
		}
	}
	for name := range want {
		if !slices.Contains(listed, name) {
			t.Errorf("%s is in the table but not a tool", name)
		}
	}
}

// TestTools_TopKDefault: search_memory's schema says the default number
// of results the search gives, and its bound.
func TestTools_TopKDefault(t *testing.T) {
	for _, f := range tools.Functions() {
		if f.Function.Name != "search_memory" {
			continue
		}
		desc := f.Function.Parameters.Properties["top_k"].Description
		if !strings.Contains(desc, "(default "+strconv.Itoa(agentmem.DefaultTopK)+")") || !strings.Contains(desc, strconv.Itoa(agentmem.MaxTopK)) {
			t.Errorf("top_k says %q; the default is %d, the most %d", desc, agentmem.DefaultTopK, agentmem.MaxTopK)
		}
		return
	}
	t.Fatal("no search_memory")
}

// recordLog is a slog handler that keeps the records it is given.
type recordLog struct {
	level slog.Level
	mu    sync.Mutex
	recs  []slog.Record
}

func (h *recordLog) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level }
func (h *recordLog) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.recs = append(h.recs, r)
	return nil
}
func (h *recordLog) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *recordLog) WithGroup(string) slog.Handler      { return h }

// take returns the records kept so far, and forgets them.
func (h *recordLog) take() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, r := range h.recs {
		var b bytes.Buffer
		b.WriteString(r.Level.String() + " " + r.Message)
		r.Attrs(func(a slog.Attr) bool { b.WriteString(" " + a.String()); return true })
		out = append(out, b.String())
	}
	h.recs = nil
	return out
}

// TestNotes_NoInfoLog: editing the notes logs nothing at Info, with a
// subscriber to them or not (the SDK logs each update it sends at Info;
// that is mechanics, logged at Debug); a Debug log still has it.
func TestNotes_NoInfoLog(t *testing.T) {
	mem := apptest.Open(t)
	for _, level := range []slog.Level{slog.LevelInfo, slog.LevelDebug} {
		log := &recordLog{level: level}
		srv := mcp.NewServer(mem.Service, mcp.Options{User: "erin", Agent: "assistant", Log: slog.New(log)})
		ct, st := sdk.NewInMemoryTransports()
		if _, err := srv.Connect(ctx, st, nil); err != nil {
			t.Fatal(err)
		}
		updates := make(chan string, 4)
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "test-host", Version: "1"}, &sdk.ClientOptions{
			ResourceUpdatedHandler: func(_ context.Context, req *sdk.ResourceUpdatedNotificationRequest) { updates <- req.Params.URI },
		}).Connect(ctx, ct, nil)
		if err != nil {
			t.Fatal(err)
		}
		edit := func(content string) {
			t.Helper()
			call(t, cs, "manage_notes", map[string]any{"operation": "append", "content": content}, nil)
		}
		edit("- unsubscribed edit")
		if err := cs.Subscribe(ctx, &sdk.SubscribeParams{URI: "agentmem://notes"}); err != nil {
			t.Fatal(err)
		}
		// The subscription holds once an edit is told to it.
		deadline := time.Now().Add(5 * time.Second)
	wait:
		for i := 0; ; i++ {
			edit("- subscribed edit " + strconv.Itoa(i))
			select {
			case <-updates:
				break wait
			case <-time.After(50 * time.Millisecond):
				if time.Now().After(deadline) {
					t.Fatal("the subscriber was never told of an edit")
				}
			}
		}
		log.take()
		edit("- one more")
		<-updates
		cs.Close()
		got := log.take()
		switch level {
		case slog.LevelInfo:
			if len(got) > 0 {
				t.Errorf("a notes edit logged at Info:\n%s", strings.Join(got, "\n"))
			}
		case slog.LevelDebug:
			if !slices.ContainsFunc(got, func(s string) bool { return strings.HasPrefix(s, "DEBUG resource updated") }) {
				t.Errorf("at Debug, the update sent is not logged:\n%s", strings.Join(got, "\n"))
			}
		}
	}
}
