// Package window builds the context an LLM call needs: a thread's newest
// messages, its cumulative summary, the user's initialisation block and
// relevant memories, within an exact token budget, in one of three
// formats, with telemetry. It never waits for a model: summaries are
// written by jobs (see SummarizeJob), and while a summary is behind the
// builder trims to the budget instead and says so.
//
// The cost of a build depends on the budget, not on the length of the
// history: the newest messages are read backwards until the budget is full,
// with the token counts stored at write.
package window

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentmem/agentmem"
)

// Store is what the builder reads.
type Store interface {
	agentmem.ThreadStore
	agentmem.MessageStore
	agentmem.SummaryStore
}

// InitProvider gives the initialisation block of a new context: the
// user's profile, the agent's notes, recent summaries of the user's other
// threads. Later parts of agentmem fill it; nil gives none.
type InitProvider interface {
	InitBlock(ctx context.Context, userID, agentID, threadID, input string) ([]Section, error)
}

// MemoryProvider gives the long-term memories relevant to the input, best
// first, as short texts. Nil gives none.
type MemoryProvider interface {
	Memories(ctx context.Context, userID, threadID, input string) ([]string, error)
}

// Options configure a Builder. The zero value works: DefaultRequest, the
// estimating tokenizer, no templates, no providers.
type Options struct {
	// Defaults fills in what a request leaves zero (DefaultRequest() when
	// its budget is 0).
	Defaults Request
	// Tokenizer returns the tokenizer of a model and whether its counts are
	// exact for it (tokens.ForModel).
	Tokenizer func(model string) (Tokenizer, bool)
	// StoredEncoding is the encoding of the token counts the store keeps
	// with each message ("o200k_base" with tokens.Default()); messages are
	// recounted for a model of another encoding.
	StoredEncoding string
	// Prompts are the named system prompt templates.
	Prompts Prompts
	Init    InitProvider
	// Memories is consulted when the request has input.
	Memories MemoryProvider
	// CacheSize bounds the cache of built contexts (default 1024; negative
	// disables it). An identical build of a thread nothing of which
	// changed is answered from it (Telemetry.CacheHit).
	CacheSize int
	// TailCacheBytes bounds the cache of each thread's newest messages,
	// which spares a build reading its history from the store again
	// (default 64 MiB; negative disables it).
	TailCacheBytes int64
	// WarnFraction: the telemetry warns when a context uses this fraction
	// of its budget or more (DefaultWarnFraction when 0).
	WarnFraction float64
	// Log receives warnings (a provider that failed). Nil discards.
	Log *slog.Logger
	// IndexLag, when set, tells how far indexing is behind on a thread:
	// how many of its messages, and since when (index.Indexer.Lag). Every
	// build reads it, from the cache or not, into Telemetry.IndexLag and
	// IndexLagSeconds; a failure leaves them 0 and is logged.
	IndexLag func(ctx context.Context, th *agentmem.Thread) (messages int64, since time.Time, err error)
}

// DefaultWarnFraction is seed 004's CONTEXT_WINDOW_WARNING_THRESHOLD.
const DefaultWarnFraction = 0.8

// Builder builds contexts. It is safe for concurrent use.
type Builder struct {
	store Store
	jobs  agentmem.JobStore // nil: summaries are never requested
	opt   Options
	cache *cache
	tails *tails

	hits, misses atomic.Uint64 // of the cache, see CacheStats
}

// New returns a builder over store; jobs receives summarize jobs (nil: no
// summaries are asked for).
func New(store Store, jobs agentmem.JobStore, opt Options) *Builder {
	if opt.Defaults.BudgetTokens == 0 {
		opt.Defaults = merge(DefaultRequest(), opt.Defaults)
	}
	if opt.Tokenizer == nil {
		opt.Tokenizer = func(string) (Tokenizer, bool) { return estimator{}, false }
	}
	if opt.Log == nil {
		opt.Log = slog.New(slog.DiscardHandler)
	}
	opt.WarnFraction = cmp.Or(opt.WarnFraction, DefaultWarnFraction)
	size := cmp.Or(opt.CacheSize, 1024)
	return &Builder{store: store, jobs: jobs, opt: opt, cache: newCache(size), tails: newTails(cmp.Or(opt.TailCacheBytes, 64<<20))}
}

// Defaults returns the server's default request.
func (b *Builder) Defaults() Request { return b.opt.Defaults }

// SummarizeJobKind is the kind of the jobs that bring a thread's summary up
// to date.
const SummarizeJobKind = "summarize"

// summarizePayload is the payload of a summarize job.
type summarizePayload struct {
	ThreadID   string `json:"thread_id"`
	ThroughSeq int64  `json:"through_seq"` // summarise up to here
}

// Build builds the context of a thread of the user for req. Returns
// ENOTFOUND if the thread does not exist, EINVALID for a bad request, and
// EUNPROCESSABLE when the budget cannot hold the system prompt and the
// newest message (the error names the minimum).
func (b *Builder) Build(ctx context.Context, userID, threadID string, req Request) (*Context, error) {
	gen := b.cache.generation()
	bld, err := b.start(ctx, userID, threadID, req, nil)
	if err != nil {
		return nil, err
	}
	// The cache key holds everything the context is made of: the thread
	// at its last seq, its summary's version, the request, and what the
	// providers answered (see cacheKey). A build whose provider failed is
	// not cached: its next build may well succeed.
	key := ""
	if b.cache.enabled() && !bld.degraded {
		key = cacheKey(userID, bld.th, bld.sum, bld.req, bld.init, bld.memories)
		if c, ok := b.cache.get(key); ok {
			b.hits.Add(1)
			c.Telemetry.CacheHit = true
			b.indexLag(ctx, bld.th, &c.Telemetry)
			return c, nil
		}
	}
	c, err := bld.finish(ctx)
	if err == nil && key != "" {
		b.cache.put(userID, key, gen, c)
	}
	return c, err
}

// Augment builds the context of a thread around history, the thread's
// newest messages as a client holds them and resends (the proxy's augment
// mode): the sections as Build gathers them, then of history the newest
// messages that fit the budget (and the window strategy's bound), a tool
// answer never without its call. The thread's summary is included only
// when history does not begin at the thread's first message: it covers
// what the client did not send. The format is always messages and Input
// must be empty (the newest user message is in history; req.Query draws
// the memories). Augmented contexts are not cached.
func (b *Builder) Augment(ctx context.Context, userID, threadID string, req Request, history []*agentmem.Message) (*Context, error) {
	if req.Input != "" {
		return nil, agentmem.Errorf(agentmem.EINVALID, "input must be empty when the history is given: the newest user message is in it.")
	}
	req.Format = FormatMessages
	if history == nil {
		history = []*agentmem.Message{}
	}
	bld, err := b.start(ctx, userID, threadID, req, history)
	if err != nil {
		return nil, err
	}
	return bld.finish(ctx)
}

// start begins a build: the request completed by the defaults and
// checked, its system prompt, the thread, its summary when the strategy
// wants it, and the optional sections. A non-nil given is the history a
// client holds (Augment): the summary is read only when it does not begin
// at the thread's first message.
func (b *Builder) start(ctx context.Context, userID, threadID string, req Request, given []*agentmem.Message) (*build, error) {
	req = merge(req, b.opt.Defaults)
	if err := validate(&req); err != nil {
		return nil, err
	}
	system, promptName, err := b.opt.Prompts.resolve(req)
	if err != nil {
		return nil, err
	}
	th, err := b.store.FindThreadByID(ctx, userID, threadID)
	if err != nil {
		return nil, err
	}
	var sum *agentmem.Summary
	wantSummary := given == nil || len(given) > 0 && given[0].Seq > 1
	if req.Strategy == StrategySummarize && on(req.Include.Summary) && wantSummary {
		sum, err = b.store.FindSummary(ctx, userID, threadID)
		if agentmem.ErrorCode(err) == agentmem.ENOTFOUND {
			sum, err = nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("find summary: %w", err)
		}
	}
	tok, exact := b.opt.Tokenizer(req.Model)
	cnt := &counter{tok: tok, useStored: b.opt.StoredEncoding != "" && tok.Encoding() == b.opt.StoredEncoding}
	bld := &build{b: b, req: req, th: th, sum: sum, cnt: cnt, exact: exact, promptName: promptName, given: given}
	if on(req.Include.System) {
		bld.system = system
	}
	if err := bld.sections(ctx); err != nil {
		return nil, err
	}
	return bld, nil
}

// finish fits and renders a build that the cache did not answer, and asks
// for a newer summary when the strategy wants one.
func (bl *build) finish(ctx context.Context) (*Context, error) {
	bl.b.misses.Add(1)
	if err := bl.fit(ctx); err != nil {
		return nil, err
	}
	c := bl.render()
	c.Telemetry.Prompt = bl.promptName
	if bl.req.Strategy == StrategySummarize {
		bl.maybeSummarize(ctx, &c.Telemetry)
	}
	bl.b.indexLag(ctx, bl.th, &c.Telemetry)
	return c, nil
}

// indexLag fills in how far indexing is behind on th (Options.IndexLag).
func (b *Builder) indexLag(ctx context.Context, th *agentmem.Thread, t *Telemetry) {
	if b.opt.IndexLag == nil {
		return
	}
	n, since, err := b.opt.IndexLag(ctx, th)
	if err != nil {
		if b.opt.Log != nil {
			b.opt.Log.WarnContext(ctx, "index lag not read", "thread", th.ID, "err", err)
		}
		return
	}
	t.IndexLag = n
	if n > 0 && !since.IsZero() {
		t.IndexLagSeconds = max(0, time.Since(since).Seconds())
	}
}

// Forget drops the contexts of the user that the builder's cache holds:
// call it once the user is erased. (Other processes' builders never
// serve theirs again: a context's key names its thread's creation time.)
func (b *Builder) Forget(userID string) {
	b.cache.forget(userID)
}

// CacheStats reports how many builds the cache of built contexts
// answered (hits) and how many were built (misses), since New.
func (b *Builder) CacheStats() (hits, misses uint64) {
	return b.hits.Load(), b.misses.Load()
}

// cacheKey identifies a build by all it is made of: the thread (its ID,
// creation time, which tells a thread deleted and created again under its
// ID, and last seq: messages are append-only), the summary's version, the
// whole request, and the sections of the initialisation block and the
// memories as the providers gave them.
//
// The providers' answers are in the key as they are, not as version
// numbers of what they read: they are read on every build anyway (the
// profile, the agent's notes, the recent threads' summaries, the entities
// and memories the input names, a few indexed rows each), and a key made
// of them cannot go stale, even where version numbers start again (a user
// erased and made again) or do not exist (entities). What a hit spares is
// the rest of a build: reading the history, counting tokens, fitting and
// rendering.
func cacheKey(userID string, th *agentmem.Thread, sum *agentmem.Summary, req Request, init []Section, memories []string) string {
	h := sha256.New()
	enc := json.NewEncoder(h)
	var version, through int64
	if sum != nil {
		version, through = sum.Version, sum.ThroughSeq
	}
	_ = enc.Encode([]any{userID, th.ID, th.CreatedAt.UnixMicro(), th.LastSeq, version, through, req, init, memories})
	return hex.EncodeToString(h.Sum(nil))
}

// build is one Build in progress.
type build struct {
	b      *Builder
	req    Request
	th     *agentmem.Thread
	sum    *agentmem.Summary
	cnt    *counter
	exact  bool // the model's tokenizer is known
	system string
	// promptName is the template the system prompt came from ("" for
	// none or the request's own).
	promptName string

	init     []Section
	memories []string
	summary  *Section
	degraded bool // a provider failed: the context lacks its section

	// given is the history a client holds (Augment), read instead of the
	// store's when not nil.
	given []*agentmem.Message

	history     []*agentmem.Message // included, oldest first
	historyCost []int               // cost of each, in the format
	inputMsg    *agentmem.Message   // the input, or in responses format without input the newest user message
	turnsRead   int                 // complete turns among the messages read
	reachedEnd  bool                // the history was read down to the floor
	warnings    []string
}

// withSystem names what must fit: what, with the system prompt if any.
func (bl *build) withSystem(what string) string {
	if bl.system != "" {
		return "the system prompt and " + what
	}
	return what
}

// floor is the last seq not read: the summary covers 1..floor.
func (bl *build) floor() int64 {
	if bl.sum != nil {
		return bl.sum.ThroughSeq
	}
	return 0
}

// sections gathers the optional sections: the initialisation block and
// the memories are read side by side.
func (bl *build) sections(ctx context.Context) error {
	inc := bl.req.Include
	var wg sync.WaitGroup
	var initErr, memErr error
	if on(inc.Init) && bl.b.opt.Init != nil {
		wg.Go(func() {
			bl.init, initErr = bl.b.opt.Init.InitBlock(ctx, bl.th.UserID, bl.th.AgentID, bl.th.ID, bl.query())
		})
	}
	if q := bl.query(); on(inc.Memories) && bl.b.opt.Memories != nil && q != "" {
		wg.Go(func() { bl.memories, memErr = bl.b.opt.Memories.Memories(ctx, bl.th.UserID, bl.th.ID, q) })
	}
	wg.Wait()
	if initErr != nil {
		bl.b.opt.Log.WarnContext(ctx, "init block unavailable; building without it", "err", initErr)
		bl.warnings = append(bl.warnings, "The initialisation block is unavailable; the context was built without it.")
		bl.degraded = true
	}
	if memErr != nil {
		bl.b.opt.Log.WarnContext(ctx, "memories unavailable; building without them", "err", memErr)
		bl.warnings = append(bl.warnings, "Long-term memories are unavailable; the context was built without them.")
		bl.degraded = true
	}
	if bl.sum != nil && bl.sum.Text != "" {
		bl.summary = &Section{Name: "summary", Title: "Conversation Summary", Text: bl.sum.Text}
	}
	if bl.req.Input != "" {
		bl.inputMsg = &agentmem.Message{Role: agentmem.RoleUser, Content: bl.req.Input}
	}
	return nil
}

// query is what the memories and the initialisation block are drawn for:
// the input, else the request's query.
func (bl *build) query() string { return cmp.Or(bl.req.Input, bl.req.Query) }

// memorySection renders the memories as a bulleted section.
func (bl *build) memorySection() *Section {
	if len(bl.memories) == 0 {
		return nil
	}
	var b strings.Builder
	for i, m := range bl.memories {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString("- " + m)
	}
	return &Section{Name: "memories", Title: "Relevant Memories", Text: b.String()}
}

// fixedCost is what the context costs without its history: system prompt,
// sections, input, and the format's wrapping.
func (bl *build) fixedCost(init []Section, mem, sum *Section) int {
	c := bl.cnt
	n := 0
	sec := func(s Section) int { return c.constant(header(s)) + c.text(s.Text) }
	blocks := 0 // text blocks separated by blank lines
	var ctxText int
	if len(init) > 0 {
		ctxText += c.constant(initOpen) + c.constant(initClose)
		for i, s := range init {
			ctxText += sec(s)
			if i > 0 {
				ctxText += c.constant(blankLine)
			}
		}
		blocks++
	}
	for _, s := range []*Section{mem, sum} {
		if s != nil {
			ctxText += sec(*s)
			blocks++
		}
	}
	if blocks > 1 {
		ctxText += (blocks - 1) * c.constant(blankLine)
	}
	switch bl.req.Format {
	case FormatMessages:
		if bl.system != "" {
			n += tokensPerMessage + c.text(bl.system)
		}
		if blocks > 0 {
			n += tokensPerMessage + ctxText
		}
		if bl.inputMsg != nil {
			n += tokensPerMessage + c.text(bl.inputMsg.Content)
		}
		n += tokensReplyPrime
	case FormatResponses:
		// instructions and input travel as two messages.
		n += 2*tokensPerMessage + tokensReplyPrime
		if bl.system != "" {
			n += c.text(bl.system) + c.constant(blankLine)
		}
		if blocks > 0 {
			n += ctxText + c.constant(blankLine)
		}
		if bl.inputMsg != nil {
			n += c.text(bl.inputMsg.Content)
		}
	case FormatText:
		if bl.system != "" {
			n += c.text(bl.system) + c.constant(blankLine)
		}
		if blocks > 0 {
			n += ctxText + c.constant(blankLine)
		}
		n += c.constant(activeHead)
		if bl.inputMsg != nil {
			n += c.line(bl.inputMsg, plain)
		}
	}
	return n
}

// messageCost is the cost of a history message in the request's format.
func (bl *build) messageCost(m *agentmem.Message) int {
	switch bl.req.Format {
	case FormatMessages:
		return bl.cnt.chatMessage(m)
	case FormatResponses:
		return bl.cnt.line(m, bracketed)
	}
	return bl.cnt.line(m, plain)
}

// fit chooses the sections that fit and reads the newest messages
// backwards until the budget (or the window) is full.
func (bl *build) fit(ctx context.Context) error {
	avail, err := bl.fitSections()
	if err != nil {
		return err
	}
	if !on(bl.req.Include.Messages) {
		bl.reachedEnd = bl.th.LastSeq <= bl.floor()
		return nil
	}
	return bl.fitHistory(ctx, avail)
}

// fitSections checks that the system prompt and the newest message fit
// the budget, leaves out the optional sections, least important first,
// until they fit too, and returns the tokens left for the history.
func (bl *build) fitSections() (int, error) {
	budget := bl.req.BudgetTokens
	mem := bl.memorySection()
	sum := bl.summary
	init := bl.init

	// The system prompt and the newest message must fit; the optional
	// sections go, least important first, until they do too.
	if required := bl.fixedCost(nil, nil, nil); required > budget {
		what := bl.withSystem("the format's own tokens")
		if bl.inputMsg != nil {
			what = bl.withSystem("the input")
		}
		return 0, agentmem.Errorf(agentmem.EUNPROCESSABLE,
			"budget_tokens %d cannot hold %s: they need at least %d tokens.", budget, what, required)
	}
	for bl.fixedCost(init, mem, sum) > budget { // ends: without them it fits (above)
		switch {
		case len(init) > 0:
			// Its sections go last first: entities, recent summaries,
			// notes, and the profile last.
			last := init[len(init)-1]
			init = init[:len(init)-1]
			bl.warnings = append(bl.warnings, fmt.Sprintf("The initialisation block's %s section did not fit the budget and was left out.", last.Name))
		case mem != nil:
			mem = nil
			bl.warnings = append(bl.warnings, "The memories did not fit the budget and were left out.")
		default:
			sum = nil
			bl.warnings = append(bl.warnings, "The summary did not fit the budget and was left out.")
		}
	}
	bl.init, bl.summary = init, sum
	if mem == nil {
		bl.memories = nil
	}
	return budget - bl.fixedCost(init, mem, sum), nil
}

// fitHistory reads the newest messages backwards, down to the summary (or
// the thread's start without it), until avail tokens or the window are
// full, and keeps them as the history.
func (bl *build) fitHistory(ctx context.Context, avail int) error {
	budget := bl.req.BudgetTokens
	floor := bl.floor()
	if bl.summary == nil || bl.given != nil {
		floor = 0 // without its summary in the context, the whole history is candidate; a client's, all of it
	}
	before := bl.th.LastSeq + 1
	var newestFirst []*agentmem.Message
	var costs []int
	used := 0
	full := false
	limitMsgs, limitTurns := 0, 0
	if bl.req.Strategy == StrategyWindow {
		limitMsgs, limitTurns = bl.req.WindowMessages, bl.req.WindowTurns
	}
	turns := 0
	// In the responses format without input, the newest user message is
	// the input.
	takeInput := bl.req.Format == FormatResponses && bl.inputMsg == nil
	var visitErr error
	visit := func(m *agentmem.Message) bool {
		before = m.Seq
		if takeInput {
			takeInput = false
			if m.Role == agentmem.RoleUser {
				cost := bl.cnt.text(m.Content)
				if cost > avail {
					visitErr = agentmem.Errorf(agentmem.EUNPROCESSABLE,
						"budget_tokens %d cannot hold %s: they need at least %d tokens.", budget, bl.withSystem("the newest message"), budget-avail+cost)
					return false
				}
				bl.inputMsg = m
				avail -= cost
				turns++
				return true
			}
		}
		if limitMsgs > 0 && len(newestFirst) >= limitMsgs || limitTurns > 0 && turns >= limitTurns {
			full = true
			return false
		}
		cost := bl.messageCost(m)
		if used+cost > avail {
			if len(newestFirst) == 0 && bl.inputMsg == nil {
				visitErr = agentmem.Errorf(agentmem.EUNPROCESSABLE,
					"budget_tokens %d cannot hold %s: they need at least %d tokens.", budget, bl.withSystem("the newest message"), budget-avail+cost)
				return false
			}
			full = true
			return false
		}
		used += cost
		newestFirst = append(newestFirst, m)
		costs = append(costs, cost)
		if m.Role == agentmem.RoleUser {
			turns++
		}
		return true
	}
	if bl.given != nil {
		for i := len(bl.given) - 1; i >= 0 && visit(bl.given[i]); i-- {
		}
	} else if err := bl.b.tails.newest(ctx, bl.b.store, bl.th, floor, pageSize(avail), visit); err != nil {
		return err
	}
	if visitErr != nil {
		return visitErr
	}
	bl.reachedEnd = !full && (bl.given != nil || before <= floor+1)
	bl.turnsRead = turns
	// A tool answer without the assistant message that called it is
	// refused by chat APIs: drop such orphans from the oldest end.
	for len(newestFirst) > 0 && newestFirst[len(newestFirst)-1].Role == agentmem.RoleTool {
		newestFirst = newestFirst[:len(newestFirst)-1]
		costs = costs[:len(costs)-1]
		bl.reachedEnd = false
	}
	slices.Reverse(newestFirst)
	slices.Reverse(costs)
	bl.history, bl.historyCost = newestFirst, costs
	return nil
}

// pageSize guesses how many messages to read at once for a budget: a few
// more than fit at 40 tokens each, between 16 and 500.
func pageSize(avail int) int { return min(max(avail/40+1, 16), 500) }

// render writes the context in the request's format and its telemetry.
func (bl *build) render() *Context {
	c := &Context{Format: bl.req.Format}
	t := &c.Telemetry
	t.BudgetTokens, t.Model, t.Encoding = bl.req.BudgetTokens, bl.req.Model, bl.cnt.tok.Encoding()
	t.Strategy, t.Format = bl.req.Strategy, bl.req.Format
	t.Sections = map[string]int{}

	ctxBlock, overhead := bl.contextBlock(t.Sections)
	histCost := 0
	for _, n := range bl.historyCost {
		histCost += n
	}
	if bl.system != "" {
		t.Sections["system"] = bl.cnt.text(bl.system)
	}
	if len(bl.history) > 0 {
		t.Sections["messages"] = histCost
	}
	switch bl.req.Format {
	case FormatMessages:
		overhead += bl.renderMessages(c, ctxBlock)
	case FormatResponses:
		overhead += bl.renderResponses(c, ctxBlock)
	case FormatText:
		overhead += bl.renderText(c, ctxBlock)
	}
	if overhead > 0 {
		t.Sections["overhead"] = overhead
	}
	for _, n := range t.Sections {
		t.UsedTokens += n
	}
	t.Fraction = float64(t.UsedTokens) / float64(t.BudgetTokens)
	t.Approximate = !bl.exact || bl.cnt.toolApprox
	t.IncludedMessages = len(bl.history)
	if t.Sections["memories"] > 0 {
		t.Memories = bl.memories
	}
	bl.omitted(t)
	bl.warn(t)
	return c
}

// contextBlock renders the context block (init sections, memories,
// summary, separated by blank lines), adds each section's cost to
// sections, and returns the block and the tokens of its wrapping.
func (bl *build) contextBlock(sections map[string]int) (string, int) {
	cnt := bl.cnt
	sec := func(s Section) int { return cnt.constant(header(s)) + cnt.text(s.Text) }
	var blocks []string
	overhead := 0
	if len(bl.init) > 0 {
		var b strings.Builder
		b.WriteString(initOpen)
		overhead += cnt.constant(initOpen) + cnt.constant(initClose)
		for i, s := range bl.init {
			if i > 0 {
				b.WriteString(blankLine)
				overhead += cnt.constant(blankLine)
			}
			b.WriteString(header(s) + s.Text)
			sections[cmp.Or(s.Name, "init")] += sec(s)
		}
		b.WriteString(initClose)
		blocks = append(blocks, b.String())
	}
	if m := bl.memorySection(); m != nil {
		blocks = append(blocks, header(*m)+m.Text)
		sections["memories"] = sec(*m)
	}
	if bl.summary != nil {
		blocks = append(blocks, header(*bl.summary)+bl.summary.Text)
		sections["summary"] = sec(*bl.summary)
	}
	if len(blocks) > 1 {
		overhead += (len(blocks) - 1) * cnt.constant(blankLine)
	}
	return strings.Join(blocks, blankLine), overhead
}

// renderMessages writes the context as chat messages: the system prompt,
// the context block as a second system message, the history, the input;
// it returns the tokens of their wrapping.
func (bl *build) renderMessages(c *Context, ctxBlock string) int {
	overhead := 0
	c.Messages = make([]agentmem.ChatMessage, 0, len(bl.history)+3)
	if bl.system != "" {
		c.Messages = append(c.Messages, agentmem.ChatMessage{Role: agentmem.RoleSystem, Content: bl.system})
		overhead += tokensPerMessage
	}
	if ctxBlock != "" {
		c.Messages = append(c.Messages, agentmem.ChatMessage{Role: agentmem.RoleSystem, Content: ctxBlock})
		overhead += tokensPerMessage
	}
	for _, m := range bl.history {
		c.Messages = append(c.Messages, agentmem.ChatMessage{Role: m.Role, Content: m.Content, Name: m.Name, ToolCalls: m.ToolCalls, ToolCallID: m.ToolCallID})
	}
	if bl.inputMsg != nil {
		c.Messages = append(c.Messages, agentmem.ChatMessage{Role: agentmem.RoleUser, Content: bl.inputMsg.Content})
		c.Telemetry.Sections["input"] = bl.cnt.text(bl.inputMsg.Content)
		overhead += tokensPerMessage
	}
	return overhead + tokensReplyPrime
}

// renderResponses writes the context as the Responses API's instructions
// (system prompt, context block, history as bracketed lines) and input;
// it returns the tokens of their wrapping.
func (bl *build) renderResponses(c *Context, ctxBlock string) int {
	var b strings.Builder
	overhead := 2*tokensPerMessage + tokensReplyPrime + bl.writePreamble(&b, ctxBlock)
	for _, m := range bl.history {
		b.WriteString(bracketed.line(m))
	}
	c.Instructions = strings.TrimRight(b.String(), "\n")
	if bl.inputMsg != nil {
		c.Input = bl.inputMsg.Content
		c.Telemetry.Sections["input"] = bl.cnt.text(bl.inputMsg.Content)
	}
	return overhead
}

// writePreamble writes the system prompt and the context block, each
// followed by a blank line, as the Responses and text formats begin, and
// returns the tokens of the blank lines.
func (bl *build) writePreamble(b *strings.Builder, ctxBlock string) int {
	overhead := 0
	for _, part := range []string{bl.system, ctxBlock} {
		if part != "" {
			b.WriteString(part + blankLine)
			overhead += bl.cnt.constant(blankLine)
		}
	}
	return overhead
}

// renderText writes the context as one text: system prompt, context
// block, then the active conversation with the input last; it returns
// the tokens of its wrapping.
func (bl *build) renderText(c *Context, ctxBlock string) int {
	var b strings.Builder
	overhead := bl.writePreamble(&b, ctxBlock)
	b.WriteString(activeHead)
	overhead += bl.cnt.constant(activeHead)
	for _, m := range bl.history {
		b.WriteString(plain.line(m))
	}
	if bl.inputMsg != nil {
		b.WriteString(plain.line(bl.inputMsg))
		c.Telemetry.Sections["input"] = bl.cnt.line(bl.inputMsg, plain)
	}
	c.Text = strings.TrimRight(b.String(), "\n")
	return overhead
}

// omitted records in t what was left out: the history before the oldest
// message included, and how far the summary is behind it.
func (bl *build) omitted(t *Telemetry) {
	first := bl.th.LastSeq + 1
	if len(bl.history) > 0 {
		first = bl.history[0].Seq
	} else if bl.inputMsg != nil && bl.inputMsg.Seq > 0 {
		first = bl.inputMsg.Seq
	}
	if first > 1 {
		t.OmittedMessages = first - 1
		t.OmittedSeqs = []SeqRange{{From: 1, To: first - 1}}
	} else {
		t.OmittedSeqs = []SeqRange{}
	}
	if bl.summary != nil {
		t.SummaryThroughSeq, t.SummaryVersion = bl.sum.ThroughSeq, bl.sum.Version
	}
	if bl.req.Strategy == StrategySummarize {
		t.SummaryLag = bl.th.LastSeq - t.SummaryThroughSeq
		// Messages after the summary that are not in the context verbatim
		// were trimmed: the summary is behind.
		if first-1 > t.SummaryThroughSeq {
			t.SummaryBehind = true
			bl.warnings = append(bl.warnings, fmt.Sprintf("The summary is behind: messages %d to %d are neither summarised nor in the context (trimmed to fit until the summary catches up).",
				t.SummaryThroughSeq+1, first-1))
		}
	}
}

// warn adds the warnings about the counts and the budget's use, and sets
// t.Warnings.
func (bl *build) warn(t *Telemetry) {
	if !bl.exact {
		bl.warnings = append(bl.warnings, "Token counts are estimates: the tokenizer of model "+strconv.Quote(bl.req.Model)+" is not known.")
	}
	if bl.cnt.toolApprox {
		bl.warnings = append(bl.warnings, "Tool calls are counted approximately: OpenAI does not document how it tokenizes them.")
	}
	if t.Fraction >= bl.b.opt.WarnFraction {
		bl.warnings = append(bl.warnings, fmt.Sprintf("The context uses %.0f%% of the budget.", 100*t.Fraction))
	}
	t.Warnings = bl.warnings
	if t.Warnings == nil {
		t.Warnings = []string{}
	}
}
