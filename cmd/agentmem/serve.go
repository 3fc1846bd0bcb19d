package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/agentmem/agentmem/core"
	"github.com/agentmem/agentmem/extract"
	"github.com/agentmem/agentmem/httpapi"
	"github.com/agentmem/agentmem/retrieve"
	"github.com/agentmem/agentmem/window"
	"github.com/agentmem/agentmem/worker"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// runServe runs the HTTP API until ctx ends (SIGINT or SIGTERM from main),
// then stops accepting connections, lets in-flight requests finish within
// the shutdown timeout, and closes the store.
func runServe(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg := defaults()
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	envString(fs, &cfg.Addr, "addr", "AGENTMEM_ADDR", "listen address; port 0 picks a free port", getenv)
	envString(fs, &cfg.LogLevel, "log-level", "AGENTMEM_LOG_LEVEL", "debug, info, warn or error", getenv)
	dbFlags(fs, &cfg, getenv)
	fs.IntVar(&cfg.MaxMessageBytes, "max-message-bytes", cfg.MaxMessageBytes, "largest message accepted (AGENTMEM_MAX_MESSAGE_BYTES)")
	fs.Int64Var(&cfg.MaxBodyBytes, "max-body-bytes", cfg.MaxBodyBytes, "largest request body accepted")
	fs.DurationVar(&cfg.ShutdownTimeout, "shutdown-timeout", cfg.ShutdownTimeout, "how long in-flight requests may take to finish on shutdown")
	envString(fs, &cfg.Auth, "auth", "AGENTMEM_AUTH", "authentication: none (loopback only), apikey or header", getenv)
	fs.BoolVar(&cfg.Insecure, "insecure", false, "allow --auth none on an address other than loopback")
	envString(fs, &cfg.UserHeader, "user-header", "AGENTMEM_USER_HEADER", "header mode: the header holding the user ID", getenv)
	envString(fs, &cfg.TrustedProxies, "trusted-proxies", "AGENTMEM_TRUSTED_PROXIES", "header mode: comma-separated addresses or CIDRs of the proxies whose header is believed", getenv)
	fs.Float64Var(&cfg.RateLimit, "rate-limit", cfg.RateLimit, "requests per second per key (0: no limit)")
	fs.IntVar(&cfg.RateBurst, "rate-burst", cfg.RateBurst, "requests a key may send at once above the rate")
	fs.IntVar(&cfg.MaxBatchMessages, "max-batch", cfg.MaxBatchMessages, "messages per append")
	fs.IntVar(&cfg.MaxQueryBytes, "max-query-bytes", cfg.MaxQueryBytes, "bytes of a URL query string")
	contextFlags(fs, &cfg, getenv)
	embedderFlags(fs, &cfg, getenv)
	fs.DurationVar(&cfg.IdleTimeout, "idle-timeout", cfg.IdleTimeout, "an active thread without a message for this long ends, and is reflected on (0: never)")
	envString(fs, &cfg.InsightCategories, "insight-categories", "AGENTMEM_INSIGHT_CATEGORIES", "comma-separated categories of the insights reflection draws (default: general ones)", getenv)
	if err := cfg.parse(fs, args, getenv); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	defer ln.Close()
	if cfg.Auth == "none" && !cfg.Insecure && !isLoopback(ln.Addr()) {
		return fmt.Errorf("--auth none on %s would let anyone on the network read every user's memory: "+
			"use --auth apikey (create a key with `agentmem keys create --scope admin`) or --auth header, or pass --insecure", ln.Addr())
	}
	proxies, _ := cfg.trustedProxies() // checked by Validate
	log := newLogger(stderr, cfg.LogLevel)

	store, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer store.Close()

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	measured := httpapi.InstrumentStore(store, reg) // every store call of the API, the builder and the workers is timed

	chat, err := newChat(cfg, getenv)
	if err != nil {
		return err
	}
	// Search: full-text plus the vectors of the configured embedder (the
	// built-in one needs no model or network); the indexer embeds new
	// messages and extracts the memories they hold in jobs, with the model
	// when one is configured.
	emb, space, err := newEmbedder(ctx, cfg, getenv)
	if err != nil {
		return err
	}
	log.Info("embedder", "embedder", cfg.Embedder, "space", space)
	summarizer := &window.Summarizer{Store: measured, Chat: chat, Model: cfg.LLMModel, Log: log}
	ix := &extract.Indexer{Store: measured, Jobs: measured, Emb: emb, Space: space, Log: log, Summarize: summarizer.SummarizeChunk}
	if chat != nil {
		ix.Extractor = &extract.ModelExtractor{Chat: chat, Model: cfg.LLMModel, Log: log}
		ix.Chat, ix.Model = chat, cfg.LLMModel
		ix.Describer = &extract.ModelChunkDescriber{Chat: chat, Model: cfg.LLMModel, Log: log,
			Fallback: extract.HeuristicDescriber{Summarize: (&window.Summarizer{}).SummarizeChunk}}
	}
	summarizer.Stored = ix.EmbedSummary // thread summaries are searchable (scope summaries)
	// Reflection at a thread's end and the profile (seed 001): insights
	// with a model; without one, the profile is assembled from memories.
	reflector := &extract.Reflector{Store: measured, Chat: chat, Model: cfg.LLMModel, Log: log,
		Summarize: summarizer.SummarizeThrough, Embed: ix.EmbedMemory, Categories: splitList(cfg.InsightCategories)}
	profiler := &extract.Profiler{Store: measured, Chat: chat, Model: cfg.LLMModel, Log: log}
	ix.MemoriesChanged = reflector.EnqueueProfile // memories of an ended thread learned late: the profile follows
	searcher := retrieve.New(measured, emb, space, retrieve.Options{Log: log, VectorWeight: vectorWeight(cfg.Embedder)})
	// A context opens with what agentmem learned: the profile, the agent's
	// notes, the summaries of the user's recent threads, the entities the
	// input names.
	initBlock := &window.Init{Store: measured, Entities: extract.EntityContext(measured, 5),
		Notes: func(ctx context.Context, userID, agentID string) (string, error) {
			n, err := measured.FindNotes(ctx, userID, agentID)
			if err != nil {
				return "", err
			}
			return n.Content, nil
		}}
	win, err := newWindow(cfg, measured, &retrieve.MemoryProvider{Searcher: searcher, TopK: 5}, initBlock, log)
	if err != nil {
		return err
	}
	pool := &worker.Pool{
		Jobs: measured,
		Handlers: map[string]worker.Handler{
			window.SummarizeJobKind: summarizer.Run,
		},
		Log: log,
	}
	win.Notify = pool.Notify
	ix.Notify = pool.Notify
	pool.Handlers[extract.IndexJobKind] = ix.Run
	pool.Handlers[extract.ReflectJobKind] = reflector.Run
	pool.Handlers[extract.ProfileJobKind] = profiler.Run
	reflector.Notify = pool.Notify
	// A new embedder writes a new vector space: a job finds the users
	// whose vectors are of another space and re-embeds them.
	reembed := &extract.Reembedder{Store: measured, Jobs: measured, Emb: emb, Space: space, Log: log, Notify: pool.Notify}
	pool.Handlers[extract.ReembedJobKind] = reembed.Run
	pool.Handlers[extract.ReembedAllJobKind] = reembed.RunAll
	if err := reembed.EnqueueAll(ctx); err != nil {
		log.Warn("could not look for vectors to re-embed", "err", err)
	}
	poolCtx, stopPool := context.WithCancel(context.WithoutCancel(ctx))
	defer stopPool()
	pooled := make(chan error, 1)
	go func() { pooled <- pool.Run(poolCtx) }()
	svc := core.New(measured, core.Options{
		Log:              log,
		Window:           win,
		Searcher:         searcher,
		Indexer:          ix,
		Reflector:        reflector,
		Profiler:         profiler,
		Chat:             chat,
		ChatModel:        cfg.LLMModel,
		MaxBatchMessages: cfg.MaxBatchMessages,
	})
	if cfg.IdleTimeout > 0 {
		go sweepIdle(poolCtx, svc, cfg.IdleTimeout, log)
	}
	if chat != nil {
		log.Info("model configured: summaries and memory extraction by the model", "model", cfg.LLMModel)
	} else {
		log.Info("no model configured: extractive summaries, heuristic memory extraction (set OPENAI_API_KEY or OPENAI_BASE_URL for a model)")
	}

	handler := httpapi.NewHandler(log, svc, httpapi.Options{
		MaxBodyBytes: cfg.MaxBodyBytes,
		Registry:     reg,
		Version:      version(),
		Auth: httpapi.Auth{
			Mode:           cfg.Auth,
			UserHeader:     cfg.UserHeader,
			TrustedProxies: proxies,
			Rate:           cfg.RateLimit,
			Burst:          cfg.RateBurst,
		},
		MaxQueryBytes: cfg.MaxQueryBytes,
	})
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		WriteTimeout:      5 * time.Minute, // whole-user exports stream for a while
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	log.Info("agentmem started", "addr", ln.Addr().String(), "db", redactDSN(cfg.DB), "version", version())
	fmt.Fprintf(stdout, "listening on http://%s\n", ln.Addr())

	select {
	case err := <-served:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	log.Info("shutting down", "grace", cfg.ShutdownTimeout)
	shutdownCtx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	// Then the workers: a job cut short is leased again after a restart.
	stopPool()
	if err := <-pooled; err != nil && !errors.Is(err, context.Canceled) {
		log.Warn("worker pool stopped", "err", err)
	}
	if err := store.Close(); err != nil {
		return fmt.Errorf("close store: %w", err)
	}
	log.Info("stopped")
	return nil
}

// isLoopback reports whether addr is a loopback address only (not a
// wildcard such as 0.0.0.0 or [::], which listens on every interface).
func isLoopback(addr net.Addr) bool {
	tcp, ok := addr.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
}

// redactDSN hides a password in a postgres:// URL before it is logged.
func redactDSN(dsn string) string {
	if u, err := url.Parse(dsn); err == nil && u.User != nil {
		if _, ok := u.User.Password(); ok {
			return u.Redacted()
		}
	}
	return dsn
}

// sweepIdle ends the threads idle for longer than idle: at once (the
// threads left idle while the server was down), then every tenth of idle
// (at least each second, at most each minute), until ctx ends.
func sweepIdle(ctx context.Context, svc *core.Service, idle time.Duration, log *slog.Logger) {
	tick := time.NewTicker(min(max(idle/10, time.Second), time.Minute))
	defer tick.Stop()
	for first := true; ; first = false {
		if !first {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
		n, err := svc.EndIdleThreads(ctx, time.Now().Add(-idle))
		if err != nil && ctx.Err() == nil {
			log.WarnContext(ctx, "idle sweep failed", "err", err)
		} else if n > 0 {
			log.InfoContext(ctx, "idle threads ended", "threads", n, "idle", idle)
		}
	}
}

// splitList splits a comma-separated list, dropping blanks.
func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
