package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/app"
	"github.com/agentmem/agentmem/core"
	"github.com/agentmem/agentmem/httpapi"
	"github.com/agentmem/agentmem/mcp"
	"github.com/agentmem/agentmem/metrics"
	"github.com/agentmem/agentmem/proxy"
	"github.com/agentmem/agentmem/web"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"go.opentelemetry.io/otel/trace"
	"golang.org/x/sync/errgroup"
)

// runServe runs the HTTP API until ctx ends (SIGINT or SIGTERM from main),
// then stops accepting connections, lets in-flight requests finish within
// the shutdown timeout, and closes the store.
func runServe(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, err := parseServe(args, getenv, stdout)
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
	if cfg.Auth == "none" && !isLoopback(ln.Addr()) && len(cfg.AllowedHosts) == 0 {
		log.Warn("--auth none serves loopback Host names only (against DNS rebinding): requests naming this machine otherwise get 403; list its names with --allowed-hosts")
	}

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	// Spans are exported over OTLP/HTTP when the OTEL_EXPORTER_OTLP_*
	// variables say where; tp is nil otherwise, and nothing is traced.
	tp, stopTracing, err := metrics.Tracing(ctx, getenv, version())
	if err != nil {
		return err
	}
	defer func() { // after the store closed: the last spans are flushed
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := stopTracing(stopCtx); err != nil {
			log.Warn("tracing: spans not exported at shutdown", "err", err)
		}
	}()
	if tp != nil {
		log.Info("tracing: spans exported over OTLP/HTTP")
	}
	acfg, err := cfg.app(getenv, log)
	if err != nil {
		return err
	}
	// Every store call of the API, the builder and the workers is timed,
	// and traced within a request's trace.
	acfg.WrapStore = func(s agentmem.Store) agentmem.Store { return metrics.Store(s, reg, tp) }
	// Every model call is counted, with its tokens, and traced so.
	acfg.WrapChat = func(c agentmem.Chat, model string) agentmem.Chat { return metrics.Chat(c, model, reg, tp) }
	acfg.WrapEmbedder = func(e agentmem.Embedder, space string) agentmem.Embedder { return metrics.Embedder(e, space, reg, tp) }
	// A database that does not answer yet does not stop the server: it
	// listens, /readyz and the API answer 503 until the database does.
	acfg.ConnectInBackground = true
	acfg.Admission = cfg.admission()
	mem, err := app.New(ctx, acfg)
	if err != nil {
		return err
	}
	defer mem.Close()
	model, space := mem.Model()
	log.Info("embedder", "embedder", cfg.Embedder, "space", space)
	if model {
		log.Info("model configured: summaries and memory extraction by the model", agentmem.LogModel, cfg.LLMModel)
	} else {
		log.Info("no model configured: extractive summaries, heuristic memory extraction (set OPENAI_API_KEY or OPENAI_BASE_URL for a model)")
	}
	popt := cfg.proxyOptions(getenv)
	popt.Metrics = metrics.NewProxy(reg)
	if popt.Upstream == nil {
		log.Info("proxy: no model server configured; /openai/v1 answers 503 until --proxy-upstream or OPENAI_API_KEY is set")
	}
	mopt := cfg.mcpOptions()
	mopt.Version, mopt.Log = version(), log
	if cfg.Auth == httpapi.AuthNone {
		mopt.LocalUser = proxy.DefaultLocalUser
	}
	// The MCP tools call the service traced; the REST API and the proxy
	// take *core.Service, whose calls their requests' spans hold.
	srv := newHTTPServer(log, mem.Service, reg, tp, cfg, proxy.NewHandler(log, metrics.Service(mem.Service, tp), popt), mcp.NewHTTPHandler(metrics.Service(mem.Service, tp), mopt))
	log.Info("agentmem started", "addr", ln.Addr().String(), "db", redactDSN(cfg.DB), "version", version())
	fmt.Fprintf(stdout, "listening on http://%s\n", ln.Addr())

	// The server and the background work (workers, idle sweep) run in one
	// group, joined before the store closes; either failing stops both.
	// The work has a context of its own, ended once the server has
	// stopped, so that no request is left waiting on it; the jobs it
	// interrupts are handed back.
	workCtx, stopWork := context.WithCancel(context.WithoutCancel(ctx))
	defer stopWork()
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		defer stopWork()
		return serveUntil(gctx, log, srv, ln, cfg.ShutdownTimeout)
	})
	g.Go(func() error {
		if err := mem.Run(workCtx); err != nil {
			return fmt.Errorf("workers: %w", err)
		}
		return nil
	})
	err = g.Wait()
	if cerr := mem.Close(); cerr != nil {
		err = errors.Join(err, fmt.Errorf("close store: %w", cerr))
	}
	if err == nil {
		log.Info("stopped")
	}
	return err
}

// serveUntil serves on ln until ctx ends, then stops accepting
// connections and lets in-flight requests finish within grace.
func serveUntil(ctx context.Context, log *slog.Logger, srv *http.Server, ln net.Listener, grace time.Duration) error {
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	log.Info("shutting down", "grace", grace)
	shutdownCtx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}

// parseServe reads serve's settings (see parseCommand).
func parseServe(args []string, getenv func(string) string, stdout io.Writer) (Config, error) {
	cfg, fs, err := parseCommand("serve", args, getenv, stdout, nil)
	if err == nil && fs.NArg() > 0 {
		err = fmt.Errorf("serve: unexpected argument %q", fs.Arg(0))
	}
	return cfg, err
}

// newHTTPServer returns the server of the REST API over svc, with its
// timeouts, its requests measured into reg and traced with tp (none when
// nil).
func newHTTPServer(log *slog.Logger, svc *core.Service, reg *prometheus.Registry, tp trace.TracerProvider, cfg Config, proxyHandler, mcpHandler http.Handler) *http.Server {
	proxies, _ := cfg.trustedProxies() // checked by Validate
	metrics.RegisterStats(reg, svc, log)
	measure, traced := metrics.HTTP(reg, httpapi.Served), metrics.TraceHTTP(tp, httpapi.Served)
	handler := httpapi.NewHandler(log, metrics.Service(svc, tp), httpapi.Options{
		MaxBodyBytes: cfg.MaxBodyBytes,
		Middleware:   func(h http.Handler) http.Handler { return traced(measure(h)) },
		Metrics:      metrics.Handler(reg),
		Version:      version(),
		Auth: httpapi.Auth{
			Mode:           cfg.Auth,
			UserHeader:     cfg.UserHeader,
			TrustedProxies: proxies,
			Rate:           cfg.RateLimit,
			Burst:          cfg.RateBurst,
			Keys:           svc.Store(),
		},
		MaxQueryBytes:  cfg.MaxQueryBytes,
		AllowedOrigins: cfg.AllowedOrigins,
		AllowedHosts:   cfg.AllowedHosts,
		Proxy:          proxyHandler,
		MCP:            mcpHandler,
		Web:            web.NewHandler(),
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
