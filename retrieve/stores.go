package retrieve

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/agentmem/agentmem"
)

// MaxToolRounds bounds the rounds of tool calls by which a model chooses
// where a facts question searches (chooseStores); maxToolCalls bounds the
// searches of one round.
const (
	MaxToolRounds = 3
	maxToolCalls  = 5
)

// storeTools are the tools a model chooses the stores with, one per kind
// (seed 001's search_interactions, search_insights and
// search_session_summaries, with agentmem's stores).
var storeTools = []struct{ kind, name, description string }{
	{agentmem.KindMemories, "search_memories", "Search the facts the user told about themselves: who they are, family, home, work, health, preferences, plans."},
	{agentmem.KindInsights, "search_insights", "Search the insights drawn by reflecting on past conversations: the user's goals, concerns, habits and patterns."},
	{agentmem.KindMessages, "search_messages", "Search the turns of past conversations word for word, the user's and the assistant's."},
	{agentmem.KindChunks, "search_chunks", "Search passages of past conversations (several turns each) by their words, summary, topics and the names they mention."},
	{agentmem.KindSummaries, "search_summaries", "Search the summaries of whole past conversations: what was discussed, and when."},
}

// storeToolParameters is the JSON Schema of every store tool's arguments.
var storeToolParameters = json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{`+
	`"query":{"type":"string","description":"what to look for: the words the answer would hold"},`+
	`"top_k":{"type":"integer","minimum":1,"maximum":%d,"description":"how many results at most"}},`+
	`"required":["query"],"additionalProperties":false}`, MaxTopK))

// chooseStoresPrompt tells the model what its tools are for.
const chooseStoresPrompt = "You find what is remembered about a user, to answer a question about them. " +
	"Call the search tools of the stores that may hold the answer, each with a query; you may call several at once, " +
	"and search again with other words when nothing was found. Do not answer the question yourself: once you have searched enough, reply DONE."

// chooseStores lets the model choose where to search for req: it is
// offered one tool per kind (storeTools), each call it makes is run as a
// search of req's user of that kind with the call's query (and top_k,
// else req's), and the results go back to it, for at most MaxToolRounds
// rounds. It returns what the searches found, each item once, most
// relevant first, at most req's top_k, and the kinds searched. why, when
// not "", says why the model's choice could not be followed (it called no
// tool, an unknown one, sent bad arguments, or failed): the caller then
// searches as without a model. An error is the store's, or the context's.
func (s *Searcher) chooseStores(ctx context.Context, chat agentmem.Chat, model, userID string, req Request) (res *Response, kinds []string, why string, err error) {
	tools := make([]agentmem.ChatTool, len(storeTools))
	for i, t := range storeTools {
		tools[i] = agentmem.ChatTool{Name: t.name, Description: t.description, Parameters: storeToolParameters}
	}
	msgs := []agentmem.ChatMessage{
		{Role: agentmem.RoleSystem, Content: chooseStoresPrompt},
		{Role: agentmem.RoleUser, Content: "Question: " + req.Query},
	}
	res = &Response{Results: []Result{}, Signals: []string{}, Warnings: []string{}}
	seen := map[itemKey]int{} // a result's index in res.Results
	for round := range MaxToolRounds {
		resp, err := chat.Complete(ctx, agentmem.ChatRequest{Model: model, Messages: msgs, Tools: tools, MaxTokens: 300})
		if err != nil {
			if ctx.Err() != nil {
				return nil, nil, "", ctx.Err()
			}
			return nil, nil, "it failed", nil
		}
		if len(resp.ToolCalls) == 0 {
			if round == 0 {
				return nil, nil, "it called no tool", nil
			}
			break
		}
		msgs = append(msgs, agentmem.ChatMessage{Role: agentmem.RoleAssistant, Content: resp.Content, ToolCalls: resp.ToolCalls})
		for i, call := range resp.ToolCalls {
			name := call.Function.Name
			j := slices.IndexFunc(storeTools, func(t struct{ kind, name, description string }) bool { return t.name == name })
			if j < 0 {
				return nil, nil, fmt.Sprintf("it called an unknown tool %q", name), nil
			}
			kind := storeTools[j].kind
			var args struct {
				Query string `json:"query"`
				TopK  int    `json:"top_k"`
			}
			if call.ID == "" || json.Unmarshal([]byte(call.Function.Arguments), &args) != nil || strings.TrimSpace(args.Query) == "" {
				return nil, nil, fmt.Sprintf("its call of %s had bad arguments", name), nil
			}
			content := fmt.Sprintf("Not searched: at most %d searches at once.", maxToolCalls)
			if i < maxToolCalls {
				r := req
				r.Query, r.Kinds, r.TopK = args.Query, []string{kind}, cmp.Or(args.TopK, req.TopK)
				found, err := s.Search(ctx, userID, r)
				if code := agentmem.ErrorCode(err); code == agentmem.EINVALID || code == agentmem.ETOOLARGE {
					return nil, nil, fmt.Sprintf("its call of %s had bad arguments", name), nil
				} else if err != nil {
					return nil, nil, "", err
				}
				for _, x := range found.Results {
					k := itemKey{x.Kind, x.ID}
					if at, ok := seen[k]; !ok {
						seen[k] = len(res.Results)
						res.Results = append(res.Results, x)
					} else if x.Relevance > res.Results[at].Relevance {
						res.Results[at] = x
					}
				}
				for _, w := range found.Warnings {
					if !slices.Contains(res.Warnings, w) {
						res.Warnings = append(res.Warnings, w)
					}
				}
				for _, sg := range found.Signals {
					if !slices.Contains(res.Signals, sg) {
						res.Signals = append(res.Signals, sg)
					}
				}
				if !slices.Contains(kinds, kind) {
					kinds = append(kinds, kind)
				}
				content = "Nothing found."
				if len(found.Results) > 0 {
					content = FormatFacts(found.Results)
				}
			}
			msgs = append(msgs, agentmem.ChatMessage{Role: agentmem.RoleTool, ToolCallID: call.ID, Content: content})
		}
	}
	// The searches' rank scores are of their own lists; their relevances
	// compare (see Calibration).
	slices.SortStableFunc(res.Results, func(a, b Result) int { return cmp.Compare(b.Relevance, a.Relevance) })
	res.Results = res.Results[:min(len(res.Results), cmp.Or(req.TopK, DefaultTopK))]
	return res, kinds, "", nil
}
