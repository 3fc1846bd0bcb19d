package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
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
	"github.com/agentmem/agentmem/core"
	"github.com/agentmem/agentmem/index"
	"github.com/agentmem/agentmem/mcp"
	"github.com/agentmem/agentmem/proxy"
	"github.com/agentmem/agentmem/reflection"
	"github.com/agentmem/agentmem/window"
	"github.com/agentmem/agentmem/worker"
)

// Config is everything agentmem can be told: the settings of the table
// below. Each comes from its flag, else its AGENTMEM_* environment
// variable, else the config file (--config FILE or AGENTMEM_CONFIG),
// else defaults(). No package but main ever sees it.
type Config struct {
	Addr            string        // serve: listen address
	DB              string        // sqlite:PATH, a plain path, or postgres://…
	Synchronous     string        // SQLite synchronous pragma: FULL or NORMAL
	MaxMessageBytes int           // per message
	MaxBodyBytes    int64         // per request body
	ShutdownTimeout time.Duration // serve: grace period for in-flight requests
	LogLevel        string        // debug, info, warn, error

	Auth             string   // serve: none, apikey or header
	Insecure         bool     // serve: allow --auth none on a non-loopback address
	UserHeader       string   // serve, header mode: the header holding the user ID
	TrustedProxies   []string // serve, header mode: addresses or CIDRs
	RateLimit        float64  // serve: requests per second per key; 0 is no limit
	RateBurst        int      // serve: bucket size of the rate limit
	MaxBatchMessages int      // serve: messages per append
	MaxQueryBytes    int      // serve: bytes of a URL query string
	AllowedOrigins   []string // serve: origins served besides the server's own
	AllowedHosts     []string // serve: Host names served besides loopback (--auth none)

	// Admission control (serve): the expensive work that runs at once.
	AdmitSearch int           // searches and contexts' memories (0: GOMAXPROCS; -1: no bound)
	AdmitBulk   int           // imports and exports (0: GOMAXPROCS/2, at least 1; -1: no bound)
	AdmitWait   time.Duration // the longest wait for a turn before 503 (0: none)

	// The context builder's defaults, which a request's fields override.
	ContextBudget            int
	ContextModel             string
	ContextStrategy          string
	WindowTurns              int // window strategy: the last N turns (0: no bound by turns)
	WindowMessages           int // window strategy: the last N messages (0: no bound by messages)
	SummarizeTriggerTurns    int // summarize strategy by turns (wins over the fractions when set)
	SummarizeKeepTurns       int
	SummarizeTriggerFraction float64 // summarize strategy by fraction of the budget
	SummarizeKeepFraction    float64
	ContextWarnFraction      float64 // the telemetry warns from this fraction of the budget
	RecentSummaries          int     // of other threads, in the init block (0: none)
	Prompts                  string  // JSON file of named system prompts

	LLMModel     string // the chat model ("" for the client's default)
	LLMBaseURL   string // an OpenAI-compatible server
	SummaryModel string // "" for LLMModel
	ExtractModel string // "" for LLMModel
	ReflectModel string // "" for LLMModel

	Embedder   string // builtin (all-MiniLM-L6-v2 in the binary), lexical (feature hashing) or openai (the OPENAI_* server's embeddings)
	EmbedModel string // the embeddings model of --embedder openai

	ChunkTurns           int           // turns per chunk
	IndexShedBacklog     int           // index jobs waiting past which indexing sheds optional work (negative: never)
	IdleTimeout          time.Duration // an active thread idle this long ends (0: never)
	DoneJobsRetention    time.Duration // done jobs are deleted this long after (0: kept)
	JobLease             time.Duration // a background job of a server that died runs again this long after it was claimed
	InsightCategories    []string      // of reflection's insights (empty: the defaults)
	InsightMinConfidence float64       // reflection drops weaker insights
	ProfileRefresh       string        // auto (when memories or insights change) or manual (when asked for)
	FactsMinScore        float64       // min_score of a facts question that gives none (0: retrieve.DefaultMinRelevance)

	// The OpenAI-compatible proxy (/openai/v1).
	ProxyUpstream string        // the model server's base URL ("" for the model's: --llm-base-url, OPENAI_BASE_URL, OpenAI or Azure)
	ProxyMode     string        // memory mode of a request that names none: auto, full, augment or off
	ProxyBudgets  []string      // MODEL=TOKENS context budgets, by model name prefix
	ProxyTimeout  time.Duration // wait for the upstream's answer to begin, and between its streamed parts
	ProxyDegrade  string        // while the store is down: fail (503) or passthrough

	// MCP over HTTP (/mcp).
	MCPSessionsPerKey int           // sessions one key may have open at once
	MCPMaxSessions    int           // sessions open at once in all
	MCPSessionIdle    time.Duration // a session with no request in flight this long is closed

	// from says where each setting set otherwise than by default came
	// from, for errors: "--auth", "AGENTMEM_AUTH" or "auth in FILE".
	from map[string]string
}

// defaults returns the zero-configuration setup: an SQLite file in the
// working directory, served on loopback, with the seeds' defaults.
func defaults() Config {
	ctx := window.DefaultRequest()
	return Config{
		Addr:            "127.0.0.1:8080",
		DB:              app.DefaultDB,
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
		AdmitWait:        core.DefaultAdmissionWait,

		ContextBudget:            ctx.BudgetTokens,
		ContextModel:             ctx.Model,
		ContextStrategy:          ctx.Strategy,
		WindowTurns:              ctx.WindowTurns,
		WindowMessages:           ctx.WindowMessages,
		SummarizeTriggerTurns:    ctx.Summarize.TriggerTurns,
		SummarizeKeepTurns:       ctx.Summarize.KeepTurns,
		SummarizeTriggerFraction: ctx.Summarize.TriggerFraction,
		SummarizeKeepFraction:    ctx.Summarize.KeepFraction,
		ContextWarnFraction:      window.DefaultWarnFraction,
		RecentSummaries:          window.DefaultRecentSummaries,

		Embedder:   "builtin",
		EmbedModel: "text-embedding-3-small",

		ChunkTurns:           agentmem.DefaultChunkTurns,
		IndexShedBacklog:     index.DefaultShedBacklog,
		IdleTimeout:          30 * time.Minute,
		DoneJobsRetention:    24 * time.Hour,
		JobLease:             worker.DefaultLease,
		InsightMinConfidence: reflection.DefaultInsightConfidence,
		ProfileRefresh:       "auto",

		ProxyMode:    agentmem.MemoryAuto,
		ProxyTimeout: proxy.DefaultTimeout,
		ProxyDegrade: "fail",

		MCPSessionsPerKey: mcp.DefaultMaxSessionsPerKey,
		MCPMaxSessions:    mcp.DefaultMaxSessions,
		MCPSessionIdle:    mcp.DefaultSessionIdle,
	}
}

// Which commands take a setting.
const (
	inServe = 1 << iota                 // serve's HTTP server alone: its address, authentication, request limits, the proxy
	inAdmin                             // the commands that open the store: migrate, export, import, cleanup, backup, keys
	inApp                               // agentmem on a database (models, context, indexing): serve, mcp, search, context, memories
	inStore = inServe | inAdmin | inApp // every command that opens the store
)

// A setting is one thing agentmem can be told, in three ways: its flag
// --NAME, its environment variable AGENTMEM_NAME (upper case, dashes as
// underscores), and the key NAME of the config file. A flag wins over
// its variable, which wins over the config file, which wins over
// defaults().
type setting struct {
	name  string
	in    int // the commands that take it: inServe, inAdmin, inApp or several
	usage string
	// field returns the setting's field of cfg: a *string, *int, *int64,
	// *float64, *bool, *time.Duration (see agentmem.ParseAge) or
	// *[]string (comma-separated; a JSON array in the config file).
	field func(cfg *Config) any
}

// env is the setting's environment variable.
func (s setting) env() string {
	return "AGENTMEM_" + strings.ToUpper(strings.ReplaceAll(s.name, "-", "_"))
}

// settings is every setting, in the order of the README's table.
var settings = []setting{
	{"addr", inServe, "listen address; port 0 picks a free port", func(c *Config) any { return &c.Addr }},
	{"db", inStore, "database: sqlite:PATH, a file path, or postgres://…", func(c *Config) any { return &c.DB }},
	{"sqlite-synchronous", inStore, "SQLite synchronous pragma: FULL (an acknowledged write survives power loss) or NORMAL", func(c *Config) any { return &c.Synchronous }},
	{"log-level", inServe | inApp, "debug, info, warn or error", func(c *Config) any { return &c.LogLevel }},
	{"shutdown-timeout", inServe, "how long in-flight requests may take to finish on shutdown", func(c *Config) any { return &c.ShutdownTimeout }},

	{"auth", inServe, "authentication: none (loopback only), apikey or header", func(c *Config) any { return &c.Auth }},
	{"insecure", inServe, "allow --auth none on an address other than loopback", func(c *Config) any { return &c.Insecure }},
	{"user-header", inServe, "header mode: the header holding the user ID", func(c *Config) any { return &c.UserHeader }},
	{"trusted-proxies", inServe, "header mode: comma-separated addresses or CIDRs of the proxies whose header is believed", func(c *Config) any { return &c.TrustedProxies }},
	{"rate-limit", inServe, "requests per second per key on each replica, a token bucket (0: no limit; 429 above)", func(c *Config) any { return &c.RateLimit }},
	{"allowed-origins", inServe, "comma-separated origins (https://app.example.com) whose browser requests are served besides the server's own", func(c *Config) any { return &c.AllowedOrigins }},
	{"allowed-hosts", inServe, "comma-separated Host names served besides loopback ones (with --auth none; with auth, when set, only these and loopback are)", func(c *Config) any { return &c.AllowedHosts }},
	{"rate-burst", inServe, "requests a key may send at once above the rate", func(c *Config) any { return &c.RateBurst }},

	{"max-message-bytes", inStore, "largest message accepted, in bytes (413 above)", func(c *Config) any { return &c.MaxMessageBytes }},
	{"max-body-bytes", inServe, "largest request body accepted, in bytes (413 above)", func(c *Config) any { return &c.MaxBodyBytes }},
	{"max-batch", inServe | inApp, "messages per append (413 above)", func(c *Config) any { return &c.MaxBatchMessages }},
	{"max-query-bytes", inServe, "bytes of a URL query string (414 above)", func(c *Config) any { return &c.MaxQueryBytes }},
	{"admit-search", inServe, "searches and facts questions that run at once (a context's memories are one); more wait up to --admit-wait, then get 503 with Retry-After, and a context is built without memories (0: one per CPU, GOMAXPROCS; -1: no bound)", func(c *Config) any { return &c.AdmitSearch }},
	{"admit-bulk", inServe, "imports and exports (of users and threads) that run at once; more wait up to --admit-wait, then get 503 with Retry-After (0: one per two CPUs, at least 1; -1: no bound)", func(c *Config) any { return &c.AdmitBulk }},
	{"admit-wait", inServe, "how long a search, import or export waits for its turn under --admit-search or --admit-bulk before its 503 (0: none)", func(c *Config) any { return &c.AdmitWait }},

	{"context-budget", inServe | inApp, "default token budget of a context (128K less 8K for the answer)", func(c *Config) any { return &c.ContextBudget }},
	{"context-model", inServe | inApp, "default model whose tokenizer counts a context", func(c *Config) any { return &c.ContextModel }},
	{"context-strategy", inServe | inApp, "default strategy of a context: trim, window or summarize", func(c *Config) any { return &c.ContextStrategy }},
	{"window-turns", inServe | inApp, "window strategy: the last N turns (0: no bound by turns, with --window-messages)", func(c *Config) any { return &c.WindowTurns }},
	{"window-messages", inServe | inApp, "window strategy: the last N messages (0: no bound by messages; with --window-turns, the tighter bound)", func(c *Config) any { return &c.WindowMessages }},
	{"summarize-trigger-turns", inServe | inApp, "summarize strategy by turns: ask for a summary past N unsummarised turns (0: by fraction); wins over the fractions", func(c *Config) any { return &c.SummarizeTriggerTurns }},
	{"summarize-keep-turns", inServe | inApp, "summarize strategy by turns: the newest turns kept verbatim, fewer than --summarize-trigger-turns", func(c *Config) any { return &c.SummarizeKeepTurns }},
	{"summarize-trigger-fraction", inServe | inApp, "summarize strategy by fraction: ask for a summary when the unsummarised history takes this fraction of the budget", func(c *Config) any { return &c.SummarizeTriggerFraction }},
	{"summarize-keep-fraction", inServe | inApp, "summarize strategy by fraction: the newest messages kept verbatim, as a fraction of the budget", func(c *Config) any { return &c.SummarizeKeepFraction }},
	{"context-warn-fraction", inServe | inApp, "the telemetry warns when a context uses this fraction of its budget", func(c *Config) any { return &c.ContextWarnFraction }},
	{"recent-summaries", inServe | inApp, "summaries of the user's other threads that open a context (0: none)", func(c *Config) any { return &c.RecentSummaries }},
	{"prompts", inServe | inApp, "JSON file of named system prompts: {templates, default, rules}", func(c *Config) any { return &c.Prompts }},

	{"llm-model", inServe | inApp, "chat model, with OPENAI_API_KEY, OPENAI_BASE_URL or the Azure variables (default: gpt-4o-mini; on Azure, the deployment)", func(c *Config) any { return &c.LLMModel }},
	{"llm-base-url", inServe | inApp, "base URL of an OpenAI-compatible server, e.g. http://localhost:11434/v1 (default: OPENAI_BASE_URL)", func(c *Config) any { return &c.LLMBaseURL }},
	{"summary-model", inServe | inApp, "model of the summaries of threads and chunks (default: --llm-model)", func(c *Config) any { return &c.SummaryModel }},
	{"extract-model", inServe | inApp, "model of memory extraction and consolidation and of entities (default: --llm-model)", func(c *Config) any { return &c.ExtractModel }},
	{"reflect-model", inServe | inApp, "model of reflection and of the profile (default: --llm-model)", func(c *Config) any { return &c.ReflectModel }},
	{"embedder", inServe | inApp, "embedder of search and memories: builtin (all-MiniLM-L6-v2 inside the binary, and its static table for messages; no network), lexical (words, not meaning: the cheapest) or openai (the embeddings of the model's server)", func(c *Config) any { return &c.Embedder }},
	{"embed-model", inServe | inApp, "embeddings model of --embedder openai", func(c *Config) any { return &c.EmbedModel }},

	{"chunk-turns", inServe | inApp, "turns per searchable chunk: every N turns of a thread become a chunk that search finds", func(c *Config) any { return &c.ChunkTurns }},
	{"index-shed-backlog", inServe | inApp, "index jobs waiting past which indexing describes chunks without the model and extracts no entities, so that search and memories keep up (-1: never)", func(c *Config) any { return &c.IndexShedBacklog }},
	{"idle-timeout", inServe | inApp, "an active thread without a message for this long ends, and is reflected on (0: never)", func(c *Config) any { return &c.IdleTimeout }},
	{"done-jobs-retention", inServe | inApp, "background jobs that are done are deleted this long after (0: kept; dead jobs are always kept)", func(c *Config) any { return &c.DoneJobsRetention }},
	{"job-lease", inServe | inApp, "how long a worker holds a background job: the jobs of a server that died (killed, crashed) run again once their lease expires; longer than the slowest job takes", func(c *Config) any { return &c.JobLease }},
	{"insight-categories", inServe | inApp, "comma-separated categories of the insights reflection draws (default: general ones)", func(c *Config) any { return &c.InsightCategories }},
	{"insight-min-confidence", inServe | inApp, "reflection drops insights with less confidence (0 to 1)", func(c *Config) any { return &c.InsightMinConfidence }},
	{"profile-refresh", inServe | inApp, "when the user's profile is synthesised again: auto (each time their memories or insights change) or manual (only when asked for: POST …/profile/refresh)", func(c *Config) any { return &c.ProfileRefresh }},
	{"proxy-upstream", inServe, "base URL of the model server the OpenAI-compatible proxy at /openai/v1 forwards to, e.g. https://api.openai.com/v1 or http://localhost:11434/v1 (default: the model's server: --llm-base-url, OPENAI_BASE_URL, OpenAI with OPENAI_API_KEY, or Azure); its key is AGENTMEM_PROXY_API_KEY, else OPENAI_API_KEY", func(c *Config) any { return &c.ProxyUpstream }},
	{"proxy-mode", inServe, "the proxy's memory mode when a request's X-Agentmem-Memory names none: auto (augment a request that carries earlier turns, else full), full, augment or off", func(c *Config) any { return &c.ProxyMode }},
	{"proxy-budgets", inServe, "comma-separated MODEL=TOKENS context budgets of the proxy, by model name prefix (llama3=7000); the known OpenAI models have defaults (their window less 8K)", func(c *Config) any { return &c.ProxyBudgets }},
	{"proxy-timeout", inServe, "how long the proxy waits for the model server's answer to begin, and then between its streamed parts (504 past it)", func(c *Config) any { return &c.ProxyTimeout }},
	{"proxy-degrade", inServe, "while the store is down, the proxy answers 503 (fail) or forwards requests without memory (passthrough), saying so in the X-Agentmem-Memory-Unavailable header", func(c *Config) any { return &c.ProxyDegrade }},
	{"mcp-sessions-per-key", inServe, "MCP sessions over HTTP (/mcp) one key may have open at once (429 above)", func(c *Config) any { return &c.MCPSessionsPerKey }},
	{"mcp-max-sessions", inServe, "MCP sessions over HTTP open at once in all (503 above)", func(c *Config) any { return &c.MCPMaxSessions }},
	{"mcp-session-idle", inServe, "an MCP session over HTTP with no request in flight for this long is closed; its client opens another", func(c *Config) any { return &c.MCPSessionIdle }},
	{"facts-min-score", inServe | inApp, "a facts answer leaves out facts less relevant than this (0 to 1), unless the question gives min_score (0: the default)", func(c *Config) any { return &c.FactsMinScore }},
}

// admission returns serve's bounds of expensive work (core.Admission).
func (cfg *Config) admission() *core.Admission {
	wait := cfg.AdmitWait
	if wait == 0 {
		wait = -1 // core's 0 is its default
	}
	return &core.Admission{Search: cfg.AdmitSearch, Bulk: cfg.AdmitBulk, Wait: wait}
}

// proxyKeyEnv holds the proxy's key to its model server when it is not
// OPENAI_API_KEY: a secret, so a variable and not a setting.
const proxyKeyEnv = "AGENTMEM_PROXY_API_KEY"

// configEnv names the config file when --config does not.
const configEnv = "AGENTMEM_CONFIG"

// readConfigFile reads the JSON object of a config file: settings by
// name, each a string, a number, a boolean or (for a list) an array of
// strings. A key that names no setting is an error; a setting of another
// command is left to it (one file serves every command).
func readConfigFile(path string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config file: %w", err)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("config file %s: %v (want a JSON object of settings)", path, err)
	}
	out := map[string]string{}
	for key, v := range raw {
		if !isSetting(key) {
			return nil, fmt.Errorf("config file %s: unknown setting %q (see the settings of agentmem serve -h)", path, key)
		}
		var s string
		var list []string
		switch v = json.RawMessage(strings.TrimSpace(string(v))); {
		case json.Unmarshal(v, &s) == nil:
		case len(v) > 0 && v[0] == '[' && json.Unmarshal(v, &list) == nil:
			s = strings.Join(list, ",")
		case len(v) > 0 && v[0] != '{' && v[0] != '[' && v[0] != 'n': // a number or a boolean
			s = string(v)
		default:
			return nil, fmt.Errorf("config file %s: %s must be a string, a number, a boolean or an array of strings, not %s", path, key, v)
		}
		out[key] = s
	}
	return out, nil
}

func isSetting(name string) bool {
	for _, s := range settings {
		if s.name == name {
			return true
		}
	}
	return false
}

// name is how an error names setting name: as it was given (its flag,
// its variable, or its key in the config file), its flag by default.
func (cfg *Config) name(name string) string {
	if from := cfg.from[name]; from != "" {
		return from
	}
	return "--" + name
}

// Validate reports the first setting that cannot work, named as it was
// given.
func (cfg *Config) Validate() error {
	n := cfg.name
	switch {
	case cfg.DB == "":
		return fmt.Errorf("%s is empty", n("db"))
	case cfg.MaxMessageBytes <= 0:
		return fmt.Errorf("%s must be positive", n("max-message-bytes"))
	case cfg.MaxBodyBytes < int64(cfg.MaxMessageBytes):
		return fmt.Errorf("%s (%d) must be at least %s (%d)", n("max-body-bytes"), cfg.MaxBodyBytes, n("max-message-bytes"), cfg.MaxMessageBytes)
	case cfg.ShutdownTimeout < 0:
		return fmt.Errorf("%s must not be negative", n("shutdown-timeout"))
	}
	if _, err := logLevel(cfg.LogLevel); err != nil {
		return fmt.Errorf("%s: %v", n("log-level"), err)
	}
	switch cfg.Auth {
	case "none", "apikey", "header":
	default:
		return fmt.Errorf("%s must be none, apikey or header, not %q", n("auth"), cfg.Auth)
	}
	if _, err := cfg.trustedProxies(); err != nil {
		return err
	}
	if err := cfg.checkAllowed(); err != nil {
		return err
	}
	if _, err := cfg.proxyBudgets(); err != nil {
		return err
	}
	switch {
	case cfg.ProxyMode != agentmem.MemoryAuto && cfg.ProxyMode != agentmem.MemoryFull && cfg.ProxyMode != agentmem.MemoryAugment && cfg.ProxyMode != agentmem.MemoryOff:
		return fmt.Errorf("%s must be auto, full, augment or off, not %q", n("proxy-mode"), cfg.ProxyMode)
	case cfg.ProxyDegrade != "fail" && cfg.ProxyDegrade != proxy.DegradePassthrough:
		return fmt.Errorf("%s must be fail or passthrough, not %q", n("proxy-degrade"), cfg.ProxyDegrade)
	case cfg.ProxyTimeout <= 0:
		return fmt.Errorf("%s must be positive, not %v", n("proxy-timeout"), cfg.ProxyTimeout)
	case cfg.ProxyUpstream != "" && !isHTTPURL(cfg.ProxyUpstream):
		return fmt.Errorf("%s must be an http(s) URL such as https://api.openai.com/v1, not %q", n("proxy-upstream"), cfg.ProxyUpstream)
	case cfg.MCPSessionsPerKey < 1:
		return fmt.Errorf("%s must be at least 1, not %d", n("mcp-sessions-per-key"), cfg.MCPSessionsPerKey)
	case cfg.MCPMaxSessions < cfg.MCPSessionsPerKey:
		return fmt.Errorf("%s (%d) must be at least %s (%d)", n("mcp-max-sessions"), cfg.MCPMaxSessions, n("mcp-sessions-per-key"), cfg.MCPSessionsPerKey)
	case cfg.MCPSessionIdle < time.Second:
		return fmt.Errorf("%s must be at least 1s, not %v", n("mcp-session-idle"), cfg.MCPSessionIdle)
	}
	switch {
	case cfg.Auth == "header" && len(cfg.TrustedProxies) == 0:
		return fmt.Errorf("%s header needs %s: the addresses of the proxies whose %s header is believed", n("auth"), n("trusted-proxies"), cfg.UserHeader)
	case cfg.RateLimit < 0:
		return fmt.Errorf("%s must not be negative", n("rate-limit"))
	case cfg.RateBurst < 1:
		return fmt.Errorf("%s must be at least 1", n("rate-burst"))
	case cfg.MaxBatchMessages < 1 || cfg.MaxBatchMessages > agentmem.MaxBatchMessages:
		return fmt.Errorf("%s must be between 1 and %d", n("max-batch"), agentmem.MaxBatchMessages)
	case cfg.MaxQueryBytes < 256:
		return fmt.Errorf("%s must be at least 256", n("max-query-bytes"))
	case cfg.AdmitSearch < -1:
		return fmt.Errorf("%s must be -1 (no bound), 0 (one per CPU) or a number of searches, not %d", n("admit-search"), cfg.AdmitSearch)
	case cfg.AdmitBulk < -1:
		return fmt.Errorf("%s must be -1 (no bound), 0 (one per two CPUs) or a number of imports and exports, not %d", n("admit-bulk"), cfg.AdmitBulk)
	case cfg.AdmitWait < 0:
		return fmt.Errorf("%s must not be negative (0 refuses at once), not %v", n("admit-wait"), cfg.AdmitWait)
	case cfg.ContextBudget < 1 || cfg.ContextBudget > window.MaxBudgetTokens:
		return fmt.Errorf("%s must be between 1 and %d", n("context-budget"), window.MaxBudgetTokens)
	case cfg.IdleTimeout < 0:
		return fmt.Errorf("%s must not be negative (0 never ends idle threads), not %v", n("idle-timeout"), cfg.IdleTimeout)
	case cfg.DoneJobsRetention < 0:
		return fmt.Errorf("%s must not be negative (0 keeps done jobs), not %v", n("done-jobs-retention"), cfg.DoneJobsRetention)
	case cfg.JobLease < time.Second:
		return fmt.Errorf("%s must be at least 1s (a job's handler stops a tenth of it before it expires), not %v", n("job-lease"), cfg.JobLease)
	case cfg.Embedder != "builtin" && cfg.Embedder != "lexical" && cfg.Embedder != "openai":
		return fmt.Errorf("%s must be builtin, lexical or openai, not %q", n("embedder"), cfg.Embedder)
	case cfg.Embedder == "openai" && cfg.EmbedModel == "":
		return fmt.Errorf("%s is empty", n("embed-model"))
	}
	switch cfg.ContextStrategy {
	case window.StrategyTrim, window.StrategyWindow, window.StrategySummarize:
	default:
		return fmt.Errorf("%s must be trim, window or summarize, not %q", n("context-strategy"), cfg.ContextStrategy)
	}
	notNegative := []string{"window-turns", "window-messages", "summarize-trigger-turns", "summarize-keep-turns", "recent-summaries"}
	for i, v := range []int{cfg.WindowTurns, cfg.WindowMessages, cfg.SummarizeTriggerTurns, cfg.SummarizeKeepTurns, cfg.RecentSummaries} {
		if v < 0 {
			return fmt.Errorf("%s must not be negative", n(notNegative[i]))
		}
	}
	if cfg.WindowTurns == 0 && cfg.WindowMessages == 0 {
		return fmt.Errorf("%s and %s are both 0: bound the window strategy by one of them (the trim strategy has no bound but the budget)", n("window-turns"), n("window-messages"))
	}
	fractions := []string{"summarize-trigger-fraction", "summarize-keep-fraction", "facts-min-score"}
	for i, v := range []float64{cfg.SummarizeTriggerFraction, cfg.SummarizeKeepFraction, cfg.FactsMinScore} {
		if !(v >= 0 && v <= 1) {
			return fmt.Errorf("%s must be between 0 and 1, not %g", n(fractions[i]), v)
		}
	}
	switch {
	case cfg.SummarizeTriggerTurns == 0 && cfg.SummarizeTriggerFraction == 0:
		return fmt.Errorf("the summarize strategy needs %s or %s", n("summarize-trigger-turns"), n("summarize-trigger-fraction"))
	case cfg.SummarizeTriggerTurns > 0 && cfg.SummarizeKeepTurns >= cfg.SummarizeTriggerTurns:
		return fmt.Errorf("%s (%d) must be below %s (%d)", n("summarize-keep-turns"), cfg.SummarizeKeepTurns, n("summarize-trigger-turns"), cfg.SummarizeTriggerTurns)
	case cfg.SummarizeTriggerFraction > 0 && cfg.SummarizeKeepFraction >= cfg.SummarizeTriggerFraction && cfg.SummarizeKeepTurns == 0:
		return fmt.Errorf("%s (%g) must be below %s (%g)", n("summarize-keep-fraction"), cfg.SummarizeKeepFraction, n("summarize-trigger-fraction"), cfg.SummarizeTriggerFraction)
	case !(cfg.ContextWarnFraction > 0 && cfg.ContextWarnFraction <= 1):
		return fmt.Errorf("%s must be above 0 and at most 1, not %g", n("context-warn-fraction"), cfg.ContextWarnFraction)
	case !(cfg.InsightMinConfidence > 0 && cfg.InsightMinConfidence <= 1):
		return fmt.Errorf("%s must be above 0 and at most 1, not %g", n("insight-min-confidence"), cfg.InsightMinConfidence)
	case cfg.ProfileRefresh != "auto" && cfg.ProfileRefresh != "manual":
		return fmt.Errorf("%s must be auto or manual, not %q", n("profile-refresh"), cfg.ProfileRefresh)
	case cfg.ChunkTurns < 1 || cfg.ChunkTurns > 1000:
		return fmt.Errorf("%s must be between 1 and 1000", n("chunk-turns"))
	case cfg.IndexShedBacklog == 0 || cfg.IndexShedBacklog < -1:
		return fmt.Errorf("%s must be at least 1, or -1 (never), not %d", n("index-shed-backlog"), cfg.IndexShedBacklog)
	}
	return nil
}

// trustedProxies parses TrustedProxies: addresses (a single host) or CIDR
// prefixes.
func (cfg *Config) trustedProxies() ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, s := range cfg.TrustedProxies {
		if p, err := netip.ParsePrefix(s); err == nil {
			out = append(out, p.Masked())
		} else if a, err := netip.ParseAddr(s); err == nil {
			out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
		} else {
			return nil, fmt.Errorf("%s: %q is not an address or a CIDR prefix", cfg.name("trusted-proxies"), s)
		}
	}
	return out, nil
}

// checkAllowed checks AllowedOrigins (each an origin: http or https,
// a host and maybe a port, no path) and AllowedHosts (each a name or
// name:port, no scheme or path).
// isHTTPURL reports whether s is an absolute http(s) URL.
func isHTTPURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// proxyBudgets parses --proxy-budgets: MODEL=TOKENS, each budget between
// 1 and window.MaxBudgetTokens.
func (cfg *Config) proxyBudgets() (map[string]int, error) {
	if len(cfg.ProxyBudgets) == 0 {
		return nil, nil
	}
	out := map[string]int{}
	for _, item := range cfg.ProxyBudgets {
		model, tokens, ok := strings.Cut(item, "=")
		n, err := strconv.Atoi(strings.TrimSpace(tokens))
		model = strings.TrimSpace(model)
		if !ok || model == "" || err != nil || n < 1 || n > window.MaxBudgetTokens {
			return nil, fmt.Errorf("%s: %q must be MODEL=TOKENS with TOKENS between 1 and %d, e.g. llama3=7000", cfg.name("proxy-budgets"), item, window.MaxBudgetTokens)
		}
		out[model] = n
	}
	return out, nil
}

// mcpOptions returns the options of MCP over HTTP, but for its logger and
// local user.
func (cfg *Config) mcpOptions() mcp.HTTPOptions {
	return mcp.HTTPOptions{MaxSessionsPerKey: cfg.MCPSessionsPerKey, MaxSessions: cfg.MCPMaxSessions, IdleTimeout: cfg.MCPSessionIdle}
}

// proxyOptions returns the proxy's options: its upstream is
// --proxy-upstream with AGENTMEM_PROXY_API_KEY (else OPENAI_API_KEY),
// else the model's server (Azure OpenAI, --llm-base-url, OPENAI_BASE_URL,
// or OpenAI itself with OPENAI_API_KEY), else none (the proxy answers 503
// saying how to configure one).
func (cfg *Config) proxyOptions(getenv func(string) string) proxy.Options {
	budgets, _ := cfg.proxyBudgets() // checked by Validate
	opt := proxy.Options{Mode: cfg.ProxyMode, Budgets: budgets, Timeout: cfg.ProxyTimeout, MaxBodyBytes: cfg.MaxBodyBytes, MaxMessageBytes: cfg.MaxMessageBytes}
	if cfg.ProxyDegrade == proxy.DegradePassthrough {
		opt.Degrade = proxy.DegradePassthrough
	}
	key := getenv(proxyKeyEnv)
	switch endpoint := getenv("AZURE_OPENAI_ENDPOINT"); {
	case cfg.ProxyUpstream != "":
		opt.Upstream = &proxy.Upstream{BaseURL: cfg.ProxyUpstream, APIKey: cmp.Or(key, getenv("OPENAI_API_KEY"))}
	case endpoint != "":
		opt.Upstream = &proxy.Upstream{AzureEndpoint: endpoint, AzureAPIVersion: getenv("OPENAI_API_VERSION"), APIKey: cmp.Or(key, getenv("AZURE_OPENAI_API_KEY"))}
	case cfg.LLMBaseURL != "" || getenv("OPENAI_BASE_URL") != "" || getenv("OPENAI_API_KEY") != "":
		opt.Upstream = &proxy.Upstream{BaseURL: cmp.Or(cfg.LLMBaseURL, getenv("OPENAI_BASE_URL")), APIKey: cmp.Or(key, getenv("OPENAI_API_KEY"))}
	}
	return opt
}

func (cfg *Config) checkAllowed() error {
	for _, o := range cfg.AllowedOrigins {
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
			(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
			return fmt.Errorf("%s: %q is not an origin such as https://app.example.com", cfg.name("allowed-origins"), o)
		}
	}
	for _, h := range cfg.AllowedHosts {
		if strings.ContainsAny(h, "/@ ") {
			return fmt.Errorf("%s: %q is not a host name such as agentmem.example.com (or name:port)", cfg.name("allowed-hosts"), h)
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

// sqliteFile returns the file of an SQLite database as --db names it
// (sqlite:PATH, sqlite://PATH or a plain path, as sqlite.Open reads it);
// ok is false for PostgreSQL, another scheme (which opening refuses) and
// what is no file.
func sqliteFile(db string) (path string, ok bool) {
	if scheme, _, found := strings.Cut(db, "://"); found && scheme != "sqlite" && !strings.ContainsAny(scheme, "/\\.") {
		return "", false // postgres://…, or a scheme app.OpenStore names as unsupported
	}
	path = strings.TrimPrefix(strings.TrimPrefix(db, "sqlite://"), "sqlite:")
	return path, path != "" && path != ":memory:"
}

// checkDBExists returns an error when cfg.DB names an SQLite file that
// does not exist. The commands that read a database call it first, so
// that a mistyped --db is an error, not an empty database created and
// read; those that make one (serve, migrate, mcp, import, keys create:
// the first key of a new server) do not.
func (cfg *Config) checkDBExists() error {
	path, ok := sqliteFile(cfg.DB)
	if !ok {
		return nil
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		return nil // there, or an error opening it will name
	}
	var given string
	switch from := cfg.from["db"]; {
	case from == "":
		given = "the default --db, " + cfg.DB
	case strings.HasPrefix(from, "--"):
		given = from + " " + cfg.DB
	case strings.HasPrefix(from, "AGENTMEM_"):
		given = from + "=" + cfg.DB
	default:
		given = from // db in FILE
	}
	return fmt.Errorf("database %s does not exist (%s): name an existing one, or create it with agentmem migrate (serve creates it at start)", path, given)
}

// openStore opens the database named by cfg.DB, migrating it, with exact
// token counts.
func openStore(ctx context.Context, cfg Config) (agentmem.Store, error) {
	return app.OpenStore(ctx, app.Config{DB: cfg.DB, SQLiteSynchronous: cfg.Synchronous, MaxMessageBytes: cfg.MaxMessageBytes})
}

// app returns what app.Open needs of cfg: the database, the models, the
// embedder, the context defaults and prompts (read from cfg.Prompts), and
// the settings of indexing, reflection and facts.
func (cfg *Config) app(getenv func(string) string, log *slog.Logger) (app.Config, error) {
	recent := cfg.RecentSummaries
	if recent == 0 {
		recent = -1 // none; app's 0 is its default
	}
	ac := app.Config{
		DB: cfg.DB, SQLiteSynchronous: cfg.Synchronous, MaxMessageBytes: cfg.MaxMessageBytes, MaxBatchMessages: cfg.MaxBatchMessages,
		Getenv: getenv, LLMModel: cfg.LLMModel, LLMBaseURL: cfg.LLMBaseURL, Embedder: cfg.Embedder, EmbedModel: cfg.EmbedModel,
		SummaryModel: cfg.SummaryModel, ExtractModel: cfg.ExtractModel, ReflectModel: cfg.ReflectModel,
		Context: agentmem.ContextRequest{
			BudgetTokens: cfg.ContextBudget, Model: cfg.ContextModel, Strategy: cfg.ContextStrategy,
			WindowTurns: cfg.WindowTurns, WindowMessages: cfg.WindowMessages,
			Summarize: &agentmem.SummarizePolicy{
				TriggerTurns: cfg.SummarizeTriggerTurns, KeepTurns: cfg.SummarizeKeepTurns,
				TriggerFraction: cfg.SummarizeTriggerFraction, KeepFraction: cfg.SummarizeKeepFraction,
			},
		},
		WarnFraction: cfg.ContextWarnFraction, RecentSummaries: recent, ChunkTurns: cfg.ChunkTurns, IndexShedBacklog: cfg.IndexShedBacklog,
		IdleTimeout: cfg.IdleTimeout, DoneJobsRetention: cfg.DoneJobsRetention, JobLease: cfg.JobLease, InsightCategories: cfg.InsightCategories, InsightMinConfidence: cfg.InsightMinConfidence, ProfileManual: cfg.ProfileRefresh == "manual",
		FactsMinScore: cfg.FactsMinScore, Log: log,
	}
	if cfg.Prompts != "" {
		b, err := os.ReadFile(cfg.Prompts)
		if err != nil {
			return ac, fmt.Errorf("%s: %w", cfg.name("prompts"), err)
		}
		if err := json.Unmarshal(b, &ac.Prompts); err != nil {
			return ac, fmt.Errorf("%s %s: %w", cfg.name("prompts"), cfg.Prompts, err)
		}
		if err := ac.Prompts.Validate(); err != nil {
			return ac, fmt.Errorf("%s %s: %s", cfg.name("prompts"), cfg.Prompts, agentmem.ErrorMessage(err))
		}
	}
	return ac, nil
}

func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}
