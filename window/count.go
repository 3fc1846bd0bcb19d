package window

import (
	"sync"

	"github.com/agentmem/agentmem"
)

// Tokenizer counts tokens with one encoding (tokens.Counter is one).
type Tokenizer interface {
	CountTokens(text string) int
	Encoding() string
}

// estimator is the Tokenizer of last resort (about four bytes a token).
type estimator struct{}

func (estimator) CountTokens(s string) int { return agentmem.EstimateTokens{}.CountTokens(s) }
func (estimator) Encoding() string         { return "estimate" }

// OpenAI's chat format: every message costs its content and name plus a
// fixed wrapping, and the reply is primed with a few more tokens
// (OpenAI's cookbook "How to count tokens with tiktoken", for gpt-3.5-turbo-0613
// onwards, gpt-4 and gpt-4o).
const (
	tokensPerMessage = 3
	tokensPerName    = 1
	tokensReplyPrime = 3
)

// counter counts with one tokenizer, reusing the token counts stored with
// each message when they were made by the same encoding.
type counter struct {
	tok       Tokenizer
	useStored bool // the stored counts are of tok's encoding
	// toolCalls is set when a tool call or tool answer was counted: OpenAI
	// does not document how it tokenizes them, so the count is estimated.
	toolApprox bool
}

var constCounts sync.Map // encoding + "\x00" + text → int: headers and separators

// constant counts a fixed string (a header, a separator), once per
// encoding.
func (c *counter) constant(s string) int {
	key := c.tok.Encoding() + "\x00" + s
	if n, ok := constCounts.Load(key); ok {
		return n.(int)
	}
	n := c.tok.CountTokens(s)
	constCounts.Store(key, n)
	return n
}

// text counts a piece of free text.
func (c *counter) text(s string) int { return c.tok.CountTokens(s) }

// content counts a message's content: its stored count when it is of the
// same encoding (plain messages; for a message with a name or tool calls
// the stored count covers them too), else a fresh count.
func (c *counter) content(m *agentmem.Message) int {
	if c.useStored && m.Seq > 0 && m.Name == "" && len(m.ToolCalls) == 0 { // Seq 0: not stored, not counted
		return m.TokenCount
	}
	return c.tok.CountTokens(m.Content)
}

// toolCalls counts an assistant's tool calls: function names and
// arguments, plus a wrapping per call. OpenAI does not publish the exact
// rule, so the count is flagged approximate.
func (c *counter) toolCalls(calls []agentmem.ToolCall) int {
	if len(calls) == 0 {
		return 0
	}
	c.toolApprox = true
	n := 0
	for _, tc := range calls {
		n += tokensPerMessage + c.tok.CountTokens(tc.Function.Name) + c.tok.CountTokens(tc.Function.Arguments)
	}
	return n
}

// chatMessage is the cost of m as one chat message.
func (c *counter) chatMessage(m *agentmem.Message) int {
	n := tokensPerMessage + c.content(m) + c.toolCalls(m.ToolCalls)
	if m.Name != "" {
		n += tokensPerName + c.tok.CountTokens(m.Name)
	}
	if m.ToolCallID != "" {
		n += c.tok.CountTokens(m.ToolCallID)
		c.toolApprox = true
	}
	return n
}

// line is the cost of m as a line of a text block (see transcriptLine),
// its newline included.
func (c *counter) line(m *agentmem.Message, style lineStyle) int {
	prefix, suffix := style.prefix(m), style.suffix(m)
	n := c.constant(prefix) + c.content(m) + c.constant("\n")
	if suffix != "" {
		n += c.text(suffix)
		c.toolApprox = c.toolApprox || len(m.ToolCalls) > 0
	}
	return n
}
