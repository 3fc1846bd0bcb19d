package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// exampleConfig is the example config file: every setting at its
// default, which the README explains.
var exampleConfig = filepath.Join("..", "..", "agentmem.example.json")

// exampleJSON writes the example config file: each setting of the table,
// in its order, at its default, one a line.
func exampleJSON(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("{\n")
	for i, s := range settings {
		def := defaults()
		var v string
		switch p := s.field(&def).(type) {
		case *string:
			v = strconv.Quote(*p)
		case *int, *int64, *float64, *bool:
			v = value{p}.String()
		case *time.Duration:
			v = strconv.Quote(formatDuration(*p))
		case *[]string:
			js, err := json.Marshal(append([]string{}, *p...)) // [] rather than null
			if err != nil {
				t.Fatal(err)
			}
			v = string(js)
		default:
			t.Fatalf("setting %s: a field of type %T", s.name, p)
		}
		comma := ","
		if i == len(settings)-1 {
			comma = ""
		}
		fmt.Fprintf(&b, "  %q: %s%s\n", s.name, v, comma)
	}
	b.WriteString("}\n")
	return b.String()
}

// TestExampleConfig: agentmem.example.json holds every setting at its
// default (go test -update rewrites it), and every command that takes
// settings reads it through the config loader as the defaults: the file
// cannot drift from them. serve accepts it.
func TestExampleConfig(t *testing.T) {
	want := exampleJSON(t)
	if *update {
		if err := os.WriteFile(exampleConfig, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(exampleConfig)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Fatalf("agentmem.example.json is out of date: run go test ./cmd/agentmem -run TestExampleConfig -update\nmismatch (-want +got):\n%s", diff)
	}
	if !json.Valid(got) {
		t.Fatal("agentmem.example.json is not JSON")
	}
	noEnv := func(string) string { return "" }
	for _, c := range commands {
		if c.in == 0 {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			var args arguments
			if c.args != nil {
				args = c.args()
			}
			cfg, _, err := c.parse([]string{"--config", exampleConfig}, noEnv, io.Discard, args)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range settings {
				if c.takes(s.name) && cfg.from[s.name] != s.name+" in "+exampleConfig {
					t.Errorf("%s: set by %q, not by the file", s.name, cfg.from[s.name])
				}
			}
			if diff := cmp.Diff(defaults(), cfg, cmpopts.IgnoreUnexported(Config{})); diff != "" {
				t.Errorf("the example config is not the defaults: mismatch (-want +got):\n%s", diff)
			}
		})
	}
	if _, err := parseServe([]string{"--config", exampleConfig}, noEnv, io.Discard); err != nil {
		t.Errorf("serve --config agentmem.example.json: %v", err)
	}
}

// TestREADME_ExampleConfig: the README's Configuration section points at
// the example file.
func TestREADME_ExampleConfig(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	i := strings.Index(text, "\n## Configuration\n")
	j := strings.Index(text[i+1:], "\n## ")
	if i < 0 || j < 0 {
		t.Fatal("README.md has no Configuration section")
	}
	if section := text[i : i+1+j]; !strings.Contains(section, "agentmem.example.json") {
		t.Error("README.md's Configuration section does not name agentmem.example.json")
	}
}
