package window

import (
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
