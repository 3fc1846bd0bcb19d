// Package langchaingo plugs agentmem into github.com/tmc/langchaingo: a
// chat message history (schema.ChatMessageHistory) that stores a
// conversation as an agentmem thread, and a memory (schema.Memory) that
// gives a chain agentmem's context of the next call (the user's profile,
// the summary, relevant memories, the newest turns within a budget)
// instead of the whole history. Both work over any agentmem.Service: in
// process (app.Open) or a running server (client.Client).
//
//	chain := chains.NewConversation(llm, langchaingo.NewMemory(svc, "alice"))
package langchaingo

import (
	"cmp"
	"context"
	"fmt"
	"sync"

	"github.com/agentmem/agentmem"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/schema"
)

var (
	_ schema.ChatMessageHistory = (*History)(nil)
	_ schema.Memory             = (*Memory)(nil)
)

// History is a conversation of one user stored as an agentmem thread:
// the thread named when it was made, else the active session of the user
// and agent (opened on first use).
type History struct {
	svc    agentmem.Service
	user   string
	agent  string
	mu     sync.Mutex
	thread string // "" until known
}

// NewHistory returns the history of user's conversation with agent
// (agentmem.DefaultAgent when ""), in threadID, or in the active session
// when threadID is "".
func NewHistory(svc agentmem.Service, user, agent, threadID string) *History {
	return &History{svc: svc, user: user, agent: cmp.Or(agent, agentmem.DefaultAgent), thread: threadID}
}

// Thread returns the thread of the history, opening the session's when
// none is known yet.
func (h *History) Thread(ctx context.Context) (string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.thread != "" {
		return h.thread, nil
	}
	thread, err := agentmem.ThreadOrSession(ctx, h.svc, h.user, h.agent, "")
	if err != nil {
		return "", err
	}
	h.thread = thread
	return h.thread, nil
}

// AddMessage implements schema.ChatMessageHistory: the message is
// appended to the thread (human → user, ai → assistant with its tool
// calls, tool → tool, system → system; a generic message is a user's
// with its name).
func (h *History) AddMessage(ctx context.Context, message llms.ChatMessage) error {
	m, err := toMessage(message)
	if err != nil {
		return err
	}
	return h.append(ctx, m)
}

// AddUserMessage implements schema.ChatMessageHistory.
func (h *History) AddUserMessage(ctx context.Context, message string) error {
	return h.append(ctx, &agentmem.Message{Role: agentmem.RoleUser, Content: message})
}

// AddAIMessage implements schema.ChatMessageHistory.
func (h *History) AddAIMessage(ctx context.Context, message string) error {
	return h.append(ctx, &agentmem.Message{Role: agentmem.RoleAssistant, Content: message})
}

func (h *History) append(ctx context.Context, msgs ...*agentmem.Message) error {
	thread, err := h.Thread(ctx)
	if err != nil {
		return err
	}
	_, err = agentmem.AppendBeginning(ctx, h.svc, h.user, h.agent, thread, msgs)
	return err
}

// Messages implements schema.ChatMessageHistory: the thread's messages,
// oldest first.
func (h *History) Messages(ctx context.Context) ([]llms.ChatMessage, error) {
	thread, err := h.Thread(ctx)
	if err != nil {
		return nil, err
	}
	var out []llms.ChatMessage
	cursor := ""
	for {
		page, next, err := h.svc.FindMessages(ctx, h.user, thread, agentmem.MessageFilter{Limit: agentmem.MaxPageSize, Cursor: cursor})
		if agentmem.ErrorCode(err) == agentmem.ENOTFOUND && cursor == "" {
			return nil, nil // not begun yet
		} else if err != nil {
			return nil, err
		}
		for _, m := range page {
			out = append(out, fromMessage(m))
		}
		if next == "" {
			return out, nil
		}
		cursor = next
	}
}

// Clear implements schema.ChatMessageHistory. Messages are never deleted
// one by one in agentmem: the conversation ends (it is summarised and
// reflected on, and what was learnt stays with the user) and the history
// goes on in a new thread, the agent's active session from then on.
func (h *History) Clear(ctx context.Context) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.thread != "" {
		if _, err := h.svc.EndThread(ctx, h.user, h.thread); err != nil && agentmem.ErrorCode(err) != agentmem.ENOTFOUND {
			return err
		}
	}
	t := &agentmem.Thread{AgentID: h.agent}
	if err := h.svc.CreateThread(ctx, h.user, t); err != nil {
		return err
	}
	if _, err := h.svc.SetSession(ctx, h.user, h.agent, t.ID); err != nil {
		return err
	}
	h.thread = t.ID
	return nil
}

// SetMessages implements schema.ChatMessageHistory: the history starts
// again (Clear) with messages.
func (h *History) SetMessages(ctx context.Context, messages []llms.ChatMessage) error {
	if err := h.Clear(ctx); err != nil {
		return err
	}
	msgs := make([]*agentmem.Message, 0, len(messages))
	for _, cm := range messages {
		m, err := toMessage(cm)
		if err != nil {
			return err
		}
		msgs = append(msgs, m)
	}
	if len(msgs) == 0 {
		return nil
	}
	return h.append(ctx, msgs...)
}

// toMessage maps a langchaingo message to agentmem's.
func toMessage(cm llms.ChatMessage) (*agentmem.Message, error) {
	switch m := cm.(type) {
	case llms.HumanChatMessage:
		return &agentmem.Message{Role: agentmem.RoleUser, Content: m.Content}, nil
	case llms.SystemChatMessage:
		return &agentmem.Message{Role: agentmem.RoleSystem, Content: m.Content}, nil
	case llms.ToolChatMessage:
		return &agentmem.Message{Role: agentmem.RoleTool, Content: m.Content, ToolCallID: m.ID}, nil
	case llms.GenericChatMessage:
		return &agentmem.Message{Role: agentmem.RoleUser, Content: m.Content, Name: m.Name}, nil
	case llms.AIChatMessage:
		out := &agentmem.Message{Role: agentmem.RoleAssistant, Content: m.Content}
		for _, tc := range m.ToolCalls {
			if tc.FunctionCall != nil {
				out.ToolCalls = append(out.ToolCalls, agentmem.ToolCall{ID: tc.ID, Type: cmp.Or(tc.Type, "function"),
					Function: agentmem.FunctionCall{Name: tc.FunctionCall.Name, Arguments: tc.FunctionCall.Arguments}})
			}
		}
		return out, nil
	}
	switch cm.GetType() {
	case llms.ChatMessageTypeHuman:
		return &agentmem.Message{Role: agentmem.RoleUser, Content: cm.GetContent()}, nil
	case llms.ChatMessageTypeAI:
		return &agentmem.Message{Role: agentmem.RoleAssistant, Content: cm.GetContent()}, nil
	case llms.ChatMessageTypeSystem:
		return &agentmem.Message{Role: agentmem.RoleSystem, Content: cm.GetContent()}, nil
	}
	return nil, fmt.Errorf("langchaingo: a %s message is not one agentmem stores: %w", cm.GetType(), llms.ErrUnexpectedChatMessageType)
}

// fromMessage maps an agentmem message to langchaingo's.
func fromMessage(m *agentmem.Message) llms.ChatMessage {
	switch m.Role {
	case agentmem.RoleAssistant:
		ai := llms.AIChatMessage{Content: m.Content}
		for _, tc := range m.ToolCalls {
			ai.ToolCalls = append(ai.ToolCalls, llms.ToolCall{ID: tc.ID, Type: tc.Type, FunctionCall: &llms.FunctionCall{Name: tc.Function.Name, Arguments: tc.Function.Arguments}})
		}
		return ai
	case agentmem.RoleSystem:
		return llms.SystemChatMessage{Content: m.Content}
	case agentmem.RoleTool:
		return llms.ToolChatMessage{ID: m.ToolCallID, Content: m.Content}
	}
	if m.Name != "" {
		return llms.GenericChatMessage{Role: "human", Name: m.Name, Content: m.Content}
	}
	return llms.HumanChatMessage{Content: m.Content}
}
