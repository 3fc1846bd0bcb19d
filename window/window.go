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
	"log/slog"
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
	opt.Log = agentmem.LoggerOr(opt.Log)
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
