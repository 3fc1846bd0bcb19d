package main

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
	if _, err := runCmd(t, "cleanup", "--db", db, "--older-than", "2w", "--dry-run"); err != nil {
		t.Fatalf("cleanup --older-than 2w: %v", err)
	}
	if _, err := runCmd(t, "keys", "create", "--db", db, "--scope", "admin", "--expires", "2w"); err != nil {
		t.Fatalf("keys create --expires 2w: %v", err)
	}
}
