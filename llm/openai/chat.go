package openai

import (
	"cmp"
	"context"
	"encoding/json"
	"net/http"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/agentmem/agentmem"
)

const chatOp = "Chat model"

// Complete asks the chat model for one completion. req.Model "" means
// Config.Model (on Azure, Config.AzureDeployment). With req.JSON the model
// is asked for a JSON object (response_format json_object; OpenAI then
// wants the word "JSON" somewhere in the messages); the caller still
// validates what comes back. A refusal comes back as empty Content with
// FinishReason "refusal".
//
// With req.Tools the model may answer with tool calls (ChatResponse.ToolCalls)
// instead of content; the caller sends back the assistant message with
// the calls and one message of role tool per call.
//
// Returns EINVALID if req is malformed (no messages, a role other than
// system, developer, user, assistant or tool, a tool message without
// tool_call_id, a tool whose parameters are not a JSON object) or the
// server refused it (HTTP 400, 413, 422), and EUNAVAILABLE if the model
// could not be reached, kept failing, timed out, answered something
// malformed or without choices, or if the circuit breaker is open.
func (c *Client) Complete(ctx context.Context, req agentmem.ChatRequest) (*agentmem.ChatResponse, error) {
	params, err := c.chatParams(req)
	if err != nil {
		return nil, err
	}
	var resp *agentmem.ChatResponse
	err = c.call(ctx, chatOp, c.chatBreaker, func(ctx context.Context, res **http.Response) error {
		cc, err := c.chat.New(ctx, params, option.WithResponseInto(res))
		if err != nil {
			return err
		}
		if len(cc.Choices) == 0 {
			return agentmem.Errorf(agentmem.EUNAVAILABLE, "%s unavailable: answer without choices.", chatOp)
		}
		choice := cc.Choices[0]
		resp = &agentmem.ChatResponse{
			Content:          choice.Message.Content,
			ToolCalls:        toolCalls(choice.Message.ToolCalls),
			Model:            cmp.Or(cc.Model, string(params.Model)),
			FinishReason:     choice.FinishReason,
			PromptTokens:     int(cc.Usage.PromptTokens),
			CompletionTokens: int(cc.Usage.CompletionTokens),
		}
		if choice.Message.Refusal != "" && choice.Message.Content == "" {
			resp.FinishReason = "refusal"
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

func (c *Client) chatParams(req agentmem.ChatRequest) (oai.ChatCompletionNewParams, error) {
	if len(req.Messages) == 0 {
		return oai.ChatCompletionNewParams{}, agentmem.Errorf(agentmem.EINVALID, "A chat request needs at least one message.")
	}
	model := cmp.Or(req.Model, c.cfg.Model)
	if c.azure {
		model = cmp.Or(req.Model, c.cfg.AzureDeployment)
	}
	p := oai.ChatCompletionNewParams{Model: shared.ChatModel(model)}
	for i, m := range req.Messages {
		var msg oai.ChatCompletionMessageParamUnion
		switch m.Role {
		case "system":
			msg.OfSystem = &oai.ChatCompletionSystemMessageParam{
				Content: oai.ChatCompletionSystemMessageParamContentUnion{OfString: oai.String(m.Content)},
			}
			if m.Name != "" {
				msg.OfSystem.Name = oai.String(m.Name)
			}
		case "developer":
			msg.OfDeveloper = &oai.ChatCompletionDeveloperMessageParam{
				Content: oai.ChatCompletionDeveloperMessageParamContentUnion{OfString: oai.String(m.Content)},
			}
			if m.Name != "" {
				msg.OfDeveloper.Name = oai.String(m.Name)
			}
		case "user":
			msg.OfUser = &oai.ChatCompletionUserMessageParam{
				Content: oai.ChatCompletionUserMessageParamContentUnion{OfString: oai.String(m.Content)},
			}
			if m.Name != "" {
				msg.OfUser.Name = oai.String(m.Name)
			}
		case "assistant":
			msg.OfAssistant = &oai.ChatCompletionAssistantMessageParam{}
			if m.Content != "" || len(m.ToolCalls) == 0 { // content is required unless there are tool calls
				msg.OfAssistant.Content = oai.ChatCompletionAssistantMessageParamContentUnion{OfString: oai.String(m.Content)}
			}
			if m.Name != "" {
				msg.OfAssistant.Name = oai.String(m.Name)
			}
			for _, tc := range m.ToolCalls {
				msg.OfAssistant.ToolCalls = append(msg.OfAssistant.ToolCalls, oai.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &oai.ChatCompletionMessageFunctionToolCallParam{
						ID:       tc.ID,
						Function: oai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: tc.Function.Name, Arguments: tc.Function.Arguments},
					},
				})
			}
		case "tool":
			// The answer to a call of the assistant message before it.
			if m.ToolCallID == "" {
				return oai.ChatCompletionNewParams{}, agentmem.Errorf(agentmem.EINVALID, "Message %d has role tool but no tool_call_id.", i)
			}
			msg = oai.ToolMessage(m.Content, m.ToolCallID)
		default:
			return oai.ChatCompletionNewParams{}, agentmem.Errorf(agentmem.EINVALID,
				"Message %d has role %q; the chat model takes system, developer, user, assistant or tool.", i, m.Role)
		}
		p.Messages = append(p.Messages, msg)
	}
	if req.MaxTokens > 0 {
		// OpenAI's newer models refuse max_tokens and want
		// max_completion_tokens; compatible servers (Ollama, older vLLM)
		// know only max_tokens.
		if c.compatible {
			p.MaxTokens = oai.Int(int64(req.MaxTokens))
		} else {
			p.MaxCompletionTokens = oai.Int(int64(req.MaxTokens))
		}
	}
	if req.Temperature != nil {
		p.Temperature = oai.Float(*req.Temperature)
	}
	if req.JSON {
		p.ResponseFormat.OfJSONObject = &shared.ResponseFormatJSONObjectParam{}
	}
	for _, t := range req.Tools {
		fn := shared.FunctionDefinitionParam{Name: t.Name}
		if t.Description != "" {
			fn.Description = oai.String(t.Description)
		}
		if len(t.Parameters) > 0 {
			if err := json.Unmarshal(t.Parameters, &fn.Parameters); err != nil || fn.Parameters == nil {
				return oai.ChatCompletionNewParams{}, agentmem.Errorf(agentmem.EINVALID, "The parameters of tool %q are not a JSON object.", t.Name)
			}
		}
		p.Tools = append(p.Tools, oai.ChatCompletionFunctionTool(fn))
	}
	return p, nil
}

// toolCalls returns the function calls of an answer (custom tools' calls,
// which agentmem never offers, are left out).
func toolCalls(calls []oai.ChatCompletionMessageToolCallUnion) []agentmem.ToolCall {
	var out []agentmem.ToolCall
	for _, c := range calls {
		if c.Type != "function" {
			continue
		}
		out = append(out, agentmem.ToolCall{ID: c.ID, Type: c.Type, Function: agentmem.FunctionCall{Name: c.Function.Name, Arguments: c.Function.Arguments}})
	}
	return out
}
