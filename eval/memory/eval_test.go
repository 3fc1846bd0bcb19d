package memory_test

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/eval/memory"
	"github.com/agentmem/agentmem/internal/apptest"
	"github.com/google/go-cmp/cmp"
)

func mustReadTestdata(t *testing.T) []*memory.Conversation {
	t.Helper()
	convs, err := memory.ReadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	if len(convs) != 2 {
		t.Fatalf("%d conversations in testdata, want 2", len(convs))
	}
	return convs
}

// TestScore_Perfect: what a perfect memory would know of the testdata's
// users (every fact a valid memory, every past fact an invalidated one,
// each answer found first, contexts and a profile that state the present)
// scores 1 on every rate and 0 on every fault.
func TestScore_Perfect(t *testing.T) {
	for _, c := range mustReadTestdata(t) {
		t.Run(c.ID, func(t *testing.T) {
			at := time.Now()
			obs := &memory.Observation{}
			var profile []string
			for _, f := range c.Facts {
				obs.Memories = append(obs.Memories, &agentmem.Memory{Text: f.Text})
				profile = append(profile, "- "+f.Text)
			}
			for _, p := range c.Past {
				obs.Memories = append(obs.Memories, &agentmem.Memory{Text: p.Text, InvalidAt: &at})
			}
			obs.Profile = "Facts:\n" + strings.Join(profile, "\n")
			for _, q := range c.Questions {
				var answer string
				for _, f := range c.Facts {
					if f.ID == q.Fact {
						answer = f.Text
					}
				}
				top := []agentmem.SearchResult{{Kind: "memory", Text: answer}, {Kind: "memory", Text: "Something else."}}
				obs.Answers = append(obs.Answers, memory.Answer{Memories: top, Default: top,
					Context: "### Key Insights\n" + strings.Join(profile, "\n") + "\n### Active Conversation\nuser: " + q.Question})
			}
			n, miss := memory.Score(c, obs)
			want := memory.Rates{Recall: 1, Precision: 1, Handled: 1, MemoriesHit1: 1, MemoriesHit5: 1, DefaultHit1: 1, DefaultHit5: 1,
				ContextAnswer: 1, ProfileFacts: 1}
			if diff := cmp.Diff(want, memory.RatesOf(n)); diff != "" {
				t.Errorf("rates mismatch (-want +got):\n%s", diff)
			}
			if n.False != 0 || n.SearchMemories.Stale5 != 0 || n.SearchDefault.Stale5 != 0 {
				t.Errorf("false %d, stale@5 %d and %d; want none", n.False, n.SearchMemories.Stale5, n.SearchDefault.Stale5)
			}
			if diff := cmp.Diff(memory.Misses{}, miss); diff != "" {
				t.Errorf("misses mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRun runs the testdata through agentmem in process (app with no
// model) and checks that the report adds up. It asserts no quality
// figure: the pipeline changes; the scorer's rules are tested above.
func TestRun(t *testing.T) {
	ctx := context.Background()
	convs := mustReadTestdata(t)
	mem := apptest.Open(t)
	var progress bytes.Buffer
	var sessions [][2]int
	rep, err := memory.Run(ctx, mem, convs, memory.Options{Pipeline: "test", Progress: &progress,
		SessionDone: func(done, total int) { sessions = append(sessions, [2]int{done, total}) }})
	if err != nil {
		t.Fatal(err)
	}
	if want := [][2]int{{1, 4}, {2, 4}, {3, 4}, {4, 4}}; !slices.Equal(sessions, want) {
		t.Errorf("sessions done %v, want %v", sessions, want)
	}
	if len(rep.Conversations) != 2 || rep.Sessions != 4 || rep.Messages != 22 {
		t.Fatalf("%d conversations, %d sessions, %d messages; want 2, 4, 22", len(rep.Conversations), rep.Sessions, rep.Messages)
	}
	var sum memory.Counts
	for i, r := range rep.Conversations {
		c := convs[i]
		if r.ID != c.ID || r.User != "memeval-"+c.ID || r.Facts != len(c.Facts) || r.Changes != len(c.Changes) ||
			r.Questions != len(c.Questions) || r.Past != len(c.Past) || r.Messages != c.Messages() {
			t.Errorf("%s: counts do not follow the labels: %+v", c.ID, r.Counts)
		}
		checkConsistent(t, r)
		sum.Facts += r.Facts
		sum.Recalled += r.Recalled
		sum.Memories += r.Memories
		sum.Handled += r.Handled
		sum.ContextStale += r.ContextStale
		sum.SearchMemories.Hit5 += r.SearchMemories.Hit5
		if r.Timing.JobsSeconds <= 0 || r.Timing.MessagesPerSecond <= 0 || r.Timing.Seconds < r.Timing.JobsSeconds {
			t.Errorf("%s: timing %+v", c.ID, r.Timing)
		}
		if !strings.Contains(progress.String(), c.ID+": facts ") {
			t.Errorf("no progress line for %s:\n%s", c.ID, progress.String())
		}
	}
	o := rep.Overall
	if o.Facts != sum.Facts || o.Recalled != sum.Recalled || o.Memories != sum.Memories || o.Handled != sum.Handled ||
		o.ContextStale != sum.ContextStale || o.SearchMemories.Hit5 != sum.SearchMemories.Hit5 {
		t.Errorf("overall %+v is not the sum of the conversations' %+v", o, sum)
	}
	if rep.Rates != memory.RatesOf(o) {
		t.Errorf("rates %+v are not those of the overall counts", rep.Rates)
	}
	if o.Memories == 0 || o.JobsDead != 0 {
		t.Errorf("%d memories learned, %d jobs dead", o.Memories, o.JobsDead)
	}

	// The sessions' messages carry their dates.
	msgs, _, err := mem.FindMessages(ctx, "memeval-t02", "session-2", agentmem.MessageFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 6 || !msgs[0].CreatedAt.Equal(convs[1].Sessions[1].Date) || !msgs[5].CreatedAt.Equal(convs[1].Sessions[1].Date.Add(5*time.Second)) {
		t.Errorf("session 2 of t02: %d messages, dated %v…; want 6 from %v", len(msgs), msgs[0].CreatedAt, convs[1].Sessions[1].Date)
	}

	var text bytes.Buffer
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"facts recalled", "changes handled", "search, memories", "contexts stale", "t01", "t02", "all "} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text report lacks %q:\n%s", want, text.String())
		}
	}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var back memory.Report
	if err := json.Unmarshal(b, &back); err != nil || len(back.Conversations) != 2 {
		t.Errorf("JSON report does not read back: %v", err)
	}

	// The users exist now: a second run into the same store fails rather
	// than mixing two runs.
	if _, err := memory.Run(ctx, mem, convs[:1], memory.Options{}); err == nil {
		t.Errorf("a second run with the same users succeeded")
	}
}

// checkConsistent checks the invariants of one conversation's result.
func checkConsistent(t *testing.T, r *memory.Result) {
	t.Helper()
	for _, s := range []memory.SearchCounts{r.SearchMemories, r.SearchDefault} {
		if s.Hit1 > s.Hit5 || s.Hit5 > r.Questions || s.Stale5 > r.Questions {
			t.Errorf("%s: search %+v of %d questions", r.ID, s, r.Questions)
		}
	}
	m := r.Misses
	switch {
	case r.Recalled > r.Facts || len(m.Facts) != r.Facts-r.Recalled:
		t.Errorf("%s: %d of %d facts recalled, %d listed missed", r.ID, r.Recalled, r.Facts, len(m.Facts))
	case r.Precise > r.Memories || len(m.Unmatched) != r.Memories-r.Precise || len(m.False) != r.False || r.False > r.Memories:
		t.Errorf("%s: %d precise, %d false of %d memories; %d unmatched listed", r.ID, r.Precise, r.False, r.Memories, len(m.Unmatched))
	case r.Handled > r.Changes || len(m.Changes) != r.Changes-r.Handled:
		t.Errorf("%s: %d of %d changes handled, %d listed missed", r.ID, r.Handled, r.Changes, len(m.Changes))
	case r.ContextStale > r.Questions || len(m.Contexts) != r.ContextStale || r.ContextAnswer > r.Questions:
		t.Errorf("%s: %d stale contexts (%d listed), %d with the answer, of %d questions", r.ID, r.ContextStale, len(m.Contexts), r.ContextAnswer, r.Questions)
	case r.ProfileFacts > r.Facts || r.ProfilePast > r.Past || len(m.Profile) != r.ProfilePast:
		t.Errorf("%s: profile states %d facts, %d past (%d listed)", r.ID, r.ProfileFacts, r.ProfilePast, len(m.Profile))
	case len(m.Jobs) != r.JobsDead+r.JobsDeferred:
		t.Errorf("%s: %d jobs listed, %d dead and %d deferred", r.ID, len(m.Jobs), r.JobsDead, r.JobsDeferred)
	}
	misses := 0
	for _, s := range []memory.SearchCounts{r.SearchMemories, r.SearchDefault} {
		misses += r.Questions - s.Hit1
	}
	if len(m.Questions) < misses {
		t.Errorf("%s: %d question misses listed, want at least %d", r.ID, len(m.Questions), misses)
	}
}
