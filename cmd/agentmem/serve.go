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
	"sync"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/app"
	"github.com/agentmem/agentmem/core"
	"github.com/agentmem/agentmem/httpapi"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// runServe runs the HTTP API until ctx ends (SIGINT or SIGTERM from main),
// then stops accepting connections, lets in-flight requests finish within
// the shutdown timeout, and closes the store.
func runServe(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, err := parseServe(args, getenv, stderr)
	if err != nil {
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
	log := newLogger(stderr, cfg.LogLevel)

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	acfg, err := cfg.app(getenv, log)
	if err != nil {
		return err
	}
	// Every store call of the API, the builder and the workers is timed.
	acfg.WrapStore = func(s agentmem.Store) agentmem.Store { return httpapi.InstrumentStore(s, reg) }
	mem, err := app.New(ctx, acfg)
	if err != nil {
		return err
	}
	defer mem.Close()
	model, space := mem.Model()
	log.Info("embedder", "embedder", cfg.Embedder, "space", space)
	if model {
		log.Info("model configured: summaries and memory extraction by the model", "model", cfg.LLMModel)
	} else {
		log.Info("no model configured: extractive summaries, heuristic memory extraction (set OPENAI_API_KEY or OPENAI_BASE_URL for a model)")
	}
	svc := mem.Service
	srv := newHTTPServer(log, svc, reg, cfg)
	// The workers and the idle sweep run beside the server, on a context
	// of their own: they stop after the server, so that no request is
	// left waiting on them.
	workCtx, cancelWork := context.WithCancel(context.WithoutCancel(ctx))
	worked := make(chan error, 1)
	go func() { worked <- mem.Run(workCtx) }()
	stopWork := sync.OnceValue(func() error { cancelWork(); return <-worked })
	defer stopWork() // before the store closes, on every return
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
	// Then the workers: the jobs they interrupt are handed back, and the
	// store closes once they have stopped.
	if err := stopWork(); err != nil {
		log.Warn("workers stopped", "err", err)
	}
	if err := mem.Close(); err != nil {
		return fmt.Errorf("close store: %w", err)
	}
	log.Info("stopped")
	return nil
}

// parseServe reads serve's flags (and their AGENTMEM_* variables).
func parseServe(args []string, getenv func(string) string, stderr io.Writer) (Config, error) {
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
	err := cfg.parse(fs, args, getenv)
	return cfg, err
}

// newHTTPServer returns the server of the REST API over svc, with its
// timeouts.
func newHTTPServer(log *slog.Logger, svc *core.Service, reg *prometheus.Registry, cfg Config) *http.Server {
	proxies, _ := cfg.trustedProxies() // checked by Validate
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
	return &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		WriteTimeout:      5 * time.Minute, // whole-user exports stream for a while
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
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
