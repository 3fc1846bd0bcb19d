package proxy

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/agentmem/agentmem"
)

// inputItem is an item of a Responses API input, as the proxy reads it.
type inputItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"`
	Output    json.RawMessage `json:"output"`
}

// splitInput reads a Responses API input (a string, or an array of
// items) and its instructions into the client's system prompt and turns.
// An assistant's message and the function calls that follow it are one
// turn, as the proxy stores an answer; items agentmem does not store
// (reasoning, tool searches, item references) travel with the next turn.
func splitInput(raw json.RawMessage, instructions string) (*clientMessages, error) {
	cm := &clientMessages{}
	var systems []string
	if instructions != "" {
		systems = append(systems, instructions)
	}
	defer func() { cm.system = strings.Join(systems, "\n\n") }()
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return cm, nil
	}
	if raw[0] == '"' {
		var text string
		if err := json.Unmarshal(raw, &text); err != nil {
			return nil, invalid("input", "input must be a string or an array of items.")
		}
		item, _ := json.Marshal(map[string]string{"role": agentmem.RoleUser, "content": text})
		cm.turns = []*agentmem.Message{{Role: agentmem.RoleUser, Content: text}}
		cm.turnsRaw = [][]json.RawMessage{{item}}
		return cm, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, invalid("input", "input must be a string or an array of items.")
	}
	var pending []json.RawMessage // items that are no turn, waiting for the next
	open := false                 // the last turn is an assistant's that function calls may join
	add := func(m *agentmem.Message, item json.RawMessage) {
		cm.turns = append(cm.turns, m)
		cm.turnsRaw = append(cm.turnsRaw, append(pending, item))
		pending = nil
	}
	for i, item := range items {
		var it inputItem
		if err := json.Unmarshal(item, &it); err != nil {
			return nil, invalid("input", "input[%d] is not an item.", i)
		}
		typ := cmp.Or(it.Type, "message")
		switch typ {
		case "message":
			text, ok := contentText(it.Content)
			if !ok {
				return nil, invalid("input", "input[%d].content must be a string or an array of content parts.", i)
			}
			switch it.Role {
			case "system", "developer":
				cm.systemRaw = append(cm.systemRaw, item)
				if text != "" {
					systems = append(systems, text)
				}
			case agentmem.RoleUser, agentmem.RoleAssistant:
				add(&agentmem.Message{Role: it.Role, Content: text}, item)
				open = it.Role == agentmem.RoleAssistant
			default:
				return nil, invalid("input", "input[%d].role must be user, assistant, system or developer, not %q.", i, it.Role)
			}
		case "function_call":
			call := agentmem.ToolCall{ID: it.CallID, Type: "function", Function: agentmem.FunctionCall{Name: it.Name, Arguments: it.Arguments}}
			if open {
				last := len(cm.turns) - 1
				cm.turns[last].ToolCalls = append(cm.turns[last].ToolCalls, call)
				cm.turnsRaw[last] = append(append(cm.turnsRaw[last], pending...), item)
				pending = nil
			} else {
				add(&agentmem.Message{Role: agentmem.RoleAssistant, ToolCalls: []agentmem.ToolCall{call}}, item)
				open = true
			}
		case "function_call_output":
			text, ok := contentText(it.Output)
			if !ok {
				return nil, invalid("input", "input[%d].output must be a string or an array of content parts.", i)
			}
			add(&agentmem.Message{Role: agentmem.RoleTool, Content: text, ToolCallID: it.CallID}, item)
			open = false
		default:
			pending = append(pending, item)
		}
	}
	cm.trailing = pending
	return cm, nil
}

// responsesWire writes a context message as Responses API input items.
func responsesWire(m agentmem.ChatMessage) ([]json.RawMessage, error) {
	var items []any
	switch {
	case m.Role == agentmem.RoleTool:
		items = append(items, map[string]string{"type": "function_call_output", "call_id": m.ToolCallID, "output": m.Content})
	default:
		if m.Content != "" || len(m.ToolCalls) == 0 {
			items = append(items, map[string]string{"role": m.Role, "content": m.Content})
		}
		for _, c := range m.ToolCalls {
			items = append(items, map[string]string{"type": "function_call", "call_id": c.ID, "name": c.Function.Name, "arguments": c.Function.Arguments})
		}
	}
	out := make([]json.RawMessage, 0, len(items))
	for _, it := range items {
		b, err := json.Marshal(it)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

// responseIDs: the proxy gives the client the upstream's response ID with
// the thread appended, so that a previous_response_id names the thread it
// continues, on any replica and after restarts: UPSTREAM~BASE64URL(THREAD).
const idSep = "~"

func responseID(upstream, threadID string) string {
	return upstream + idSep + base64.RawURLEncoding.EncodeToString([]byte(threadID))
}

// parseResponseID splits a response ID the proxy gave; ok is false for
// any other.
func parseResponseID(id string) (upstream, threadID string, ok bool) {
	i := strings.LastIndex(id, idSep)
	if i <= 0 {
		return "", "", false
	}
	b, err := base64.RawURLEncoding.DecodeString(id[i+len(idSep):])
	if err != nil || len(b) == 0 || agentmem.ValidateID("thread_id", string(b)) != nil {
		return "", "", false
	}
	return id[:i], string(b), true
}

// responses serves POST /openai/v1/responses.
func (p *proxy) responses(w http.ResponseWriter, r *http.Request) (err error) {
	req, err := p.readModelRequest(w, r)
	if err != nil {
		return err
	}
	body, model := req.body, req.model
	instructions, err := str(body, "instructions")
	if err != nil {
		return err
	}
	prev, err := str(body, "previous_response_id")
	if err != nil {
		return err
	}
	cm, err := splitInput(body["input"], instructions)
	if err != nil {
		return err
	}
	upPrev, prevThread, ours := parseResponseID(prev)
	c, err := p.resolve(r, req.user, cmp.Or(req.threadID, prevThread))
	if err != nil {
		return err
	}
	c.api = "responses"
	defer func() { p.m.request("responses", c.mode, err) }()
	continues := ours && c.thread == prevThread
	switch {
	case ours && c.mode == agentmem.MemoryOff:
		body["previous_response_id"], _ = json.Marshal(upPrev) // the upstream's own chain
	case ours:
		// agentmem sends the history itself: the upstream's would repeat it.
		delete(body, "previous_response_id")
		if c.mode == agentmem.MemoryAuto {
			c.mode = agentmem.MemoryFull
		}
	case prev != "" && r.Header.Get(HeaderMemory) == "":
		// A response agentmem did not give: the upstream holds its
		// history, so the turn is recorded and passed on as it is.
		c.mode = agentmem.MemoryOff
	}

	creq := agentmem.ContextRequest{Model: model, System: cm.system, BudgetTokens: p.budget(model, maxTokens(body, "max_output_tokens"))}
	turn, err := p.beginTurn(r.Context(), c, agentmem.TurnRequest{ThreadID: c.thread, Continue: continues, AgentID: c.agent, Messages: cm.turns, Mode: c.mode, Context: creq})
	if agentmem.ErrorCode(err) == agentmem.ENOTFOUND && continues {
		return invalid("previous_response_id", "previous_response_id %q continues a conversation that does not exist (or is not this user's).", prev)
	} else if err != nil {
		return err
	}
	if turn == nil {
		w.Header().Set(HeaderUnavailable, unavailableByDegrade)
		if ours {
			body["previous_response_id"], _ = json.Marshal(upPrev)
		}
	} else if turn.Context != nil {
		items, err := cm.outgoing(turn, responsesWire)
		if err != nil {
			return err
		}
		body["input"] = rawArray(items)
		p.m.tokens(turn.Context.Telemetry)
	}
	x, err := p.send(r.Context(), http.MethodPost, "responses", model, rawObject(body))
	if err != nil {
		return err
	}
	defer x.Close()
	setHeaders(w.Header(), turn)
	copyHeaders(w.Header(), x.res.Header)
	rw := &idRewriter{}
	if turn != nil {
		rw.thread = turn.Thread.ID
	}
	if req.stream {
		p.streamResponses(w, r, c, turn, x, rw)
		return nil
	}
	b, err := p.readAnswer(x)
	if err != nil {
		return err
	}
	var resp responseObject
	if json.Unmarshal(b, &resp) == nil {
		if resp.Status == "failed" {
			b = scrubError(b, "error")
		}
		rw.learn(resp.ID)
		if p.finish(r.Context(), c, turn, resp.message(rw.ours(), resp.Status != "completed"), 0) {
			w.Header().Set(HeaderAnswerTruncated, "true")
		}
	}
	w.WriteHeader(x.res.StatusCode)
	w.Write(rw.rewrite(b))
	return nil
}

// responseObject is what the proxy reads of a response.
type responseObject struct {
	ID     string       `json:"id"`
	Model  string       `json:"model"`
	Status string       `json:"status"`
	Output []outputItem `json:"output"`
}

// outputItem is an output item: a message with its content parts, or a
// function call.
type outputItem struct {
	Type    string `json:"type"`
	Content []struct {
		Text    string `json:"text"`
		Refusal string `json:"refusal"`
	} `json:"content"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// message is the answer of a response: its output texts, and its function
// calls as tool calls. Nil when it has neither.
func (r *responseObject) message(id string, incomplete bool) *agentmem.Message {
	var texts []string
	var calls []agentmem.ToolCall
	for _, o := range r.Output {
		switch o.Type {
		case "message":
			for _, c := range o.Content {
				if t := cmp.Or(c.Text, c.Refusal); t != "" {
					texts = append(texts, t)
				}
			}
		case "function_call":
			if o.Name != "" {
				calls = append(calls, agentmem.ToolCall{ID: o.CallID, Type: "function", Function: agentmem.FunctionCall{Name: o.Name, Arguments: o.Arguments}})
			}
		}
	}
	if len(texts) == 0 && len(calls) == 0 {
		return nil
	}
	return &agentmem.Message{Role: agentmem.RoleAssistant, Content: strings.Join(texts, "\n"), ToolCalls: calls,
		Metadata: replyMetadata(r.Model, id, r.Status, incomplete)}
}

// idRewriter replaces the upstream's response ID with the proxy's, which
// names the thread (responseID), wherever it appears in an answer.
type idRewriter struct {
	thread   string // "" when the turn was not stored: nothing is rewritten
	upstream []byte // the upstream's ID, quoted
	replaced []byte // the proxy's, quoted
	id       string
}

func (rw *idRewriter) learn(upstream string) {
	if rw.thread == "" || upstream == "" || rw.upstream != nil {
		return
	}
	rw.id = responseID(upstream, rw.thread)
	rw.upstream, _ = json.Marshal(upstream)
	rw.replaced, _ = json.Marshal(rw.id)
}

// ours is the proxy's ID of the response ("" until learnt).
func (rw *idRewriter) ours() string { return rw.id }

func (rw *idRewriter) rewrite(b []byte) []byte {
	if rw.upstream == nil {
		return b
	}
	return bytes.ReplaceAll(b, rw.upstream, rw.replaced)
}

// responsesErrorEvent is an error event of a Responses API stream.
func responsesErrorEvent(e *apiError) []byte {
	b, _ := json.Marshal(map[string]any{"type": "error", "code": e.code, "message": e.message, "param": nil})
	return append(append([]byte("\nevent: error\ndata: "), b...), "\n\n"...)
}

// scrubEvent returns a Responses API event with the upstream's error
// messages replaced by what may be passed on (reportedError): an error
// event's, and a failed response's.
func scrubEvent(typ string, data []byte) []byte {
	switch typ {
	case "error":
		var o errorObject
		if json.Unmarshal(data, &o) != nil {
			return data
		}
		var fields map[string]json.RawMessage
		json.Unmarshal(data, &fields) // an object: it is an event
		e := reportedError(&o)
		fields["message"], _ = json.Marshal(e.message)
		fields["code"], _ = json.Marshal(e.code)
		fields["param"], _ = json.Marshal(nilIfEmpty(e.param))
		return rawObject(fields)
	case "response.failed":
		var fields map[string]json.RawMessage
		if json.Unmarshal(data, &fields) != nil || fields["response"] == nil {
			return data
		}
		fields["response"] = scrubError(fields["response"], "error")
		return rawObject(fields)
	}
	return data
}

// responseEvent is what the proxy reads of a streamed event.
type responseEvent struct {
	Type     string          `json:"type"`
	Response *responseObject `json:"response"`
	Delta    string          `json:"delta"`
	Item     *outputItem     `json:"item"`
}

// streamResponses passes on a streamed response event by event, the
// response ID rewritten, and stores its answer before the completed
// event reaches the client (or what arrived, marked incomplete, when the
// client goes away or the stream breaks off).
func (p *proxy) streamResponses(w http.ResponseWriter, r *http.Request, c *caller, turn *agentmem.Turn, x *exchange, rw *idRewriter) {
	var partial responseObject
	var text strings.Builder
	kept := answerCap{max: p.opt.MaxMessageBytes} // of the partial answer
	stored := false
	store := func(m *agentmem.Message, dropped int) {
		if !stored {
			stored = true
			p.finish(r.Context(), c, turn, m, dropped)
		}
	}
	defer func() {
		if text.Len() > 0 {
			msg := outputItem{Type: "message"}
			msg.Content = append(msg.Content, struct {
				Text    string `json:"text"`
				Refusal string `json:"refusal"`
			}{Text: text.String()})
			partial.Output = append([]outputItem{msg}, partial.Output...)
		}
		store(partial.message(rw.ours(), true), kept.dropped)
	}()
	p.relay(w, x, responsesErrorEvent, func(data []byte) []byte {
		var ev responseEvent
		if json.Unmarshal(data, &ev) != nil {
			return rw.rewrite(data)
		}
		data = scrubEvent(ev.Type, data)
		if ev.Response != nil {
			rw.learn(ev.Response.ID)
			partial.Model = cmp.Or(partial.Model, ev.Response.Model)
		}
		switch ev.Type {
		case "response.output_text.delta":
			text.WriteString(kept.keep(ev.Delta))
		case "response.output_item.done":
			if ev.Item != nil && ev.Item.Type == "function_call" {
				partial.Output = append(partial.Output, outputItem{Type: "function_call",
					CallID: kept.keep(ev.Item.CallID), Name: kept.keep(ev.Item.Name), Arguments: kept.keep(ev.Item.Arguments)})
			}
		case "response.completed", "response.incomplete", "response.failed":
			if ev.Response != nil { // the whole answer, in one line within MaxAnswerBytes
				store(ev.Response.message(rw.ours(), ev.Type != "response.completed"), 0)
			}
		}
		return rw.rewrite(data)
	})
}
