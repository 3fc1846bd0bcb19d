package httpapi

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// Types whose schemas TestSchemaGen checks: every rule of encoding/json
// that schemaGen follows.
type (
	schemaBase struct {
		Shared string `json:"shared"`
		Hidden string `json:"hidden"` // hidden by schemaOuter's own field of that name
	}
	schemaOther struct {
		Twin string `json:"twin"` // ambiguous with schemaBase2's: encoding/json writes neither
	}
	schemaBase2 struct {
		Twin string `json:"twin"`
	}
	SchemaItem struct {
		N int `json:"n"`
	}
	schemaOuter struct {
		schemaBase
		*schemaOther
		schemaBase2
		Hidden    int                `json:"hidden"`
		Plain     string             // no tag: its Go name
		Renamed   string             `json:"renamed"`
		Optional  string             `json:"optional,omitempty"`
		When      time.Time          `json:"when"`
		Later     time.Time          `json:"later,omitzero"`
		Maybe     *time.Time         `json:"maybe"`
		MaybeNot  *time.Time         `json:"maybe_not,omitempty"`
		Meta      json.RawMessage    `json:"meta"`
		Bytes     []byte             `json:"bytes"`
		Items     []SchemaItem       `json:"items"`
		Item      *SchemaItem        `json:"item"`
		Scores    map[string]float64 `json:"scores"`
		Any       any                `json:"any"`
		Small     uint8              `json:"small"`
		Skipped   string             `json:"-"`
		unexposed string
	}
)

func TestSchemaGen(t *testing.T) {
	for _, tt := range []struct {
		name string
		dir  direction
		want string
	}{
		{"Response", toClient, `{"type":"object","properties":{
			"Plain":{"type":"string"},"any":{},"bytes":{"type":"string","format":"byte"},"hidden":{"type":"integer","format":"int64"},
			"item":{"anyOf":[{"$ref":"#/components/schemas/SchemaItem"},{"type":"null"}]},
			"items":{"type":"array","items":{"$ref":"#/components/schemas/SchemaItem"}},
			"later":{"type":"string","format":"date-time"},"maybe":{"type":["string","null"],"format":"date-time"},
			"maybe_not":{"type":"string","format":"date-time"},"meta":{"type":"object"},"optional":{"type":"string"},
			"renamed":{"type":"string"},"scores":{"type":"object","additionalProperties":{"type":"number","format":"double"}},
			"shared":{"type":"string"},"small":{"type":"integer","minimum":0},"when":{"type":"string","format":"date-time"}},
			"required":["shared","hidden","Plain","renamed","when","maybe","meta","bytes","items","item","scores","any","small"]}`},
		{"Request", fromClient, `{"type":"object","properties":{
			"Plain":{"type":"string"},"any":{},"bytes":{"type":"string","format":"byte"},"hidden":{"type":"integer","format":"int64"},
			"item":{"anyOf":[{"$ref":"#/components/schemas/SchemaItemInput"},{"type":"null"}]},
			"items":{"type":"array","items":{"$ref":"#/components/schemas/SchemaItemInput"}},
			"later":{"type":"string","format":"date-time"},"maybe":{"type":["string","null"],"format":"date-time"},
			"maybe_not":{"type":["string","null"],"format":"date-time"},"meta":{"type":["object","null"]},"optional":{"type":"string"},
			"renamed":{"type":"string"},"scores":{"type":"object","additionalProperties":{"type":"number","format":"double"}},
			"shared":{"type":"string"},"small":{"type":"integer","minimum":0},"when":{"type":"string","format":"date-time"}},
			"additionalProperties":false}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := newSchemaGen()
			g.schemaOf(reflect.TypeFor[schemaOuter](), toClient, "Outer")
			g.schemaOf(reflect.TypeFor[schemaOuter](), fromClient, "Outer")
			schemas := g.components()
			for _, err := range g.errs {
				if !strings.HasPrefix(err.Error(), "fieldRules: ") { // the API's rules, of types not reached here
					t.Errorf("error: %v", err)
				}
			}
			name := map[direction]string{toClient: "Outer", fromClient: "OuterInput"}[tt.dir]
			got, err := json.Marshal(schemas[name])
			if err != nil {
				t.Fatal(err)
			}
			var gotV, wantV any
			if err := json.Unmarshal(got, &gotV); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(tt.want), &wantV); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(wantV, gotV); diff != "" {
				t.Errorf("%s mismatch (-want +got):\n%s", name, diff)
			}
		})
	}
}

// TestSchemaGen_SelfMarshalled checks that a type with its own MarshalJSON
// and no schema in selfSchema is an error, not a schema of fields it may
// not write.
func TestSchemaGen_SelfMarshalled(t *testing.T) {
	g := newSchemaGen()
	g.schemaOf(reflect.TypeFor[struct {
		V selfMarshalling `json:"v"`
	}](), toClient, "")
	if len(g.errs) == 0 || !strings.Contains(g.errs[0].Error(), "marshals itself") {
		t.Fatalf("errs=%v, want one saying the type marshals itself", g.errs)
	}
}

type selfMarshalling struct{ A int }

func (selfMarshalling) MarshalJSON() ([]byte, error) { return []byte(`"a"`), nil }
