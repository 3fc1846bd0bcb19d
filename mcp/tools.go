package mcp

import (
	"context"
	"encoding/json"

	"github.com/agentmem/agentmem/tools"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// addTools registers the tools (package tools) with s: each checked
// against its input schema by the SDK, run for the server's user, and
// answered with its result as structured content.
func (t *handlers) addTools(s *sdk.Server) {
	for _, tool := range tools.All() {
		a := tool.Annotations
		// The schemas are given, not left to the SDK, which would derive
		// them with type unions (see package tools). They are the same
		// pointers for every server, so the SDK's cache resolves each
		// once.
		sdk.AddTool(s, &sdk.Tool{
			Name: tool.Name, Description: tool.Description, InputSchema: tool.Input, OutputSchema: tool.Output,
			// Each says all four hints, as the defaults assume the
			// worst (destructive, open world).
			Annotations: &sdk.ToolAnnotations{ReadOnlyHint: a.ReadOnly, DestructiveHint: ptr(a.Destructive), IdempotentHint: a.Idempotent, OpenWorldHint: ptr(false)},
		}, func(ctx context.Context, req *sdk.CallToolRequest, args json.RawMessage) (*sdk.CallToolResult, any, error) {
			user, err := t.user()
			if err != nil {
				return nil, nil, toolError(err)
			}
			out, err := tool.Call(ctx, t.env(), user, args)
			t.changes(ctx, user)
			return nil, out, toolError(err)
		})
	}
}

// env is what the tools run with: the service, the server's agent, and
// the notes' subscribers told of manage_notes's writes.
func (t *handlers) env() tools.Env {
	return tools.Env{Service: t.svc, Agent: t.opt.Agent, NotesWritten: func(ctx context.Context, version int64) {
		t.wrote(ctx, notesURI, version)
	}}
}

func ptr[T any](v T) *T { return &v }

// nullsDropped is the servers' middleware that drops the null fields of
// a tool call's arguments (tools.DropNulls) before the SDK checks them.
func nullsDropped(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if p, ok := req.GetParams().(*sdk.CallToolParamsRaw); ok && method == "tools/call" && p != nil {
			p.Arguments = tools.DropNulls(p.Arguments)
		}
		return next(ctx, method, req)
	}
}
