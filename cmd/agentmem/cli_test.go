package main

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/app"
)

// TestServe_EnvSettings: the variables an operator sets to configure
// serve (the README promises every flag one) reach its Config.
func TestServe_EnvSettings(t *testing.T) {
	for _, tt := range []struct {
		env, value string
		got        func(Config) any
		want       any
	}{
		{"AGENTMEM_MAX_BATCH", "7", func(c Config) any { return c.MaxBatchMessages }, 7},
		{"AGENTMEM_RATE_LIMIT", "50", func(c Config) any { return c.RateLimit }, 50.0},
		{"AGENTMEM_RATE_BURST", "100", func(c Config) any { return c.RateBurst }, 100},
		{"AGENTMEM_CONTEXT_BUDGET", "8000", func(c Config) any { return c.ContextBudget }, 8000},
		{"AGENTMEM_IDLE_TIMEOUT", "2h", func(c Config) any { return c.IdleTimeout }, 2 * time.Hour},
		{"AGENTMEM_INSECURE", "true", func(c Config) any { return c.Insecure }, true},
		{"AGENTMEM_MAX_BODY_BYTES", "9000000", func(c Config) any { return c.MaxBodyBytes }, int64(9000000)},
		{"AGENTMEM_SHUTDOWN_TIMEOUT", "5s", func(c Config) any { return c.ShutdownTimeout }, 5 * time.Second},
		{"AGENTMEM_MAX_QUERY_BYTES", "4096", func(c Config) any { return c.MaxQueryBytes }, 4096},
		{"AGENTMEM_LLM_BASE_URL", "http://localhost:11434/v1", func(c Config) any { return c.LLMBaseURL }, "http://localhost:11434/v1"},
	} {
		t.Run(tt.env, func(t *testing.T) {
			cfg, err := parseServe(nil, func(k string) string {
				if k == tt.env {
					return tt.value
				}
				return ""
			}, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if got := tt.got(cfg); got != tt.want {
				t.Fatalf("%s=%s: got %v, want %v", tt.env, tt.value, got, tt.want)
			}
		})
	}
}

// TestHelp: COMMAND -h prints the command's usage on standard output and
// succeeds.
func TestHelp(t *testing.T) {
	for _, args := range [][]string{
		{"serve", "-h"}, {"migrate", "-h"}, {"export", "-h"}, {"import", "--help"}, {"cleanup", "-h"},
		{"keys", "-h"}, {"keys", "--help"}, {"keys", "create", "-h"}, {"keys", "list", "-h"}, {"keys", "revoke", "-h"},
		{"eval", "-h"}, {"eval", "locomo", "-h"}, {"demo", "-h"}, {"-h"}, {"help"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), args, func(string) string { return "" }, strings.NewReader(""), &stdout, &stderr)
			if err != nil {
				t.Fatalf("err = %v, want nil (stderr %q)", err, stderr.String())
			}
			if !strings.Contains(stdout.String(), "sage") {
				t.Fatalf("stdout = %q, want the usage", stdout.String())
			}
			if stderr.Len() > 0 {
				t.Fatalf("stderr = %q, want nothing", stderr.String())
			}
		})
	}
}

// TestCLIErrors: errors read as sentences for an operator: an agentmem
// error gives its message, not its code; an unknown database scheme is
// named as such.
func TestCLIErrors(t *testing.T) {
	db := filepath.Join(t.TempDir(), "a.db")
	if _, err := runCmd(t, "migrate", "--db", db); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"cleanup", "--db", db, "--older-than", "3x"}, `invalid value "3x" for flag -older-than: not a duration`},
		{[]string{"cleanup", "--db", db, "--older-than", "0d"}, "--older-than 0s would delete every thread"},
		{[]string{"cleanup", "--db", db, "--older-than", "0", "--dry-run"}, "would delete every thread"},
		{[]string{"keys", "create", "--db", db, "--scope", "admin", "--expires", "0d"}, "for a key that never expires, use --expires never"},
		{[]string{"keys", "revoke", "--db", db, "nope"}, "API key not found."},
		{[]string{"keys", "create", "--db", db, "--scope", "bogus"}, `scope "bogus" is not admin`},
		{[]string{"migrate", "--db", "mysql://x"}, "unsupported database scheme mysql: use sqlite:PATH, a file path, or postgres://…"},
		{[]string{"export", "--db", "mysql://x", "--user", "alice"}, "unsupported database scheme mysql"},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			_, err := runCmd(t, tt.args...)
			if err == nil {
				t.Fatal("no error")
			}
			if msg := err.Error(); !strings.Contains(msg, tt.want) || strings.Contains(msg, "code=") {
				t.Fatalf("error %q, want %q without its code", msg, tt.want)
			}
		})
	}
}

// TestDurations: every duration, of every command, takes days and weeks
// as well as Go's units.
func TestDurations(t *testing.T) {
	cfg, err := parseServe([]string{"--idle-timeout", "1d", "--shutdown-timeout", "1d12h"}, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.IdleTimeout != 24*time.Hour || cfg.ShutdownTimeout != 36*time.Hour {
		t.Fatalf("idle %v, shutdown %v; want 24h, 36h", cfg.IdleTimeout, cfg.ShutdownTimeout)
	}
	db := filepath.Join(t.TempDir(), "a.db")
	if _, err := runCmd(t, "migrate", "--db", db); err != nil {
		t.Fatal(err)
	}
	if _, err := runCmd(t, "cleanup", "--db", db, "--older-than", "2w", "--dry-run"); err != nil {
		t.Fatalf("cleanup --older-than 2w: %v", err)
	}
	if _, err := runCmd(t, "keys", "create", "--db", db, "--scope", "admin", "--expires", "2w"); err != nil {
		t.Fatalf("keys create --expires 2w: %v", err)
	}
}

// TestCLI_FlagsAfterArguments: flags may follow a command's positional
// arguments (agentmem search "shellfish" --user priya), everywhere a
// command takes some; after "--" everything is an argument.
func TestCLI_FlagsAfterArguments(t *testing.T) {
	dir := t.TempDir()
	db := "sqlite:" + filepath.Join(dir, "agentmem.db")
	ctx := context.Background()
	mem, err := app.New(ctx, app.Config{DB: db})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mem.CreateMemory(ctx, "priya", agentmem.MemoryInput{Text: "User is allergic to shellfish.", Category: "health"}); err != nil {
		t.Fatal(err)
	}
	if err := mem.CreateThread(ctx, "priya", &agentmem.Thread{ID: "trip"}); err != nil {
		t.Fatal(err)
	}
	if _, err := mem.AppendMessages(ctx, "priya", "trip", []*agentmem.Message{{Role: "user", Content: "Plan a dinner in Lisbon."}}, ""); err != nil {
		t.Fatal(err)
	}
	mem.Close()

	if got := runOut(t, "search", "shellfish", "--user", "priya", "--db", db); !strings.Contains(got, "User is allergic to shellfish.") {
		t.Errorf("search QUERY --user …:\n%s", got)
	}
	if got := runOut(t, "search", "--user", "priya", "what", "about", "--db", db, "shellfish", "--json"); !strings.Contains(got, `"results"`) || !strings.Contains(got, "shellfish") {
		t.Errorf("search with the query's words between flags (--json):\n%s", got)
	}
	// After "--", a word that looks like a flag is part of the query.
	if got := runOut(t, "search", "--user", "priya", "--db", db, "--", "--json", "shellfish"); !strings.HasPrefix(got, "SCORE") {
		t.Errorf(`search -- --json …: %q, want a table (--json after "--" is the query's)`, got)
	}
	if got := runOut(t, "context", "And", "dinner?", "--user", "priya", "--thread", "trip", "--db", db, "--budget", "4000"); !strings.Contains(got, "Plan a dinner in Lisbon.") || !strings.Contains(got, "of 4000 tokens") {
		t.Errorf("context INPUT --user …:\n%s", got)
	}

	out := filepath.Join(dir, "priya.json")
	runOut(t, "export", "--user", "priya", "--db", db, "--out", out)
	db2 := "sqlite:" + filepath.Join(dir, "b.db")
	if got := runOut(t, "import", out, "--user", "bob", "--db", db2); !strings.Contains(got, "imported thread trip") {
		t.Errorf("import FILE --user …: %q", got)
	}
	if got := runOut(t, "import", out, "--user", "bob", "--db", db2, "--on-conflict", "skip"); !strings.Contains(got, "skipped") {
		t.Errorf("import FILE … --on-conflict skip: %q", got)
	}
	token := strings.TrimSpace(runOut(t, "keys", "create", "--db", db, "--scope", "user:priya"))
	id := strings.TrimPrefix(token, "am_")[:16]
	if got := runOut(t, "keys", "revoke", id, "--db", db); !strings.Contains(got, "revoked key "+id) {
		t.Errorf("keys revoke ID --db …: %q", got)
	}
	// A subcommand comes first, and an error says so.
	for _, args := range [][]string{{"keys", "--db", db, "list"}, {"eval", "--json", "extraction"}} {
		if _, err := runCmd(t, args...); err == nil || !strings.Contains(err.Error(), "before its flags") {
			t.Errorf("%v: %v, want an error saying the subcommand comes before its flags", args, err)
		}
	}
	// A second argument where one is taken is still refused, by name.
	if _, err := runCmd(t, "import", out, "--user", "bob", out, "--db", db2); err == nil || !strings.Contains(err.Error(), "one file") {
		t.Errorf("import FILE --user bob FILE: %v, want an error saying import takes one file", err)
	}
}

// TestImport_OnConflictNamed: on the command line, the import's conflict
// and a bad --on-conflict name the flag, not the API's on_conflict.
func TestImport_OnConflictNamed(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "a.db")
	seed(t, db, "alice", time.Now())
	out := filepath.Join(dir, "alice.json")
	if _, err := runCmd(t, "export", "--db", db, "--user", "alice", "--out", out); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"import", "--db", db, "--user", "alice", out}, "--on-conflict skip or replace"},
		{[]string{"import", "--db", db, "--user", "alice", "--on-conflict", "merge", out}, `--on-conflict must be fail, skip or replace, not "merge"`},
	} {
		_, err := runCmd(t, tt.args...)
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "on_conflict") {
			t.Errorf("%v: %v, want %q (and no on_conflict)", tt.args, err, tt.want)
		}
	}
}
