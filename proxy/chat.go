package proxy

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/agentmem/agentmem"
)

// wireMessage is a chat message as the chat completions API carries it.
type wireMessage struct {
	Role       string              `json:"role"`
	Content    json.RawMessage     `json:"content"`
	Name       string              `json:"name,omitempty"`
	ToolCalls  []agentmem.ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string              `json:"tool_call_id,omitempty"`
}

// clientMessages is a request's messages split into the client's system
// prompt and its turns, each turn with its raw JSON (forwarded as it
// came: image parts, audio, fields agentmem does not know).
type clientMessages struct {
	systemRaw []json.RawMessage // system and developer messages, in order
	system    string            // their texts, for the budget
	turns     []*agentmem.Message
	turnsRaw  [][]json.RawMessage // the items of each turn (the Responses API has several per turn)
	trailing  []json.RawMessage   // items after the last turn that are none (Responses API)
}

// splitMessages reads a chat request's messages.
func splitMessages(raw json.RawMessage) (*clientMessages, error) {
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, invalid("messages", "messages must be an array of messages.")
	}
	if len(items) == 0 {
		return nil, invalid("messages", "messages must hold at least one message.")
	}
	cm := &clientMessages{}
	var systems []string
	var pending []json.RawMessage // messages that are no turn, waiting for the next
	for i, item := range items {
		var m wireMessage
		if err := json.Unmarshal(item, &m); err != nil {
			return nil, invalid("messages", "messages[%d] is not a chat message (role, content, and tool_calls or tool_call_id).", i)
		}
		text, ok := contentText(m.Content)
		if !ok {
			return nil, invalid("messages", "messages[%d].content must be a string or an array of content parts.", i)
		}
		switch m.Role {
		case "system", "developer":
			cm.systemRaw = append(cm.systemRaw, item)
			if text != "" {
				systems = append(systems, text)
			}
		case agentmem.RoleAssistant:
			if text == "" && len(m.ToolCalls) == 0 {
				// Nothing to store (a legacy function_call, say): it is
				// forwarded with the next turn.
				pending = append(pending, item)
				continue
			}
			fallthrough
		case agentmem.RoleUser, agentmem.RoleTool:
			cm.turns = append(cm.turns, &agentmem.Message{Role: m.Role, Content: text, Name: m.Name, ToolCalls: m.ToolCalls, ToolCallID: m.ToolCallID})
			cm.turnsRaw = append(cm.turnsRaw, append(pending, item))
			pending = nil
		case "function":
			// The legacy answer to a function_call: forwarded with the
			// next turn, not stored (it names no call to answer).
			pending = append(pending, item)
		case "":
			return nil, invalid("messages", "messages[%d].role is required.", i)
		default:
			return nil, invalid("messages", "messages[%d].role %q is not a chat role: use system, developer, user, assistant, tool or function.", i, m.Role)
		}
	}
	cm.system = strings.Join(systems, "\n\n")
	cm.trailing = pending
	return cm, nil
}

// outgoing returns the messages to send the model: the client's system
// messages as they came, then the context (the context block, and in full
// mode the stored history) each written by wire, and the client's own
// newest turns, raw, for those of the context's trailing messages that
// are the client's.
func (cm *clientMessages) outgoing(turn *agentmem.Turn, wire func(agentmem.ChatMessage) ([]json.RawMessage, error)) ([]json.RawMessage, error) {
	c := turn.Context
	msgs := c.Messages
	if cm.system != "" && len(msgs) > 0 && msgs[0].Role == agentmem.RoleSystem && msgs[0].Content == cm.system {
		msgs = msgs[1:]
	}
	// How many of the context's last messages are the client's own: in
	// augment mode all those kept; in full mode those it sent new.
	own := c.Telemetry.IncludedMessages
	if turn.Mode == agentmem.MemoryFull {
		own = min(own, len(turn.Stored))
	}
	own = min(own, len(cm.turns), len(msgs))
	for i := range own { // they must be the same messages, or none is taken raw
		m, t := msgs[len(msgs)-own+i], cm.turns[len(cm.turns)-own+i]
		if m.Role != t.Role || m.Content != t.Content {
			own = 0
			break
		}
	}
	out := append([]json.RawMessage(nil), cm.systemRaw...)
	for _, m := range msgs[:len(msgs)-own] {
		items, err := wire(m)
		if err != nil {
			return nil, err
		}
		out = append(out, items...)
	}
	for _, items := range cm.turnsRaw[len(cm.turnsRaw)-own:] {
		out = append(out, items...)
	}
	return append(out, cm.trailing...), nil
}

// chatWire writes a context message as the chat completions API takes it:
// content null beside tool calls when it is empty.
func chatWire(m agentmem.ChatMessage) ([]json.RawMessage, error) {
	type wire struct {
		Role       string              `json:"role"`
		Content    *string             `json:"content"`
		Name       string              `json:"name,omitempty"`
		ToolCalls  []agentmem.ToolCall `json:"tool_calls,omitempty"`
		ToolCallID string              `json:"tool_call_id,omitempty"`
	}
	w := wire{Role: m.Role, Content: &m.Content, Name: m.Name, ToolCalls: m.ToolCalls, ToolCallID: m.ToolCallID}
	if m.Content == "" && len(m.ToolCalls) > 0 {
		w.Content = nil
	}
	b, err := json.Marshal(w)
	return []json.RawMessage{b}, err
}

// chat serves POST /openai/v1/chat/completions.
func (p *proxy) chat(w http.ResponseWriter, r *http.Request) (err error) {
	req, err := p.readModelRequest(w, r)
	if err != nil {
		return err
	}
	body, model := req.body, req.model
	cm, err := splitMessages(body["messages"])
	if err != nil {
		return err
	}
	c, err := p.resolve(r, req.user, req.threadID)
	if err != nil {
		return err
	}
	c.api = "chat"
	defer func() { p.m.request("chat", c.mode, err) }()

	creq := agentmem.ContextRequest{Model: model, System: cm.system, BudgetTokens: p.budget(model, maxTokens(body, "max_completion_tokens", "max_tokens"))}
	turn, err := p.beginTurn(r.Context(), c, agentmem.TurnRequest{ThreadID: c.thread, AgentID: c.agent, Messages: cm.turns, Mode: c.mode, Context: creq})
	if err != nil {
		return err
	}
	if turn == nil {
		w.Header().Set(HeaderUnavailable, unavailableByDegrade)
	} else if turn.Context != nil {
		msgs, err := cm.outgoing(turn, chatWire)
		if err != nil {
			return err
		}
		body["messages"] = rawArray(msgs)
		p.m.tokens(turn.Context.Telemetry)
	}
	x, err := p.send(r.Context(), http.MethodPost, "chat/completions", model, rawObject(body))
	if err != nil {
		return err
	}
	defer x.Close()
	setHeaders(w.Header(), turn)
	copyHeaders(w.Header(), x.res.Header)
	if req.stream {
		p.streamChat(w, r, c, turn, x)
		return nil
	}
	return p.completeChat(w, r, c, turn, x)
}

// chatCompletion is what the proxy reads of an answer.
type chatCompletion struct {
	ID      string `json:"id"`
	Model   string `json:"model"`
	Choices []struct {
		Message struct {
			Content   *string             `json:"content"`
			Refusal   *string             `json:"refusal"`
			ToolCalls []agentmem.ToolCall `json:"tool_calls"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
}

// completeChat passes on an answer that is not streamed, once its
// message is stored.
func (p *proxy) completeChat(w http.ResponseWriter, r *http.Request, c *caller, turn *agentmem.Turn, x *exchange) error {
	body, err := p.readAnswer(x)
	if err != nil {
		return err
	}
	var cc chatCompletion
	if json.Unmarshal(body, &cc) == nil && len(cc.Choices) > 0 {
		ch := cc.Choices[0]
		reply := &agentmem.Message{Role: agentmem.RoleAssistant, ToolCalls: ch.Message.ToolCalls,
			Metadata: replyMetadata(cc.Model, cc.ID, ch.FinishReason, false)}
		if ch.Message.Content != nil {
			reply.Content = *ch.Message.Content
		} else if ch.Message.Refusal != nil {
			reply.Content = *ch.Message.Refusal
		}
		if p.finish(r.Context(), c, turn, reply, 0) {
			w.Header().Set(HeaderAnswerTruncated, "true")
		}
	}
	w.WriteHeader(x.res.StatusCode)
	w.Write(body) // a client gone by now has its answer stored all the same
	return nil
}

// chatChunk is what the proxy reads of a streamed chunk.
type chatChunk struct {
	ID      string `json:"id"`
	Model   string `json:"model"`
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Content   *string `json:"content"`
			Refusal   *string `json:"refusal"`
			ToolCalls []struct {
				Index    int    `json:"index"`
				ID       string `json:"id"`
				Type     string `json:"type"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
}

// accumulator gathers a streamed answer's first choice, as much of it
// as cap keeps.
type accumulator struct {
	id, model, finish string
	content           strings.Builder
	calls             []agentmem.ToolCall
	cap               answerCap
}

func (a *accumulator) add(data []byte) {
	var ch chatChunk
	if json.Unmarshal(data, &ch) != nil {
		return
	}
	a.id, a.model = cmp.Or(a.id, ch.ID), cmp.Or(a.model, ch.Model)
	for _, choice := range ch.Choices {
		if choice.Index != 0 {
			continue
		}
		if d := choice.Delta.Content; d != nil {
			a.content.WriteString(a.cap.keep(*d))
		} else if d := choice.Delta.Refusal; d != nil {
			a.content.WriteString(a.cap.keep(*d))
		}
		for _, tc := range choice.Delta.ToolCalls {
			if tc.Index < 0 || tc.Index >= len(a.calls)+16 { // not a call's index: there is no such call
				continue
			}
			for len(a.calls) <= tc.Index {
				a.calls = append(a.calls, agentmem.ToolCall{Type: "function"})
			}
			call := &a.calls[tc.Index]
			call.ID = cmp.Or(call.ID, a.cap.keep(tc.ID))
			call.Type = cmp.Or(a.cap.keep(tc.Type), call.Type)
			call.Function.Name += a.cap.keep(tc.Function.Name)
			call.Function.Arguments += a.cap.keep(tc.Function.Arguments)
		}
		if choice.FinishReason != nil {
			a.finish = *choice.FinishReason
		}
	}
}

// message is the answer as gathered so far; incomplete unless it
// finished.
func (a *accumulator) message() *agentmem.Message {
	calls := a.calls[:0:0]
	for _, c := range a.calls {
		if c.Function.Name != "" { // a call cut off before its name cannot be stored
			calls = append(calls, c)
		}
	}
	if a.content.Len() == 0 && len(calls) == 0 && a.finish == "" {
		return nil
	}
	return &agentmem.Message{Role: agentmem.RoleAssistant, Content: a.content.String(), ToolCalls: calls,
		Metadata: replyMetadata(a.model, a.id, a.finish, a.finish == "")}
}

// streamChat passes on a streamed answer event by event, flushing each as
// it arrives, and stores the answer before the final [DONE] (or, when the
// client goes away or the stream breaks, what arrived, marked
// incomplete).
func (p *proxy) streamChat(w http.ResponseWriter, r *http.Request, c *caller, turn *agentmem.Turn, x *exchange) {
	acc := accumulator{cap: answerCap{max: p.opt.MaxMessageBytes}}
	stored := false
	store := func() {
		if !stored {
			stored = true
			p.finish(r.Context(), c, turn, acc.message(), acc.cap.dropped)
		}
	}
	defer store()
	p.relay(w, x, chatErrorEvent, func(data []byte) []byte {
		if bytes.Equal(data, []byte("[DONE]")) {
			store()
			return data
		}
		if bytes.Contains(data, []byte(`"error"`)) { // perhaps an error event: {"error":{…}}
			if scrubbed := scrubError(data, "error"); !bytes.Equal(scrubbed, data) {
				return scrubbed
			}
		}
		acc.add(data)
		return data
	})
}

// relay copies an event stream from x to w, line by line, flushing at
// the end of each event; onData sees each event's data before its line
// is written, and returns the data to write in its place (the same slice
// to change nothing). It returns when the stream ends or either side
// fails, or at a line longer than MaxAnswerBytes, which it answers with
// errorEvent's event.
func (p *proxy) relay(w http.ResponseWriter, x *exchange, errorEvent func(*apiError) []byte, onData func(data []byte) []byte) {
	rc := http.NewResponseController(w)
	w.WriteHeader(x.res.StatusCode)
	rc.Flush()
	br := bufio.NewReaderSize(x.body, 32<<10)
	for {
		line, err := readLine(br, p.opt.MaxAnswerBytes)
		if errors.Is(err, errLineTooLong) {
			e := p.answerTooLarge()
			p.log.Warn("proxy: the model server's stream broken off", "upstream", p.up.host(), "code", e.code)
			w.Write(errorEvent(e))
			rc.Flush()
			return
		}
		if len(line) > 0 {
			trimmed := bytes.TrimRight(line, "\r\n")
			if data, ok := bytes.CutPrefix(trimmed, []byte("data:")); ok {
				data = bytes.TrimSpace(data)
				if out := onData(data); !bytes.Equal(out, data) {
					line = append(append([]byte("data: "), out...), '\n')
				}
			}
			if _, werr := w.Write(line); werr != nil {
				return
			}
			if len(trimmed) == 0 {
				if rc.Flush() != nil {
					return
				}
			}
		}
		if err != nil {
			rc.Flush()
			return
		}
	}
}

// errLineTooLong is readLine's error for a line over its bound.
var errLineTooLong = errors.New("line too long")

// readLine reads a line, its '\n' included, of at most max bytes
// (errLineTooLong past it).
func readLine(br *bufio.Reader, max int64) ([]byte, error) {
	var line []byte
	for {
		frag, err := br.ReadSlice('\n')
		if int64(len(line)+len(frag)) > max {
			return nil, errLineTooLong
		}
		line = append(line, frag...)
		if err != bufio.ErrBufferFull {
			return line, err
		}
	}
}

// chatErrorEvent is an error event of a chat completions stream, as
// OpenAI's SDKs read one: data holding an error object.
func chatErrorEvent(e *apiError) []byte {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": e.message, "type": e.typ, "param": nil, "code": e.code}})
	return append(append([]byte("\ndata: "), b...), "\n\n"...)
}

// copyHeaders passes on the upstream's headers a client may read: its
// content type, request ID, processing time, API version and rate limits
// (shared by all the proxy's callers, and what an SDK backs off by).
// Nothing else: not Openai-Organization or Openai-Project, which name the
// operator's account, nor Set-Cookie or a CDN's headers.
func copyHeaders(dst, src http.Header) {
	for k, vs := range src {
		switch lk := strings.ToLower(k); {
		case lk == "content-type", lk == "openai-processing-ms", lk == "openai-version", strings.HasPrefix(lk, "x-ratelimit-"),
			lk == "x-request-id" && dst.Get("X-Request-Id") == "":
			dst[k] = vs
		}
	}
	if strings.HasPrefix(dst.Get("Content-Type"), "text/event-stream") {
		dst.Set("Cache-Control", "no-cache")
		dst.Set("X-Accel-Buffering", "no")
	}
}
