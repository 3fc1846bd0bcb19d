package langchaingo

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/agentmem/agentmem"
	"github.com/tmc/langchaingo/llms"
)

// Memory is a langchaingo memory (schema.Memory) over agentmem: a
// chain's history variable holds agentmem's context of the next call
// rather than every past turn — the user's profile and notes, the
// conversation's summary, the memories relevant to the input, and the
// newest turns, within a token budget — and each run's input and output
// are stored in the conversation's thread.
type Memory struct {
	History *History
	// MemoryKey is the variable the context fills: "history" when "", as
	// langchaingo's conversation chain expects.
	MemoryKey string
	// InputKey and OutputKey name the run's input and output; "" takes
	// the only value there is.
	InputKey, OutputKey string
	// Context is the context policy (budget, model, strategy…); zero
	// fields take the server's defaults.
	Context agentmem.ContextRequest
	// ReturnMessages gives the context as []llms.ChatMessage rather than
	// text.
	ReturnMessages bool
}

// NewMemory returns the memory of user's conversation in the active
// session of the default agent: one line plugs agentmem into a chain,
//
//	chains.NewConversation(llm, langchaingo.NewMemory(svc, "alice"))
func NewMemory(svc agentmem.Service, user string) *Memory {
	return &Memory{History: NewHistory(svc, user, "", "")}
}

// GetMemoryKey implements schema.Memory.
func (m *Memory) GetMemoryKey(context.Context) string { return cmp.Or(m.MemoryKey, "history") }

// MemoryVariables implements schema.Memory.
func (m *Memory) MemoryVariables(ctx context.Context) []string {
	return []string{m.GetMemoryKey(ctx)}
}

// LoadMemoryVariables implements schema.Memory: the context of the
// conversation for the run's input (which the chain adds itself, so it is
// not in the context).
func (m *Memory) LoadMemoryVariables(ctx context.Context, inputs map[string]any) (map[string]any, error) {
	input, err := value(inputs, m.InputKey, "input")
	if err != nil {
		return nil, err
	}
	h := m.History
	thread, err := h.Thread(ctx)
	if err != nil {
		return nil, err
	}
	req := m.Context
	req.Input, req.Query, req.Format = "", input, agentmem.FormatText
	if m.ReturnMessages {
		req.Format = agentmem.FormatMessages
	}
	c, err := h.svc.BuildContext(ctx, h.user, thread, req)
	if agentmem.ErrorCode(err) == agentmem.ENOTFOUND {
		// A thread named but not begun: nothing to remember yet.
		if m.ReturnMessages {
			return map[string]any{m.GetMemoryKey(ctx): []llms.ChatMessage{}}, nil
		}
		return map[string]any{m.GetMemoryKey(ctx): ""}, nil
	} else if err != nil {
		return nil, err
	}
	if !m.ReturnMessages {
		return map[string]any{m.GetMemoryKey(ctx): c.Text}, nil
	}
	msgs := make([]llms.ChatMessage, len(c.Messages))
	for i, cm := range c.Messages {
		msgs[i] = fromMessage(&agentmem.Message{Role: cm.Role, Content: cm.Content, Name: cm.Name, ToolCalls: cm.ToolCalls, ToolCallID: cm.ToolCallID})
	}
	return map[string]any{m.GetMemoryKey(ctx): msgs}, nil
}

// SaveContext implements schema.Memory: the run's input and output are
// stored in the thread, as the user's turn and the answer.
func (m *Memory) SaveContext(ctx context.Context, inputs, outputs map[string]any) error {
	input, err := value(inputs, m.InputKey, "input")
	if err != nil {
		return err
	}
	output, err := value(outputs, m.OutputKey, "output")
	if err != nil {
		return err
	}
	return m.History.append(ctx, &agentmem.Message{Role: agentmem.RoleUser, Content: input}, &agentmem.Message{Role: agentmem.RoleAssistant, Content: output})
}

// Clear implements schema.Memory (see History.Clear).
func (m *Memory) Clear(ctx context.Context) error { return m.History.Clear(ctx) }

// value returns the string of values[key], or of the only value when key
// is "".
func value(values map[string]any, key, what string) (string, error) {
	if key == "" {
		if len(values) != 1 {
			return "", fmt.Errorf("langchaingo: the %ss %v have %d keys: set the memory's %sKey", what, slices.Sorted(maps.Keys(values)), len(values), what)
		}
		for k := range values {
			key = k
		}
	}
	v, ok := values[key]
	if !ok {
		return "", fmt.Errorf("langchaingo: the %ss have no %q", what, key)
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("langchaingo: %s %q is a %T, not a string", what, key, v)
	}
	return s, nil
}
