// Package openai is the chat and embeddings client for OpenAI, Azure OpenAI
// and every server that speaks the OpenAI API (Ollama, vLLM, LiteLLM…),
// built on the official SDK github.com/openai/openai-go/v3.
//
// The SDK carries the wire format and authentication. Retries, timeouts and
// the circuit breaker are this package's own, and the SDK's retries are
// switched off (MaxRetries 0): the SDK's back-off starts at a fixed 0.5 s and
// reads the wall clock, which would make tests slow and the breaker
// untestable; it also does not retry an attempt that hit its timeout, which
// we keep (see Config.Timeout). Everything else the SDK does for retries is
// kept here: 408, 409, 429 and 5xx and connection errors are retried with
// exponential back-off and jitter, Retry-After (seconds or an HTTP date) and
// retry-after-ms are honoured, and x-should-retry overrides the status.
//
// Every error is an *agentmem.Error, EUNAVAILABLE or EINVALID (see
// Client.Complete); its message names the HTTP status and at most the
// provider's short error code, never the provider's text or the API key.
package openai

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/azure"
	"github.com/openai/openai-go/v3/option"

	"github.com/agentmem/agentmem"
)

// Defaults of Config's zero fields.
const (
	DefaultModel              = "gpt-4o-mini"
	DefaultEmbeddingModel     = "text-embedding-3-small"
	DefaultAzureAPIVersion    = "2024-10-21"
	DefaultEmbeddingBatchSize = 256
	DefaultTimeout            = 60 * time.Second
	DefaultMaxRetries         = 2
	DefaultRetryBaseDelay     = 500 * time.Millisecond
	DefaultRetryMaxDelay      = 20 * time.Second
	DefaultBreakerThreshold   = 5
	DefaultBreakerCooldown    = 30 * time.Second
)

// Config configures a Client. The zero value of every field but the
// credentials means its default; WithDefaults fills them in.
type Config struct {
	// APIKey authenticates to OpenAI (Authorization: Bearer) or, with
	// AzureEndpoint, to Azure (api-key). "" sends no credentials, which is
	// what a local Ollama or vLLM wants.
	APIKey string
	// BaseURL is the base URL of an OpenAI-compatible server, /v1
	// included: "http://localhost:11434/v1" for Ollama. "" means
	// https://api.openai.com/v1. Ignored when AzureEndpoint is set.
	BaseURL string
	// Model is the chat model used when a ChatRequest names none.
	Model string
	// EmbeddingModel is the model Embed uses.
	EmbeddingModel string
	// Dimensions, if positive, asks the embedding model for vectors of
	// that length (text-embedding-3 and later), and Embed checks it.
	// Dimensions must match the vector column; changing it means
	// re-embedding.
	Dimensions int
	// EmbeddingBatchSize is the most texts sent in one embeddings request
	// (OpenAI takes up to 2048).
	EmbeddingBatchSize int

	// AzureEndpoint, if set, selects Azure OpenAI:
	// "https://<resource>.openai.azure.com". APIKey is then the Azure key
	// and is required (token credentials are not supported here).
	AzureEndpoint string
	// AzureAPIVersion is the api-version query parameter.
	AzureAPIVersion string
	// AzureDeployment is the chat deployment; "" means Model. A
	// ChatRequest.Model, if set, names the deployment on Azure.
	AzureDeployment string
	// AzureEmbeddingDeployment is the embeddings deployment; ""
	// means EmbeddingModel.
	AzureEmbeddingDeployment string

	// Timeout bounds each attempt, not the whole call with its retries
	// (the caller's ctx does that). An attempt that times out is not
	// retried: a model that did not answer within Timeout rarely does on
	// the next try, and callers have a fallback that beats waiting
	// (MaxRetries+1)×Timeout.
	Timeout time.Duration
	// MaxRetries is the number of retries after the first attempt; a
	// negative value means none.
	MaxRetries int
	// RetryBaseDelay is the back-off before the first retry; it doubles
	// for each further retry, and each wait is jittered into [d/2, d].
	RetryBaseDelay time.Duration
	// RetryMaxDelay caps the back-off. A server that asks, by
	// Retry-After, for a longer wait ends the retries at once.
	RetryMaxDelay time.Duration
	// HTTPClient sends the requests; nil means a client of the package's
	// own on http.DefaultTransport.
	HTTPClient *http.Client

	// BreakerThreshold is the number of consecutive failed calls after
	// which calls fail fast; a negative value disables the breaker.
	BreakerThreshold int
	// BreakerCooldown is how long calls fail fast before one trial call is
	// let through.
	BreakerCooldown time.Duration
}

// WithDefaults returns cfg with its zero fields set to their defaults.
func (cfg Config) WithDefaults() Config {
	cfg.Model = cmp.Or(cfg.Model, DefaultModel)
	cfg.EmbeddingModel = cmp.Or(cfg.EmbeddingModel, DefaultEmbeddingModel)
	cfg.EmbeddingBatchSize = cmp.Or(cfg.EmbeddingBatchSize, DefaultEmbeddingBatchSize)
	cfg.AzureAPIVersion = cmp.Or(cfg.AzureAPIVersion, DefaultAzureAPIVersion)
	cfg.AzureDeployment = cmp.Or(cfg.AzureDeployment, cfg.Model)
	cfg.AzureEmbeddingDeployment = cmp.Or(cfg.AzureEmbeddingDeployment, cfg.EmbeddingModel)
	cfg.Timeout = cmp.Or(cfg.Timeout, DefaultTimeout)
	cfg.MaxRetries = cmp.Or(cfg.MaxRetries, DefaultMaxRetries)
	cfg.RetryBaseDelay = cmp.Or(cfg.RetryBaseDelay, DefaultRetryBaseDelay)
	cfg.RetryMaxDelay = cmp.Or(cfg.RetryMaxDelay, DefaultRetryMaxDelay)
	cfg.BreakerThreshold = cmp.Or(cfg.BreakerThreshold, DefaultBreakerThreshold)
	cfg.BreakerCooldown = cmp.Or(cfg.BreakerCooldown, DefaultBreakerCooldown)
	return cfg
}

// ConfigFromEnv reads a Config through getenv (os.Getenv in main):
//
//	OPENAI_API_KEY            APIKey (OpenAI and compatible servers)
//	OPENAI_BASE_URL           BaseURL
//	AZURE_OPENAI_ENDPOINT     AzureEndpoint; when set, the Azure variables below replace the two above
//	AZURE_OPENAI_API_KEY      APIKey for Azure
//	OPENAI_API_VERSION        AzureAPIVersion
//	AZURE_OPENAI_DEPLOYMENT   AzureDeployment (chat)
//	AZURE_OPENAI_EMBEDDING_DEPLOYMENT   AzureEmbeddingDeployment
//	AGENTMEM_LLM_MODEL        Model
//	AGENTMEM_EMBEDDING_MODEL  EmbeddingModel
//
// Everything else keeps its default.
func ConfigFromEnv(getenv func(string) string) Config {
	cfg := Config{
		Model:          getenv("AGENTMEM_LLM_MODEL"),
		EmbeddingModel: getenv("AGENTMEM_EMBEDDING_MODEL"),
	}
	if endpoint := getenv("AZURE_OPENAI_ENDPOINT"); endpoint != "" {
		cfg.AzureEndpoint = endpoint
		cfg.APIKey = getenv("AZURE_OPENAI_API_KEY")
		cfg.AzureAPIVersion = getenv("OPENAI_API_VERSION")
		cfg.AzureDeployment = getenv("AZURE_OPENAI_DEPLOYMENT")
		cfg.AzureEmbeddingDeployment = getenv("AZURE_OPENAI_EMBEDDING_DEPLOYMENT")
		return cfg
	}
	cfg.APIKey = getenv("OPENAI_API_KEY")
	cfg.BaseURL = getenv("OPENAI_BASE_URL")
	return cfg
}

// Configured reports whether cfg names a usable model server: one with an
// API key, or a base URL (a local Ollama needs no key).
func Configured(cfg Config) bool {
	return cfg.APIKey != "" || cfg.BaseURL != ""
}

// Client is a chat model and an embedder on one OpenAI-compatible server.
// Its methods are safe for concurrent use. Chat and embedding calls have a
// circuit breaker each, since they often reach different models or
// deployments, one of which may be down.
type Client struct {
	// Now returns the current time for the circuit breaker and for
	// Retry-After dates. Defaults to time.Now; tests replace it before the
	// first call.
	Now func() time.Time
	// Sleep waits d between attempts, or returns ctx.Err() if ctx ends
	// first. Tests replace it to record or skip the waits.
	Sleep func(ctx context.Context, d time.Duration) error

	cfg          Config
	azure        bool
	compatible   bool // BaseURL is set: a non-OpenAI server, see chatParams
	chat         oai.ChatCompletionService
	embeddings   oai.EmbeddingService
	chatBreaker  *breaker
	embedBreaker *breaker
}

var (
	_ agentmem.Chat     = (*Client)(nil)
	_ agentmem.Embedder = (*Client)(nil)
)

// New returns a client for cfg. It fails if cfg can reach no server: no
// API key and no base URL, or Azure without a key, or a URL that does not
// parse. It makes no request.
func New(cfg Config) (*Client, error) {
	cfg = cfg.WithDefaults()
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	// The services are built from explicit options, not with
	// oai.NewClient, which would also read OPENAI_* from the process
	// environment behind getenv's back.
	opts := []option.RequestOption{option.WithHTTPClient(hc), option.WithMaxRetries(0)}
	c := &Client{
		Now:          time.Now,
		Sleep:        sleep,
		cfg:          cfg,
		chatBreaker:  &breaker{threshold: cfg.BreakerThreshold, cooldown: cfg.BreakerCooldown},
		embedBreaker: &breaker{threshold: cfg.BreakerThreshold, cooldown: cfg.BreakerCooldown},
	}
	switch {
	case cfg.AzureEndpoint != "":
		u, err := parseURL(cfg.AzureEndpoint)
		if err != nil {
			return nil, fmt.Errorf("openai: Azure endpoint: %w", err)
		}
		if cfg.APIKey == "" {
			return nil, errors.New("openai: Azure OpenAI needs an API key (AZURE_OPENAI_API_KEY)")
		}
		// azure.WithEndpoint routes each request to
		// /openai/deployments/{model}/… with ?api-version, so the model
		// field carries the deployment.
		c.azure = true
		opts = append(opts, azure.WithEndpoint(cfg.AzureEndpoint, cfg.AzureAPIVersion), azure.WithAPIKey(cfg.APIKey))
		if u.Scheme == "http" {
			// The SDK sends an Azure key over plain HTTP only with this
			// option and even then only to a loopback address: local
			// emulators and tests.
			opts = append(opts, azure.WithUnsafeAllowHTTP())
		}
	case Configured(cfg):
		base := cmp.Or(cfg.BaseURL, "https://api.openai.com/v1")
		if _, err := parseURL(base); err != nil {
			return nil, fmt.Errorf("openai: base URL: %w", err)
		}
		c.compatible = cfg.BaseURL != ""
		opts = append(opts, option.WithBaseURL(base))
		if cfg.APIKey != "" {
			opts = append(opts, option.WithAPIKey(cfg.APIKey))
		}
	default:
		return nil, errors.New("openai: no API key and no base URL (OPENAI_API_KEY, OPENAI_BASE_URL or AZURE_OPENAI_ENDPOINT)")
	}
	c.chat = oai.NewChatCompletionService(opts...)
	c.embeddings = oai.NewEmbeddingService(opts...)
	return c, nil
}

func parseURL(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil {
		return nil, err
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%q is not an http(s) URL", s)
	}
	return u, nil
}
