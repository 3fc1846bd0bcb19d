// Package app opens agentmem in process, wired once: the store, the model
// and embedder, the context builder, search, indexing and reflection, the
// application core (core.Service) and the background workers that index,
// summarise and reflect. The command's serve and admin commands open it,
// and so does a Go program that uses agentmem as a library:
//
//	mem, err := app.Open(ctx, app.Config{DB: "sqlite:./agentmem.db"})
//	if err != nil { … }
//	defer mem.Close()
//	c, err := mem.Before(ctx, "alice", "t1", "What should I pack?", agentmem.ContextRequest{})
//	… call the model with c.Messages …
//	err = mem.After(ctx, "alice", "t1", "What should I pack?", reply)
//
// The zero Config works: SQLite in the working directory, no model, the
// built-in embedder.
package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/core"
	"github.com/agentmem/agentmem/entity"
	"github.com/agentmem/agentmem/extract"
	"github.com/agentmem/agentmem/extract/learned"
	"github.com/agentmem/agentmem/index"
	"github.com/agentmem/agentmem/llm/lexical"
	"github.com/agentmem/agentmem/llm/minilm"
	"github.com/agentmem/agentmem/llm/openai"
	"github.com/agentmem/agentmem/postgres"
	"github.com/agentmem/agentmem/profile"
	"github.com/agentmem/agentmem/reembed"
	"github.com/agentmem/agentmem/reflection"
	"github.com/agentmem/agentmem/retrieve"
	"github.com/agentmem/agentmem/sqlite"
	"github.com/agentmem/agentmem/tokens"
	"github.com/agentmem/agentmem/window"
	"github.com/agentmem/agentmem/worker"
)

// DefaultDB is the database of the zero Config.
const DefaultDB = "sqlite:./agentmem.db"

// DefaultQueryEmbedTimeout is Config.QueryEmbedTimeout when 0: a model's
// embeddings answer a short query in well under a second.
const DefaultQueryEmbedTimeout = 2 * time.Second

// Config says how to open agentmem. The zero value works.
type Config struct {
	// DB is "sqlite:PATH" (or a plain path) or "postgres://…"; DefaultDB
	// when empty.
	DB string
	// SQLiteSynchronous is the SQLite synchronous pragma: FULL (default:
	// an acknowledged write survives power loss) or NORMAL.
	SQLiteSynchronous string
	// MaxMessageBytes bounds a message (agentmem.DefaultMaxMessageBytes
	// when 0); MaxBatchMessages the messages of an append.
	MaxMessageBytes  int
	MaxBatchMessages int

	// Getenv reads OPENAI_API_KEY, OPENAI_BASE_URL and the Azure OpenAI
	// variables, which configure the model; nil reads none (no model).
	Getenv func(string) string
	// LLMModel and LLMBaseURL override the model's name and server.
	LLMModel   string
	LLMBaseURL string
	// SummaryModel, ExtractModel and ReflectModel name the models of
	// summaries (of threads and chunks), of extraction (memories, their
	// consolidation, entities) and of reflection (insights, the profile);
	// LLMModel when empty. Facts answers are LLMModel's.
	SummaryModel string
	ExtractModel string
	ReflectModel string
	// Embedder is "builtin" (default: all-MiniLM-L6-v2 in the binary, no
	// network, for memories, summaries and queries, and its distilled
	// static table for the turns' windows and chunks), "lexical" (feature
	// hashing: words, not meaning; the cheapest) or "openai" (the
	// embeddings of the model's server, model EmbedModel, default
	// text-embedding-3-small).
	Embedder   string
	EmbedModel string
	// QueryEmbedTimeout bounds the embedding of a query by the model's
	// embeddings (Embedder "openai"): a search, a context's memories, a
	// facts question. Past it, or when the server fails, the search is
	// full-text only and says so, so that no request waits on the model
	// for longer (DefaultQueryEmbedTimeout when 0). Queries are not
	// retried, and their circuit breaker is their own.
	QueryEmbedTimeout time.Duration
	// ModelClient, when set, adjusts the configuration of the model's
	// clients (chat and embeddings) once it is read from Getenv: the
	// timeout of an attempt, the retries and their back-off, the circuit
	// breaker (see openai.Config). Nil keeps the openai package's
	// defaults, which serve uses.
	ModelClient func(*openai.Config)

	// Context holds the default context request (budget, model,
	// strategy, window, summarize policy…); zero fields take
	// window.DefaultRequest's (the window's messages and turns as a
	// pair: both zero take the default 15 turns).
	Context agentmem.ContextRequest
	// WarnFraction: a context's telemetry warns when it uses this
	// fraction of its budget or more (window.DefaultWarnFraction, seed
	// 004's 0.8, when 0).
	WarnFraction float64
	// RecentSummaries is how many summaries of the user's other threads
	// open a context (window.DefaultRecentSummaries, seed 001's 2, when 0;
	// none when negative).
	RecentSummaries int
	// ChunkTurns is the turns of a searchable chunk
	// (agentmem.DefaultChunkTurns, seed 001's k = 10, when 0).
	ChunkTurns int
	// IndexShedBacklog is the backlog of index jobs past which indexing
	// sheds its optional work (index.Indexer.ShedBacklog: the default when
	// 0, never when negative).
	IndexShedBacklog int
	// InsightMinConfidence drops the insights reflection draws with less
	// confidence (reflection.DefaultInsightConfidence, seed 001's 0.7,
	// when 0).
	InsightMinConfidence float64
	// ProfileManual synthesises the profile only when it is asked for
	// (RefreshProfile), not each time memories or insights change.
	ProfileManual bool
	// FactsMinScore is the min_score of a facts question that gives none:
	// the relevance a fact must reach (retrieve.DefaultMinRelevance when
	// 0), so that an unrelated question finds that nothing is known.
	FactsMinScore float64
	// Prompts are the named system prompts requests may ask for.
	Prompts window.Prompts
	// IdleTimeout ends the threads idle for this long (0: never).
	IdleTimeout time.Duration
	// DoneJobsRetention deletes the jobs done this long ago (0: never);
	// dead jobs are kept for the operator.
	DoneJobsRetention time.Duration
	// JobLease is how long a worker holds a background job it claimed
	// (worker.DefaultLease when 0): a job whose process died, killed or
	// crashed, runs again once its lease has expired. Make it longer
	// than the slowest job should take: a job's handler is stopped a
	// tenth of it (at most 30 s) before it expires.
	JobLease time.Duration
	// InsightCategories are the categories reflection draws insights in
	// (general ones when empty).
	InsightCategories []string
	// JobBackoff is how long a failed job waits before its next attempt
	// (worker.Pool.Backoff: exponential from a second up to five minutes
	// when nil), and JobPoll how often the idle workers look for due jobs
	// (worker.DefaultPoll when 0). Serve keeps the defaults; tests that
	// watch jobs die shorten them.
	JobBackoff func(attempt int) time.Duration
	JobPoll    time.Duration

	// Admission, when set, bounds the expensive work that runs at once
	// (searches, the memories of contexts, imports and exports), each
	// class by its own semaphore: past it, requests wait a moment, then
	// are refused EUNAVAILABLE (see core.Admitter). Serve sets it; nil
	// bounds nothing, leaving an in-process caller its own concurrency.
	Admission *core.Admission

	// ConnectInBackground lets New return while a PostgreSQL database
	// cannot be reached (refused, silent, starting up): the App then
	// answers EUNAVAILABLE (agentmem.ErrStoreDown) to every call, its
	// store's Ping included, while it connects and migrates in the
	// background with back-off (postgres.OpenInBackground), and Run starts
	// the background work once it has. Serve sets it, so that it starts,
	// and is ready once the database is; other errors (a refused
	// password, an unknown database, a failed migration) still fail New.
	// False: New fails while the database cannot be reached. SQLite opens
	// a file and is never waited for.
	ConnectInBackground bool

	// Log receives the logs (nil discards).
	Log *slog.Logger
	// WrapStore, when set, wraps the store every part uses (serve times
	// every call with it).
	WrapStore func(agentmem.Store) agentmem.Store
	// WrapChat, when set, wraps the model every part calls, when one is
	// configured; model is the one a request that names none gets.
	// WrapEmbedder, when set, wraps each embedder, with the vector space
	// it embeds in. Serve counts and traces every model call with them.
	WrapChat     func(c agentmem.Chat, model string) agentmem.Chat
	WrapEmbedder func(e agentmem.Embedder, space string) agentmem.Embedder
}

// App is agentmem opened in process: the use cases of core.Service, and
// the workers that run its background jobs.
type App struct {
	*core.Service

	store    agentmem.Store // the store itself, closed by Close
	pool     *worker.Pool
	searcher *retrieve.Searcher
	reemb    *reembed.Reembedder
	idle     time.Duration
	// retention is how long done jobs are kept (0: for ever).
	retention time.Duration
	log       *slog.Logger
	chat      agentmem.Chat
	space     string
	mu        sync.Mutex
	cancel    context.CancelFunc // of the Run that Open started
	ran       chan error
	closed    bool
}

// Learned returns the classifiers learned from the labelled corpus
// (extract/learned) over the built-in model's static table, which weigh
// what the rules extract without a model and name a query's intent.
func Learned() (*extract.Learned, error) {
	m, err := learned.Default()
	if err != nil {
		return nil, err
	}
	return &extract.Learned{Model: m, Embed: minilm.NewStatic()}, nil
}

// New opens the store (migrating it) and wires every part; nothing runs
// in the background until Run. Close releases the store.
func New(ctx context.Context, cfg Config) (*App, error) {
	log := agentmem.LoggerOr(cfg.Log)
	raw, err := OpenStore(ctx, cfg)
	if err != nil {
		return nil, err
	}
	a, err := wire(ctx, cfg, raw, log)
	if err != nil {
		raw.Close()
		return nil, err
	}
	return a, nil
}

// wire builds the parts over raw.
func wire(ctx context.Context, cfg Config, raw agentmem.Store, log *slog.Logger) (*App, error) {
	store := raw
	if cfg.WrapStore != nil {
		store = cfg.WrapStore(raw)
	}
	getenv := cfg.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	chat, err := newChat(cfg, getenv)
	if err != nil {
		return nil, err
	}
	embs, err := newEmbedders(ctx, cfg, getenv)
	if err != nil {
		return nil, err
	}
	if cfg.WrapEmbedder != nil {
		embs.Emb, embs.Queries = cfg.WrapEmbedder(embs.Emb, embs.Space), cfg.WrapEmbedder(embs.Queries, embs.Space)
		if b := embs.Bulk; b != nil {
			embs.Bulk = &agentmem.Embedding{Embedder: cfg.WrapEmbedder(b.Embedder, b.Space), Space: b.Space}
		}
	}
	emb, queries, space, bulk := embs.Emb, embs.Queries, embs.Space, embs.Bulk
	pool := &worker.Pool{Jobs: store, Handlers: map[string]worker.Handler{}, Lease: cfg.JobLease, Log: log, Backoff: cfg.JobBackoff, Poll: cfg.JobPoll}
	// Every part enqueues through a store that wakes the pool when a job
	// is stored, so that it runs at once rather than at the next poll.
	// Search, which enqueues nothing, reads the store itself: the wrapper
	// hides the stores' optional ways of reading vectors (ScanVectors…),
	// and search's cache would load them through FindVectors.
	reads := store
	store = worker.Notifying(store, pool.Notify)
	jobs := agentmem.JobStore(store)

	// The parts that call each other are declared first: the summaries a
	// summarizer writes are embedded by the indexer, and memories the
	// indexer learns late refresh the profile through the reflector.
	var (
		ix        *index.Indexer
		reflector *reflection.Reflector
	)
	summaryModel := cmp.Or(cfg.SummaryModel, cfg.LLMModel)
	extractModel := cmp.Or(cfg.ExtractModel, cfg.LLMModel)
	reflectModel := cmp.Or(cfg.ReflectModel, cfg.LLMModel)
	summarizer := &window.Summarizer{Store: store, Chat: chat, Model: summaryModel, Log: log,
		Stored: func(ctx context.Context, s *agentmem.Summary) error { return ix.EmbedSummary(ctx, s) }}
	ix = &index.Indexer{Store: store, Jobs: jobs, Emb: emb, Space: space, Bulk: bulk, Log: log, Summarize: summarizer.SummarizeChunk, ChunkTurns: cfg.ChunkTurns, ShedBacklog: cfg.IndexShedBacklog,
		MemoriesChanged: func(ctx context.Context, userID string) error { return reflector.EnqueueProfile(ctx, userID) }}
	// Without a model, the rules' proposals are weighed by the classifiers
	// learned from the labelled corpus, whatever the embedder of search.
	lrn, err := Learned()
	if err != nil {
		return nil, err
	}
	heuristic := extract.HeuristicExtractor{Learned: lrn}
	ix.Extractor = heuristic
	if chat != nil {
		ix.Extractor = &extract.ModelExtractor{Chat: chat, Model: extractModel, Log: log, Fallback: heuristic}
		ix.Chat, ix.Model = chat, extractModel
		ix.Describer = &index.ModelChunkDescriber{Chat: chat, Model: summaryModel, Log: log,
			Fallback: index.HeuristicDescriber{Summarize: (&window.Summarizer{}).SummarizeChunk}}
	}
	// Reflection at a thread's end and the profile (seed 001): insights
	// with a model; without one, the profile is assembled from memories.
	reflector = &reflection.Reflector{Store: store, Chat: chat, Model: reflectModel, Log: log,
		Summarize: summarizer.SummarizeThrough, Embed: ix.EmbedMemory, Emb: emb, Space: space, Categories: cfg.InsightCategories,
		MinConfidence: cfg.InsightMinConfidence, ProfileManual: cfg.ProfileManual}
	profiler := &profile.Profiler{Store: store, Chat: chat, Model: reflectModel, Section: extract.Section, Log: log}
	var admitter *core.Admitter
	if cfg.Admission != nil {
		admitter = core.NewAdmitter(*cfg.Admission)
	}
	searchOpt := embs.SearchOptions()
	searchOpt.Log, searchOpt.Admit, searchOpt.Intent = log, admitter.SearchAdmit(), lrn.Intent
	searchOpt.OwnNames = func(ctx context.Context, userID string) ([]string, error) {
		return extract.OwnNames(ctx, store, userID)
	}
	searcher := retrieve.New(reads, queries, space, searchOpt)
	// A context opens with what agentmem learned: the profile, the agent's
	// notes, the summaries of the user's recent threads, the entities the
	// input names.
	initBlock := &window.Init{Store: store, Entities: entity.Context(store, 5), RecentSummaries: cfg.RecentSummaries,
		Notes: func(ctx context.Context, userID, agentID string) (string, error) {
			n, err := store.FindNotes(ctx, userID, agentID)
			if err != nil {
				return "", err
			}
			return n.Content, nil
		}}
	win, err := newWindow(cfg, store, jobs, &retrieve.MemoryProvider{Searcher: searcher, TopK: 5}, initBlock, ix.Lag, log)
	if err != nil {
		return nil, err
	}
	reemb := &reembed.Reembedder{Store: store, Jobs: jobs, Emb: emb, Space: space, Bulk: bulk, Log: log}
	pool.Handlers[window.SummarizeJobKind] = summarizer.Run
	pool.Handlers[index.JobKind] = ix.Run
	pool.Handlers[reflection.JobKind] = reflector.Run
	pool.Handlers[profile.JobKind] = profiler.Run
	pool.Handlers[reembed.JobKind] = reemb.Run
	pool.Handlers[reembed.AllJobKind] = reemb.RunAll

	svc := core.New(store, core.Options{
		Log:              log,
		Window:           win,
		Searcher:         searcher,
		Indexer:          ix,
		Reflector:        reflector,
		Profiler:         profiler,
		Chat:             chat,
		ChatModel:        cfg.LLMModel,
		MaxBatchMessages: cfg.MaxBatchMessages,
		FactsMinScore:    cmp.Or(cfg.FactsMinScore, retrieve.DefaultMinRelevance),
		Admitter:         admitter,
	})
	return &App{Service: svc, store: raw, pool: pool, searcher: searcher, reemb: reemb, idle: cfg.IdleTimeout, retention: cfg.DoneJobsRetention, log: log, chat: chat, space: space}, nil
}

// Model reports whether a model is configured (summaries, extraction and
// reflection by the model) and the embedder's vector space.
func (a *App) Model() (configured bool, space string) { return a.chat != nil, a.space }

// Run runs the background work until ctx ends: the worker pool, the idle
// sweep, and the re-embedding of vectors of another embedder. It returns
// once all of it has stopped; jobs it interrupted are handed back. A
// store still connecting (Config.ConnectInBackground) is waited for
// first: none of that work can be done without it.
func (a *App) Run(ctx context.Context) error {
	if r, ok := a.store.(interface{ Ready() <-chan struct{} }); ok {
		select {
		case <-ctx.Done():
			return nil
		case <-r.Ready():
		}
	}
	if err := a.reemb.EnqueueAll(ctx); err != nil && ctx.Err() == nil {
		a.log.Warn("could not look for vectors to re-embed", agentmem.LogErr, err)
	}
	var wg sync.WaitGroup
	var poolErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := a.pool.Run(ctx); err != nil && !errors.Is(err, context.Canceled) {
			poolErr = err
		}
	}()
	if a.idle > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a.sweepIdle(ctx)
		}()
	}
	if a.retention > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a.pruneJobs(ctx)
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		a.warm(ctx)
	}()
	wg.Wait()
	return poolErr
}

// warm loads the users' vectors into the search cache after a start, in
// user order, until the cache is full or every user's is in, so that no
// user's first search pays for loading them (retrieve.Searcher.Warm).
func (a *App) warm(ctx context.Context) {
	start, users, after := time.Now(), 0, ""
	for ctx.Err() == nil {
		ids, err := a.store.FindUserIDs(ctx, after, agentmem.MaxPageSize)
		if err != nil {
			if ctx.Err() == nil {
				a.log.Warn("search cache not warmed", agentmem.LogErr, err)
			}
			return
		}
		for _, id := range ids {
			room, err := a.searcher.Warm(ctx, id)
			if err != nil {
				if ctx.Err() == nil {
					a.log.Warn("search cache not warmed", agentmem.LogUser, id, agentmem.LogErr, err)
				}
				return
			}
			users++
			if !room { // the cache is full (or there is none)
				a.log.Info("search cache warmed", "users", users, "took", time.Since(start), "stopped", "no room")
				return
			}
		}
		if len(ids) < agentmem.MaxPageSize {
			break
		}
		after = ids[len(ids)-1]
	}
	if ctx.Err() == nil {
		a.log.Info("search cache warmed", "users", users, "took", time.Since(start))
	}
}

// pruneJobs deletes the jobs done longer ago than the retention, so that
// the queue does not grow with every batch ever appended: at once, then
// every tenth of the retention (at least each second, at most each ten
// minutes), in batches of agentmem.MaxPageSize, each its own short
// transaction, until ctx ends.
func (a *App) pruneJobs(ctx context.Context) {
	every(ctx, min(max(a.retention/10, time.Second), 10*time.Minute), func() {
		before, total := time.Now().Add(-a.retention), int64(0)
		for ctx.Err() == nil {
			n, err := a.store.DeleteDoneJobs(ctx, before, agentmem.MaxPageSize)
			if err != nil {
				if ctx.Err() == nil {
					a.log.WarnContext(ctx, "pruning done jobs failed", agentmem.LogErr, err)
				}
				break
			}
			if total += n; n < agentmem.MaxPageSize {
				break
			}
		}
		if total > 0 {
			a.log.InfoContext(ctx, "done jobs deleted", "jobs", total, "retention", a.retention)
		}
	})
}

// every runs fn at once, then at each interval, until ctx ends.
func every(ctx context.Context, interval time.Duration, fn func()) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		fn()
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// sweepIdle ends the threads idle for longer than the idle timeout: at
// once (the threads left idle while agentmem was down), then every tenth
// of it (at least each second, at most each minute), until ctx ends.
func (a *App) sweepIdle(ctx context.Context) {
	every(ctx, min(max(a.idle/10, time.Second), time.Minute), func() {
		n, err := a.EndIdleThreads(ctx, time.Now().Add(-a.idle))
		if err != nil && ctx.Err() == nil {
			a.log.WarnContext(ctx, "idle sweep failed", agentmem.LogErr, err)
		} else if n > 0 {
			a.log.InfoContext(ctx, "idle threads ended", "threads", n, "idle", a.idle)
		}
	})
}

// Open opens agentmem as New does and starts its background work; Close
// stops it.
func Open(ctx context.Context, cfg Config) (*App, error) {
	a, err := New(ctx, cfg)
	if err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	ran := make(chan error, 1)
	a.cancel, a.ran = cancel, ran
	go func() { ran <- a.Run(runCtx) }()
	return a, nil
}

// Close stops the background work that Open started (jobs it interrupted
// are handed back), then closes the store. Calls after the first do
// nothing.
func (a *App) Close() error {
	a.mu.Lock()
	cancel, ran, closed := a.cancel, a.ran, a.closed
	a.cancel, a.ran, a.closed = nil, nil, true
	a.mu.Unlock()
	if closed {
		return nil
	}
	var err error
	if cancel != nil {
		cancel()
		err = <-ran
	}
	return errors.Join(err, a.store.Close())
}

// Before is seed 001's context provider before a model call: the context
// of the thread for input (which is not stored yet), created with the
// thread when it does not exist.
func (a *App) Before(ctx context.Context, userID, threadID, input string, req agentmem.ContextRequest) (*agentmem.Context, error) {
	if _, err := agentmem.BeginThread(ctx, a, userID, "", threadID); err != nil {
		return nil, err
	}
	req.Input = input
	return a.BuildContext(ctx, userID, threadID, req)
}

// After is seed 001's context provider after a model call: it records the
// turn, the user's input and the model's reply, in one batch.
func (a *App) After(ctx context.Context, userID, threadID, input string, reply *agentmem.Message) error {
	msgs := []*agentmem.Message{{Role: agentmem.RoleUser, Content: input}}
	if reply != nil {
		if reply.Role == "" {
			reply.Role = agentmem.RoleAssistant
		}
		msgs = append(msgs, reply)
	}
	_, err := agentmem.AppendBeginning(ctx, a, userID, "", threadID, msgs)
	return err
}

// OpenStore opens the database cfg.DB names, migrating it, with exact
// token counts.
func OpenStore(ctx context.Context, cfg Config) (agentmem.Store, error) {
	db := cmp.Or(cfg.DB, DefaultDB)
	maxMsg := cmp.Or(cfg.MaxMessageBytes, agentmem.DefaultMaxMessageBytes)
	if scheme, _, ok := strings.Cut(db, "://"); ok && isScheme(scheme) {
		switch scheme {
		case "postgres", "postgresql", "sqlite":
		default:
			return nil, agentmem.Errorf(agentmem.EINVALID, "unsupported database scheme %s: use sqlite:PATH, a file path, or postgres://…", scheme)
		}
	}
	if strings.HasPrefix(db, "postgres://") || strings.HasPrefix(db, "postgresql://") {
		var s *postgres.Store
		var err error
		if cfg.ConnectInBackground {
			s, err = postgres.OpenInBackground(ctx, db, cfg.Log, nil)
		} else {
			s, err = postgres.Open(ctx, db)
		}
		if err != nil {
			return nil, fmt.Errorf("open postgres: %w", err)
		}
		s.Tokens, s.MaxMessageBytes = tokens.Default(), maxMsg
		return s, nil
	}
	s, err := sqlite.Open(ctx, db, sqlite.Options{Synchronous: cmp.Or(cfg.SQLiteSynchronous, "FULL")})
	if err != nil {
		return nil, fmt.Errorf("open sqlite %s: %w", db, err)
	}
	s.Tokens, s.MaxMessageBytes = tokens.Default(), maxMsg
	return s, nil
}

// isScheme reports whether s is a URL scheme (RFC 3986: a letter, then
// letters, digits, "+", "-" or "."), so that "mysql://x" is refused as a
// database and "./data://x" is a path.
func isScheme(s string) bool {
	for i, r := range s {
		letter := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
		if !letter && (i == 0 || !(r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.')) {
			return false
		}
	}
	return s != ""
}

// newChat returns the configured model, nil without one.
func newChat(cfg Config, getenv func(string) string) (agentmem.Chat, error) {
	oc := openai.ConfigFromEnv(getenv)
	if cfg.LLMBaseURL != "" && oc.AzureEndpoint == "" {
		oc.BaseURL = cfg.LLMBaseURL
	}
	if cfg.LLMModel != "" {
		oc.Model = cfg.LLMModel
	}
	if !openai.Configured(oc) {
		return nil, nil
	}
	if cfg.ModelClient != nil {
		cfg.ModelClient(&oc)
	}
	c, err := openai.New(oc)
	if err != nil {
		return nil, fmt.Errorf("model client: %w", err)
	}
	if cfg.WrapChat != nil {
		return cfg.WrapChat(c, cmp.Or(oc.Model, openai.DefaultModel)), nil
	}
	return c, nil
}

// Embedders are the embedders of a configuration (Config.Embedder).
type Embedders struct {
	// Emb embeds memories and summaries (and, when Bulk is nil, the turns'
	// windows and chunks) in the vector space Space; Queries embeds
	// queries in it: Emb, or for a model server's embeddings a client
	// that gives up sooner (Config.QueryEmbedTimeout).
	Emb, Queries agentmem.Embedder
	Space        string
	// Bulk embeds the turns' windows and chunks when set (the built-in
	// model's static table: see index.Indexer.Bulk).
	Bulk *agentmem.Embedding
	// VectorWeight is the weight of the vector signal in search's fusion
	// (full-text weighs 1): the lexical embedder's vectors add little to
	// full-text search (retrieve.VectorWeightLexical); a model's
	// embeddings weigh as much.
	VectorWeight float64
	// BulkVectorWeight weighs Bulk's vectors as VectorWeight weighs
	// Emb's (retrieve.Options.BulkVectorWeight).
	BulkVectorWeight float64
	// OwnWordsWeight is the vector signals' weight in a search whose
	// question full-text missed (retrieve.Options.OwnWordsWeight): a
	// model's embeddings only.
	OwnWordsWeight float64
	// Expand and ExpandWeight expand a search's full-text query by words
	// near its own in meaning (retrieve.Options.Expand): the built-in
	// model's.
	Expand       func(word string) ([]string, error)
	ExpandWeight float64
}

// SearchOptions returns the options of a search over the embedders'
// vectors, as serve sets them: the vector signals' weights, the bulk
// space, the near words of the query's.
func (e *Embedders) SearchOptions() retrieve.Options {
	return retrieve.Options{VectorWeight: e.VectorWeight, Bulk: e.Bulk, BulkVectorWeight: e.BulkVectorWeight,
		OwnWordsWeight: e.OwnWordsWeight, Expand: e.Expand, ExpandWeight: e.ExpandWeight}
}

// NewEmbedders returns the embedders cfg names, as New does (the
// evaluation's searcher uses them too).
func NewEmbedders(ctx context.Context, cfg Config) (*Embedders, error) {
	getenv := cfg.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	return newEmbedders(ctx, cfg, getenv)
}

// newEmbedders returns the embedders of cfg: the built-in model and its
// static table (bulk), the lexical embedder, or the model
// server's embeddings, whose dimension one call learns (the space names
// model and dimension, so that vectors of different embedders are never
// compared). Queries are embedded on the request path: their client gives
// up after cfg.QueryEmbedTimeout, without retries, and its breaker counts
// only their failures.
func newEmbedders(ctx context.Context, cfg Config, getenv func(string) string) (*Embedders, error) {
	switch cfg.Embedder {
	case "", "builtin":
		emb, static := minilm.New(), minilm.NewStatic()
		return &Embedders{Emb: emb, Queries: emb, Space: emb.Space(), Bulk: &agentmem.Embedding{Embedder: static, Space: static.Space()},
			VectorWeight: retrieve.VectorWeightModel, BulkVectorWeight: retrieve.VectorWeightStatic, OwnWordsWeight: retrieve.DefaultOwnWordsWeight,
			Expand: minilm.NearWords, ExpandWeight: retrieve.DefaultExpandWeight}, nil
	case "lexical":
		emb := lexical.New(0)
		return &Embedders{Emb: emb, Queries: emb, Space: emb.Space(), VectorWeight: retrieve.VectorWeightLexical}, nil
	case "openai":
	default:
		return nil, fmt.Errorf("embedder must be builtin, lexical or openai, not %q", cfg.Embedder)
	}
	model := cmp.Or(cfg.EmbedModel, "text-embedding-3-small")
	oc := openai.ConfigFromEnv(getenv)
	if cfg.LLMBaseURL != "" && oc.AzureEndpoint == "" {
		oc.BaseURL = cfg.LLMBaseURL
	}
	oc.EmbeddingModel = model
	if !openai.Configured(oc) {
		return nil, fmt.Errorf("--embedder openai needs an embeddings server: set OPENAI_API_KEY, OPENAI_BASE_URL or the Azure OpenAI variables")
	}
	if cfg.ModelClient != nil {
		cfg.ModelClient(&oc)
	}
	c, err := openai.New(oc)
	if err != nil {
		return nil, fmt.Errorf("embeddings client: %w", err)
	}
	qc := oc
	qc.Timeout = min(cmp.Or(oc.Timeout, openai.DefaultTimeout), cmp.Or(cfg.QueryEmbedTimeout, DefaultQueryEmbedTimeout))
	qc.MaxRetries = -1 // a retry would cost the request more than the vector signal is worth
	q, err := openai.New(qc)
	if err != nil {
		return nil, fmt.Errorf("embeddings client: %w", err)
	}
	vecs, err := c.Embed(ctx, []string{"agentmem"})
	if err != nil {
		return nil, fmt.Errorf("embeddings model %s: %s", model, agentmem.ErrorMessage(err))
	}
	space := fmt.Sprintf("openai/%s/%d", model, len(vecs[0]))
	if err := agentmem.ValidateSpace(space); err != nil {
		return nil, fmt.Errorf("--embed-model: %s", agentmem.ErrorMessage(err))
	}
	return &Embedders{Emb: unitVectors{c}, Queries: unitVectors{q}, Space: space, VectorWeight: 1, OwnWordsWeight: retrieve.DefaultOwnWordsWeight}, nil
}

// unitVectors scales a model's embeddings to unit length, which the
// stores' cosine search assumes.
type unitVectors struct{ agentmem.Embedder }

func (u unitVectors) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	vecs, err := u.Embedder.Embed(ctx, texts)
	if err != nil {
		return nil, err
	}
	for _, v := range vecs {
		var sum float64
		for _, x := range v {
			sum += float64(x) * float64(x)
		}
		if norm := math.Sqrt(sum); norm > 0 {
			for i := range v {
				v[i] = float32(float64(v[i]) / norm)
			}
		}
	}
	return vecs, nil
}

// newWindow returns the context builder with cfg's defaults and prompts.
func newWindow(cfg Config, store agentmem.Store, jobs agentmem.JobStore, memories window.MemoryProvider, initBlock window.InitProvider,
	indexLag func(context.Context, *agentmem.Thread) (int64, time.Time, error), log *slog.Logger) (*window.Builder, error) {
	def := window.DefaultRequest()
	c := cfg.Context
	def.BudgetTokens = cmp.Or(c.BudgetTokens, def.BudgetTokens)
	def.Model = cmp.Or(c.Model, def.Model)
	def.Strategy = cmp.Or(c.Strategy, def.Strategy)
	if c.WindowMessages != 0 || c.WindowTurns != 0 { // a pair, as in a request
		def.WindowMessages, def.WindowTurns = c.WindowMessages, c.WindowTurns
	}
	if c.Summarize != nil {
		def.Summarize = c.Summarize
	}
	if cfg.Prompts.Templates != nil {
		if err := cfg.Prompts.Validate(); err != nil {
			return nil, fmt.Errorf("prompts: %s", agentmem.ErrorMessage(err))
		}
		def.Prompt = cfg.Prompts.Default
	}
	return window.New(store, jobs, window.Options{
		Defaults:       def,
		Tokenizer:      func(model string) (window.Tokenizer, bool) { return tokens.ForModel(model) },
		StoredEncoding: tokens.Default().Encoding(),
		Prompts:        cfg.Prompts,
		Memories:       memories,
		Init:           initBlock,
		WarnFraction:   cfg.WarnFraction,
		Log:            log,
		IndexLag:       indexLag,
	}), nil
}
