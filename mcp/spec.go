package mcp

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

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
// JSON schemas come from their json and jsonschema tags (see schemaFor);
// annotations say what a call does (see readOnly in tools.go).
func def[In, Out any](name, description string, annotations *sdk.ToolAnnotations, fn func(t *tools, ctx context.Context, user string, in In) (Out, error)) spec {
	schema := schemaFor[In](name)
	input, err := schema.Resolve(nil)
	if err != nil {
		panic(fmt.Sprintf("tool %s: %v", name, err))
	}
	output := schemaFor[Out](name)
	return spec{
		name: name, description: description, annotations: annotations, input: input,
		add: func(s *sdk.Server, t *tools) {
			// The schemas are given, not left to the SDK, which would
			// derive them with type unions (see schemaFor). They are the
			// same pointers for every server, so the SDK's cache resolves
			// each once.
			sdk.AddTool(s, &sdk.Tool{Name: name, Description: description, Annotations: annotations, InputSchema: schema, OutputSchema: output},
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

// schemaFor returns the JSON schema of T, from its json and jsonschema
// tags, with one type per value: jsonschema.For gives a slice, and a
// pointer, the type union ["null", T] (a nil slice is marshalled as
// null), which MCP hosts and function-calling APIs refuse in a tool's
// schema. A field that may be left out says so by not being required,
// never by null; a null sent all the same counts as left out (dropNulls).
func schemaFor[T any](tool string) *jsonschema.Schema {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		panic(fmt.Sprintf("tool %s: %v", tool, err)) // a tool's types are fixed at compile time: a bug
	}
	singleTyped(s)
	// A tool without arguments says so with properties {}, not by leaving
	// them out: LangChain reads a tool's arguments from "properties"
	// (KeyError without it), as other hosts may.
	if s.Type == "object" && s.Properties == nil {
		s.Properties = map[string]*jsonschema.Schema{}
	}
	return s
}

// singleTyped drops "null" from every type union of s, recursively,
// leaving the one type.
func singleTyped(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if types := slices.DeleteFunc(slices.Clone(s.Types), func(t string) bool { return t == "null" }); len(s.Types) > 0 {
		s.Types = nil
		if len(types) == 1 {
			s.Type = types[0]
		} else {
			s.Types = types
		}
	}
	singleTyped(s.Items)
	singleTyped(s.AdditionalProperties)
	for _, p := range s.Properties {
		singleTyped(p)
	}
	for _, d := range s.Defs {
		singleTyped(d)
	}
}

// dropNulls returns a tool call's arguments without the fields that are
// null: a host or model that sends null for a field it leaves out (as
// OpenAI's strict function calling does) means it left out, which the
// schemas, single-typed (schemaFor), would otherwise refuse. Arguments
// that are not a JSON object are returned as they are.
func dropNulls(args json.RawMessage) json.RawMessage {
	if !bytes.Contains(args, []byte("null")) {
		return args
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(args, &fields) != nil || fields == nil {
		return args
	}
	n := len(fields)
	maps.DeleteFunc(fields, func(_ string, v json.RawMessage) bool { return string(bytes.TrimSpace(v)) == "null" })
	if len(fields) == n {
		return args
	}
	b, err := json.Marshal(fields)
	if err != nil {
		return args
	}
	return b
}

// nullsDropped is the servers' middleware that drops the null fields of
// a tool call's arguments (dropNulls) before the SDK checks them.
func nullsDropped(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if p, ok := req.GetParams().(*sdk.CallToolParamsRaw); ok && method == "tools/call" && p != nil {
			p.Arguments = dropNulls(p.Arguments)
		}
		return next(ctx, method, req)
	}
}

// decodeArgs checks a model's JSON arguments against the tool's schema
// and decodes them: EINVALID naming what is wrong.
func decodeArgs[In any](schema *jsonschema.Resolved, args json.RawMessage) (In, error) {
	var in In
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	args = dropNulls(args)
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
