// Package tools is agentmem's tools for agents: the memory of one user as
// functions a model calls (remember, search_memory, get_context…), each
// defined once here with its JSON schemas, and adapted by each face that
// offers them: the MCP server (package mcp) registers them with the MCP
// SDK, and the REST API (package httpapi) lists them as OpenAI
// function-calling declarations and runs them with a model's JSON
// arguments. Each tool makes calls of agentmem.Service, so that a tool
// and the REST route it mirrors answer alike.
package tools

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
)

// Env is what a tool call runs with: the service, the agent of the
// notes and of the session a call without a thread uses, and what a face
// wants to hear of the call's effects.
type Env struct {
	Service agentmem.Service
	// Agent is agentmem.DefaultAgent when "".
	Agent string
	// NotesWritten, when set, is told the notes' new version after
	// manage_notes changed them (the MCP server tells the notes'
	// subscribers).
	NotesWritten func(ctx context.Context, version int64)
}

// env is an Env with its defaults applied: the receiver of the tools'
// functions (specs.go).
type env Env

// Annotations say what a call of a tool does, as MCP's hints do: a
// read-only tool changes nothing; a destructive one may erase; calling an
// idempotent one twice with the same arguments does no more than once. No
// tool reaches beyond the user's memory: none is open-world.
type Annotations struct {
	ReadOnly, Destructive, Idempotent bool
}

// A Tool is one tool, defined once for every face.
type Tool struct {
	Name, Description string
	Annotations       Annotations
	// Input and Output are the JSON schemas of the arguments and the
	// result, from the Go types' json and jsonschema tags, single-typed
	// (see schemaFor). They are shared: do not modify them.
	Input, Output *jsonschema.Schema

	input *jsonschema.Resolved
	run   func(ctx context.Context, e *env, user string, args json.RawMessage) (any, error)
}

// All returns the tools, in the order they are listed.
func All() []Tool { return slices.Clone(all) }

// Call runs t for user with a model's JSON arguments, and returns its
// result (a value of t's output type). Returns EINVALID for arguments
// that do not fit its schema; the service's errors as they are.
func (t Tool) Call(ctx context.Context, e Env, user string, args json.RawMessage) (any, error) {
	e.Agent = cmp.Or(e.Agent, agentmem.DefaultAgent)
	return t.run(ctx, (*env)(&e), user, args)
}

// Call runs the tool name (see Tool.Call). Returns ENOTFOUND for an
// unknown tool.
func Call(ctx context.Context, e Env, user, name string, args json.RawMessage) (any, error) {
	for _, t := range all {
		if t.Name == name {
			return t.Call(ctx, e, user, args)
		}
	}
	return nil, agentmem.Errorf(agentmem.ENOTFOUND, "No tool %q; GET /v1/tools lists them.", name)
}

// def defines a tool whose arguments are In and whose result is Out; their
// JSON schemas come from their json and jsonschema tags (see schemaFor);
// annotations say what a call does (see readOnly in specs.go).
func def[In, Out any](name, description string, annotations Annotations, fn func(e *env, ctx context.Context, user string, in In) (Out, error)) Tool {
	schema := schemaFor[In](name)
	input, err := schema.Resolve(nil)
	if err != nil {
		panic(fmt.Sprintf("tool %s: %v", name, err))
	}
	return Tool{
		Name: name, Description: description, Annotations: annotations,
		Input: schema, Output: schemaFor[Out](name), input: input,
		run: func(ctx context.Context, e *env, user string, args json.RawMessage) (any, error) {
			in, err := decodeArgs[In](input, args)
			if err != nil {
				return nil, err
			}
			out, err := fn(e, ctx, user, in)
			if err != nil {
				return nil, err
			}
			return out, nil
		},
	}
}

// schemaFor returns the JSON schema of T, from its json and jsonschema
// tags, with one type per value: jsonschema.For gives a slice, and a
// pointer, the type union ["null", T] (a nil slice is marshalled as
// null), which MCP hosts and function-calling APIs refuse in a tool's
// schema. A field that may be left out says so by not being required,
// never by null; a null sent all the same counts as left out (DropNulls).
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

// DropNulls returns a tool call's arguments without the fields that are
// null: a host or model that sends null for a field it leaves out (as
// OpenAI's strict function calling does) means it left out, which the
// schemas, single-typed (schemaFor), would otherwise refuse. Arguments
// that are not a JSON object are returned as they are.
func DropNulls(args json.RawMessage) json.RawMessage {
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

// decodeArgs checks a model's JSON arguments against the tool's schema
// and decodes them: EINVALID naming what is wrong.
func decodeArgs[In any](schema *jsonschema.Resolved, args json.RawMessage) (In, error) {
	var in In
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	args = DropNulls(args)
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
	out := make([]Function, len(all))
	for i, t := range all {
		out[i].Type = "function"
		out[i].Function.Name, out[i].Function.Description, out[i].Function.Parameters = t.Name, t.Description, t.Input
	}
	return out
}
