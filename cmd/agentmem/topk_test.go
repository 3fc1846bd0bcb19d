package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/app"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// userHeader sends X-Agentmem-User with every request.
type userHeader struct{ user string }

func (h userHeader) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Agentmem-User", h.user)
	return http.DefaultTransport.RoundTrip(r)
}

// TestSearch_OneDefaultTopK: a search that says no top_k gives as many
// results on every face: the CLI (on the database, and on a server), REST
// and MCP, agentmem.DefaultTopK of them.
func TestSearch_OneDefaultTopK(t *testing.T) {
	ctx := context.Background()
	db := "sqlite:" + filepath.Join(t.TempDir(), "agentmem.db")
	mem, err := app.New(ctx, app.Config{DB: db})
	if err != nil {
		t.Fatal(err)
	}
	const stored = 3 * agentmem.DefaultTopK // more than any face would give
	for i := range stored {
		if _, err := mem.CreateMemory(ctx, "ada", agentmem.MemoryInput{Text: fmt.Sprintf("User keeps fruit tree number %d in the garden.", i)}); err != nil {
			t.Fatal(err)
		}
	}
	mem.Close()

	count := func(face, out string) int {
		t.Helper()
		var res struct{ Results []json.RawMessage }
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatalf("%s: %v\n%s", face, err, out)
		}
		return len(res.Results)
	}
	got := map[string]int{}
	got["CLI --db"] = count("CLI --db", runOut(t, "search", "--user", "ada", "--db", db, "--json", "fruit trees"))

	s := MustServe(t, db)
	got["CLI --url"] = count("CLI --url", runOut(t, "search", "--user", "ada", "--url", s.URL, "--json", "fruit trees"))
	res, err := http.Post(s.URL+"/v1/users/ada/search", "application/json", strings.NewReader(`{"query":"fruit trees"}`))
	if err != nil {
		t.Fatal(err)
	}
	var rest struct{ Results []json.RawMessage }
	if err := json.NewDecoder(res.Body).Decode(&rest); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("REST: %d %v", res.StatusCode, err)
	}
	res.Body.Close()
	got["REST"] = len(rest.Results)

	tr := &sdk.StreamableClientTransport{Endpoint: s.URL + "/mcp", HTTPClient: &http.Client{Transport: userHeader{"ada"}}, MaxRetries: -1}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test-host", Version: "1"}, nil).Connect(ctx, tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	got["MCP"] = count("MCP", tool(t, cs, "search_memory", map[string]any{"query": "fruit trees"}))

	for face, n := range got {
		if n != agentmem.DefaultTopK {
			t.Errorf("%s gives %d results by default, want %d (all faces: %v)", face, n, agentmem.DefaultTopK, got)
		}
	}
}
