package window

import (
	"cmp"
	"unicode/utf8"

	"github.com/agentmem/agentmem"
)

// The request and result types of a build are the domain's (agentmem.ContextRequest,
// agentmem.Context…), so that every face and the Go client share them.
type (
	Request         = agentmem.ContextRequest
	SummarizePolicy = agentmem.SummarizePolicy
	Include         = agentmem.ContextInclude
	Context         = agentmem.Context
	Telemetry       = agentmem.Telemetry
	SeqRange        = agentmem.SeqRange
	Section         = agentmem.Section
)

// Strategies and formats: see agentmem.StrategyTrim and agentmem.FormatMessages.
const (
	StrategyTrim      = agentmem.StrategyTrim
	StrategyWindow    = agentmem.StrategyWindow
	StrategySummarize = agentmem.StrategySummarize
	FormatMessages    = agentmem.FormatMessages
	FormatResponses   = agentmem.FormatResponses
	FormatText        = agentmem.FormatText
)

func on(b *bool) bool { return b == nil || *b }

// Limits on a request.
const (
	MaxBudgetTokens = 2_000_000
	MaxInputBytes   = agentmem.DefaultMaxMessageBytes
	MaxSystemBytes  = 256 << 10
)

// DefaultRequest is the zero-configuration policy: a 128K window less 8K
// for the answer (seed 000), o200k counts, summarise at 70 % keeping the
// newest 40 % of the budget (seed 004), a window of the last 15 turns
// (seed 004), chat messages.
func DefaultRequest() Request {
	return Request{
		BudgetTokens: 120_000,
		Model:        "gpt-4o",
		Strategy:     StrategySummarize,
		WindowTurns:  15,
		Summarize:    &SummarizePolicy{TriggerFraction: 0.7, KeepFraction: 0.4},
		Format:       FormatMessages,
	}
}

// merge returns r with its zero fields taken from def.
func merge(r, def Request) Request {
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
func validate(r *Request) error {
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
	case len(r.Query) > MaxInputBytes:
		return agentmem.Errorf(agentmem.ETOOLARGE, "query is %d bytes; the limit is %d bytes.", len(r.Query), MaxInputBytes)
	case len(r.System) > MaxSystemBytes:
		return agentmem.Errorf(agentmem.ETOOLARGE, "system is %d bytes; the limit is %d bytes.", len(r.System), MaxSystemBytes)
	case !utf8.ValidString(r.Model) || len(r.Model) > 200:
		return agentmem.Errorf(agentmem.EINVALID, "model must be a name of at most 200 bytes.")
	}
	for _, f := range []struct{ name, v string }{{"input", r.Input}, {"query", r.Query}, {"system", r.System}, {"model", r.Model}, {"prompt", r.Prompt}} {
		if err := agentmem.ValidateText(f.name, f.v); err != nil {
			return err
		}
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
