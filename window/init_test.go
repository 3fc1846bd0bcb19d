package window_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/internal/testutil"
	"github.com/agentmem/agentmem/window"
)

// TestInit: a new thread's context opens with what was learned about the
// user — the profile, the agent's notes, the summaries of the two most
// recent other threads with their times, the entities of the input — each
// a section with its tokens in the telemetry, and all within the budget:
// when it does not fit, its sections go last first.
func TestInit(t *testing.T) { testutil.Backends(t, testInit) }

func testInit(t *testing.T, s agentmem.Store) {
	for i, text := range []string{"Alice asked about sourdough.", "Alice planned a trip to Porto.", "Alice booked a flight."} {
		id := []string{"old", "mid", "new"}[i]
		MustThread(t, s, "alice", id, &agentmem.Message{Role: agentmem.RoleUser, Content: "hello " + id})
		if _, err := s.PutSummary(ctx, &agentmem.Summary{UserID: "alice", ThreadID: id, ThroughSeq: 1, Text: text, Method: agentmem.SummaryExtractive}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Millisecond) // distinct update times: "new" is the newest
	}
	if err := s.PutProfile(ctx, &agentmem.Profile{UserID: "alice", Text: "Alice is a baker in Lisbon.", Method: agentmem.ProfileAssembled}, -1, nil); err != nil {
		t.Fatal(err)
	}
	th := &agentmem.Thread{UserID: "alice", ID: "today", AgentID: "coach"}
	if err := s.CreateThread(ctx, th); err != nil {
		t.Fatal(err)
	}
	init := &window.Init{Store: s,
		Notes: func(_ context.Context, user, agent string) (string, error) {
			if user != "alice" || agent != "coach" {
				t.Errorf("notes of %s/%s", user, agent)
			}
			return "# Goals\n- Run a 10k", nil
		},
		Entities: func(_ context.Context, _, input string) ([]string, error) {
			if strings.Contains(input, "Porto") {
				return []string{"Porto (place)"}, nil
			}
			return nil, nil
		},
	}
	b := MustBuilder(s, window.Options{Init: init})
	c, err := b.Build(ctx, "alice", "today", window.Request{Input: "What should I pack for Porto?", BudgetTokens: 2000, Format: window.FormatText})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"<session_initialization>", "### Key Insights\nAlice is a baker in Lisbon.", "### Notes\n# Goals\n- Run a 10k",
		"### Recent Session Summaries\n- At ", ": Alice booked a flight.\n- At ", ": Alice planned a trip to Porto.", "### Entities\n- Porto (place)",
	} {
		if !strings.Contains(c.Text, want) {
			t.Errorf("context lacks %q:\n%s", want, c.Text)
		}
	}
	if strings.Contains(c.Text, "sourdough") {
		t.Errorf("the third most recent thread's summary is in:\n%s", c.Text)
	}
	for _, name := range []string{"profile", "notes", "recent_summaries", "entities"} {
		if c.Telemetry.Sections[name] == 0 {
			t.Errorf("telemetry lacks section %s: %+v", name, c.Telemetry.Sections)
		}
	}
	if c.Telemetry.UsedTokens > 2000 {
		t.Fatalf("used %d of 2000", c.Telemetry.UsedTokens)
	}

	// A tight budget: the last sections go first, the profile stays.
	full := c.Telemetry.UsedTokens
	tight := full - c.Telemetry.Sections["entities"] - c.Telemetry.Sections["recent_summaries"] + 2
	c, err = b.Build(ctx, "alice", "today", window.Request{Input: "What should I pack for Porto?", BudgetTokens: tight, Format: window.FormatText})
	if err != nil {
		t.Fatal(err)
	}
	if c.Telemetry.Sections["profile"] == 0 || c.Telemetry.Sections["entities"] != 0 || c.Telemetry.UsedTokens > tight {
		t.Fatalf("with budget %d: sections %+v, used %d, warnings %v", tight, c.Telemetry.Sections, c.Telemetry.UsedTokens, c.Telemetry.Warnings)
	}
}

// BenchmarkBuild_Init measures the initialisation block's cost: a warm
// 4K build of a 100-message thread of a user with a profile, notes and
// 50 other threads with summaries, with and without the block (the
// baseline, in the same run).
func BenchmarkBuild_Init(b *testing.B) {
	s := testutil.MustOpenSQLite(b)
	for i := range 50 {
		id := fmt.Sprint("old", i)
		MustThread(b, s, "u", id, &agentmem.Message{Role: agentmem.RoleUser, Content: "hello " + id})
		if _, err := s.PutSummary(ctx, &agentmem.Summary{UserID: "u", ThreadID: id, ThroughSeq: 1, Method: agentmem.SummaryExtractive,
			Text: strings.Repeat("The user talked about gardening and a trip. ", 5)}); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.PutProfile(ctx, &agentmem.Profile{UserID: "u", Text: strings.Repeat("Alice is a baker in Lisbon who likes hiking. ", 10), Method: agentmem.ProfileAssembled}, -1, nil); err != nil {
		b.Fatal(err)
	}
	fill(b, s, "t", 100)
	notes := func(context.Context, string, string) (string, error) {
		return "# Goals\n- Run a 10k\n- Learn Portuguese", nil
	}
	for _, withInit := range []bool{false, true} {
		name := "Baseline"
		opt := window.Options{CacheSize: -1}
		if withInit {
			name = "Init"
			opt.Init = &window.Init{Store: s, Notes: notes}
		}
		bld := MustBuilder(s, opt)
		b.Run(name, func(b *testing.B) {
			req := window.Request{Input: "What next?", BudgetTokens: 4000, Strategy: window.StrategyTrim}
			var lat []time.Duration
			for b.Loop() {
				start := time.Now()
				c, err := bld.Build(ctx, "u", "t", req)
				if err != nil || withInit && c.Telemetry.Sections["profile"] == 0 {
					b.Fatal(err, c.Telemetry.Sections)
				}
				lat = append(lat, time.Since(start))
			}
			report(b, lat)
		})
	}
}

// TestInit_SummaryTimes: a summary of the recent threads is dated by the
// last turn it summarises (an imported history's, in the past), not by
// when its thread last changed.
func TestInit_SummaryTimes(t *testing.T) {
	testutil.Backends(t, func(t *testing.T, s agentmem.Store) {
		said := time.Date(2024, 3, 2, 15, 4, 0, 0, time.UTC)
		MustThread(t, s, "alice", "trip",
			&agentmem.Message{Role: agentmem.RoleUser, Content: "Plan Porto.", CreatedAt: said.Add(-time.Hour)},
			&agentmem.Message{Role: agentmem.RoleAssistant, Content: "Day 1: Ribeira.", CreatedAt: said})
		if _, err := s.PutSummary(ctx, &agentmem.Summary{UserID: "alice", ThreadID: "trip", ThroughSeq: 2, Text: "Alice planned Porto.", Method: agentmem.SummaryExtractive}); err != nil {
			t.Fatal(err)
		}
		MustThread(t, s, "alice", "today")
		secs, err := (&window.Init{Store: s}).InitBlock(ctx, "alice", "", "today", "hi")
		if err != nil {
			t.Fatal(err)
		}
		var text string
		for _, sec := range secs {
			if sec.Name == "recent_summaries" {
				text = sec.Text
			}
		}
		if want := "- At 03:04 PM, Mar 02, 2024: Alice planned Porto."; text != want {
			t.Errorf("recent summaries %q, want %q", text, want)
		}
	})
}
