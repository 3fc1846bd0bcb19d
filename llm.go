package agentmem

import (
	"context"
	"encoding/json"
)

// ChatMessage is one message of a chat completion request, in OpenAI's
// chat format.
type ChatMessage struct {
	Role       string     `json:"role"` // system, user, assistant or tool
	Content    string     `json:"content"`
	Name       string     `json:"name,omitempty"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`   // an assistant's calls
	ToolCallID string     `json:"tool_call_id,omitempty"` // a tool message's answer to a call
}

// ChatRequest asks a model for one completion.
type ChatRequest struct {
	Model       string        // "" means the client's default model
	Messages    []ChatMessage // at least one
	MaxTokens   int           // 0 means the server's default
	Temperature *float64      // nil means the server's default
	// JSON asks for a JSON object as the answer (response_format
	// json_object); the caller still validates what comes back.
	JSON bool
	// Tools are functions the model may call instead of answering: it
	// then answers with ChatResponse.ToolCalls, which the caller runs and
	// answers with messages of role tool (ChatMessage.ToolCallID), after
	// an assistant message carrying the calls (ChatMessage.ToolCalls).
	Tools []ChatTool
}

// ChatTool is a function a model may call (OpenAI's function tool).
type ChatTool struct {
	Name        string // a-z, A-Z, 0-9, _ and -, at most 64
	Description string // what it does, which the model reads to choose it
	// Parameters is the JSON Schema of its arguments, an object; empty
	// for a function without arguments.
	Parameters json.RawMessage
}

// ChatResponse is a model's completion.
type ChatResponse struct {
	Content string
	// ToolCalls are the calls of ChatRequest.Tools the model asks for
	// (FinishReason tool_calls), their arguments as it wrote them: JSON
	// that may not fit the schema, or not be JSON at all.
	ToolCalls        []ToolCall
	Model            string // the model that answered
	FinishReason     string // stop, length, content_filter, tool_calls…
	PromptTokens     int
	CompletionTokens int
}

// Chat is a chat-completion model. Implementations (llm/openai) retry
// transient failures themselves; an error they return is final for this
// call: EUNAVAILABLE when the model could not be reached or kept failing
// (callers fall back, e.g. to an extractive summary), EINVALID when the
// request was refused as malformed.
type Chat interface {
	Complete(ctx context.Context, req ChatRequest) (*ChatResponse, error)
}

// Embedder turns texts into vectors, one per text, all of the same
// dimension. Errors as for Chat.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// Embedding is an embedder and the name of the vector space its vectors
// are in (Vector.Space): vectors of different spaces are never compared.
type Embedding struct {
	Embedder Embedder
	Space    string
}
