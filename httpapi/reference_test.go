package httpapi_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/agentmem/agentmem/httpapi"
	"github.com/agentmem/agentmem/internal/goldenfile"
)

// TestOpenAPI_Reference: docs/api.md, the API reference for people, is
// rendered from the OpenAPI document (docs/openapi.json), so that it
// cannot drift from it either: every operation by tag, with its access,
// parameters, body and answers, then every schema's fields. Rewrite it
// with go test ./httpapi -run TestOpenAPI_Reference -update.
func TestOpenAPI_Reference(t *testing.T) {
	b, err := httpapi.OpenAPI(documentOptions())
	if err != nil {
		t.Fatal(err)
	}
	md, err := renderReference(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## threads", "`POST /v1/users/{user}/threads/{thread}/messages`", "### Thread"} {
		if !strings.Contains(md, want) {
			t.Fatalf("docs/api.md lacks %q", want)
		}
	}
	goldenfile.Check(t, filepath.Join("..", "docs", "api.md"), []byte(md), *update)
}

// refDoc is the part of an OpenAPI document the reference shows.
type refDoc struct {
	Info struct {
		Title, Version, Description string
	}
	Tags []struct {
		Name, Description string
	}
	Paths      map[string]map[string]refOperation
	Components struct {
		Schemas map[string]refSchema
	}
}

type refOperation struct {
	OperationID string
	Tags        []string
	Summary     string
	Description string
	Access      string `json:"x-agentmem-access"`
	Parameters  []struct {
		Name, In, Description string
		Required              bool
		Schema                refSchema
	}
	RequestBody *struct {
		Required bool
		Content  map[string]struct{ Schema refSchema }
	}
	Responses map[string]struct {
		Ref         string `json:"$ref"`
		Description string
		Content     map[string]struct{ Schema refSchema }
	}
}

type refSchema struct {
	Ref                  string `json:"$ref"`
	Type                 any
	Format               string
	Enum                 []any
	Items                *refSchema
	Properties           map[string]refSchema
	Required             []string
	OneOf                []refSchema
	AnyOf                []refSchema
	AdditionalProperties any
	Description          string
}

// typeOf renders a schema's type in a few words: a link to a named
// schema, an array of one, an enum's values.
func (s refSchema) typeOf() string {
	switch {
	case s.Ref != "":
		name := s.Ref[strings.LastIndex(s.Ref, "/")+1:]
		return fmt.Sprintf("[%s](#schema-%s)", name, strings.ToLower(name))
	case len(s.OneOf) > 0 || len(s.AnyOf) > 0:
		var alts []string
		for _, a := range append(s.OneOf, s.AnyOf...) {
			alts = append(alts, a.typeOf())
		}
		return strings.Join(alts, " or ")
	case s.Items != nil:
		return "array of " + s.Items.typeOf()
	case len(s.Enum) > 0:
		var vs []string
		for _, v := range s.Enum {
			vs = append(vs, fmt.Sprintf("`%v`", v))
		}
		return "one of " + strings.Join(vs, ", ")
	}
	t := fmt.Sprint(s.Type)
	if types, ok := s.Type.([]any); ok {
		var ts []string
		for _, x := range types {
			ts = append(ts, fmt.Sprint(x))
		}
		t = strings.Join(ts, " or ")
	}
	if s.Type == nil {
		t = "any"
	}
	if s.Format != "" {
		t += " (" + s.Format + ")"
	}
	return t
}

// cell makes text fit a Markdown table's cell.
func cell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ")
}

// renderReference renders the OpenAPI document doc as Markdown.
func renderReference(doc []byte) (string, error) {
	var d refDoc
	if err := json.Unmarshal(doc, &d); err != nil {
		return "", err
	}
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("# %s API reference\n\n", d.Info.Title)
	p("<!-- generated from docs/openapi.json by go test ./httpapi -run TestOpenAPI_Reference -update: do not edit -->\n\n")
	p("Version %s. Every operation of the REST API, by tag, then every schema. The same as the OpenAPI 3.1 document\n", d.Info.Version)
	p("[`openapi.json`](openapi.json) (served at `GET /openapi.json`), for people. An error is answered as\n")
	p("[Error](#schema-error) with the status of its code. *Access*: who may call it (`public`: anyone; `user`: the user's key or\n")
	p("an admin's; `user-admin`: an admin of the user; `admin`: an admin key; `identified`: any valid key).\n\n")

	type op struct {
		method, path string
		o            refOperation
	}
	byTag := map[string][]op{}
	paths := make([]string, 0, len(d.Paths))
	for path := range d.Paths {
		paths = append(paths, path)
	}
	sort.Strings(paths)
	for _, path := range paths {
		methods := make([]string, 0, len(d.Paths[path]))
		for m := range d.Paths[path] {
			methods = append(methods, m)
		}
		sort.Strings(methods)
		for _, m := range methods {
			o := d.Paths[path][m]
			tag := "other"
			if len(o.Tags) > 0 {
				tag = o.Tags[0]
			}
			byTag[tag] = append(byTag[tag], op{strings.ToUpper(m), path, o})
		}
	}
	var tags []string
	for _, t := range d.Tags {
		tags = append(tags, t.Name)
	}
	for t := range byTag {
		if !slices.Contains(tags, t) {
			tags = append(tags, t)
		}
	}
	p("## Contents\n\n")
	for _, t := range tags {
		if len(byTag[t]) > 0 {
			p("- [%s](#%s) (%d)\n", t, t, len(byTag[t]))
		}
	}
	p("- [Schemas](#schemas) (%d)\n\n", len(d.Components.Schemas))
	for _, t := range tags {
		ops := byTag[t]
		if len(ops) == 0 {
			continue
		}
		p("## %s\n\n", t)
		for _, x := range d.Tags {
			if x.Name == t && x.Description != "" {
				p("%s\n\n", x.Description)
			}
		}
		for _, o := range ops {
			p("### `%s %s`\n\n", o.method, o.path)
			p("%s", o.o.Summary)
			if o.o.Description != "" {
				p(" %s", o.o.Description)
			}
			p("\n\n*operationId* `%s` · *access* `%s`\n\n", o.o.OperationID, o.o.Access)
			if len(o.o.Parameters) > 0 {
				p("| parameter | in | type | required | description |\n|---|---|---|---|---|\n")
				for _, prm := range o.o.Parameters {
					req := ""
					if prm.Required {
						req = "yes"
					}
					p("| `%s` | %s | %s | %s | %s |\n", prm.Name, prm.In, cell(prm.Schema.typeOf()), req, cell(prm.Description))
				}
				p("\n")
			}
			if rb := o.o.RequestBody; rb != nil {
				for _, mt := range sortedKeys(rb.Content) {
					p("Body (`%s`): %s\n\n", mt, rb.Content[mt].Schema.typeOf())
				}
			}
			p("| status | answer |\n|---|---|\n")
			for _, status := range sortedKeys(o.o.Responses) {
				r := o.o.Responses[status]
				what := r.Description
				if r.Ref != "" {
					what = "[Error](#schema-error)"
				}
				for _, mt := range sortedKeys(r.Content) {
					what = fmt.Sprintf("`%s`: %s", mt, r.Content[mt].Schema.typeOf())
				}
				if what == "" {
					what = "no body"
				}
				p("| %s | %s |\n", status, cell(what))
			}
			p("\n")
		}
	}
	p("## Schemas\n\n")
	for _, name := range sortedKeys(d.Components.Schemas) {
		s := d.Components.Schemas[name]
		p("<a id=\"schema-%s\"></a>\n\n### %s\n\n", strings.ToLower(name), name)
		if s.Description != "" {
			p("%s\n\n", s.Description)
		}
		if len(s.Properties) == 0 {
			p("%s\n\n", s.typeOf())
			continue
		}
		p("| field | type | required |\n|---|---|---|\n")
		for _, f := range sortedKeys(s.Properties) {
			req := ""
			if slices.Contains(s.Required, f) {
				req = "yes"
			}
			p("| `%s` | %s | %s |\n", f, cell(s.Properties[f].typeOf()), req)
		}
		p("\n")
	}
	return b.String(), nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
