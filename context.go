package agentmem

import "encoding/json"

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

// ContextRequest is what a client asks of the context builder
// (window.Builder). Zero fields take the server's defaults.
type ContextRequest struct {
	// Input is the new user message, not yet stored: it is always in the
	// context, after the history.
	Input string `json:"input"`
	// Query, when there is no Input, is the text the relevant memories,
	// the entities of the initialisation block and an "auto" prompt are
	// drawn for: the newest user message of a thread built after that
	// message was stored.
	Query        string `json:"query"`
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
	Include        *ContextInclude  `json:"include"`
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

// ContextInclude selects the sections of the context; nil fields are true.
type ContextInclude struct {
	System   *bool `json:"system"`
	Init     *bool `json:"init"`     // profile, notes, recent thread summaries
	Summary  *bool `json:"summary"`  // the cumulative summary (summarize strategy)
	Memories *bool `json:"memories"` // long-term memories relevant to the input
	Messages *bool `json:"messages"` // the history
}

// Section is a titled block of the context: part of the initialisation
// block (profile, notes, recent thread summaries), the retrieved
// memories, or the cumulative summary.
type Section struct {
	Name  string `json:"name"`  // its key in the telemetry, e.g. "profile"
	Title string `json:"title"` // its header, e.g. "Key Insights"
	Text  string `json:"text"`
}

// Context is a built context, in one of three formats, with its telemetry.
type Context struct {
	Format       string        `json:"-"`
	Messages     []ChatMessage `json:"messages"`
	Instructions string        `json:"instructions"`
	Input        string        `json:"input"`
	Text         string        `json:"text"`
	Telemetry    Telemetry     `json:"telemetry"`
}

// MarshalJSON writes the fields of the context's format only: messages,
// instructions and input, or text; and the telemetry.
func (c *Context) MarshalJSON() ([]byte, error) {
	switch c.Format {
	case FormatResponses:
		return json.Marshal(struct {
			Instructions string    `json:"instructions"`
			Input        string    `json:"input"`
			Telemetry    Telemetry `json:"telemetry"`
		}{c.Instructions, c.Input, c.Telemetry})
	case FormatText:
		return json.Marshal(struct {
			Text      string    `json:"text"`
			Telemetry Telemetry `json:"telemetry"`
		}{c.Text, c.Telemetry})
	}
	msgs := c.Messages
	if msgs == nil {
		msgs = []ChatMessage{}
	}
	return json.Marshal(struct {
		Messages  []ChatMessage `json:"messages"`
		Telemetry Telemetry     `json:"telemetry"`
	}{msgs, c.Telemetry})
}

// SeqRange is an inclusive range of seqs.
type SeqRange struct {
	From int64 `json:"from"`
	To   int64 `json:"to"`
}

// Telemetry says what a build put into the context and why (seed 004's
// context-window telemetry, and more).
type Telemetry struct {
	BudgetTokens int            `json:"budget_tokens"`
	UsedTokens   int            `json:"used_tokens"`
	Fraction     float64        `json:"fraction"` // used / budget
	Sections     map[string]int `json:"sections"` // tokens per section; they sum to used_tokens
	Model        string         `json:"model"`
	Encoding     string         `json:"encoding"`
	// Approximate is true when a count is an estimate: a model whose
	// tokenizer is not known, or tool calls.
	Approximate bool   `json:"approximate"`
	Strategy    string `json:"strategy"`
	Format      string `json:"format"`
	Prompt      string `json:"prompt,omitempty"` // the system prompt template used

	// Memories are the long-term memories the context drew on (its
	// memories section), in its order: what a client cites beside the
	// answer. None when the request had no input or query.
	Memories []string `json:"memories,omitempty"`

	IncludedMessages int        `json:"included_messages"`
	OmittedMessages  int64      `json:"omitted_messages"` // history not in the context verbatim
	OmittedSeqs      []SeqRange `json:"omitted_seqs"`
	// SummaryThroughSeq is the last seq the summary in the context covers
	// (0: no summary); SummaryLag how many messages of the thread the
	// summary does not cover yet; SummaryBehind is true when some of
	// those did not fit and were trimmed instead (the truncation fallback
	// while the summary catches up).
	SummaryThroughSeq int64  `json:"summary_through_seq"`
	SummaryVersion    int64  `json:"summary_version"`
	SummaryLag        int64  `json:"summary_lag"`
	SummaryBehind     bool   `json:"summary_behind"`
	SummaryJob        string `json:"summary_job,omitempty"` // the job this build enqueued to catch up

	// IndexLag is how many of the thread's messages are not indexed yet
	// (not found by their windows, their memories not drawn), and
	// IndexLagSeconds how long indexing has been behind on the thread (the
	// age of its oldest index job waiting); both 0 when it has caught up.
	IndexLag        int64   `json:"index_lag"`
	IndexLagSeconds float64 `json:"index_lag_seconds"`

	Warnings []string `json:"warnings"`
	CacheHit bool     `json:"cache_hit"`
}
