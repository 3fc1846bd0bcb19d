package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// agentmemBinary builds the command into a temporary directory, for the
// tests that start it as a child process, as an MCP host does.
func agentmemBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "agentmem")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// mcpSession starts `agentmem ARGS…` as a child process and connects the
// SDK's client to it over its stdin and stdout.
func mcpSession(t *testing.T, bin string, args ...string) *sdk.ClientSession {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test-host", Version: "1"}, nil).Connect(context.Background(), &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// tool calls a tool and returns its structured result as JSON; it fails
// on any error.
func tool(t *testing.T, cs *sdk.ClientSession, name string, args map[string]any) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	b, _ := json.Marshal(res.StructuredContent)
	if res.IsError {
		t.Fatalf("%s: tool error %+v", name, res.Content)
	}
	return string(b)
}

// TestMCP_Stdio: an MCP host that starts `agentmem mcp` remembers in one
// session what it recalls in the next (a new process on the same
// database), and reaches a running server with --url.
func TestMCP_Stdio(t *testing.T) {
	bin := agentmemBinary(t)
	db := "sqlite:" + filepath.Join(t.TempDir(), "agentmem.db")
	first := mcpSession(t, bin, "mcp", "--user", "ada", "--db", db, "--log-level", "error")
	if got := tool(t, first, "remember", map[string]any{"text": "User plays the cello."}); !strings.Contains(got, "cello") {
		t.Fatalf("remember: %s", got)
	}
	first.Close()

	second := mcpSession(t, bin, "mcp", "--user", "ada", "--db", db, "--log-level", "error")
	if got := tool(t, second, "retrieve_user_facts", map[string]any{"query": "What instrument does the user play?"}); !strings.Contains(got, "cello") {
		t.Errorf("next session: %s", got)
	}
	if got := tool(t, second, "search_memory", map[string]any{"query": "cello"}); strings.Contains(got, `"results":[]`) {
		t.Errorf("search: %s", got)
	}
	second.Close()

	s := MustServe(t, "sqlite:"+filepath.Join(t.TempDir(), "served.db"))
	remote := mcpSession(t, bin, "mcp", "--user", "bo", "--url", s.URL)
	tool(t, remote, "remember", map[string]any{"text": "User lives in Kyoto."})
	if got := get(t, s.URL+"/v1/users/bo/memories"); !strings.Contains(got, "Kyoto") {
		t.Errorf("the server does not hold the memory: %s", got)
	}

	// The same tools over streamable HTTP at serve's /mcp: with auth off,
	// the user is X-Agentmem-User, else local-user.
	httpSession, err := sdk.NewClient(&sdk.Implementation{Name: "test-host", Version: "1"}, nil).Connect(context.Background(),
		&sdk.StreamableClientTransport{Endpoint: s.URL + "/mcp", MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer httpSession.Close()
	if got := tool(t, httpSession, "retrieve_user_facts", map[string]any{"query": "Where does the user live?"}); strings.Contains(got, "Kyoto") {
		t.Errorf("local-user sees bo's memory: %s", got)
	}
	tool(t, httpSession, "remember", map[string]any{"text": "User likes tea."})
	if got := get(t, s.URL+"/v1/users/local-user/memories"); !strings.Contains(got, "tea") {
		t.Errorf("local-user's memory: %s", got)
	}
}

// TestMCP_Help: mcp -h lists the settings mcp uses (the database, the
// models, the context's defaults…), not those of serve's HTTP server;
// so do the query commands.
func TestMCP_Help(t *testing.T) {
	for _, cmd := range []string{"mcp", "search", "context", "memories"} {
		t.Run(cmd, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if err := run(context.Background(), []string{cmd, "-h"}, func(string) string { return "" }, strings.NewReader(""), &stdout, &stderr); err != nil {
				t.Fatal(err)
			}
			help := stdout.String() + stderr.String()
			for _, want := range []string{"--db ", "--log-level ", "--llm-model ", "--embedder ", "--context-budget ", "--max-message-bytes ", "--config "} {
				if !strings.Contains(help, want) {
					t.Errorf("%s -h does not list %s:\n%s", cmd, want, help)
				}
			}
			for _, serveOnly := range []string{"--addr ", "--auth ", "--insecure ", "--user-header ", "--trusted-proxies ", "--rate-limit ", "--rate-burst ",
				"--allowed-origins ", "--allowed-hosts ", "--max-body-bytes ", "--max-query-bytes ", "--shutdown-timeout ",
				"--proxy-upstream ", "--proxy-mode ", "--proxy-budgets ", "--proxy-timeout ", "--proxy-degrade "} {
				if strings.Contains(help, serveOnly) {
					t.Errorf("%s -h lists serve's %s", cmd, serveOnly)
				}
			}
		})
	}
	// serve's own settings are no flags of mcp; their variables do not
	// concern it.
	getenv := func(k string) string { return map[string]string{"AGENTMEM_AUTH": "bogus"}[k] }
	err := run(context.Background(), []string{"mcp", "--user", "ada", "--addr", ":9"}, getenv, strings.NewReader(""), io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "-addr") {
		t.Errorf("mcp --addr: %v, want an error naming the flag", err)
	}
}

// TestMCP_URLChecked: mcp --url proves at start, with one authenticated
// call, that the server answers and its key reaches --user; a bad key, a
// key of another user or no server is an error naming it, before any
// tool is served.
func TestMCP_URLChecked(t *testing.T) {
	db := filepath.Join(t.TempDir(), "agentmem.db")
	alice := strings.TrimSpace(runOut(t, "keys", "create", "--db", db, "--scope", "user:alice"))
	srv := MustServe(t, db, "--auth", "apikey")
	mcpRun := func(env map[string]string, args ...string) error {
		return run(context.Background(), append([]string{"mcp"}, args...), func(k string) string { return env[k] }, strings.NewReader(""), io.Discard, io.Discard)
	}
	for _, tt := range []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"BadKey", nil, []string{"--user", "alice", "--url", srv.URL, "--api-key", "am_0000000000000000bogus"}, "API key"},
		{"NoKey", nil, []string{"--user", "alice", "--url", srv.URL}, "API key"},
		{"OtherUser", nil, []string{"--user", "bob", "--url", srv.URL, "--api-key", alice}, `"bob"`},
		{"OtherUserKeyFromEnv", map[string]string{apiKeyEnv: alice}, []string{"--user", "bob", "--url", srv.URL}, `"bob"`},
		{"NoServer", nil, []string{"--user", "alice", "--url", "http://127.0.0.1:1", "--api-key", alice}, "http://127.0.0.1:1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := mcpRun(tt.env, tt.args...)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "mcp") {
				t.Fatalf("%v: %v, want an error naming %s", tt.args, err, tt.want)
			}
		})
	}
	// The key of the user: served (until standard input ends).
	if err := mcpRun(nil, "--user", "alice", "--url", srv.URL, "--api-key", alice); err != nil {
		t.Fatalf("mcp --url with alice's key for alice: %v", err)
	}
}

// TestMCP_BadUser: mcp refuses at start a --user no tool could use.
func TestMCP_BadUser(t *testing.T) {
	db := "sqlite:" + filepath.Join(t.TempDir(), "agentmem.db")
	err := run(context.Background(), []string{"mcp", "--user", "_agentmem", "--db", db}, func(string) string { return "" }, strings.NewReader(""), io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "reserved") {
		t.Fatalf("mcp --user _agentmem: %v, want an error saying the ID is reserved", err)
	}
}
