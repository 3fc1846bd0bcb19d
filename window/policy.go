package window

import (
	"cmp"
	"unicode/utf8"

	"github.com/agentmem/agentmem"
)

// Strategies: how the history is fitted into the budget. Every strategy
// also respects the budget.
const (
	StrategyTrim      = "trim"      // the newest messages that fit (seed 000)
	StrategyWindow    = "window"    // the last k messages or turns (seeds 003, 004)
	StrategySummarize = "summarize" // a cumulative summary of the older part + the newest verbatim (seeds 001, 002, 004)
)

// Formats of a built context.
const (
	FormatMessages  = "messages"  // chat messages
	FormatResponses = "responses" // instructions + input, for the Responses API (seed 000)
	FormatText      = "text"      // one sectioned text block (seed 001)
)

// Limits on a request.
const (
	MaxBudgetTokens = 2_000_000
	MaxInputBytes   = agentmem.DefaultMaxMessageBytes
	MaxSystemBytes  = 256 << 10
)

// Request is what a client asks of the builder. Zero fields take the
// server's defaults (Options.Defaults).
type Request struct {
	// Input is the new user message, not yet stored: it is always in the
	// context, after the history.
	Input        string `json:"input"`
	BudgetTokens int    `json:"budget_tokens"`
	Model        string `json:"model"`
	Strategy     string `json:"strategy"`
	// WindowMessages and WindowTurns bound the window strategy: the last
	// k messages, or the messages of the last k turns (a turn starts at a
	// user message).
	WindowMessages int              `json:"window_messages"`
	WindowTurns    int              `json:"window_turns"`
	Summarize      *SummarizePolicy `json:"summarize"`
	Format         string           `json:"format"`
	Include        *Include         `json:"include"`
	// System is the system prompt. Prompt names a template of the
	// server's configuration instead ("auto" infers it from the input's
	// keywords); System wins when both are set.
	System string `json:"system"`
	Prompt string `json:"prompt"`
}

// SummarizePolicy says when the summarize strategy asks for a new
// summary and how much it keeps verbatim. Turns win over fractions when
// both are set.
type SummarizePolicy struct {
	// TriggerTurns: summarise when the unsummarised history has more turns.
	TriggerTurns int `json:"trigger_turns"`
	// TriggerFraction: summarise when the unsummarised history takes more
	// than this fraction of the budget (seed 004: 0.7; seed 002: 0.95).
	TriggerFraction float64 `json:"trigger_fraction"`
	// KeepTurns: the newest turns that stay verbatim (seed 001: 5).
	KeepTurns int `json:"keep_turns"`
	// KeepFraction: the newest messages that stay verbatim, as a fraction
	// of the budget (seed 004 keeps 60 % of 70 %: about 0.4).
	KeepFraction float64 `json:"keep_fraction"`
}

// Include selects the sections of the context; nil fields are true.
type Include struct {
	System   *bool `json:"system"`
	Init     *bool `json:"init"`     // profile, notes, recent thread summaries
	Summary  *bool `json:"summary"`  // the cumulative summary (summarize strategy)
	Memories *bool `json:"memories"` // long-term memories relevant to the input
	Messages *bool `json:"messages"` // the history
}

func on(b *bool) bool { return b == nil || *b }

// DefaultRequest is the zero-configuration policy: a 128K window less 8K
// for the answer (seed 000), o200k counts, summarise at 70 % keeping the
// newest 40 % of the budget (seed 004), chat messages.
func DefaultRequest() Request {
	return Request{
		BudgetTokens:   120_000,
		Model:          "gpt-4o",
		Strategy:       StrategySummarize,
		WindowMessages: 15,
		Summarize:      &SummarizePolicy{TriggerFraction: 0.7, KeepFraction: 0.4},
		Format:         FormatMessages,
	}
}

// merge returns r with its zero fields taken from def.
func (r Request) merge(def Request) Request {
	r.BudgetTokens = cmp.Or(r.BudgetTokens, def.BudgetTokens)
	r.Model = cmp.Or(r.Model, def.Model)
	r.Strategy = cmp.Or(r.Strategy, def.Strategy)
	if r.WindowMessages == 0 && r.WindowTurns == 0 {
		r.WindowMessages, r.WindowTurns = def.WindowMessages, def.WindowTurns
	}
	if r.Summarize == nil {
		r.Summarize = def.Summarize
	}
	if r.Summarize == nil {
		r.Summarize = &SummarizePolicy{}
	}
	r.Format = cmp.Or(r.Format, def.Format)
	if r.Include == nil {
		r.Include = def.Include
	}
	if r.Include == nil {
		r.Include = &Include{}
	}
	if r.System == "" && r.Prompt == "" {
		r.System, r.Prompt = def.System, def.Prompt
	}
	return r
}

// validate checks a merged request; errors name the field.
func (r *Request) validate() error {
	switch {
	case r.BudgetTokens < 1 || r.BudgetTokens > MaxBudgetTokens:
		return agentmem.Errorf(agentmem.EINVALID, "budget_tokens must be between 1 and %d, not %d.", MaxBudgetTokens, r.BudgetTokens)
	case r.Strategy != StrategyTrim && r.Strategy != StrategyWindow && r.Strategy != StrategySummarize:
		return agentmem.Errorf(agentmem.EINVALID, "strategy must be trim, window or summarize, not %q.", r.Strategy)
	case r.Format != FormatMessages && r.Format != FormatResponses && r.Format != FormatText:
		return agentmem.Errorf(agentmem.EINVALID, "format must be messages, responses or text, not %q.", r.Format)
	case r.WindowMessages < 0 || r.WindowTurns < 0:
		return agentmem.Errorf(agentmem.EINVALID, "window_messages and window_turns must not be negative.")
	case len(r.Input) > MaxInputBytes:
		return agentmem.Errorf(agentmem.ETOOLARGE, "input is %d bytes; the limit is %d bytes.", len(r.Input), MaxInputBytes)
	case len(r.System) > MaxSystemBytes:
		return agentmem.Errorf(agentmem.ETOOLARGE, "system is %d bytes; the limit is %d bytes.", len(r.System), MaxSystemBytes)
	case !utf8.ValidString(r.Model) || len(r.Model) > 200:
		return agentmem.Errorf(agentmem.EINVALID, "model must be a name of at most 200 bytes.")
	}
	if err := agentmem.ValidateText("input", r.Input); err != nil {
		return err
	}
	if err := agentmem.ValidateText("system", r.System); err != nil {
		return err
	}
	s := r.Summarize
	switch {
	case s.TriggerTurns < 0 || s.KeepTurns < 0:
		return agentmem.Errorf(agentmem.EINVALID, "summarize.trigger_turns and summarize.keep_turns must not be negative.")
	case s.TriggerFraction < 0 || s.TriggerFraction > 1 || s.KeepFraction < 0 || s.KeepFraction > 1:
		return agentmem.Errorf(agentmem.EINVALID, "summarize.trigger_fraction and summarize.keep_fraction must be between 0 and 1.")
	case r.Strategy == StrategySummarize && s.TriggerTurns == 0 && s.TriggerFraction == 0:
		return agentmem.Errorf(agentmem.EINVALID, "summarize needs trigger_turns or trigger_fraction.")
	case s.TriggerTurns > 0 && s.KeepTurns >= s.TriggerTurns:
		return agentmem.Errorf(agentmem.EINVALID, "summarize.keep_turns (%d) must be below trigger_turns (%d).", s.KeepTurns, s.TriggerTurns)
	case s.TriggerFraction > 0 && s.KeepFraction >= s.TriggerFraction && s.KeepTurns == 0:
		return agentmem.Errorf(agentmem.EINVALID, "summarize.keep_fraction (%g) must be below trigger_fraction (%g).", s.KeepFraction, s.TriggerFraction)
	}
	return nil
}
