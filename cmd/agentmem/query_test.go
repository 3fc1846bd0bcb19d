package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/app"
)

// runOut runs the command and returns its standard output; it fails the
// test on an error.
func runOut(t *testing.T, args ...string) string {
	t.Helper()
	var out bytes.Buffer
	if err := run(context.Background(), args, func(string) string { return "" }, strings.NewReader(""), &out, io.Discard); err != nil {
		t.Fatalf("agentmem %s: %v", strings.Join(args, " "), err)
	}
	return out.String()
}

// TestCLI_Query: search, context and memories read a database file as
// tables or JSON, and a running server with --url alike.
func TestCLI_Query(t *testing.T) {
	db := "sqlite:" + filepath.Join(t.TempDir(), "agentmem.db")
	ctx := context.Background()
	mem, err := app.New(ctx, app.Config{DB: db})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mem.CreateMemory(ctx, "ada", agentmem.MemoryInput{Text: "User is vegetarian.", Category: "preference"}); err != nil {
		t.Fatal(err)
	}
	if _, err := mem.CreateMemory(ctx, "ada", agentmem.MemoryInput{Kind: agentmem.MemoryInsight, Text: "User is vegetarian for the animals' sake."}); err != nil {
		t.Fatal(err)
	}
	if err := mem.CreateThread(ctx, "ada", &agentmem.Thread{ID: "trip"}); err != nil {
		t.Fatal(err)
	}
	if _, err := mem.AppendMessages(ctx, "ada", "trip", []*agentmem.Message{{Role: "user", Content: "Plan a dinner in Lisbon."}}, ""); err != nil {
		t.Fatal(err)
	}
	mem.Close()

	table := runOut(t, "search", "--user", "ada", "--db", db, "vegetarian")
	if !strings.HasPrefix(table, "SCORE") || !strings.Contains(table, "User is vegetarian.") || !strings.Contains(table, "memory") {
		t.Errorf("search table:\n%s", table)
	}
	var res agentmem.SearchResponse
	if err := json.Unmarshal([]byte(runOut(t, "search", "--user", "ada", "--db", db, "--json", "--scopes", "messages", "dinner")), &res); err != nil ||
		len(res.Results) == 0 || res.Results[0].Kind != "message" {
		t.Errorf("search --json: %+v, %v", res, err)
	}
	if got := runOut(t, "search", "--user", "ada", "--db", db, "--kinds", "insights", "vegetarian"); !strings.Contains(got, "User is vegetarian for the animals' sake.") || strings.Contains(got, "User is vegetarian.") {
		t.Errorf("search --kinds insights:\n%s", got)
	}
	c := runOut(t, "context", "--user", "ada", "--thread", "trip", "--db", db, "--budget", "4000", "Any vegetarian places?")
	if !strings.Contains(c, "Plan a dinner in Lisbon.") || !strings.Contains(c, "User is vegetarian.") || !strings.Contains(c, "of 4000 tokens") {
		t.Errorf("context:\n%s", c)
	}
	if got := runOut(t, "memories", "--user", "ada", "--db", db); !strings.Contains(got, "preference") || !strings.Contains(got, "User is vegetarian.") {
		t.Errorf("memories:\n%s", got)
	}

	s := MustServe(t, db)
	if got := runOut(t, "memories", "--user", "ada", "--url", s.URL, "--json"); !strings.Contains(got, `"text": "User is vegetarian."`) {
		t.Errorf("memories --url:\n%s", got)
	}
	var out bytes.Buffer
	err = run(ctx, []string{"context", "--user", "ada", "--thread", "nope", "--url", s.URL}, func(string) string { return "" }, strings.NewReader(""), &out, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("context of a missing thread: %v", err)
	}
	if err := run(ctx, []string{"search", "--db", db, "x"}, func(string) string { return "" }, strings.NewReader(""), &out, io.Discard); err == nil || !strings.Contains(err.Error(), "--user") {
		t.Errorf("search without a user: %v", err)
	}
}
