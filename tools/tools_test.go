package tools_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/tools"
)

// TestCall_Refused: a call that cannot run is refused with the code that
// says why, before the service is reached (it is nil here).
func TestCall_Refused(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name, args, code string
	}{
		{"no_such_tool", `{}`, agentmem.ENOTFOUND},
		{"remember", `not json`, agentmem.EINVALID},
		{"remember", `[1]`, agentmem.EINVALID},
		{"remember", `{}`, agentmem.EINVALID},                // text is required
		{"remember", `{"text": null}`, agentmem.EINVALID},    // a null is left out, and text is required
		{"search_memory", `{"query": 3}`, agentmem.EINVALID}, // not a string
	} {
		_, err := tools.Call(ctx, tools.Env{}, "alice", tc.name, json.RawMessage(tc.args))
		if got := agentmem.ErrorCode(err); got != tc.code {
			t.Errorf("%s(%s): %v (%s), want %s", tc.name, tc.args, err, got, tc.code)
		}
	}
}

// TestDropNulls: a null field is a field left out; anything else is
// kept as it is.
func TestDropNulls(t *testing.T) {
	for in, want := range map[string]string{
		`{"a":null,"b":1}`: `{"b":1}`,
		`{"a":"null"}`:     `{"a":"null"}`,
		`[null]`:           `[null]`,
		`{"a":1}`:          `{"a":1}`,
	} {
		if got := string(tools.DropNulls(json.RawMessage(in))); got != want {
			t.Errorf("DropNulls(%s) = %s, want %s", in, got, want)
		}
	}
}

// TestAll_Defined: every tool has a name, a description and schemas
// whose arguments are an object with properties (LangChain reads them),
// and the names are unique.
func TestAll_Defined(t *testing.T) {
	seen := map[string]bool{}
	for _, tool := range tools.All() {
		if tool.Name == "" || tool.Description == "" || tool.Input == nil || tool.Output == nil {
			t.Errorf("%+v: incomplete", tool)
			continue
		}
		if seen[tool.Name] {
			t.Errorf("%s: defined twice", tool.Name)
		}
		seen[tool.Name] = true
		if tool.Input.Type != "object" || tool.Input.Properties == nil {
			t.Errorf("%s: arguments %s with properties %v, want an object with properties", tool.Name, tool.Input.Type, tool.Input.Properties)
		}
	}
	if len(seen) != len(tools.Functions()) {
		t.Errorf("%d tools, %d functions", len(seen), len(tools.Functions()))
	}
}
