package llmtest

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// ResponsesRequest is the body of POST /v1/responses (OpenAI's Responses
// API) as the fake decodes it.
type ResponsesRequest struct {
	Model              string          `json:"model"`
	Instructions       string          `json:"instructions,omitempty"`
	Input              json.RawMessage `json:"input"`
	Stream             bool            `json:"stream,omitempty"`
	PreviousResponseID string          `json:"previous_response_id,omitempty"`
	MaxOutputTokens    *int            `json:"max_output_tokens,omitempty"`

	// Items is Input as items (a string input is one user message).
	Items []ResponseItem `json:"-"`
}

// ResponseItem is one item of a Responses API input or output: a message
// (Role, Text), a function call (CallID, Name, Arguments) or a function
// call's output (CallID, Output). Other types keep only their Type.
type ResponseItem struct {
	Type      string
	Role      string
	Text      string
	CallID    string
	Name      string
	Arguments string
	Output    string
}

// decodeItems reads an input: a string or an array of items.
func decodeItems(raw json.RawMessage) ([]ResponseItem, error) {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" {
		return nil, nil
	}
	if s[0] == '"' {
		var text string
		err := json.Unmarshal(raw, &text)
		return []ResponseItem{{Type: "message", Role: "user", Text: text}}, err
	}
	var items []struct {
		Type      string          `json:"type"`
		Role      string          `json:"role"`
		Content   json.RawMessage `json:"content"`
		CallID    string          `json:"call_id"`
		Name      string          `json:"name"`
		Arguments string          `json:"arguments"`
		Output    string          `json:"output"`
	}
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, err
	}
	out := make([]ResponseItem, 0, len(items))
	for _, it := range items {
		item := ResponseItem{Type: cmp.Or(it.Type, "message"), Role: it.Role, CallID: it.CallID, Name: it.Name, Arguments: it.Arguments, Output: it.Output}
		if item.Type == "message" {
			var m ChatMessage
			if err := m.UnmarshalJSON(fmt.Appendf(nil, `{"content":%s}`, cmp.Or(string(it.Content), "null"))); err != nil {
				return nil, err
			}
			item.Text = m.Content
		}
		out = append(out, item)
	}
	return out, nil
}

// asChat returns the request as a chat request, so that Push, Script and
// DefaultReply decide its answer as they decide a chat's: instructions as
// a system message, then the items as messages.
func (r ResponsesRequest) asChat() ChatCompletionRequest {
	c := ChatCompletionRequest{Model: r.Model, MaxCompletionTokens: r.MaxOutputTokens}
	if r.Instructions != "" {
		c.Messages = append(c.Messages, ChatMessage{Role: "system", Content: r.Instructions})
	}
	for _, it := range r.Items {
		switch it.Type {
		case "message":
			c.Messages = append(c.Messages, ChatMessage{Role: it.Role, Content: it.Text})
		case "function_call":
			c.Messages = append(c.Messages, ChatMessage{Role: "assistant", ToolCalls: []ToolCall{{ID: it.CallID, Type: "function", Function: FunctionCall{Name: it.Name, Arguments: it.Arguments}}}})
		case "function_call_output":
			c.Messages = append(c.Messages, ChatMessage{Role: "tool", Content: it.Output, ToolCallID: it.CallID})
		}
	}
	return c
}

// ResponsesRequests returns the decoded Responses API requests received
// so far, in order.
func (s *Server) ResponsesRequests() []ResponsesRequest {
	var reqs []ResponsesRequest
	for _, r := range s.Requests() {
		if r.Responses != nil {
			reqs = append(reqs, *r.Responses)
		}
	}
	return reqs
}

// handleResponses answers POST /v1/responses, streamed or not, with the
// reply the queue, the script or DefaultReply decide for the request read
// as a chat (see asChat): its Content as an output_text message, its
// ToolCalls as function_call items.
func (s *Server) handleResponses(w http.ResponseWriter, r *http.Request) {
	var req ResponsesRequest
	var decodeErr error
	s.record(r, func(body []byte, rec *Request) {
		if decodeErr = json.Unmarshal(body, &req); decodeErr == nil {
			if req.Items, decodeErr = decodeItems(req.Input); decodeErr == nil {
				rec.Responses = &req
			}
		}
	})
	if refuse(w, s.authorized(r), decodeErr, req.Model) {
		return
	}
	reply, id := s.next(req.asChat())
	if s.fault(w, r, reply) {
		return
	}
	resp := map[string]any{
		"id": "resp_" + id, "object": "response", "created_at": created, "status": "completed",
		"model": cmp.Or(reply.Model, req.Model), "output": []any{},
		"usage": map[string]int{"input_tokens": promptWords(req.asChat().Messages), "output_tokens": len(strings.Fields(reply.Content)),
			"total_tokens": promptWords(req.asChat().Messages) + len(strings.Fields(reply.Content))},
	}
	var output []map[string]any
	if reply.Content != "" || len(reply.ToolCalls) == 0 {
		output = append(output, map[string]any{"type": "message", "id": "msg_" + id, "status": "completed", "role": "assistant",
			"content": []any{map[string]any{"type": "output_text", "text": reply.Content, "annotations": []any{}}}})
	}
	for i, tc := range reply.ToolCalls {
		output = append(output, map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_%s_%d", id, i), "call_id": tc.ID,
			"name": tc.Function.Name, "arguments": tc.Function.Arguments, "status": "completed"})
	}
	if !req.Stream {
		resp["output"] = output
		writeJSON(w, http.StatusOK, resp)
		return
	}
	s.streamResponse(w, r, reply, resp, output)
}

// streamResponse writes a response as the Responses API's events:
// created, in_progress, then per output item added, its deltas and done,
// and completed.
func (s *Server) streamResponse(w http.ResponseWriter, r *http.Request, reply Reply, resp map[string]any, output []map[string]any) {
	flusher := startStream(w)
	seq := 0
	send := func(typ string, fields map[string]any) bool {
		if seq > 0 && !s.pause(r, reply.ChunkDelay) {
			return false
		}
		fields["type"], fields["sequence_number"] = typ, seq
		seq++
		b, _ := json.Marshal(fields)
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, b); err != nil {
			return false
		}
		if flusher != nil {
			flusher.Flush()
		}
		return true
	}
	started := map[string]any{}
	for k, v := range resp {
		started[k] = v
	}
	started["status"] = "in_progress"
	if !send("response.created", map[string]any{"response": started}) || !send("response.in_progress", map[string]any{"response": started}) {
		return
	}
	for i, item := range output {
		id := item["id"]
		switch item["type"] {
		case "message":
			text := item["content"].([]any)[0].(map[string]any)["text"].(string)
			if !send("response.output_item.added", map[string]any{"output_index": i, "item": map[string]any{"type": "message", "id": id, "status": "in_progress", "role": "assistant", "content": []any{}}}) ||
				!send("response.content_part.added", map[string]any{"item_id": id, "output_index": i, "content_index": 0, "part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}}) {
				return
			}
			for _, part := range strings.SplitAfter(text, " ") {
				if part != "" && !send("response.output_text.delta", map[string]any{"item_id": id, "output_index": i, "content_index": 0, "delta": part}) {
					return
				}
			}
			if !send("response.output_text.done", map[string]any{"item_id": id, "output_index": i, "content_index": 0, "text": text}) ||
				!send("response.content_part.done", map[string]any{"item_id": id, "output_index": i, "content_index": 0, "part": item["content"].([]any)[0]}) {
				return
			}
		case "function_call":
			added := map[string]any{"type": "function_call", "id": id, "call_id": item["call_id"], "name": item["name"], "arguments": "", "status": "in_progress"}
			args := item["arguments"].(string)
			if !send("response.output_item.added", map[string]any{"output_index": i, "item": added}) ||
				!send("response.function_call_arguments.delta", map[string]any{"item_id": id, "output_index": i, "delta": args[:len(args)/2]}) ||
				!send("response.function_call_arguments.delta", map[string]any{"item_id": id, "output_index": i, "delta": args[len(args)/2:]}) ||
				!send("response.function_call_arguments.done", map[string]any{"item_id": id, "output_index": i, "arguments": args}) {
				return
			}
		}
		if !send("response.output_item.done", map[string]any{"output_index": i, "item": item}) {
			return
		}
	}
	resp["output"] = output
	send("response.completed", map[string]any{"response": resp})
}
