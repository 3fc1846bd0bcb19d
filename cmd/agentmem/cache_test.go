package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/client"
	"github.com/agentmem/agentmem/internal/testutil"
)

// waitIdle waits until the server has no job queued or running.
func waitIdle(t *testing.T, srv *server) {
	t.Helper()
	for i := 0; ; i++ {
		busy := 0
		for _, status := range []string{agentmem.JobQueued, agentmem.JobRunning} {
			resp, err := http.Get(srv.URL + "/v1/jobs?status=" + status)
			if err != nil {
				t.Fatal(err)
			}
			var page struct{ Data []*agentmem.Job }
			err = json.NewDecoder(resp.Body).Decode(&page)
			resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			busy += len(page.Data)
		}
		if busy == 0 {
			return
		}
		if i == 1000 {
			t.Fatalf("%d jobs still queued or running after 20 s", busy)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestServe_ContextCache: in serve, with its initialisation block and
// memories, an identical second build of a context is a cache hit (with
// or without the initialisation block), a new message makes the next one
// a miss, and /metrics counts hits and misses.
func TestServe_ContextCache(t *testing.T) {
	backends := map[string]func(t *testing.T) string{
		"SQLite":     func(t *testing.T) string { return filepath.Join(t.TempDir(), "agentmem.db") },
		"PostgreSQL": func(t *testing.T) string { return testutil.MustCreateSchema(t) },
	}
	for name, db := range backends {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			srv := MustServe(t, db(t))
			c := client.New(srv.URL, nil)
			if err := c.CreateThread(ctx, "alice", &agentmem.Thread{ID: "t", AgentID: "a1"}); err != nil {
				t.Fatal(err)
			}
			turn := func(text string) {
				t.Helper()
				if _, err := c.AppendMessages(ctx, "alice", "t", []*agentmem.Message{{Role: "user", Content: text}, {Role: "assistant", Content: "Noted."}}, ""); err != nil {
					t.Fatal(err)
				}
				// Indexing learns memories and refreshes the profile, which
				// the next context reads: let it finish first.
				waitIdle(t, srv)
			}
			hits := func(req agentmem.ContextRequest) [2]bool {
				t.Helper()
				var out [2]bool
				for i := range out {
					ctx, err := c.BuildContext(ctx, "alice", "t", req)
					if err != nil {
						t.Fatal(err)
					}
					out[i] = ctx.Telemetry.CacheHit
				}
				return out
			}
			noInit := false
			turn("I live in Oslo and I love skiing.")
			for _, req := range []agentmem.ContextRequest{
				{Input: "What should I pack?"},
				{Input: "What should I pack?", Include: &agentmem.ContextInclude{Init: &noInit}},
			} {
				if got := hits(req); got != [2]bool{false, true} {
					t.Fatalf("include %+v: cache hits %v, want a miss then a hit", req.Include, got)
				}
			}
			turn("My sister Ana lives in Bergen.")
			if got := hits(agentmem.ContextRequest{Input: "What should I pack?"}); got != [2]bool{false, true} {
				t.Fatalf("after a new turn: cache hits %v, want a miss then a hit", got)
			}

			resp, err := http.Get(srv.URL + "/metrics")
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{
				`agentmem_context_cache_requests_total{result="hit"} 3`,
				`agentmem_context_cache_requests_total{result="miss"} 3`,
			} {
				if !strings.Contains(string(body), want) {
					t.Fatalf("/metrics lacks %s:\n%s", want, grepLines(string(body), "agentmem_context_cache"))
				}
			}
		})
	}
}

// grepLines returns the lines of s that contain substr.
func grepLines(s, substr string) string {
	var out []string
	for line := range strings.Lines(s) {
		if strings.Contains(line, substr) {
			out = append(out, strings.TrimSuffix(line, "\n"))
		}
	}
	return strings.Join(out, "\n")
}
