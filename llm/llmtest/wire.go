package llmtest

import (
	"encoding/json"
	"errors"
	"strings"
)

// The wire types below are the subset of the OpenAI chat-completions and
// embeddings formats that the fake reads and writes. They are defined here,
// not borrowed from an SDK, so that llmtest stays standard-library only and
// any package's tests can use it.

// ChatCompletionRequest is the body of POST /v1/chat/completions as the fake
// decodes it.
type ChatCompletionRequest struct {
	Model               string          `json:"model"`
	Messages            []ChatMessage   `json:"messages"`
	MaxTokens           *int            `json:"max_tokens,omitempty"`
	MaxCompletionTokens *int            `json:"max_completion_tokens,omitempty"`
	Temperature         *float64        `json:"temperature,omitempty"`
	ResponseFormat      *ResponseFormat `json:"response_format,omitempty"`
	Stream              bool            `json:"stream,omitempty"`
	StreamOptions       *StreamOptions  `json:"stream_options,omitempty"`
	Tools               []Tool          `json:"tools,omitempty"`

	// Deployment is the Azure deployment of the path
	// /openai/deployments/{deployment}/…, "" on the /v1 paths. It is not
	// part of the body.
	Deployment string `json:"-"`
}

// JSONMode reports whether the request asked for response_format
// json_object.
func (r ChatCompletionRequest) JSONMode() bool {
	return r.ResponseFormat != nil && r.ResponseFormat.Type == "json_object"
}

// LastUserMessage returns the content of the last message with role user,
// or "" if there is none.
func (r ChatCompletionRequest) LastUserMessage() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "user" {
			return r.Messages[i].Content
		}
	}
	return ""
}

// ChatMessage is one message of a chat request or answer. On the wire,
// content is either a string or an array of parts; the fake joins the text
// parts into Content.
type ChatMessage struct {
	Role       string     `json:"role"`
	Content    string     `json:"content"`
	Name       string     `json:"name,omitempty"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
}

// Tool is a function a chat request offers the model.
type Tool struct {
	Type     string             `json:"type"` // function
	Function FunctionDefinition `json:"function"`
}

// FunctionDefinition names a tool's function, says what it does and gives
// the JSON Schema of its arguments.
type FunctionDefinition struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

// ToolCall is a function call of an assistant message.
type ToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"` // function
	Function FunctionCall `json:"function"`
}

// FunctionCall names a function and its JSON arguments.
type FunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// UnmarshalJSON accepts content as a string, null, or an array of
// {"type":"text","text":…} parts.
func (m *ChatMessage) UnmarshalJSON(b []byte) error {
	var raw struct {
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"`
		Name       string          `json:"name"`
		ToolCalls  []ToolCall      `json:"tool_calls"`
		ToolCallID string          `json:"tool_call_id"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*m = ChatMessage{Role: raw.Role, Name: raw.Name, ToolCalls: raw.ToolCalls, ToolCallID: raw.ToolCallID}
	switch c := strings.TrimSpace(string(raw.Content)); {
	case c == "" || c == "null":
	case c[0] == '"':
		return json.Unmarshal(raw.Content, &m.Content)
	case c[0] == '[':
		var parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal(raw.Content, &parts); err != nil {
			return err
		}
		var sb strings.Builder
		for _, p := range parts {
			sb.WriteString(p.Text)
		}
		m.Content = sb.String()
	default:
		return errors.New("content must be a string or an array of parts")
	}
	return nil
}

// ResponseFormat is the response_format of a chat request.
type ResponseFormat struct {
	Type string `json:"type"` // text, json_object or json_schema
}

// StreamOptions is the stream_options of a chat request.
type StreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// ChatCompletion is the body of a non-streaming chat answer.
type ChatCompletion struct {
	ID      string   `json:"id"`
	Object  string   `json:"object"` // chat.completion
	Created int64    `json:"created"`
	Model   string   `json:"model"`
	Choices []Choice `json:"choices"`
	Usage   *Usage   `json:"usage,omitempty"`
}

// Choice is one choice of a chat answer.
type Choice struct {
	Index        int         `json:"index"`
	Message      ChatMessage `json:"message"`
	FinishReason string      `json:"finish_reason"`
}

// Usage counts the tokens of a request and its answer.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// ChatCompletionChunk is one server-sent event of a streaming chat answer.
type ChatCompletionChunk struct {
	ID      string        `json:"id"`
	Object  string        `json:"object"` // chat.completion.chunk
	Created int64         `json:"created"`
	Model   string        `json:"model"`
	Choices []ChunkChoice `json:"choices"`
	Usage   *Usage        `json:"usage,omitempty"`
}

// ChunkChoice is one choice of a streamed chunk.
type ChunkChoice struct {
	Index        int        `json:"index"`
	Delta        ChunkDelta `json:"delta"`
	FinishReason *string    `json:"finish_reason"`
}

// ChunkDelta is the part of the message a chunk adds.
type ChunkDelta struct {
	Role      string          `json:"role,omitempty"`
	Content   string          `json:"content,omitempty"`
	ToolCalls []ChunkToolCall `json:"tool_calls,omitempty"`
}

// ChunkToolCall is the part of a tool call a chunk adds: the first of a
// call has its ID, type and name, the next ones parts of its arguments.
type ChunkToolCall struct {
	Index    int          `json:"index"`
	ID       string       `json:"id,omitempty"`
	Type     string       `json:"type,omitempty"`
	Function FunctionCall `json:"function"`
}

// EmbeddingRequest is the body of POST /v1/embeddings as the fake decodes
// it.
type EmbeddingRequest struct {
	Model          string      `json:"model"`
	Input          StringArray `json:"input"`
	Dimensions     int         `json:"dimensions,omitempty"`
	EncodingFormat string      `json:"encoding_format,omitempty"` // float (default) or base64

	// Deployment is the Azure deployment of the path, as for chat.
	Deployment string `json:"-"`
}

// StringArray is an embeddings input: a string or an array of strings on
// the wire. Token arrays are refused.
type StringArray []string

// UnmarshalJSON accepts a string or an array of strings.
func (a *StringArray) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*a = StringArray{s}
		return nil
	}
	var ss []string
	if err := json.Unmarshal(b, &ss); err != nil {
		return errors.New("input must be a string or an array of strings")
	}
	*a = ss
	return nil
}

// EmbeddingList is the body of an embeddings answer.
type EmbeddingList struct {
	Object string      `json:"object"` // list
	Data   []Embedding `json:"data"`
	Model  string      `json:"model"`
	Usage  Usage       `json:"usage"`
}

// Embedding is one vector of an embeddings answer. Vector is []float32 for
// encoding_format float and a base64 string of little-endian float32 for
// base64.
type Embedding struct {
	Object    string `json:"object"` // embedding
	Index     int    `json:"index"`
	Embedding any    `json:"embedding"`
}

// ErrorBody is the body of every error answer:
// {"error":{"message":…,"type":…,"param":null,"code":…}}.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail is the inner object of ErrorBody.
type ErrorDetail struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

// Model is one entry of GET /v1/models.
type Model struct {
	ID      string `json:"id"`
	Object  string `json:"object"` // model
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

// ModelList is the body of GET /v1/models.
type ModelList struct {
	Object string  `json:"object"` // list
	Data   []Model `json:"data"`
}
