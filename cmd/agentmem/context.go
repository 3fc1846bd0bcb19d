package main

import "flag"

// contextFlags adds the flags of the context engine and the model.
func contextFlags(fs *flag.FlagSet, cfg *Config, getenv func(string) string) {
	fs.IntVar(&cfg.ContextBudget, "context-budget", cfg.ContextBudget, "default token budget of a context")
	envString(fs, &cfg.ContextModel, "context-model", "AGENTMEM_CONTEXT_MODEL", "default model whose tokenizer counts a context", getenv)
	envString(fs, &cfg.ContextStrategy, "context-strategy", "AGENTMEM_CONTEXT_STRATEGY", "default strategy: trim, window or summarize", getenv)
	envString(fs, &cfg.Prompts, "prompts", "AGENTMEM_PROMPTS", "JSON file of named system prompts: {templates, default, rules}", getenv)
	envString(fs, &cfg.LLMModel, "llm-model", "AGENTMEM_LLM_MODEL", "chat model for summaries (with OPENAI_API_KEY / OPENAI_BASE_URL or the Azure variables)", getenv)
	envString(fs, &cfg.LLMBaseURL, "llm-base-url", "OPENAI_BASE_URL", "base URL of an OpenAI-compatible server, e.g. http://localhost:11434/v1", getenv)
}
