package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/app"
	"github.com/agentmem/agentmem/client"
	"github.com/agentmem/agentmem/mcp"
)

var update = flag.Bool("update", false, "rewrite the settings table of the README")

// sample is a value of the setting field p other than its default: raw
// as a flag or variable gives it, js as the config file does, and the
// value it parses to.
func sample(p any) (raw, js string, want any) {
	switch p := p.(type) {
	case *string:
		return "x-test", `"x-test"`, "x-test"
	case *int:
		return strconv.Itoa(*p + 7), strconv.Itoa(*p + 7), *p + 7
	case *int64:
		return strconv.FormatInt(*p+7, 10), strconv.FormatInt(*p+7, 10), *p + 7
	case *float64:
		return fmt.Sprint(*p + 0.25), fmt.Sprint(*p + 0.25), *p + 0.25
	case *bool:
		return strconv.FormatBool(!*p), strconv.FormatBool(!*p), !*p
	case *time.Duration:
		return "1d12h", `"1d12h"`, 36 * time.Hour
	case *[]string:
		return " a, b ", `["a", "b"]`, []string{"a", "b"}
	}
	panic(fmt.Sprintf("no sample of %T", p))
}

// field returns the value of the field of cfg that flag f of command c
// sets.
func field(t *testing.T, c command, name string, cfg *Config) any {
	t.Helper()
	for _, s := range settings {
		if s.name == name && s.in&c.in != 0 {
			return reflect.ValueOf(s.field(cfg)).Elem().Interface()
		}
	}
	t.Fatalf("%s: --%s is not a setting", c.name, name)
	return nil
}

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "agentmem.json")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestSettings_EveryFlag is generated from the flag sets of every
// command: each flag is a setting, which its AGENTMEM_* variable and its
// key in the config file set too, or one of the command's arguments; a
// duration, setting or argument, takes days and weeks.
func TestSettings_EveryFlag(t *testing.T) {
	noEnv := func(string) string { return "" }
	for _, c := range commands {
		var args arguments
		if c.args != nil {
			args = c.args()
		}
		cfg := defaults()
		fs := c.flagSet(&cfg, args)
		fs.VisitAll(func(f *flag.Flag) {
			t.Run(c.name+"/"+f.Name, func(t *testing.T) {
				newArgs := func() arguments {
					if c.args == nil {
						return nil
					}
					return c.args()
				}
				parse := func(args []string, getenv func(string) string) Config {
					t.Helper()
					cfg, _, err := c.parse(args, getenv, io.Discard, newArgs())
					if err != nil {
						t.Fatal(err)
					}
					return cfg
				}
				if v, ok := f.Value.(value); ok {
					if _, isDuration := v.p.(*time.Duration); isDuration {
						for in, want := range map[string]time.Duration{"1d": 24 * time.Hour, "2w": 14 * 24 * time.Hour, "36h": 36 * time.Hour} {
							d := defaults()
							fs := c.flagSet(&d, newArgs())
							if err := fs.Parse([]string{"--" + f.Name, in}); err != nil {
								t.Fatalf("--%s %s: %v", f.Name, in, err)
							}
							if got := *fs.Lookup(f.Name).Value.(value).p.(*time.Duration); got != want {
								t.Fatalf("--%s %s = %v, want %v", f.Name, in, got, want)
							}
						}
					}
				}
				switch {
				case f.Name == "config":
					path := writeConfig(t, `{"db": "from-the-file"}`)
					if got := parse(nil, func(k string) string { return map[string]string{configEnv: path}[k] }).DB; got != "from-the-file" {
						t.Fatalf("%s=%s: db = %q, want the file's", configEnv, path, got)
					}
				case c.takes(f.Name):
					s := settings[slices.IndexFunc(settings, func(s setting) bool { return s.name == f.Name })]
					def := defaults()
					raw, js, want := sample(s.field(&def))
					if reflect.DeepEqual(want, field(t, c, f.Name, &def)) {
						t.Fatalf("the sample %v is the default", want)
					}
					env := s.env()
					if got := parse(nil, func(k string) string { return map[string]string{env: raw}[k] }); !reflect.DeepEqual(field(t, c, f.Name, &got), want) {
						t.Fatalf("%s=%q: %v, want %v", env, raw, field(t, c, f.Name, &got), want)
					}
					path := writeConfig(t, fmt.Sprintf(`{%q: %s}`, f.Name, js))
					if got := parse([]string{"--config", path}, noEnv); !reflect.DeepEqual(field(t, c, f.Name, &got), want) {
						t.Fatalf("config file {%q: %s}: %v, want %v", f.Name, js, field(t, c, f.Name, &got), want)
					}
					if got := parse([]string{"--" + f.Name + "=" + raw}, noEnv); !reflect.DeepEqual(field(t, c, f.Name, &got), want) {
						t.Fatalf("--%s=%q: %v, want %v", f.Name, raw, field(t, c, f.Name, &got), want)
					}
				default: // an argument: not a setting of this command, with no variable
					if c.in != 0 && isSetting(f.Name) {
						t.Fatalf("argument --%s has a setting's name", f.Name)
					}
				}
			})
		})
	}
}

// TestSettings_Table: every setting has its variable, AGENTMEM_ and its
// name in upper case, a usage, a type agentmem can parse, and a command
// that takes it; names are unique.
func TestSettings_Table(t *testing.T) {
	seen := map[string]bool{}
	name := regexp.MustCompile(`^[a-z][a-z0-9]*(-[a-z0-9]+)*$`)
	for _, s := range settings {
		cfg := defaults()
		switch {
		case !name.MatchString(s.name):
			t.Errorf("setting %q: not a flag name", s.name)
		case seen[s.name]:
			t.Errorf("setting %q: twice", s.name)
		case s.env() != "AGENTMEM_"+strings.ReplaceAll(strings.ToUpper(s.name), "-", "_"):
			t.Errorf("setting %q: variable %s", s.name, s.env())
		case s.usage == "":
			t.Errorf("setting %q: no usage", s.name)
		case (value{s.field(&cfg)}).kind() == "":
			t.Errorf("setting %q: a field of type %T", s.name, s.field(&cfg))
		case !slices.ContainsFunc(commands, func(c command) bool { return c.takes(s.name) }):
			t.Errorf("setting %q: no command takes it", s.name)
		}
		seen[s.name] = true
	}
}

// TestSettings_Precedence: a flag wins over its variable, which wins over
// the config file, which wins over the default.
func TestSettings_Precedence(t *testing.T) {
	serve, _ := findCommand("serve")
	path := writeConfig(t, `{"rate-limit": 3, "trusted-proxies": ["10.0.0.0/8"], "idle-timeout": "3h"}`)
	env := map[string]string{"AGENTMEM_RATE_LIMIT": "2", "AGENTMEM_TRUSTED_PROXIES": "10.1.0.0/16", "AGENTMEM_IDLE_TIMEOUT": "2h", configEnv: path}
	for _, tt := range []struct {
		name  string
		args  []string
		env   []string // of env, those set
		rate  float64
		proxy string
		idle  time.Duration
	}{
		{"Default", nil, nil, 0, "", 30 * time.Minute},
		{"File", nil, []string{configEnv}, 3, "10.0.0.0/8", 3 * time.Hour},
		{"EnvOverFile", nil, []string{configEnv, "AGENTMEM_RATE_LIMIT", "AGENTMEM_TRUSTED_PROXIES", "AGENTMEM_IDLE_TIMEOUT"}, 2, "10.1.0.0/16", 2 * time.Hour},
		{"FlagOverEnv", []string{"--rate-limit", "1", "--trusted-proxies", "10.2.0.0/16", "--idle-timeout", "1h"},
			[]string{configEnv, "AGENTMEM_RATE_LIMIT", "AGENTMEM_TRUSTED_PROXIES", "AGENTMEM_IDLE_TIMEOUT"}, 1, "10.2.0.0/16", time.Hour},
		{"FlagConfigOverEnvConfig", []string{"--config", writeConfig(t, `{"rate-limit": 4}`)}, []string{configEnv}, 4, "", 30 * time.Minute},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg, _, err := serve.parse(tt.args, func(k string) string {
				if slices.Contains(tt.env, k) {
					return env[k]
				}
				return ""
			}, io.Discard, nil)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.RateLimit != tt.rate || strings.Join(cfg.TrustedProxies, ",") != tt.proxy || cfg.IdleTimeout != tt.idle {
				t.Fatalf("rate %v, proxies %q, idle %v; want %v, %q, %v", cfg.RateLimit, cfg.TrustedProxies, cfg.IdleTimeout, tt.rate, tt.proxy, tt.idle)
			}
		})
	}
}

// TestSettings_Errors: a bad value is an error naming where it was given:
// the variable, or the key of the config file; so is an unknown key.
func TestSettings_Errors(t *testing.T) {
	bad := writeConfig(t, `{"rate-limit": "fast"}`)
	unknown := writeConfig(t, `{"rate-limit": 5, "rate-limmit": 50}`)
	invalid := writeConfig(t, `{"auth": "magic"}`)
	object := writeConfig(t, `{"db": {"path": "x"}}`)
	for _, tt := range []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"Int", nil, map[string]string{"AGENTMEM_RATE_BURST": "many"}, `AGENTMEM_RATE_BURST="many": not a whole number`},
		{"Float", nil, map[string]string{"AGENTMEM_RATE_LIMIT": "fast"}, `AGENTMEM_RATE_LIMIT="fast": not a number`},
		{"Bool", nil, map[string]string{"AGENTMEM_INSECURE": "yes please"}, `AGENTMEM_INSECURE="yes please": not true or false`},
		{"Duration", nil, map[string]string{"AGENTMEM_IDLE_TIMEOUT": "soon"}, `AGENTMEM_IDLE_TIMEOUT="soon": not a duration`},
		{"Validate", nil, map[string]string{"AGENTMEM_AUTH": "magic"}, `AGENTMEM_AUTH must be none, apikey or header, not "magic"`},
		{"ValidateNumber", nil, map[string]string{"AGENTMEM_RATE_LIMIT": "-1"}, `AGENTMEM_RATE_LIMIT must not be negative`},
		{"ValidateFlag", []string{"--window-turns", "-1"}, nil, `--window-turns must not be negative`},
		{"Retention", []string{"--done-jobs-retention", "-1h"}, nil, `invalid value "-1h" for flag -done-jobs-retention: not a duration`},
		{"JobLease", []string{"--job-lease", "500ms"}, nil, `--job-lease must be at least 1s`},
		{"AdmitSearch", []string{"--admit-search", "-2"}, nil, `--admit-search must be -1 (no bound), 0 (one per CPU) or a number of searches, not -2`},
		{"AdmitBulk", nil, map[string]string{"AGENTMEM_ADMIT_BULK": "-5"}, `AGENTMEM_ADMIT_BULK must be -1 (no bound)`},
		{"Window", []string{"--window-turns", "0"}, nil, `--window-turns and --window-messages are both 0`},
		{"FileValue", []string{"--config", bad}, nil, `config file ` + bad + `: rate-limit "fast": not a number`},
		{"FileUnknownKey", []string{"--config", unknown}, nil, `config file ` + unknown + `: unknown setting "rate-limmit"`},
		{"FileValidate", []string{"--config", invalid}, nil, `auth in ` + invalid + ` must be none, apikey or header`},
		{"FileObject", []string{"--config", object}, nil, `db must be a string, a number, a boolean or an array of strings`},
		{"FileMissing", []string{"--config", "/nonexistent/agentmem.json"}, nil, `config file: open /nonexistent/agentmem.json`},
		{"FileNotJSON", nil, map[string]string{configEnv: writeConfig(t, `db = "x"`)}, `want a JSON object of settings`},
		{"Summarize", []string{"--summarize-trigger-turns", "5", "--summarize-keep-turns", "5"}, nil, `--summarize-keep-turns (5) must be below --summarize-trigger-turns (5)`},
		{"NoTrigger", []string{"--summarize-trigger-fraction", "0"}, nil, `the summarize strategy needs --summarize-trigger-turns or --summarize-trigger-fraction`},
		{"Fraction", []string{"--context-warn-fraction", "1.5"}, nil, `--context-warn-fraction must be above 0 and at most 1`},
		{"Confidence", []string{"--insight-min-confidence", "0"}, nil, `--insight-min-confidence must be above 0 and at most 1`},
		{"ChunkTurns", []string{"--chunk-turns", "0"}, nil, `--chunk-turns must be between 1 and 1000`},
		{"Strategy", []string{"--context-strategy", "all"}, nil, `--context-strategy must be trim, window or summarize, not "all"`},
		{"MCPSessionsPerKey", []string{"--mcp-sessions-per-key", "0"}, nil, `--mcp-sessions-per-key must be at least 1`},
		{"MCPMaxSessions", []string{"--mcp-max-sessions", "4"}, nil, `--mcp-max-sessions (4) must be at least --mcp-sessions-per-key (16)`},
		{"MCPSessionIdle", nil, map[string]string{"AGENTMEM_MCP_SESSION_IDLE": "100ms"}, `AGENTMEM_MCP_SESSION_IDLE must be at least 1s`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseServe(tt.args, func(k string) string { return tt.env[k] }, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

// TestSettings_ConfigFileOtherCommands: one config file serves every
// command: a setting of serve in it is no error for migrate, which takes
// its db.
func TestSettings_ConfigFileOtherCommands(t *testing.T) {
	db := filepath.Join(t.TempDir(), "from-file.db")
	b, _ := json.Marshal(map[string]any{"db": db, "rate-limit": 50, "addr": "0.0.0.0:9000"})
	path := writeConfig(t, string(b))
	if _, err := runCmd(t, "migrate", "--config", path); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(db); err != nil {
		t.Fatalf("migrate did not use the file's db: %v", err)
	}
}

// TestREADME_Settings: the README's table of settings is the table of
// settings (go test -update rewrites it).
func TestREADME_Settings(t *testing.T) {
	const begin, end = "<!-- settings: generated by go test ./cmd/agentmem -run TestREADME_Settings -update -->\n", "<!-- /settings -->\n"
	readme := filepath.Join("..", "..", "README.md")
	b, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	i, j := strings.Index(text, begin), strings.Index(text, end)
	if i < 0 || j < i {
		t.Fatalf("README.md has no %q … %q section", begin, end)
	}
	var table strings.Builder
	table.WriteString("| flag | variable | default | what |\n|---|---|---|---|\n")
	table.WriteString("| `--config` | `" + configEnv + "` | | a JSON file of settings by name (all commands) |\n")
	for _, s := range settings {
		def := defaults()
		d := value{s.field(&def)}.String()
		if d != "" {
			d = "`" + d + "`"
		}
		usage := s.usage
		switch s.in {
		case inStore:
			usage += " (all commands that open the database)"
		case inServe:
			usage += " (*serve only*)"
		}
		fmt.Fprintf(&table, "| `--%s` | `%s` | %s | %s |\n", s.name, s.env(), d, strings.ReplaceAll(usage, "|", `\|`))
	}
	got := text[:i+len(begin)] + table.String() + text[j:]
	if *update {
		if err := os.WriteFile(readme, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got != text {
		t.Fatalf("README.md's table of settings is out of date: run go test ./cmd/agentmem -run TestREADME_Settings -update\nwant:\n%s", table.String())
	}
}

// TestREADME_Variables: every AGENTMEM_* variable the README names is a
// setting's (or the config file's, or the tests').
func TestREADME_Variables(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{configEnv: true, proxyKeyEnv: true, apiKeyEnv: true, "AGENTMEM_TEST_POSTGRES": true, "AGENTMEM_FAULTS": true}
	for _, s := range settings {
		known[s.env()] = true
	}
	for _, v := range regexp.MustCompile(`AGENTMEM_[A-Z0-9_]*[A-Z0-9]`).FindAllString(string(b), -1) {
		if !known[v] {
			t.Errorf("README.md names %s, which sets nothing", v)
		}
	}
}

// TestServe_AppConfig: serve's settings of the memory pipeline reach
// app.Config, whose tests (package app) show each changing what agentmem
// does.
func TestServe_AppConfig(t *testing.T) {
	for _, tt := range []struct {
		args []string
		got  func(app.Config) any
		want any
	}{
		{[]string{"--window-turns", "3"}, func(c app.Config) any { return c.Context.WindowTurns }, 3},
		{[]string{"--window-messages", "4"}, func(c app.Config) any { return c.Context.WindowMessages }, 4},
		{[]string{"--summarize-trigger-turns", "10", "--summarize-keep-turns", "5"}, func(c app.Config) any { return *c.Context.Summarize },
			agentmem.SummarizePolicy{TriggerTurns: 10, KeepTurns: 5, TriggerFraction: 0.7, KeepFraction: 0.4}},
		{[]string{"--summarize-trigger-fraction", "0.9", "--summarize-keep-fraction", "0.5"}, func(c app.Config) any { return *c.Context.Summarize },
			agentmem.SummarizePolicy{TriggerFraction: 0.9, KeepFraction: 0.5}},
		{[]string{"--context-budget", "8000", "--context-model", "gpt-4", "--context-strategy", "trim"}, func(c app.Config) any {
			return []any{c.Context.BudgetTokens, c.Context.Model, c.Context.Strategy}
		}, []any{8000, "gpt-4", "trim"}},
		{[]string{"--context-warn-fraction", "0.6"}, func(c app.Config) any { return c.WarnFraction }, 0.6},
		{[]string{"--recent-summaries", "3"}, func(c app.Config) any { return c.RecentSummaries }, 3},
		{[]string{"--recent-summaries", "0"}, func(c app.Config) any { return c.RecentSummaries }, -1}, // none
		{[]string{"--chunk-turns", "4"}, func(c app.Config) any { return c.ChunkTurns }, 4},
		{[]string{"--insight-min-confidence", "0.9"}, func(c app.Config) any { return c.InsightMinConfidence }, 0.9},
		{[]string{"--facts-min-score", "0.5"}, func(c app.Config) any { return c.FactsMinScore }, 0.5},
		{[]string{"--insight-categories", "goals, risk"}, func(c app.Config) any { return c.InsightCategories }, []string{"goals", "risk"}},
		{[]string{"--llm-model", "m", "--summary-model", "s", "--extract-model", "e", "--reflect-model", "r"}, func(c app.Config) any {
			return []string{c.LLMModel, c.SummaryModel, c.ExtractModel, c.ReflectModel}
		}, []string{"m", "s", "e", "r"}},
		{[]string{"--idle-timeout", "1d"}, func(c app.Config) any { return c.IdleTimeout }, 24 * time.Hour},
		{[]string{"--done-jobs-retention", "2d"}, func(c app.Config) any { return c.DoneJobsRetention }, 48 * time.Hour},
		{nil, func(c app.Config) any { return c.DoneJobsRetention }, 24 * time.Hour}, // the default
		{[]string{"--job-lease", "30s"}, func(c app.Config) any { return c.JobLease }, 30 * time.Second},
		{nil, func(c app.Config) any { return c.JobLease }, 5 * time.Minute}, // the default
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			cfg, err := parseServe(tt.args, func(string) string { return "" }, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			ac, err := cfg.app(nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := tt.got(ac); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
		})
	}
}

// TestServe_WindowTurnsFromEnv: a server whose window is set by its
// variables builds contexts of that many turns.
func TestServe_WindowTurnsFromEnv(t *testing.T) {
	srv := MustServeEnv(t, filepath.Join(t.TempDir(), "agentmem.db"), map[string]string{"AGENTMEM_CONTEXT_STRATEGY": "window", "AGENTMEM_WINDOW_TURNS": "2"})
	c := client.New(srv.URL, nil)
	ctx := context.Background()
	if err := c.CreateThread(ctx, "alice", &agentmem.Thread{ID: "t"}); err != nil {
		t.Fatal(err)
	}
	var msgs []*agentmem.Message
	for i := range 5 {
		msgs = append(msgs, &agentmem.Message{Role: "user", Content: fmt.Sprintf("Question %d.", i)}, &agentmem.Message{Role: "assistant", Content: fmt.Sprintf("Answer %d.", i)})
	}
	if _, err := c.AppendMessages(ctx, "alice", "t", msgs, ""); err != nil {
		t.Fatal(err)
	}
	got, err := c.BuildContext(ctx, "alice", "t", agentmem.ContextRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if n := got.Telemetry.IncludedMessages; n != 4 {
		t.Fatalf("included %d messages, want the last 2 turns' 4", n)
	}
}

// TestSettings_MCP: the bounds of MCP sessions over HTTP reach the MCP
// handler's options; by default, the handler's defaults.
func TestSettings_MCP(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want mcp.HTTPOptions
	}{
		{nil, mcp.HTTPOptions{MaxSessionsPerKey: mcp.DefaultMaxSessionsPerKey, MaxSessions: mcp.DefaultMaxSessions, IdleTimeout: mcp.DefaultSessionIdle}},
		{[]string{"--mcp-sessions-per-key", "4", "--mcp-max-sessions", "50", "--mcp-session-idle", "90s"}, mcp.HTTPOptions{MaxSessionsPerKey: 4, MaxSessions: 50, IdleTimeout: 90 * time.Second}},
	} {
		cfg, err := parseServe(tt.args, func(string) string { return "" }, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if got := cfg.mcpOptions(); got != tt.want {
			t.Errorf("%q: %+v, want %+v", tt.args, got, tt.want)
		}
	}
}
