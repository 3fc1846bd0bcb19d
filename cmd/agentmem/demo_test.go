package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestDemo runs `agentmem demo` without a model: the three scenarios of
// seed 001 complete, and what each shows is there — memories recalled in
// a later session, a new session opening with the profile and the last
// session's summary, and a long session compressed into a summary.
func TestDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("the demo runs a server and its jobs")
	}
	var out, errOut bytes.Buffer
	getenv := func(string) string { return "" }
	if err := run(context.Background(), []string{"demo", "--wait", "1m"}, getenv, nil, &out, &errOut); err != nil {
		t.Fatalf("demo: %v\n%s\n%s", err, out.String(), errOut.String())
	}
	got := out.String()
	for _, want := range []string{
		"no model: built-in extraction",
		"[fact/plan] User plans to retire at 60.",
		"Reflection on the session: no-insight",
		"search: When does Maya want to retire?\n  - ",
		"memory: User plans to retire at 60.",
		"Maya's profile, version ",
		"(assembled, from 6 memories)",
		"<session_initialization>\n  | ### Key Insights",
		"### Recent Session Summaries\n  | - At ",
		"### Notes\n  | ## Client preferences",
		"- Rebalance towards bonds by 5%.",
		"### Entities\n  | - Lisbon",
		"summary behind: true",
		"Once the summary job ran:",
		"== Done ==",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("demo output lacks %q", want)
		}
	}
	if t.Failed() {
		t.Log(got)
	}
	if !strings.Contains(got, "the summary covers messages 1–") || strings.Contains(got, "the summary covers messages 1–0,") {
		t.Errorf("the long session was not summarised:\n%s", got)
	}
}
