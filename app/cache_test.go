package app_test

import (
	"context"
	"strings"
	"testing"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/app"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestBuildContext_Cache: the context builder as serve wires it (with the
// initialisation block and memories) answers an identical second build
// from its cache, with or without the initialisation block, and builds
// anew after anything the context reads changes: a message, a memory,
// the agent's notes, the profile, an entity, another thread's summary.
// No workers run, so nothing changes behind the test's back.
func TestBuildContext_Cache(t *testing.T) {
	onBackends(t, testContextCache)
}

func testContextCache(t *testing.T, db string) {
	ctx := context.Background()
	mem, err := app.New(ctx, app.Config{DB: db})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mem.Close() })
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(mem.CreateThread(ctx, "alice", &agentmem.Thread{ID: "t", AgentID: "a1"}))
	_, err = mem.AppendMessages(ctx, "alice", "t", []*agentmem.Message{
		{Role: agentmem.RoleUser, Content: "I am planning a trip to Oslo."},
		{Role: agentmem.RoleAssistant, Content: "When do you leave?"},
	}, "")
	must(err)
	noInit := false
	requests := map[string]agentmem.ContextRequest{
		"Init":   {Input: "What should I pack for Oslo?"},
		"NoInit": {Input: "What should I pack for Oslo?", Include: &agentmem.ContextInclude{Init: &noInit}},
	}
	build := func(req agentmem.ContextRequest) *agentmem.Context {
		t.Helper()
		c, err := mem.BuildContext(ctx, "alice", "t", req)
		must(err)
		return c
	}
	// twice builds req twice: the first must miss (something changed, or
	// it is new), the second hit with the same context.
	twice := func(what string, req agentmem.ContextRequest) *agentmem.Context {
		t.Helper()
		first, second := build(req), build(req)
		if first.Telemetry.CacheHit || !second.Telemetry.CacheHit {
			t.Fatalf("%s: cache hits %v then %v; want a miss, then a hit", what, first.Telemetry.CacheHit, second.Telemetry.CacheHit)
		}
		// How long indexing has been behind is read at every build.
		if diff := cmp.Diff(first, second, cmpopts.IgnoreFields(agentmem.Telemetry{}, "CacheHit", "IndexLagSeconds")); diff != "" {
			t.Fatalf("%s: the cached context differs (-built +cached):\n%s", what, diff)
		}
		return second
	}
	for name, req := range requests {
		// No worker runs: the two turns' index job waits, and says so.
		if c := twice(name, req); c.Telemetry.IndexLag != 2 || c.Telemetry.IndexLagSeconds <= 0 {
			t.Fatalf("%s: index lag %d messages, %g s; want 2 messages, some time", name, c.Telemetry.IndexLag, c.Telemetry.IndexLagSeconds)
		}
	}

	// text is what a context says, in whatever format.
	text := func(c *agentmem.Context) string {
		var b strings.Builder
		for _, m := range c.Messages {
			b.WriteString(m.Content + "\n")
		}
		return b.String() + c.Instructions + c.Text
	}
	for _, step := range []struct {
		name   string
		change func()
		want   string // a text the new context shows
		init   bool   // only the context with the initialisation block changes
	}{
		{"Append", func() {
			_, err := mem.AppendMessages(ctx, "alice", "t", []*agentmem.Message{{Role: agentmem.RoleUser, Content: "Next Friday."}}, "")
			must(err)
		}, "Next Friday.", false},
		{"Memory", func() {
			_, err := mem.CreateMemory(ctx, "alice", agentmem.MemoryInput{Text: "User always packs wool socks for Oslo."})
			must(err)
		}, "wool socks", false},
		{"Notes", func() {
			_, err := mem.EditNotes(ctx, "alice", "a1", agentmem.NotesOp{Operation: agentmem.NotesAppend, Content: "Prefers window seats."})
			must(err)
		}, "window seats", true},
		{"Profile", func() {
			_, err := mem.RefreshProfile(ctx, "alice")
			must(err)
		}, "Key Insights", true},
		{"Entity", func() {
			_, err := mem.PutEntity(ctx, "alice", agentmem.EntityInput{Name: "Oslo", Type: "place"})
			must(err)
		}, "Oslo (place)", true},
		{"OtherThreadSummary", func() {
			must(mem.CreateThread(ctx, "alice", &agentmem.Thread{ID: "old"}))
			_, err := mem.AppendMessages(ctx, "alice", "old", []*agentmem.Message{{Role: agentmem.RoleUser, Content: "Bergen was rainy."}}, "")
			must(err)
			_, err = mem.Service.Store().PutSummary(ctx, &agentmem.Summary{UserID: "alice", ThreadID: "old", ThroughSeq: 1, Text: "A rainy week in Bergen.", Method: agentmem.SummaryExtractive})
			must(err)
		}, "rainy week in Bergen", true},
	} {
		step.change()
		for name, req := range requests {
			if name == "NoInit" && step.init {
				// Its context reads none of it: still a hit.
				if c := build(req); !c.Telemetry.CacheHit {
					t.Fatalf("%s, %s: a miss, though nothing the context reads changed", step.name, name)
				}
				continue
			}
			if c := twice(step.name+", "+name, req); !strings.Contains(text(c), step.want) {
				t.Fatalf("%s, %s: the context lacks %q:\n%s", step.name, name, step.want, text(c))
			}
		}
	}
}
