package client

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
)

// ToolFunction is one of the server's tools as OpenAI's function calling
// declares it: {"type":"function","function":{name, description,
// parameters}}, to hand to a model as it is.
type ToolFunction struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"` // a JSON schema
	} `json:"function"`
}

// Tools returns the server's tools (the MCP server's) as function-calling
// declarations: GET /v1/tools.
func (c *Client) Tools(ctx context.Context) ([]ToolFunction, error) {
	var out struct {
		Tools []ToolFunction `json:"tools"`
	}
	err := c.do(ctx, call{method: http.MethodGet, path: []string{"v1", "tools"}, out: &out})
	return out.Tools, err
}

// CallTool runs a tool for the user with a model's JSON arguments and
// returns its result: POST /v1/users/{user}/tools/{name}. agent ("" for
// the default) is the agent of notes and sessions. It is not retried: a
// tool may write.
func (c *Client) CallTool(ctx context.Context, userID, agent, name string, args json.RawMessage) (json.RawMessage, error) {
	var out struct {
		Result json.RawMessage `json:"result"`
	}
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	cl := call{method: http.MethodPost, path: []string{"v1", "users", userID, "tools", name}, in: args, out: &out}
	if agent != "" {
		cl.query = url.Values{"agent": {agent}}
	}
	err := c.do(ctx, cl)
	return out.Result, err
}
