package core

import (
	"cmp"
	"context"
	"slices"

	"github.com/agentmem/agentmem"
)

// BeginTurn is the first half of a model call made through agentmem (the
// OpenAI-compatible proxy): it finds the thread (req.ThreadID, created
// when it does not exist, or the active session of the user and agent),
// stores the client's messages that are not stored yet (a client that
// resends its whole history matches the thread's newest messages and
// stores only what follows them, never a duplicate), and builds the
// context of req.Mode. The second half is AppendMessages with the
// model's reply.
//
// The messages are stored before the context is built, so that the
// user's turn is kept whatever the model then does.
func (s *Service) BeginTurn(ctx context.Context, userID string, req agentmem.TurnRequest) (*agentmem.Turn, error) {
	u, err := s.resolve(ctx, userID)
	if err != nil {
		return nil, err
	}
	mode := cmp.Or(req.Mode, agentmem.MemoryAuto)
	switch mode {
	case agentmem.MemoryAuto:
		mode = agentmem.MemoryFull
		if slices.ContainsFunc(req.Messages, func(m *agentmem.Message) bool { return m != nil && m.Role == agentmem.RoleAssistant }) {
			mode = agentmem.MemoryAugment
		}
	case agentmem.MemoryFull, agentmem.MemoryAugment, agentmem.MemoryOff:
	default:
		return nil, agentmem.Errorf(agentmem.EINVALID, "The memory mode must be auto, full, augment or off, not %q.", req.Mode)
	}
	for i, m := range req.Messages {
		if m == nil {
			return nil, agentmem.Errorf(agentmem.EINVALID, "messages[%d] is null.", i)
		}
	}
	th, err := s.turnThread(ctx, u, req)
	if err != nil {
		return nil, err
	}
	// A few more than the client sent: it may be behind by an answer.
	held, err := s.storedTail(ctx, u.id, th.ID, len(req.Messages)+4)
	if err != nil {
		return nil, err
	}
	// The client's messages are matched to the thread exactly, or else by
	// its user turns, tool answers and tool calls (sameTurn): a client may
	// edit or re-render the answers it was given, and an answer it changed
	// is the same turn, not a new one. Its turns before it are then not
	// stored again, and neither is the changed answer: the thread keeps
	// the answer as the model gave it (what was said), while the context
	// of this call (augment) carries the client's version (what the client
	// shows and means to send).
	n, end := heldPrefix(req.Messages, held, sameMessage, contentKey)
	if tn, tend := heldPrefix(req.Messages, held, sameTurn, turnKey); tn > n {
		n, end = tn, tend
	}
	// The client's messages as stored, as far as the thread holds them
	// (those older than held as the client sent them).
	k := min(n, end)
	history := slices.Concat(req.Messages[:n-k], asHeld(req.Messages[n-k:n], held[end-k:end]))
	if rest := req.Messages[n:]; n > 0 && end < len(held) && len(rest) <= len(held)-end &&
		slices.EqualFunc(rest, held[len(held)-len(rest):], sameTurn) {
		// The rest is the thread's newest already: a retry of a turn that
		// followed an earlier point of the thread (an edited question).
		history = append(history, asHeld(rest, held[len(held)-len(rest):])...)
		n = len(req.Messages)
	}
	turn := &agentmem.Turn{Mode: mode, Held: n, Stored: []*agentmem.Message{}} // [] in JSON when nothing is new
	for batch := range slices.Chunk(req.Messages[n:], s.opt.MaxBatchMessages) {
		stored, err := s.AppendMessages(ctx, userID, th.ID, batch, "")
		if err != nil {
			return nil, err
		}
		turn.Stored = append(turn.Stored, stored...)
	}
	if th, err = s.store.FindThreadByID(ctx, u.id, th.ID); err != nil {
		return nil, err
	}
	turn.Thread = th
	if mode == agentmem.MemoryOff {
		u.show(th)
		return turn, nil
	}
	creq := req.Context
	creq.Input, creq.Format = "", agentmem.FormatMessages
	creq.Query = newestUserText(req.Messages)
	if mode == agentmem.MemoryFull {
		turn.Context, err = s.opt.Window.Build(ctx, u.id, th.ID, creq)
	} else {
		turn.Context, err = s.opt.Window.Augment(ctx, u.id, th.ID, creq, append(history, turn.Stored...))
	}
	if err != nil {
		return nil, err
	}
	u.show(th)
	return turn, nil
}

// turnThread returns the thread of a turn: req.ThreadID, created when it
// does not exist (unless req.Continue), or else the active session's of
// the user and agent.
func (s *Service) turnThread(ctx context.Context, u user, req agentmem.TurnRequest) (*agentmem.Thread, error) {
	agent := cmp.Or(req.AgentID, agentmem.DefaultAgent)
	if err := agentmem.ValidateID("agent_id", agent); err != nil {
		return nil, err
	}
	if req.ThreadID == "" {
		sess, _, err := s.store.OpenSession(ctx, u.id, agent, &agentmem.Thread{})
		if err != nil {
			return nil, err
		}
		return s.store.FindThreadByID(ctx, u.id, sess.ThreadID)
	}
	if err := agentmem.ValidateID("thread_id", req.ThreadID); err != nil {
		return nil, err
	}
	th, err := s.store.FindThreadByID(ctx, u.id, req.ThreadID)
	if agentmem.ErrorCode(err) != agentmem.ENOTFOUND || req.Continue {
		return th, err
	}
	th = &agentmem.Thread{ID: req.ThreadID, UserID: u.id, AgentID: agent}
	err = s.store.CreateThread(ctx, th)
	if agentmem.ErrorCode(err) == agentmem.ECONFLICT {
		// Created meanwhile by a concurrent call (or soft-deleted, which
		// FindThreadByID answers ENOTFOUND again).
		return s.store.FindThreadByID(ctx, u.id, req.ThreadID)
	}
	return th, err
}

// storedTail returns the thread's newest messages, at most n (and at most
// a page), oldest first.
func (s *Service) storedTail(ctx context.Context, userID, threadID string, n int) ([]*agentmem.Message, error) {
	msgs, _, err := s.store.FindMessages(ctx, userID, threadID, agentmem.MessageFilter{Desc: true, Limit: min(n, agentmem.MaxPageSize)})
	if err != nil {
		return nil, err
	}
	slices.Reverse(msgs)
	return msgs, nil
}

// heldPrefix returns how many of msgs, from the first, the thread holds
// already, and end, where they end in held (the thread's newest messages,
// oldest first): the largest j such that msgs[:j] is a run of held, each
// message the same as the held one by same, that
//
//   - ends at held's end and is all of msgs[:j], or all of held when held
//     does not reach back to the thread's first message (a client with
//     more history than was read);
//   - or ends earlier in held and is all of msgs[:j], at least two
//     messages: a client that asks again for an answer it was given, or
//     edits its last turn, sends less than the thread holds. One message
//     alone is no evidence (a user may well say "ok" twice).
//
// (0, 0) when there is none. Candidate ends are found by the newest
// message's key (equal for messages that are the same by same), so a
// match costs about the length of the run compared, not of msgs times
// held.
func heldPrefix(msgs, held []*agentmem.Message, same func(client, stored *agentmem.Message) bool, key func(*agentmem.Message) string) (j, end int) {
	if len(held) == 0 {
		return 0, 0
	}
	at := make(map[string][]int, len(held)) // key → ends i (held[i-1] has it), newest first
	for i := len(held); i > 0; i-- {
		k := key(held[i-1])
		at[k] = append(at[k], i)
	}
	for j := len(msgs); j > 0; j-- {
		for _, i := range at[key(msgs[j-1])] {
			k := min(j, i)
			ok := i == len(held) && (k == j || held[0].Seq > 1) ||
				i < len(held) && k == j && j >= 2
			if ok && slices.EqualFunc(msgs[j-k:j], held[i-k:i], same) {
				return j, i
			}
		}
	}
	return 0, 0
}

// sameMessage reports whether a client's message is a stored one: the
// same role, content, name, tool call answered and tool calls.
func sameMessage(client, stored *agentmem.Message) bool {
	return client.Role == stored.Role && client.Content == stored.Content && client.Name == stored.Name &&
		client.ToolCallID == stored.ToolCallID &&
		slices.EqualFunc(client.ToolCalls, stored.ToolCalls, func(a, b agentmem.ToolCall) bool {
			return a.ID == b.ID && a.Function == b.Function
		})
}

// sameTurn reports whether a client's message is a stored one as a turn
// of the conversation: a user message or a tool answer the same
// (sameMessage); an answer the same by its tool calls (their IDs and
// functions, and arguments too for calls without an ID), whatever its
// text, which a client may have edited or re-rendered.
func sameTurn(client, stored *agentmem.Message) bool {
	if client.Role != agentmem.RoleAssistant || stored.Role != agentmem.RoleAssistant {
		return sameMessage(client, stored)
	}
	return slices.EqualFunc(client.ToolCalls, stored.ToolCalls, func(a, b agentmem.ToolCall) bool {
		return a.ID == b.ID && a.Function.Name == b.Function.Name && (a.ID != "" || a.Function.Arguments == b.Function.Arguments)
	})
}

// contentKey is heldPrefix's key for sameMessage.
func contentKey(m *agentmem.Message) string { return m.Content }

// turnKey is heldPrefix's key for sameTurn: an answer's tool calls, else
// the content.
func turnKey(m *agentmem.Message) string {
	if m.Role != agentmem.RoleAssistant {
		return m.Content
	}
	k := "\x00assistant"
	for _, c := range m.ToolCalls {
		k += "\x00" + c.ID + "\x00" + c.Function.Name
	}
	return k
}

// asHeld returns the client's messages as the thread holds them: each
// the held one, unless the client changed it (an answer the same turn by
// sameTurn, its text edited), which is the client's, not stored (Seq 0:
// counted afresh).
func asHeld(client, held []*agentmem.Message) []*agentmem.Message {
	out := make([]*agentmem.Message, len(client))
	for i, m := range client {
		out[i] = held[i]
		if !sameMessage(m, held[i]) {
			out[i] = m
		}
	}
	return out
}

// newestUserText returns the content of the newest user message of msgs.
func newestUserText(msgs []*agentmem.Message) string {
	for _, m := range slices.Backward(msgs) {
		if m.Role == agentmem.RoleUser && m.Content != "" {
			return m.Content
		}
	}
	return ""
}
