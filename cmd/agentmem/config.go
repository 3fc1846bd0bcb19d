package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"net/url"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/app"
)

// Config is everything agentmem can be told. Values come from flags, then
// AGENTMEM_* environment variables, then these defaults; no package but
// main ever sees it.
type Config struct {
	Addr            string        // serve: listen address
	DB              string        // sqlite:PATH, a plain path, or postgres://…
	Synchronous     string        // SQLite synchronous pragma: FULL or NORMAL
	MaxMessageBytes int           // per message
	MaxBodyBytes    int64         // per request body
	ShutdownTimeout time.Duration // serve: grace period for in-flight requests
	LogLevel        string        // debug, info, warn, error

	Auth             string  // serve: none, apikey or header
	Insecure         bool    // serve: allow --auth none on a non-loopback address
	UserHeader       string  // serve, header mode: the header holding the user ID
	TrustedProxies   string  // serve, header mode: comma-separated addresses or CIDRs
	RateLimit        float64 // serve: requests per second per key; 0 is no limit
	RateBurst        int     // serve: bucket size of the rate limit
	MaxBatchMessages int     // serve: messages per append
	MaxQueryBytes    int     // serve: bytes of a URL query string
	AllowedOrigins   string  // serve: comma-separated origins served besides the server's own
	AllowedHosts     string  // serve: comma-separated Host names served besides loopback (--auth none)

	ContextBudget   int    // serve: default token budget of a context
	ContextModel    string // serve: default model of a context
	ContextStrategy string // serve: default strategy of a context
	Prompts         string // serve: JSON file of named system prompts
	LLMModel        string // serve: chat model for summaries
	LLMBaseURL      string // serve: OpenAI-compatible server

	Embedder   string // serve: builtin (lexical, offline) or openai (the OPENAI_* server's embeddings)
	EmbedModel string // serve: the embeddings model of --embedder openai

	IdleTimeout       time.Duration // serve: an active thread idle this long ends (0: never)
	InsightCategories string        // serve: comma-separated categories of insights ("" for the defaults)
}

// defaults returns the zero-configuration setup: an SQLite file in the
// working directory, served on loopback.
func defaults() Config {
	return Config{
		Addr:            "127.0.0.1:8080",
		DB:              "sqlite:./agentmem.db",
		Synchronous:     "FULL",
		MaxMessageBytes: agentmem.DefaultMaxMessageBytes,
		MaxBodyBytes:    8 << 20,
		ShutdownTimeout: 30 * time.Second,
		LogLevel:        "info",

		Auth:             "none",
		UserHeader:       "X-MS-CLIENT-PRINCIPAL-ID",
		RateBurst:        20,
		MaxBatchMessages: agentmem.MaxBatchMessages,
		MaxQueryBytes:    8 << 10,

		IdleTimeout: 30 * time.Minute,
		Embedder:    "builtin",
		EmbedModel:  "text-embedding-3-small",
	}
}

// envString registers a string flag whose default is the environment
// variable env if set, else def.
func envString(fs *flag.FlagSet, p *string, name, env, usage string, getenv func(string) string) {
	if v := getenv(env); v != "" {
		*p = v
	}
	fs.StringVar(p, name, *p, usage+" ("+env+")")
}

// dbFlags adds the flags every command that opens the store shares.
func dbFlags(fs *flag.FlagSet, cfg *Config, getenv func(string) string) {
	envString(fs, &cfg.DB, "db", "AGENTMEM_DB", "database: sqlite:PATH or postgres://…", getenv)
	envString(fs, &cfg.Synchronous, "sqlite-synchronous", "AGENTMEM_SQLITE_SYNCHRONOUS", "SQLite synchronous pragma: FULL (durable on power loss) or NORMAL", getenv)
}

// embedderFlags adds the flags that choose the embedder of search.
func embedderFlags(fs *flag.FlagSet, cfg *Config, getenv func(string) string) {
	envString(fs, &cfg.Embedder, "embedder", "AGENTMEM_EMBEDDER", "embedder of search: builtin (no model, no network) or openai (the embeddings of the OPENAI_* server)", getenv)
	envString(fs, &cfg.EmbedModel, "embed-model", "AGENTMEM_EMBED_MODEL", "embeddings model of --embedder openai", getenv)
}

// parse parses args with fs, reads numeric environment variables, and
// validates the result.
func (cfg *Config) parse(fs *flag.FlagSet, args []string, getenv func(string) string) error {
	for env, p := range map[string]*int{"AGENTMEM_MAX_MESSAGE_BYTES": &cfg.MaxMessageBytes} {
		if v := getenv(env); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil {
				return fmt.Errorf("%s=%q is not a number", env, v)
			}
			*p = n
		}
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	return cfg.Validate()
}

// Validate reports the first setting that cannot work.
func (cfg *Config) Validate() error {
	switch {
	case cfg.DB == "":
		return fmt.Errorf("--db is empty")
	case cfg.MaxMessageBytes <= 0:
		return fmt.Errorf("--max-message-bytes must be positive")
	case cfg.MaxBodyBytes < int64(cfg.MaxMessageBytes):
		return fmt.Errorf("--max-body-bytes (%d) must be at least --max-message-bytes (%d)", cfg.MaxBodyBytes, cfg.MaxMessageBytes)
	}
	if _, err := logLevel(cfg.LogLevel); err != nil {
		return err
	}
	switch cfg.Auth {
	case "none", "apikey", "header":
	default:
		return fmt.Errorf("--auth must be none, apikey or header, not %q", cfg.Auth)
	}
	if _, err := cfg.trustedProxies(); err != nil {
		return err
	}
	if err := cfg.checkAllowed(); err != nil {
		return err
	}
	switch {
	case cfg.Auth == "header" && cfg.TrustedProxies == "":
		return fmt.Errorf("--auth header needs --trusted-proxies: the addresses of the proxies whose %s header is believed", cfg.UserHeader)
	case cfg.RateLimit < 0 || cfg.RateBurst < 1:
		return fmt.Errorf("--rate-limit must not be negative and --rate-burst must be at least 1")
	case cfg.MaxBatchMessages < 1 || cfg.MaxBatchMessages > agentmem.MaxBatchMessages:
		return fmt.Errorf("--max-batch must be between 1 and %d", agentmem.MaxBatchMessages)
	case cfg.MaxQueryBytes < 256:
		return fmt.Errorf("--max-query-bytes must be at least 256")
	case cfg.ContextBudget < 0:
		return fmt.Errorf("--context-budget must not be negative")
	}
	switch {
	case cfg.IdleTimeout < 0:
		return fmt.Errorf("--idle-timeout must not be negative (0 never ends idle threads), not %v", cfg.IdleTimeout)
	case cfg.Embedder != "builtin" && cfg.Embedder != "openai":
		return fmt.Errorf("--embedder must be builtin or openai, not %q", cfg.Embedder)
	case cfg.Embedder == "openai" && cfg.EmbedModel == "":
		return fmt.Errorf("--embed-model is empty")
	}
	switch cfg.ContextStrategy {
	case "", "trim", "window", "summarize":
	default:
		return fmt.Errorf("--context-strategy must be trim, window or summarize, not %q", cfg.ContextStrategy)
	}
	return nil
}

// trustedProxies parses TrustedProxies: addresses (a single host) or CIDR
// prefixes, separated by commas.
func (cfg *Config) trustedProxies() ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, s := range strings.Split(cfg.TrustedProxies, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		if p, err := netip.ParsePrefix(s); err == nil {
			out = append(out, p.Masked())
		} else if a, err := netip.ParseAddr(s); err == nil {
			out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
		} else {
			return nil, fmt.Errorf("--trusted-proxies: %q is not an address or a CIDR prefix", s)
		}
	}
	return out, nil
}

// checkAllowed checks AllowedOrigins (each an origin: http or https,
// a host and maybe a port, no path) and AllowedHosts (each a name or
// name:port, no scheme or path).
func (cfg *Config) checkAllowed() error {
	for _, o := range splitList(cfg.AllowedOrigins) {
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
			(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
			return fmt.Errorf("--allowed-origins: %q is not an origin such as https://app.example.com", o)
		}
	}
	for _, h := range splitList(cfg.AllowedHosts) {
		if strings.ContainsAny(h, "/@ ") {
			return fmt.Errorf("--allowed-hosts: %q is not a host name such as agentmem.example.com (or name:port)", h)
		}
	}
	return nil
}

func logLevel(s string) (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return 0, fmt.Errorf("log level %q: use debug, info, warn or error", s)
	}
	return l, nil
}

func newLogger(w io.Writer, level string) *slog.Logger {
	l, _ := logLevel(level)
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l}))
}

// openStore opens the database named by cfg.DB, migrating it, with exact
// token counts.
func openStore(ctx context.Context, cfg Config) (agentmem.Store, error) {
	return app.OpenStore(ctx, app.Config{DB: cfg.DB, SQLiteSynchronous: cfg.Synchronous, MaxMessageBytes: cfg.MaxMessageBytes})
}

// app returns what app.Open needs of cfg: the database, the model, the
// embedder, the context defaults and prompts (read from cfg.Prompts), the
// idle timeout and the insight categories.
func (cfg *Config) app(getenv func(string) string, log *slog.Logger) (app.Config, error) {
	ac := app.Config{
		DB: cfg.DB, SQLiteSynchronous: cfg.Synchronous, MaxMessageBytes: cfg.MaxMessageBytes, MaxBatchMessages: cfg.MaxBatchMessages,
		Getenv: getenv, LLMModel: cfg.LLMModel, LLMBaseURL: cfg.LLMBaseURL, Embedder: cfg.Embedder, EmbedModel: cfg.EmbedModel,
		Context:     agentmem.ContextRequest{BudgetTokens: cfg.ContextBudget, Model: cfg.ContextModel, Strategy: cfg.ContextStrategy},
		IdleTimeout: cfg.IdleTimeout, InsightCategories: splitList(cfg.InsightCategories), Log: log,
	}
	if cfg.Prompts != "" {
		b, err := os.ReadFile(cfg.Prompts)
		if err != nil {
			return ac, fmt.Errorf("--prompts: %w", err)
		}
		if err := json.Unmarshal(b, &ac.Prompts); err != nil {
			return ac, fmt.Errorf("--prompts %s: %w", cfg.Prompts, err)
		}
		if err := ac.Prompts.Validate(); err != nil {
			return ac, fmt.Errorf("--prompts %s: %s", cfg.Prompts, agentmem.ErrorMessage(err))
		}
	}
	return ac, nil
}

// parseAge reads a --older-than or --expires value (see agentmem.ParseAge).
func parseAge(s string) (time.Duration, error) { return agentmem.ParseAge("age", s) }

func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}
