package main

import (
	"context"
	"encoding/json"
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
