package window

import (
	"encoding/json"
	"strings"

	"github.com/agentmem/agentmem"
)

// lineStyle is how a message is written as a line of text: seed 000's
// "[role]: content" for the Responses API's instructions, seed 001's
// "role: content" for the text format.
type lineStyle int

const (
	bracketed lineStyle = iota // [user]: …
	plain                      // user: …
)

func (s lineStyle) prefix(m *agentmem.Message) string {
	role := m.Role
	if m.Name != "" {
		role += " (" + m.Name + ")"
	}
	if s == bracketed {
		return "[" + role + "]: "
	}
	return role + ": "
}

// suffix writes an assistant's tool calls after its content.
func (s lineStyle) suffix(m *agentmem.Message) string {
	if len(m.ToolCalls) == 0 {
		return ""
	}
	var b strings.Builder
	for _, tc := range m.ToolCalls {
		b.WriteString(" [calls " + tc.Function.Name + "(" + tc.Function.Arguments + ")]")
	}
	return b.String()
}

func (s lineStyle) line(m *agentmem.Message) string {
	return s.prefix(m) + m.Content + s.suffix(m) + "\n"
}

// Section is a titled block of the context: part of the initialisation
// block (profile, notes, recent thread summaries), the retrieved
// memories, or the cumulative summary.
type Section struct {
	Name  string `json:"name"`  // its key in the telemetry, e.g. "profile"
	Title string `json:"title"` // its header, e.g. "Key Insights"
	Text  string `json:"text"`
}

func (s Section) header() string { return "### " + s.Title + "\n" }

// Section separators and wrappers, counted once per encoding.
const (
	blankLine  = "\n\n"
	initOpen   = "<session_initialization>\n"
	initClose  = "\n</session_initialization>"
	activeHead = "### Active Conversation\n"
)

// Context is a built context, in one of three formats, with its telemetry.
type Context struct {
	Format       string                 `json:"-"`
	Messages     []agentmem.ChatMessage `json:"messages"`
	Instructions string                 `json:"instructions"`
	Input        string                 `json:"input"`
	Text         string                 `json:"text"`
	Telemetry    Telemetry              `json:"telemetry"`
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
		msgs = []agentmem.ChatMessage{}
	}
	return json.Marshal(struct {
		Messages  []agentmem.ChatMessage `json:"messages"`
		Telemetry Telemetry              `json:"telemetry"`
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

	Warnings []string `json:"warnings"`
	CacheHit bool     `json:"cache_hit"`
}
