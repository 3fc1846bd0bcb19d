package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/llm/openai"
	"github.com/agentmem/agentmem/tokens"
	"github.com/agentmem/agentmem/window"
)

// contextFlags adds the flags of the context engine and the model.
func contextFlags(fs *flag.FlagSet, cfg *Config, getenv func(string) string) {
	fs.IntVar(&cfg.ContextBudget, "context-budget", cfg.ContextBudget, "default token budget of a context")
	envString(fs, &cfg.ContextModel, "context-model", "AGENTMEM_CONTEXT_MODEL", "default model whose tokenizer counts a context", getenv)
	envString(fs, &cfg.ContextStrategy, "context-strategy", "AGENTMEM_CONTEXT_STRATEGY", "default strategy: trim, window or summarize", getenv)
	envString(fs, &cfg.Prompts, "prompts", "AGENTMEM_PROMPTS", "JSON file of named system prompts: {templates, default, rules}", getenv)
	envString(fs, &cfg.LLMModel, "llm-model", "AGENTMEM_LLM_MODEL", "chat model for summaries (with OPENAI_API_KEY / OPENAI_BASE_URL or the Azure variables)", getenv)
	envString(fs, &cfg.LLMBaseURL, "llm-base-url", "OPENAI_BASE_URL", "base URL of an OpenAI-compatible server, e.g. http://localhost:11434/v1", getenv)
}

// newChat returns the chat client the environment and flags configure, or
// nil when no model is configured (summaries are then extractive).
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
	c, err := openai.New(oc)
	if err != nil {
		return nil, fmt.Errorf("model client: %w", err)
	}
	return c, nil
}

// newWindow returns the context builder over store, with exact token
// counts for OpenAI models, the configured defaults and prompts, the
// initialisation block (initBlock) and the memories relevant to each input.
func newWindow(cfg Config, store agentmem.Store, memories window.MemoryProvider, initBlock window.InitProvider, log *slog.Logger) (*window.Builder, error) {
	def := window.DefaultRequest()
	if cfg.ContextBudget > 0 {
		def.BudgetTokens = cfg.ContextBudget
	}
	if cfg.ContextModel != "" {
		def.Model = cfg.ContextModel
	}
	if cfg.ContextStrategy != "" {
		def.Strategy = cfg.ContextStrategy
	}
	var prompts window.Prompts
	if cfg.Prompts != "" {
		b, err := os.ReadFile(cfg.Prompts)
		if err != nil {
			return nil, fmt.Errorf("--prompts: %w", err)
		}
		if err := json.Unmarshal(b, &prompts); err != nil {
			return nil, fmt.Errorf("--prompts %s: %w", cfg.Prompts, err)
		}
		if err := prompts.Validate(); err != nil {
			return nil, fmt.Errorf("--prompts %s: %s", cfg.Prompts, agentmem.ErrorMessage(err))
		}
		def.Prompt = prompts.Default
	}
	return window.New(store, store, window.Options{
		Defaults:       def,
		Tokenizer:      func(model string) (window.Tokenizer, bool) { return tokens.ForModel(model) },
		StoredEncoding: tokens.Default().Encoding(),
		Prompts:        prompts,
		Memories:       memories,
		Init:           initBlock,
		Log:            log,
	}), nil
}
