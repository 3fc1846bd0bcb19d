package window

import (
	"cmp"
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

func header(s Section) string { return "### " + s.Title + "\n" }

// Section separators and wrappers, counted once per encoding.
const (
	blankLine  = "\n\n"
	initOpen   = "<session_initialization>\n"
	initClose  = "\n</session_initialization>"
	activeHead = "### Active Conversation\n"
)

// render writes the context in the request's format and its telemetry.
func (bl *build) render() *Context {
	c := &Context{Format: bl.req.Format}
	t := &c.Telemetry
	t.BudgetTokens, t.Model, t.Encoding = bl.req.BudgetTokens, bl.req.Model, bl.cnt.tok.Encoding()
	t.Strategy, t.Format = bl.req.Strategy, bl.req.Format
	t.Sections = map[string]int{}

	ctxBlock, overhead := bl.contextBlock(t.Sections)
	histCost := 0
	for _, n := range bl.historyCost {
		histCost += n
	}
	if bl.system != "" {
		t.Sections["system"] = bl.cnt.text(bl.system)
	}
	if len(bl.history) > 0 {
		t.Sections["messages"] = histCost
	}
	switch bl.req.Format {
	case FormatMessages:
		overhead += bl.renderMessages(c, ctxBlock)
	case FormatResponses:
		overhead += bl.renderResponses(c, ctxBlock)
	case FormatText:
		overhead += bl.renderText(c, ctxBlock)
	}
	if overhead > 0 {
		t.Sections["overhead"] = overhead
	}
	for _, n := range t.Sections {
		t.UsedTokens += n
	}
	t.Fraction = float64(t.UsedTokens) / float64(t.BudgetTokens)
	t.Approximate = !bl.exact || bl.cnt.toolApprox
	t.IncludedMessages = len(bl.history)
	if t.Sections["memories"] > 0 {
		t.Memories = bl.memories
	}
	bl.omitted(t)
	bl.warn(t)
	return c
}

// contextBlock renders the context block (init sections, memories,
// summary, separated by blank lines), adds each section's cost to
// sections, and returns the block and the tokens of its wrapping.
func (bl *build) contextBlock(sections map[string]int) (string, int) {
	cnt := bl.cnt
	sec := func(s Section) int { return cnt.constant(header(s)) + cnt.text(s.Text) }
	var blocks []string
	overhead := 0
	if len(bl.init) > 0 {
		var b strings.Builder
		b.WriteString(initOpen)
		overhead += cnt.constant(initOpen) + cnt.constant(initClose)
		for i, s := range bl.init {
			if i > 0 {
				b.WriteString(blankLine)
				overhead += cnt.constant(blankLine)
			}
			b.WriteString(header(s) + s.Text)
			sections[cmp.Or(s.Name, "init")] += sec(s)
		}
		b.WriteString(initClose)
		blocks = append(blocks, b.String())
	}
	if m := bl.memorySection(); m != nil {
		blocks = append(blocks, header(*m)+m.Text)
		sections["memories"] = sec(*m)
	}
	if bl.summary != nil {
		blocks = append(blocks, header(*bl.summary)+bl.summary.Text)
		sections["summary"] = sec(*bl.summary)
	}
	if len(blocks) > 1 {
		overhead += (len(blocks) - 1) * cnt.constant(blankLine)
	}
	return strings.Join(blocks, blankLine), overhead
}

// renderMessages writes the context as chat messages: the system prompt,
// the context block as a second system message, the history, the input;
// it returns the tokens of their wrapping.
func (bl *build) renderMessages(c *Context, ctxBlock string) int {
	overhead := 0
	c.Messages = make([]agentmem.ChatMessage, 0, len(bl.history)+3)
	if bl.system != "" {
		c.Messages = append(c.Messages, agentmem.ChatMessage{Role: agentmem.RoleSystem, Content: bl.system})
		overhead += tokensPerMessage
	}
	if ctxBlock != "" {
		c.Messages = append(c.Messages, agentmem.ChatMessage{Role: agentmem.RoleSystem, Content: ctxBlock})
		overhead += tokensPerMessage
	}
	for _, m := range bl.history {
		c.Messages = append(c.Messages, agentmem.ChatMessage{Role: m.Role, Content: m.Content, Name: m.Name, ToolCalls: m.ToolCalls, ToolCallID: m.ToolCallID})
	}
	if bl.inputMsg != nil {
		c.Messages = append(c.Messages, agentmem.ChatMessage{Role: agentmem.RoleUser, Content: bl.inputMsg.Content})
		c.Telemetry.Sections["input"] = bl.cnt.text(bl.inputMsg.Content)
		overhead += tokensPerMessage
	}
	return overhead + tokensReplyPrime
}

// renderResponses writes the context as the Responses API's instructions
// (system prompt, context block, history as bracketed lines) and input;
// it returns the tokens of their wrapping.
func (bl *build) renderResponses(c *Context, ctxBlock string) int {
	var b strings.Builder
	overhead := 2*tokensPerMessage + tokensReplyPrime + bl.writePreamble(&b, ctxBlock)
	for _, m := range bl.history {
		b.WriteString(bracketed.line(m))
	}
	c.Instructions = strings.TrimRight(b.String(), "\n")
	if bl.inputMsg != nil {
		c.Input = bl.inputMsg.Content
		c.Telemetry.Sections["input"] = bl.cnt.text(bl.inputMsg.Content)
	}
	return overhead
}

// writePreamble writes the system prompt and the context block, each
// followed by a blank line, as the Responses and text formats begin, and
// returns the tokens of the blank lines.
func (bl *build) writePreamble(b *strings.Builder, ctxBlock string) int {
	overhead := 0
	for _, part := range []string{bl.system, ctxBlock} {
		if part != "" {
			b.WriteString(part + blankLine)
			overhead += bl.cnt.constant(blankLine)
		}
	}
	return overhead
}

// renderText writes the context as one text: system prompt, context
// block, then the active conversation with the input last; it returns
// the tokens of its wrapping.
func (bl *build) renderText(c *Context, ctxBlock string) int {
	var b strings.Builder
	overhead := bl.writePreamble(&b, ctxBlock)
	b.WriteString(activeHead)
	overhead += bl.cnt.constant(activeHead)
	for _, m := range bl.history {
		b.WriteString(plain.line(m))
	}
	if bl.inputMsg != nil {
		b.WriteString(plain.line(bl.inputMsg))
		c.Telemetry.Sections["input"] = bl.cnt.line(bl.inputMsg, plain)
	}
	c.Text = strings.TrimRight(b.String(), "\n")
	return overhead
}
