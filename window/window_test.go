package window_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/internal/goldenfile"
	"github.com/agentmem/agentmem/internal/testutil"
	"github.com/agentmem/agentmem/tokens"
	"github.com/agentmem/agentmem/window"
	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/")

var ctx = context.Background()

// tokenizer is what serve wires in: exact counts for OpenAI models.
func tokenizer(model string) (window.Tokenizer, bool) { return tokens.ForModel(model) }

// MustBuilder returns a builder over s with exact tokenizers.
func MustBuilder(s agentmem.Store, opt window.Options) *window.Builder {
	opt.Tokenizer = tokenizer
	opt.StoredEncoding = tokens.Default().Encoding()
	return window.New(s, s, opt)
}

// MustThread stores a thread of user u with the given messages.
func MustThread(tb testing.TB, s agentmem.Store, u, id string, msgs ...*agentmem.Message) *agentmem.Thread {
	tb.Helper()
	th := &agentmem.Thread{UserID: u, ID: id}
	if err := s.CreateThread(ctx, th); err != nil {
		tb.Fatal(err)
	}
	for i := 0; i < len(msgs); i += agentmem.MaxBatchMessages {
		if _, err := s.AppendMessages(ctx, u, id, msgs[i:min(i+agentmem.MaxBatchMessages, len(msgs))], agentmem.AppendOptions{}); err != nil {
			tb.Fatal(err)
		}
	}
	th, err := s.FindThreadByID(ctx, u, id)
	if err != nil {
		tb.Fatal(err)
	}
	return th
}

// conversation returns n turns of a deterministic conversation: a user
// question and an assistant answer each.
func conversation(n int) []*agentmem.Message {
	topics := []string{"the Lisbon trip", "a budget for groceries", "learning Portuguese", "the 401k rollover", "a birthday party for Maria"}
	var msgs []*agentmem.Message
	for i := range n {
		t := topics[i%len(topics)]
		msgs = append(msgs,
			&agentmem.Message{Role: agentmem.RoleUser, Content: fmt.Sprintf("Turn %d: can you help me with %s? I need it by Friday.", i+1, t)},
			&agentmem.Message{Role: agentmem.RoleAssistant, Content: fmt.Sprintf("Sure. For %s, start with a list of what matters most, then we can plan step %d together.", t, i+1)})
	}
	return msgs
}

// golden compares got with testdata/name.golden, rewriting it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenfile.Check(t, filepath.Join("testdata", name+".golden"), got, *update)
}

// TestBuild_Golden builds every strategy in every format on one thread and
// compares the contexts, telemetry included, with golden files.
func TestBuild_Golden(t *testing.T) { testutil.Backends(t, testBuildGolden) }

func testBuildGolden(t *testing.T, s agentmem.Store) {
	MustThread(t, s, "alice", "t", conversation(12)...)
	// A summary of the first 16 messages, as a job would have written it.
	if _, err := s.PutSummary(ctx, &agentmem.Summary{UserID: "alice", ThreadID: "t", ThroughSeq: 16, Text: "Alice planned a Lisbon trip, a grocery budget and Portuguese lessons.", Method: agentmem.SummaryExtractive}); err != nil {
		t.Fatal(err)
	}
	b := MustBuilder(s, window.Options{
		Prompts:   window.Prompts{Templates: map[string]string{"general": "You are a helpful assistant."}, Default: "general"},
		CacheSize: -1,
	})
	for _, strategy := range []string{window.StrategyTrim, window.StrategyWindow, window.StrategySummarize} {
		for _, format := range []string{window.FormatMessages, window.FormatResponses, window.FormatText} {
			name := strategy + "_" + format
			t.Run(name, func(t *testing.T) {
				req := window.Request{Input: "And what about the party?", BudgetTokens: 300, Strategy: strategy, Format: format,
					WindowTurns: 3, Summarize: &window.SummarizePolicy{TriggerTurns: 6, KeepTurns: 2}}
				c, err := b.Build(ctx, "alice", "t", req)
				if err != nil {
					t.Fatal(err)
				}
				c.Telemetry.SummaryJob = strings.Repeat("x", len(c.Telemetry.SummaryJob)) // a random ID
				got, err := json.MarshalIndent(c, "", "  ")
				if err != nil {
					t.Fatal(err)
				}
				golden(t, name, append(got, '\n'))
			})
		}
	}
}

// recount counts a built context from its rendered output alone, as the
// model's side would: OpenAI's chat rule for messages, the whole text for
// the other formats.
func recount(t *testing.T, c *window.Context, model string) int {
	t.Helper()
	tok, _ := tokens.ForModel(model)
	switch c.Telemetry.Format {
	case window.FormatMessages:
		n := 3
		for _, m := range c.Messages {
			n += 3 + tok.CountTokens(m.Content)
			if m.Name != "" {
				n += 1 + tok.CountTokens(m.Name)
			}
		}
		return n
	case window.FormatResponses:
		return 9 + tok.CountTokens(c.Instructions) + tok.CountTokens(c.Input)
	}
	return tok.CountTokens(c.Text)
}

// TestBuild_NeverOverBudget builds contexts of random histories with
// random budgets, strategies, formats and models: a build either fits the
// budget or is refused with 422; the telemetry's sections add up to what
// it says it used; and a recount of the output from scratch never exceeds
// it (for chat messages, it is exact).
func TestBuild_NeverOverBudget(t *testing.T) { testutil.Backends(t, testNeverOverBudget) }

func testNeverOverBudget(t *testing.T, s agentmem.Store) {
	b := MustBuilder(s, window.Options{CacheSize: -1})
	rng := rand.New(rand.NewPCG(1, 2))
	words := strings.Fields("the a of memory Lisbon 401k Maria budget 🙂 naïve café über naïveté , . ! ? \n\n code `x := 1` {\"k\": [1,2]} https://example.com/a?b=c 12345 3.14159")
	text := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteString(words[rng.IntN(len(words))])
			if rng.IntN(3) > 0 {
				b.WriteByte(' ')
			}
		}
		return b.String()
	}
	roles := []string{agentmem.RoleUser, agentmem.RoleAssistant, agentmem.RoleUser, agentmem.RoleAssistant, agentmem.RoleSystem}
	for thread := range 12 {
		n := rng.IntN(120)
		var msgs []*agentmem.Message
		for range n {
			m := &agentmem.Message{Role: roles[rng.IntN(len(roles))], Content: text(rng.IntN(60))}
			if rng.IntN(10) == 0 {
				m.Name = "bob"
			}
			msgs = append(msgs, m)
		}
		id := fmt.Sprint("t", thread)
		MustThread(t, s, "u", id, msgs...)
		for range 40 {
			req := window.Request{
				BudgetTokens:   []int{1, 5, 20, 50, 100, 300, 1000, 5000}[rng.IntN(8)],
				Strategy:       []string{window.StrategyTrim, window.StrategyWindow, window.StrategySummarize}[rng.IntN(3)],
				Format:         []string{window.FormatMessages, window.FormatResponses, window.FormatText}[rng.IntN(3)],
				Model:          []string{"gpt-4o", "gpt-4", "gpt-5-mini"}[rng.IntN(3)],
				WindowMessages: rng.IntN(10),
				Summarize:      &window.SummarizePolicy{TriggerFraction: 0.7, KeepFraction: 0.4},
			}
			if rng.IntN(2) == 0 {
				req.Input = text(rng.IntN(30))
			}
			if rng.IntN(3) == 0 {
				req.System = text(rng.IntN(40))
			}
			c, err := b.Build(ctx, "u", id, req)
			if agentmem.ErrorCode(err) == agentmem.EUNPROCESSABLE {
				continue
			}
			if err != nil {
				t.Fatalf("%+v: %v", req, err)
			}
			tel := c.Telemetry
			sum := 0
			for _, n := range tel.Sections {
				sum += n
			}
			if sum != tel.UsedTokens {
				t.Fatalf("%+v: sections %v add up to %d, used_tokens %d", req, tel.Sections, sum, tel.UsedTokens)
			}
			if tel.UsedTokens > req.BudgetTokens {
				t.Fatalf("%+v: used %d tokens of a budget of %d", req, tel.UsedTokens, req.BudgetTokens)
			}
			got := recount(t, c, req.Model)
			if c.Telemetry.Format == window.FormatMessages && got != tel.UsedTokens {
				t.Fatalf("%+v: recount %d, telemetry %d", req, got, tel.UsedTokens)
			}
			if got > tel.UsedTokens {
				t.Fatalf("%+v: recount %d exceeds the telemetry's %d", req, got, tel.UsedTokens)
			}
		}
	}
}

func TestBuild_Errors(t *testing.T) { testutil.Backends(t, testBuildErrors) }

func testBuildErrors(t *testing.T, s agentmem.Store) {
	MustThread(t, s, "alice", "t", conversation(3)...)
	b := MustBuilder(s, window.Options{})
	for _, tt := range []struct {
		name string
		user string
		req  window.Request
		code string
		in   string
	}{
		{"UnknownStrategy", "alice", window.Request{Strategy: "fifo"}, agentmem.EINVALID, "strategy"},
		{"UnknownFormat", "alice", window.Request{Format: "xml"}, agentmem.EINVALID, "format"},
		{"NegativeBudget", "alice", window.Request{BudgetTokens: -5}, agentmem.EINVALID, "budget_tokens"},
		{"TinyBudget", "alice", window.Request{BudgetTokens: 10, Input: "Please summarise our whole conversation about Lisbon in detail."}, agentmem.EUNPROCESSABLE, "at least"},
		{"TinyBudgetNoInput", "alice", window.Request{BudgetTokens: 5}, agentmem.EUNPROCESSABLE, "at least"},
		{"UnknownPrompt", "alice", window.Request{Prompt: "pirate"}, agentmem.EINVALID, "pirate"},
		{"OtherUser", "bob", window.Request{}, agentmem.ENOTFOUND, "t"},
		{"BadFraction", "alice", window.Request{Strategy: window.StrategySummarize, Summarize: &window.SummarizePolicy{TriggerFraction: 1.5}}, agentmem.EINVALID, "fraction"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := b.Build(ctx, tt.user, "t", tt.req)
			if agentmem.ErrorCode(err) != tt.code || !strings.Contains(agentmem.ErrorMessage(err), tt.in) {
				t.Fatalf("err=%v, want %s naming %q", err, tt.code, tt.in)
			}
		})
	}
}

// TestBuild_Minimum: the minimum a 422 names is enough.
func TestBuild_Minimum(t *testing.T) {
	s := testutil.MustOpenSQLite(t)
	MustThread(t, s, "alice", "t", conversation(3)...)
	b := MustBuilder(s, window.Options{})
	req := window.Request{BudgetTokens: 8, Input: "Please summarise our whole conversation about Lisbon in detail.", System: "Be brief."}
	_, err := b.Build(ctx, "alice", "t", req)
	var min int
	if _, scanErr := fmt.Sscanf(agentmem.ErrorMessage(err)[strings.Index(agentmem.ErrorMessage(err), "at least"):], "at least %d", &min); scanErr != nil {
		t.Fatalf("422 message %q names no minimum: %v", agentmem.ErrorMessage(err), scanErr)
	}
	req.BudgetTokens = min
	c, err := b.Build(ctx, "alice", "t", req)
	if err != nil {
		t.Fatalf("with the named minimum %d: %v", min, err)
	}
	if c.Telemetry.UsedTokens != min || c.Telemetry.IncludedMessages != 0 {
		t.Fatalf("used %d with %d messages, want exactly %d with none", c.Telemetry.UsedTokens, c.Telemetry.IncludedMessages, min)
	}
}

func TestBuild_Window(t *testing.T) {
	s := testutil.MustOpenSQLite(t)
	MustThread(t, s, "alice", "t", conversation(10)...)
	b := MustBuilder(s, window.Options{})
	c, err := b.Build(ctx, "alice", "t", window.Request{Strategy: window.StrategyWindow, WindowMessages: 5})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(c.Messages); n != 5 || c.Telemetry.OmittedMessages != 15 {
		t.Fatalf("window of 5 messages: %d messages, %d omitted", n, c.Telemetry.OmittedMessages)
	}
	c, err = b.Build(ctx, "alice", "t", window.Request{Strategy: window.StrategyWindow, WindowTurns: 3})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(c.Messages); n != 6 || c.Messages[0].Role != agentmem.RoleUser || !strings.HasPrefix(c.Messages[0].Content, "Turn 8:") {
		t.Fatalf("window of 3 turns: %d messages starting %+v", n, c.Messages[0])
	}
}

// TestBuild_TrimDropsOrphanToolAnswers: a tool answer whose call was
// trimmed away would be refused by a chat API, so it goes too.
func TestBuild_TrimDropsOrphanToolAnswers(t *testing.T) {
	s := testutil.MustOpenSQLite(t)
	MustThread(t, s, "alice", "t",
		&agentmem.Message{Role: agentmem.RoleUser, Content: strings.Repeat("long question ", 50)},
		&agentmem.Message{Role: agentmem.RoleAssistant, ToolCalls: []agentmem.ToolCall{{ID: "c1", Function: agentmem.FunctionCall{Name: "weather", Arguments: strings.Repeat(`{"city":"Lisbon"}`, 20)}}}},
		&agentmem.Message{Role: agentmem.RoleTool, ToolCallID: "c1", Content: "sunny"},
		&agentmem.Message{Role: agentmem.RoleAssistant, Content: "It is sunny."})
	b := MustBuilder(s, window.Options{})
	c, err := b.Build(ctx, "alice", "t", window.Request{Strategy: window.StrategyTrim, BudgetTokens: 30})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Messages) != 1 || c.Messages[0].Content != "It is sunny." {
		t.Fatalf("messages %+v, want only the last answer (the tool answer without its call dropped)", c.Messages)
	}
}

func TestBuild_Cache(t *testing.T) {
	s := testutil.MustOpenSQLite(t)
	MustThread(t, s, "alice", "t", conversation(3)...)
	b := MustBuilder(s, window.Options{})
	req := window.Request{Input: "hi", Strategy: window.StrategyTrim}
	first, err := b.Build(ctx, "alice", "t", req)
	if err != nil {
		t.Fatal(err)
	}
	second, err := b.Build(ctx, "alice", "t", req)
	if err != nil {
		t.Fatal(err)
	}
	if first.Telemetry.CacheHit || !second.Telemetry.CacheHit {
		t.Fatalf("cache hits: first %v, second %v; want false, true", first.Telemetry.CacheHit, second.Telemetry.CacheHit)
	}
	if _, err := s.AppendMessages(ctx, "alice", "t", []*agentmem.Message{{Role: agentmem.RoleUser, Content: "new"}}, agentmem.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	third, err := b.Build(ctx, "alice", "t", req)
	if err != nil {
		t.Fatal(err)
	}
	if third.Telemetry.CacheHit || third.Messages[len(third.Messages)-2].Content != "new" {
		t.Fatalf("after an append: cache hit %v, messages %+v", third.Telemetry.CacheHit, third.Messages)
	}
}

func TestBuild_Prompts(t *testing.T) {
	s := testutil.MustOpenSQLite(t)
	MustThread(t, s, "alice", "t")
	b := MustBuilder(s, window.Options{Prompts: window.Prompts{
		Templates: map[string]string{"general": "You help.", "creation": "You create workflows."},
		Default:   "general",
		Rules:     []window.PromptRule{{Prompt: "creation", Keywords: []string{"create", "build"}}},
	}})
	for _, tt := range []struct{ prompt, input, want, name string }{
		{"", "hello", "You help.", "general"},
		{"auto", "Please create a workflow", "You create workflows.", "creation"},
		{"auto", "recreate nothing", "You help.", "general"}, // keywords match whole words only
		{"creation", "hello", "You create workflows.", "creation"},
	} {
		c, err := b.Build(ctx, "alice", "t", window.Request{Prompt: tt.prompt, Input: tt.input})
		if err != nil {
			t.Fatal(err)
		}
		if c.Messages[0].Content != tt.want || c.Telemetry.Prompt != tt.name || c.Telemetry.Sections["system"] == 0 {
			t.Fatalf("prompt %q, input %q: system %q (template %q, %d tokens), want %q", tt.prompt, tt.input, c.Messages[0].Content, c.Telemetry.Prompt, c.Telemetry.Sections["system"], tt.want)
		}
	}
}

// TestBuild_TailCache: builds that reuse the cached newest messages of a
// thread are the same as builds that read everything from the store, as
// the thread grows, and after it is deleted and created again under the
// same ID.
func TestBuild_TailCache(t *testing.T) { testutil.Backends(t, testTailCache) }

func testTailCache(t *testing.T, s agentmem.Store) {
	cached := MustBuilder(s, window.Options{CacheSize: -1, TailCacheBytes: 200 << 10})
	direct := MustBuilder(s, window.Options{CacheSize: -1, TailCacheBytes: -1})
	rng := rand.New(rand.NewPCG(3, 4))
	same := func(step string) {
		t.Helper()
		for _, budget := range []int{50, 400, 5000, 100_000} {
			req := window.Request{BudgetTokens: budget, Strategy: window.StrategyTrim, Input: "next?"}
			a, err1 := cached.Build(ctx, "u", "t", req)
			b, err2 := direct.Build(ctx, "u", "t", req)
			if agentmem.ErrorCode(err1) != agentmem.ErrorCode(err2) {
				t.Fatalf("%s, budget %d: errors %v and %v", step, budget, err1, err2)
			}
			if err1 != nil {
				continue
			}
			if diff := cmp.Diff(b.Messages, a.Messages); diff != "" {
				t.Fatalf("%s, budget %d: cached build differs (-direct +cached):\n%s", step, budget, diff)
			}
		}
	}
	MustThread(t, s, "u", "t", conversation(50)...)
	same("new thread")
	for i := range 30 {
		batch := conversation(1 + rng.IntN(3))
		for _, m := range batch {
			m.Content = fmt.Sprintf("round %d: %s", i, m.Content)
		}
		if _, err := s.AppendMessages(ctx, "u", "t", batch, agentmem.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
		same(fmt.Sprint("after append ", i))
	}
	if err := s.DeleteThread(ctx, "u", "t", true); err != nil {
		t.Fatal(err)
	}
	recreated := conversation(200)
	for _, m := range recreated {
		m.Content = "recreated: " + m.Content
	}
	MustThread(t, s, "u", "t", recreated...)
	same("recreated thread")
	c, err := cached.Build(ctx, "u", "t", window.Request{BudgetTokens: 100_000, Strategy: window.StrategyTrim})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range c.Messages {
		if !strings.HasPrefix(m.Content, "recreated: ") {
			t.Fatalf("a message of the deleted thread survived in the cache: %q", m.Content)
		}
	}
}

// flakyInit is an InitProvider that fails while down, and otherwise
// answers a profile section of its text.
type flakyInit struct {
	down bool
	text string
}

func (f *flakyInit) InitBlock(ctx context.Context, userID, agentID, threadID, input string) ([]agentmem.Section, error) {
	if f.down {
		return nil, errors.New("profile store down")
	}
	return []agentmem.Section{{Name: "profile", Title: "Key Insights", Text: f.text}}, nil
}

// TestBuild_CacheProviders: a build with an initialisation block is
// cached under what the block says: a new block misses, and a build whose
// block failed is not cached; CacheStats counts hits and misses.
func TestBuild_CacheProviders(t *testing.T) {
	s := testutil.MustOpenSQLite(t)
	MustThread(t, s, "alice", "t", conversation(2)...)
	init := &flakyInit{text: "Alice lives in Oslo."}
	b := MustBuilder(s, window.Options{Init: init})
	hits := func() []bool {
		t.Helper()
		var out []bool
		for range 2 {
			c, err := b.Build(ctx, "alice", "t", window.Request{})
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, c.Telemetry.CacheHit)
		}
		return out
	}
	if got := hits(); !slices.Equal(got, []bool{false, true}) {
		t.Fatalf("cache hits %v, want a miss then a hit", got)
	}
	init.text = "Alice lives in Bergen."
	if got := hits(); !slices.Equal(got, []bool{false, true}) {
		t.Fatalf("after the block changed: cache hits %v, want a miss then a hit", got)
	}
	init.down = true
	if got := hits(); !slices.Equal(got, []bool{false, false}) {
		t.Fatalf("with the block failing: cache hits %v, want no hit", got)
	}
	init.down = false
	if got := hits(); !slices.Equal(got, []bool{true, true}) {
		t.Fatalf("with the block back: cache hits %v, want hits (the context built before it failed)", got)
	}
	if h, m := b.CacheStats(); h != 4 || m != 4 {
		t.Fatalf("CacheStats = %d hits, %d misses; want 4 and 4", h, m)
	}
}

// memoryList is a MemoryProvider of fixed memories.
type memoryList []string

func (m memoryList) Memories(context.Context, string, string, string) ([]string, error) {
	return m, nil
}

// TestBuild_TelemetryMemories: the telemetry names the memories the
// context drew on, those of its memories section; none without a query.
func TestBuild_TelemetryMemories(t *testing.T) {
	testutil.Backends(t, func(t *testing.T, s agentmem.Store) {
		MustThread(t, s, "alice", "t", conversation(2)...)
		want := memoryList{"User is allergic to peanuts.", "User lives in Porto."}
		b := MustBuilder(s, window.Options{Memories: want})
		c, err := b.Build(ctx, "alice", "t", agentmem.ContextRequest{Query: "snacks?", Format: window.FormatMessages})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string(want), c.Telemetry.Memories); diff != "" || c.Telemetry.Sections["memories"] == 0 {
			t.Errorf("telemetry memories (-want +got):\n%s (section tokens %d)", diff, c.Telemetry.Sections["memories"])
		}
		c, err = b.Build(ctx, "alice", "t", agentmem.ContextRequest{Format: window.FormatMessages})
		if err != nil || c.Telemetry.Memories != nil {
			t.Errorf("without a query: memories %q, %v", c.Telemetry.Memories, err)
		}
	})
}

// TestBuild_Forget (issue 28): Forget drops the erased user's cached
// contexts and no other user's: the user's next build misses, another's
// still hits.
func TestBuild_Forget(t *testing.T) {
	s := testutil.MustOpenSQLite(t)
	MustThread(t, s, "alice", "t", conversation(2)...)
	MustThread(t, s, "bob", "t", conversation(2)...)
	b := MustBuilder(s, window.Options{})
	hit := func(user string) bool {
		t.Helper()
		c, err := b.Build(ctx, user, "t", window.Request{})
		if err != nil {
			t.Fatal(err)
		}
		return c.Telemetry.CacheHit
	}
	hit("alice")
	hit("bob")
	if !hit("alice") || !hit("bob") {
		t.Fatal("second builds not answered from the cache")
	}
	b.Forget("alice")
	if hit("alice") {
		t.Error("alice's context answered from the cache after Forget")
	}
	if !hit("bob") {
		t.Error("bob's context dropped by forgetting alice")
	}
}
