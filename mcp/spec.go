package mcp

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"

	"github.com/agentmem/agentmem"
	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// A spec is one tool, defined once for every face: the MCP server
// registers it (add), and agents that are not on MCP list it as a
// function and run it with a model's JSON arguments (Functions, Call).
type spec struct {
	name, description string
	annotations       *sdk.ToolAnnotations
	input             *jsonschema.Resolved // the arguments' schema
	add               func(s *sdk.Server, t *tools)
	run               func(ctx context.Context, t *tools, user string, args json.RawMessage) (any, error)
}

// def defines a tool whose arguments are In and whose result is Out; their
// JSON schemas come from their json and jsonschema tags.
func def[In, Out any](name, description string, annotations *sdk.ToolAnnotations, fn func(t *tools, ctx context.Context, user string, in In) (Out, error)) spec {
	schema, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("tool %s: %v", name, err))
	}
	input, err := schema.Resolve(nil)
	if err != nil {
		panic(fmt.Sprintf("tool %s: %v", name, err))
	}
	return spec{
		name: name, description: description, annotations: annotations, input: input,
		add: func(s *sdk.Server, t *tools) {
			sdk.AddTool(s, &sdk.Tool{Name: name, Description: description, Annotations: annotations},
				func(ctx context.Context, req *sdk.CallToolRequest, in In) (*sdk.CallToolResult, Out, error) {
					user, err := t.user()
					if err != nil {
						var zero Out
						return nil, zero, toolError(err)
					}
					out, err := fn(t, ctx, user, in)
					t.changes(ctx, user)
					return nil, out, toolError(err)
				})
		},
		run: func(ctx context.Context, t *tools, user string, args json.RawMessage) (any, error) {
			in, err := decodeArgs[In](input, args)
			if err != nil {
				return nil, err
			}
			return fn(t, ctx, user, in)
		},
	}
}

// decodeArgs checks a model's JSON arguments against the tool's schema
// and decodes them: EINVALID naming what is wrong.
func decodeArgs[In any](schema *jsonschema.Resolved, args json.RawMessage) (In, error) {
	var in In
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	var instance any
	if err := json.Unmarshal(args, &instance); err != nil {
		return in, agentmem.Errorf(agentmem.EINVALID, "The arguments are not JSON: %v.", err)
	}
	if _, ok := instance.(map[string]any); !ok {
		return in, agentmem.Errorf(agentmem.EINVALID, "The arguments must be a JSON object.")
	}
	if err := schema.Validate(instance); err != nil {
		return in, agentmem.Errorf(agentmem.EINVALID, "The arguments do not fit the tool's schema: %v.", err)
	}
	if err := json.Unmarshal(args, &in); err != nil {
		return in, agentmem.Errorf(agentmem.EINVALID, "The arguments do not fit the tool's schema: %v.", err)
	}
	return in, nil
}

// Function is a tool as OpenAI's function calling declares it.
type Function struct {
	Type     string `json:"type"` // function
	Function struct {
		Name        string             `json:"name"`
		Description string             `json:"description"`
		Parameters  *jsonschema.Schema `json:"parameters"`
	} `json:"function"`
}

// Functions returns the tools as function-calling declarations, for an
// agent loop that hands them to its model.
func Functions() []Function {
	out := make([]Function, len(specs))
	for i, s := range specs {
		out[i].Type = "function"
		out[i].Function.Name, out[i].Function.Description, out[i].Function.Parameters = s.name, s.description, s.input.Schema()
	}
	return out
}

// Call runs the tool name for user with a model's JSON arguments, and
// returns its result. Returns ENOTFOUND for an unknown tool and EINVALID
// for arguments that do not fit its schema; the service's errors as they
// are.
func Call(ctx context.Context, svc agentmem.Service, user, agent, name string, args json.RawMessage) (any, error) {
	for _, s := range specs {
		if s.name == name {
			return s.run(ctx, &tools{svc: svc, opt: Options{Agent: cmp.Or(agent, agentmem.DefaultAgent)}}, user, args)
		}
	}
	return nil, agentmem.Errorf(agentmem.ENOTFOUND, "No tool %q; GET /v1/tools lists them.", name)
}
