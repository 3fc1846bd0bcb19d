package httpapi

import (
	"cmp"
	"encoding"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/google/jsonschema-go/jsonschema"
)

// jsonSchema is a JSON Schema (draft 2020-12, the dialect of OpenAPI 3.1)
// with the keywords the API's document uses, printed in this order. The
// zero value is the schema every value fits.
type jsonSchema struct {
	Ref                  string                 `json:"$ref,omitempty"`
	Type                 any                    `json:"type,omitempty"` // a type name, or names with "null"
	Format               string                 `json:"format,omitempty"`
	Description          string                 `json:"description,omitempty"`
	Enum                 []any                  `json:"enum,omitempty"`
	Minimum              *int64                 `json:"minimum,omitempty"`
	Maximum              *int64                 `json:"maximum,omitempty"`
	MinLength            *int                   `json:"minLength,omitempty"`
	MaxLength            *int                   `json:"maxLength,omitempty"`
	Pattern              string                 `json:"pattern,omitempty"`
	Items                *jsonSchema            `json:"items,omitempty"`
	Properties           map[string]*jsonSchema `json:"properties,omitempty"`
	Required             []string               `json:"required,omitempty"`
	AdditionalProperties any                    `json:"additionalProperties,omitempty"` // false, or a *jsonSchema
	AnyOf                []*jsonSchema          `json:"anyOf,omitempty"`
	OneOf                []*jsonSchema          `json:"oneOf,omitempty"`

	component bool // a reference to a component, whose Ref is set last (see components)
}

func ptr[T any](v T) *T { return &v }

// nullable returns s allowing null as well.
func nullable(s *jsonSchema) *jsonSchema {
	switch typ := s.Type.(type) {
	case string:
		s.Type = []string{typ, "null"}
		if s.Enum != nil {
			s.Enum = append(s.Enum, nil)
		}
		return s
	case []string:
		if !slices.Contains(typ, "null") {
			s.Type = append(typ, "null")
		}
		return s
	case nil:
		if !s.component && s.OneOf == nil && s.AnyOf == nil {
			return s // any value, null included
		}
	}
	return &jsonSchema{AnyOf: []*jsonSchema{s, {Type: "null"}}}
}

// direction is which way a body travels, which decides what its schema
// requires.
type direction int

const (
	// toClient is a response body: what encoding/json writes. A field is
	// required unless it has omitempty or omitzero (it is then left out
	// when empty), and is null only if it is a pointer without them or
	// has a fieldRule saying so.
	toClient direction = iota
	// fromClient is a request body: what decode reads. No field is
	// required unless the handler or a fieldRule says so (encoding/json
	// requires none), and unknown fields are refused (decode disallows
	// them), so its objects are closed.
	fromClient
)

// fieldRule says of a field of a Go type what its type cannot: the fixed
// set of values the code gives it or accepts, whether a request must
// carry it, and whether it may be null when the Go type does not say so.
type fieldRule struct {
	enum      []string // its values (of its items, for a slice)
	required  bool     // a request must carry it (see direction fromClient)
	minLength int      // in a request, the fewest characters of a string that is valid
	pattern   string   // in a request, a regular expression a valid string matches
	nullable  bool     // a slice or map that is written as null when empty
	nonNull   bool     // a pointer the code always sets in responses
}

// Values the code has a fixed set of, named by its constants.
var (
	roles        = []string{agentmem.RoleSystem, agentmem.RoleUser, agentmem.RoleAssistant, agentmem.RoleTool}
	threadStatus = []string{agentmem.ThreadActive, agentmem.ThreadEnded}
	memoryKinds  = []string{agentmem.MemoryFact, agentmem.MemoryInsight}
	scopeKinds   = []string{agentmem.ScopeAdmin, agentmem.ScopeTenant, agentmem.ScopeUser}
	jobStatus    = []string{agentmem.JobQueued, agentmem.JobRunning, agentmem.JobDone, agentmem.JobDead}
	notesOps     = []string{agentmem.NotesRead, agentmem.NotesOverwrite, agentmem.NotesAppend, agentmem.NotesPrepend,
		agentmem.NotesDeleteSection, agentmem.NotesReplaceSection, agentmem.NotesDeleteAll}
	entityActions = []string{agentmem.EntityCreated, agentmem.EntityModified, agentmem.EntityDiscussed}
	searchScopes  = []string{agentmem.ScopeMemories, agentmem.ScopeMessages, agentmem.ScopeChunks, agentmem.ScopeSummaries}
	strategies    = []string{agentmem.StrategyTrim, agentmem.StrategyWindow, agentmem.StrategySummarize}
	formats       = []string{agentmem.FormatMessages, agentmem.FormatResponses, agentmem.FormatText}
	// errorCodes are the codes of agentmem's errors, each mapped to its
	// status by StatusOf.
	errorCodes = []string{agentmem.EINVALID, agentmem.EUNAUTHORIZED, agentmem.EFORBIDDEN, agentmem.ENOTFOUND, agentmem.ECONFLICT,
		agentmem.ETOOLARGE, agentmem.EUNPROCESSABLE, agentmem.ERATELIMIT, agentmem.EINTERNAL, agentmem.EUNAVAILABLE}
)

// fieldRules holds the fieldRule of each field (by its JSON name) of the
// types that need one. schemaGen fails on a rule naming no field, so a
// renamed field cannot leave its rule behind.
var fieldRules = map[reflect.Type]map[string]fieldRule{
	reflect.TypeFor[errorDetail]():           {"code": {enum: errorCodes}},
	reflect.TypeFor[agentmem.Message]():      {"role": {enum: roles, required: true}},
	reflect.TypeFor[agentmem.FunctionCall](): {"name": {required: true}},
	reflect.TypeFor[agentmem.ChatMessage]():  {"role": {enum: roles}},
	reflect.TypeFor[agentmem.Thread]():       {"status": {enum: threadStatus}},
	reflect.TypeFor[agentmem.ThreadUpdate](): {"status": {enum: threadStatus}},
	reflect.TypeFor[agentmem.ThreadExport](): {"thread": {required: true, nonNull: true}},
	reflect.TypeFor[agentmem.Memory](): {
		"kind":   {enum: memoryKinds},
		"source": {enum: []string{agentmem.SourceAPI, agentmem.SourceExtracted}},
	},
	reflect.TypeFor[agentmem.MemoryInput]():  {"kind": {enum: memoryKinds}, "text": {required: true, minLength: 1}},
	reflect.TypeFor[agentmem.MemoryChange](): {"op": {enum: []string{agentmem.OpAdd, agentmem.OpUpdate, agentmem.OpInvalidate}}},
	reflect.TypeFor[agentmem.Reflection](): {"status": {enum: []string{agentmem.ReflectionPending, agentmem.ReflectionProcessed,
		agentmem.ReflectionNoInsight, agentmem.ReflectionFailed}}},
	reflect.TypeFor[agentmem.Profile]():     {"method": {enum: []string{agentmem.ProfileLLM, agentmem.ProfileAssembled}}},
	reflect.TypeFor[agentmem.Job]():         {"status": {enum: jobStatus}},
	reflect.TypeFor[agentmem.Scope]():       {"kind": {enum: scopeKinds}},
	reflect.TypeFor[agentmem.Caller]():      {"kind": {enum: scopeKinds}, "via": {enum: []string{AuthNone, AuthAPIKey, AuthHeader}}},
	reflect.TypeFor[agentmem.KeyInput]():    {"scope": {required: true, pattern: `^(admin|user:.+|tenant:[^/]+(/user:.+)?)$`}},
	reflect.TypeFor[agentmem.NewKey]():      {"key": {nonNull: true}},
	reflect.TypeFor[agentmem.NotesOp]():     {"operation": {enum: notesOps}},
	reflect.TypeFor[agentmem.Notes]():       {"operation": {enum: notesOps}},
	reflect.TypeFor[agentmem.EntityRef]():   {"action": {enum: entityActions}},
	reflect.TypeFor[agentmem.EntityInput](): {"action": {enum: entityActions}, "name": {required: true, minLength: 1}},
	reflect.TypeFor[agentmem.TurnRequest](): {
		"messages": {required: true},
		"mode":     {enum: []string{agentmem.MemoryAuto, agentmem.MemoryFull, agentmem.MemoryAugment, agentmem.MemoryOff}},
	},
	// A turn's mode is the one applied: auto resolved.
	reflect.TypeFor[agentmem.Turn](): {"thread": {required: true, nonNull: true}, "mode": {enum: []string{agentmem.MemoryFull, agentmem.MemoryAugment, agentmem.MemoryOff}}},
	reflect.TypeFor[agentmem.SearchRequest](): {
		"query":   {required: true, minLength: 1},
		"scopes":  {enum: searchScopes},
		"kinds":   {enum: agentmem.SearchKinds},
		"signals": {enum: []string{"fulltext", "vector"}},
	},
	// The kinds of retrieve's results (retrieve.kinds), one per scope.
	reflect.TypeFor[agentmem.SearchResult]():   {"kind": {enum: []string{"memory", "message", "chunk", "summary"}}},
	reflect.TypeFor[agentmem.FactsResponse]():  {"kinds": {enum: agentmem.SearchKinds}},
	reflect.TypeFor[agentmem.ContextRequest](): {"strategy": {enum: strategies}, "format": {enum: formats}},
	reflect.TypeFor[agentmem.Telemetry]():      {"strategy": {enum: strategies}, "format": {enum: formats}},
}

// schemaGen builds the schemas of Go types by reflection, following
// encoding/json: json tags name fields, embedded structs' fields are
// promoted, omitempty and omitzero fields are optional (in responses),
// pointers may be null, time.Time is a date-time string, []byte a base64
// string, maps are objects. A named struct becomes a component of the
// document, once per direction it travels in; an unnamed one is inlined.
// A type that marshals itself must have a schema in selfMarshalled, so
// that none is described by fields it does not write.
type schemaGen struct {
	named     map[namedKey]*namedSchema
	synthetic map[string]*jsonSchema // components of no Go type of their own (see selfSchema)
	order     []namedKey             // in the order first reached
	owners    map[reflect.Type]bool  // the structs whose fields were described
	errs      []error
}

// namedKey is a named struct type travelling in one direction.
type namedKey struct {
	t   reflect.Type
	dir direction
}

// namedSchema is a component and the references to it, whose $ref is
// set once every component is known and named (see components).
type namedSchema struct {
	schema *jsonSchema
	hint   string // the name of an unexported type: see schemaOf
	refs   []*jsonSchema
}

// schemaName is implemented by an unexported type whose component name
// it gives (page[T] names itself after T).
type schemaNamer interface{ schemaName() string }

func newSchemaGen() *schemaGen {
	return &schemaGen{named: map[namedKey]*namedSchema{}, synthetic: map[string]*jsonSchema{}, owners: map[reflect.Type]bool{}}
}

// checkRules fails on a fieldRule of a type that no body has, or naming
// no field of its type: a rule left behind by a renamed field or type
// would otherwise describe nothing, silently.
func (g *schemaGen) checkRules() {
	for owner, rules := range fieldRules {
		if !g.owners[owner] {
			g.errorf("fieldRules: %v is in no body of the API", owner)
			continue
		}
		for name := range rules {
			if !slices.ContainsFunc(jsonFields(owner), func(f jsonField) bool { return f.owner == owner && f.name == name }) {
				g.errorf("fieldRules: %v has no JSON field %q", owner, name)
			}
		}
	}
}

func (g *schemaGen) errorf(format string, args ...any) {
	g.errs = append(g.errs, fmt.Errorf(format, args...))
}

var (
	timeType      = reflect.TypeFor[time.Time]()
	rawType       = reflect.TypeFor[json.RawMessage]()
	toolSchema    = reflect.TypeFor[jsonschema.Schema]()
	marshalerType = reflect.TypeFor[json.Marshaler]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
)

// selfMarshalled are the API's types that marshal themselves (a method
// MarshalJSON), whose schemas selfSchema builds.
var selfMarshalled = []reflect.Type{reflect.TypeFor[agentmem.Context]()}

// selfSchema returns the schema of t, one of selfMarshalled.
func (g *schemaGen) selfSchema(t reflect.Type, dir direction) *jsonSchema {
	switch t {
	case reflect.TypeFor[agentmem.Context]():
		// A built context writes the fields of its format only, and the
		// telemetry (see agentmem.Context.MarshalJSON).
		// Each format is a component of its own, for client generators
		// to name.
		if dir != toClient {
			g.errorf("%v is written only", t)
		}
		all := g.structSchema(t, dir)
		pick := func(name, description string, names ...string) *jsonSchema {
			s := &jsonSchema{Type: "object", Description: description, Properties: map[string]*jsonSchema{}, Required: names}
			for _, n := range names {
				p, ok := all.Properties[n]
				if !ok {
					g.errorf("%v has no field %q", t, n)
					continue
				}
				s.Properties[n] = p
			}
			g.synthetic[name] = s
			return &jsonSchema{Ref: "#/components/schemas/" + name}
		}
		return &jsonSchema{OneOf: []*jsonSchema{
			pick("ContextMessages", "A context of format messages: chat messages.", "messages", "telemetry"),
			pick("ContextResponses", "A context of format responses: instructions and input, for OpenAI's Responses API.", "instructions", "input", "telemetry"),
			pick("ContextText", "A context of format text: one sectioned text block.", "text", "telemetry"),
		}}
	}
	g.errorf("%v marshals itself: give its schema in selfSchema", t)
	return &jsonSchema{}
}

// schemaOf returns the schema of a body of type t travelling in dir. An
// unexported named struct (a handler's own request or response type) is
// named hint.
func (g *schemaGen) schemaOf(t reflect.Type, dir direction, hint string) *jsonSchema {
	t = derefType(t)
	if t.Kind() == reflect.Struct && t.Name() != "" && t != timeType && t != toolSchema {
		return g.ref(t, dir, hint)
	}
	return g.typeSchema(t, dir)
}

// ref returns a reference to the component of the named struct t,
// building the component when first reached.
func (g *schemaGen) ref(t reflect.Type, dir direction, hint string) *jsonSchema {
	key := namedKey{t, dir}
	n, ok := g.named[key]
	if !ok {
		n = &namedSchema{hint: hint}
		g.named[key] = n
		g.order = append(g.order, key)
		if slices.Contains(selfMarshalled, t) {
			n.schema = g.selfSchema(t, dir)
		} else {
			n.schema = g.structSchema(t, dir)
		}
	} else if n.hint == "" {
		n.hint = hint
	}
	r := &jsonSchema{component: true}
	n.refs = append(n.refs, r)
	return r
}

// typeSchema returns the schema of t, inlined unless it is a named struct.
func (g *schemaGen) typeSchema(t reflect.Type, dir direction) *jsonSchema {
	t = derefType(t)
	switch {
	case t == timeType:
		return &jsonSchema{Type: "string", Format: "date-time"}
	case t == rawType:
		// Every JSON value the API carries verbatim is an object:
		// metadata, an audit event's detail, a job's payload
		// (agentmem.NormalizeMetadata and the stores refuse others), a
		// tool's arguments (decode takes objects only). A request's
		// field may be null for {} (see structSchema).
		return &jsonSchema{Type: "object"}
	case t == toolSchema:
		return &jsonSchema{Type: "object", Description: "A JSON Schema."}
	}
	if !slices.Contains(selfMarshalled, t) && t.Kind() != reflect.Interface &&
		(t.Implements(marshalerType) || reflect.PointerTo(t).Implements(marshalerType) ||
			t.Implements(textMarshaler) || reflect.PointerTo(t).Implements(textMarshaler)) {
		g.errorf("%v marshals itself: give its schema in selfSchema", t)
		return &jsonSchema{}
	}
	switch t.Kind() {
	case reflect.Struct:
		if t.Name() != "" {
			return g.ref(t, dir, "")
		}
		return g.structSchema(t, dir)
	case reflect.String:
		return &jsonSchema{Type: "string"}
	case reflect.Bool:
		return &jsonSchema{Type: "boolean"}
	case reflect.Int, reflect.Int64:
		return &jsonSchema{Type: "integer", Format: "int64"}
	case reflect.Int8, reflect.Int16, reflect.Int32:
		return &jsonSchema{Type: "integer", Format: "int32"}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return &jsonSchema{Type: "integer", Minimum: ptr[int64](0)}
	case reflect.Float32:
		return &jsonSchema{Type: "number", Format: "float"}
	case reflect.Float64:
		return &jsonSchema{Type: "number", Format: "double"}
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 && t.Kind() == reflect.Slice {
			return &jsonSchema{Type: "string", Format: "byte"} // encoding/json writes []byte in base64
		}
		return &jsonSchema{Type: "array", Items: g.schemaOf(t.Elem(), dir, "")}
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			g.errorf("%v: only maps with string keys are described", t)
		}
		return &jsonSchema{Type: "object", AdditionalProperties: g.schemaOf(t.Elem(), dir, "")}
	case reflect.Interface:
		return &jsonSchema{} // any JSON value
	}
	g.errorf("%v: no JSON schema for kind %v", t, t.Kind())
	return &jsonSchema{}
}

// structSchema returns the object schema of struct t's JSON fields.
func (g *schemaGen) structSchema(t reflect.Type, dir direction) *jsonSchema {
	s := &jsonSchema{Type: "object", Properties: map[string]*jsonSchema{}}
	if dir == fromClient {
		s.AdditionalProperties = false
	}
	fields := jsonFields(t)
	for _, f := range fields {
		g.owners[f.owner] = true
	}
	for _, f := range fields {
		rule := fieldRules[f.owner][f.name]
		p := g.typeSchema(f.typ, dir)
		if rule.enum != nil {
			target := p
			if p.Type == "array" {
				target = p.Items
			}
			if target.Type != "string" {
				g.errorf("fieldRules: %v.%s is not a string or strings", f.owner, f.name)
			}
			target.Enum = make([]any, len(rule.enum))
			for i, v := range rule.enum {
				target.Enum[i] = v
			}
		}
		if dir == fromClient && (rule.minLength > 0 || rule.pattern != "") {
			if p.Type != "string" {
				g.errorf("fieldRules: %v.%s is not a string", f.owner, f.name)
			}
			if rule.minLength > 0 {
				p.MinLength = ptr(rule.minLength)
			}
			p.Pattern = rule.pattern
		}
		optional := f.omitEmpty || f.omitZero
		isPtr := f.typ.Kind() == reflect.Pointer
		switch {
		case dir == toClient && rule.nullable, dir == toClient && isPtr && !optional && !rule.nonNull:
			p = nullable(p)
		case dir == fromClient && (isPtr || f.typ == rawType) && !rule.required:
			// null leaves a pointer nil; metadata null is {}
			// (agentmem.NormalizeMetadata), as encoding/json writes a Go
			// client's empty metadata.
			p = nullable(p)
		}
		s.Properties[f.name] = p
		if (dir == toClient && !optional) || (dir == fromClient && rule.required) {
			s.Required = append(s.Required, f.name)
		}
	}
	return s
}

// jsonField is a field of a struct as encoding/json sees it.
type jsonField struct {
	name                string
	typ                 reflect.Type
	owner               reflect.Type // the struct that declares it (an embedded one, for a promoted field)
	omitEmpty, omitZero bool
	depth               int // of embedding
	tagged              bool
}

// jsonFields returns the fields encoding/json writes and reads of struct
// t, in its order: exported fields not tagged "-", and the fields of
// embedded structs without a name in their tag, a field of a lesser depth
// hiding those of its name deeper down, as encoding/json decides.
func jsonFields(t reflect.Type) []jsonField {
	var all []jsonField
	var walk func(t reflect.Type, depth int, seen map[reflect.Type]bool)
	walk = func(t reflect.Type, depth int, seen map[reflect.Type]bool) {
		if seen[t] {
			return
		}
		seen[t] = true
		for i := range t.NumField() {
			sf := t.Field(i)
			tag := sf.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			ft := sf.Type
			if sf.Anonymous {
				et := ft
				if et.Kind() == reflect.Pointer {
					et = et.Elem()
				}
				if name == "" && et.Kind() == reflect.Struct {
					walk(et, depth+1, maps.Clone(seen))
					continue
				}
				if !sf.IsExported() {
					continue
				}
			} else if !sf.IsExported() {
				continue
			}
			optSet := strings.Split(opts, ",")
			all = append(all, jsonField{
				name: cmp.Or(name, sf.Name), typ: ft, owner: t, depth: depth, tagged: name != "",
				omitEmpty: slices.Contains(optSet, "omitempty"), omitZero: slices.Contains(optSet, "omitzero"),
			})
		}
	}
	walk(t, 0, map[reflect.Type]bool{})
	var out []jsonField
	for _, f := range all {
		dominant := true
		for _, o := range all {
			if o.name != f.name || o == f {
				continue
			}
			if o.depth < f.depth || (o.depth == f.depth && (o.tagged && !f.tagged || o.tagged == f.tagged)) {
				dominant = false // hidden, or ambiguous (encoding/json then writes neither)
			}
		}
		if dominant {
			out = append(out, f)
		}
	}
	return out
}

// components names every component and sets the references to it: a
// type's exported name (or the name its schemaName method or a handler
// gives it), with "Input" appended for the request form of a type that
// travels both ways. Two types of one name are an error.
func (g *schemaGen) components() map[string]*jsonSchema {
	base := func(k namedKey) string {
		n := g.named[k]
		if namer, ok := reflect.Zero(k.t).Interface().(schemaNamer); ok {
			return namer.schemaName()
		}
		if k.t.Name() != "" && k.t.PkgPath() != "" && isExported(k.t.Name()) {
			return k.t.Name()
		}
		if n.hint == "" {
			g.errorf("%v is unexported and its handler gives it no name", k.t)
		}
		return n.hint
	}
	out := map[string]*jsonSchema{}
	owner := map[string]reflect.Type{}
	for _, k := range g.order {
		name := base(k)
		if _, both := g.named[namedKey{k.t, toClient}]; both && k.dir == fromClient {
			name += "Input"
			if g.namedElsewhere(name, k.t) { // MemoryInput is a type of its own
				name = strings.TrimSuffix(name, "Input") + "Write"
			}
		}
		if t, taken := owner[name]; taken && t != k.t {
			g.errorf("schema %s names both %v and %v", name, t, k.t)
		}
		owner[name] = k.t
		out[name] = g.named[k].schema
		for _, r := range g.named[k].refs {
			r.Ref = "#/components/schemas/" + name
		}
	}
	for name, s := range g.synthetic {
		if t, taken := owner[name]; taken {
			g.errorf("schema %s names both %v and a part of another type", name, t)
		}
		out[name] = s
	}
	g.checkRules()
	return out
}

// namedElsewhere reports whether a type other than t has the exported
// name name among the components.
func (g *schemaGen) namedElsewhere(name string, t reflect.Type) bool {
	for k := range g.named {
		if k.t != t && k.t.Name() == name {
			return true
		}
	}
	return false
}

func isExported(name string) bool { return name != "" && strings.ToUpper(name[:1]) == name[:1] }

func errorsJoin(errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	msgs := make([]string, len(errs))
	for i, err := range errs {
		msgs[i] = err.Error()
	}
	slices.Sort(msgs)
	return fmt.Errorf("openapi: %s", strings.Join(slices.Compact(msgs), "; "))
}
