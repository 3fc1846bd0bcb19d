package retrieve

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	"github.com/agentmem/agentmem"
)

// Facts searches for req and answers req.Query from the results. chat may
// be nil (no model). With a model, a request that names neither kinds nor
// scopes lets the model choose where to search through tool calls (see
// chooseStores); a model that does not (it calls no tool, an unknown one,
// with bad arguments, or fails) leaves the default scopes, with a warning.
// A model that fails leaves the formatted facts as the answer, with a
// warning.
func (s *Searcher) Facts(ctx context.Context, chat agentmem.Chat, model, userID string, req Request) (*FactsResponse, error) {
	check := req
	if _, _, err := validate(&check); err != nil {
		return nil, err // before any model call
	}
	var res *Response
	var kinds []string
	warnings := []string{}
	if chat != nil && len(req.Kinds) == 0 && len(req.Scopes) == 0 && !Contentless(req.Query) {
		chosen, k, why, err := s.chooseStores(ctx, chat, model, userID, req)
		if err != nil {
			return nil, err
		}
		if why == "" {
			res, kinds = chosen, k
		} else {
			s.opt.Log.WarnContext(ctx, "facts: the model did not choose where to search; searching the default scopes", "reason", why)
			warnings = append(warnings, "The model did not choose where to search ("+why+"): the default stores were searched.")
		}
	}
	if res == nil {
		var err error
		if res, err = s.Search(ctx, userID, req); err != nil {
			return nil, err
		}
	}
	if Contentless(req.Query) {
		res.Results = []Result{}
	}
	out := &FactsResponse{Facts: res.Results, Kinds: kinds, Warnings: append(warnings, res.Warnings...), Answer: FormatFacts(res.Results)}
	if chat == nil || len(res.Results) == 0 {
		if len(res.Results) == 0 {
			out.Answer = "Nothing is known about that."
		}
		return out, nil
	}
	resp, err := chat.Complete(ctx, agentmem.ChatRequest{Model: model, MaxTokens: 300, Messages: []agentmem.ChatMessage{
		{Role: agentmem.RoleSystem, Content: "You answer questions about a user from facts retrieved from their memory. " +
			"Use only the numbered facts; cite each fact you use as [n]. If the facts do not answer the question, say that it is not known. Answer in at most three sentences."},
		{Role: agentmem.RoleUser, Content: "Facts:\n" + FormatFacts(res.Results) + "\n\nQuestion: " + req.Query},
	}})
	if err != nil || strings.TrimSpace(resp.Content) == "" {
		out.Warnings = append(out.Warnings, "The model is unavailable: the answer lists the facts found.")
		return out, nil
	}
	out.Answer, out.Model = strings.TrimSpace(resp.Content), resp.Model
	return out, nil
}

// FormatFacts writes results as numbered lines with their provenance,
// and what replaced those that no longer hold: "[1] text (thread t1,
// messages 3–5)", "[2] I live in Porto. (thread t1, message 1)
// (outdated; superseded by: User lives in Lisbon.)".
func FormatFacts(rs []Result) string {
	var b strings.Builder
	for i, r := range rs {
		fmt.Fprintf(&b, "[%d] %s", i+1, strings.TrimSpace(r.Text))
		switch {
		case r.ThreadID != "" && r.SeqFrom > 0 && r.SeqTo > r.SeqFrom:
			fmt.Fprintf(&b, " (thread %s, messages %d–%d)", r.ThreadID, r.SeqFrom, r.SeqTo)
		case r.ThreadID != "" && r.SeqFrom > 0:
			fmt.Fprintf(&b, " (thread %s, message %d)", r.ThreadID, r.SeqFrom)
		}
		switch {
		case r.SupersededText != "":
			fmt.Fprintf(&b, " (outdated; superseded by: %s)", strings.TrimSpace(r.SupersededText))
		case r.InvalidAt != nil:
			b.WriteString(" (outdated)")
		}
		if i < len(rs)-1 {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// MemoryProvider gives the context builder the memories relevant to an
// input (window.MemoryProvider): the best TopK memories of the user
// whose relevance reaches MinScore; none for an input that asks nothing
// of memory (Contentless: "hello") or unrelated to all of them.
type MemoryProvider struct {
	Searcher *Searcher
	TopK     int     // default 5
	MinScore float64 // default DefaultMinRelevance
}

// Memories implements window.MemoryProvider.
func (p *MemoryProvider) Memories(ctx context.Context, userID, threadID, input string) ([]string, error) {
	if Contentless(input) {
		return nil, nil
	}
	res, err := p.Searcher.Search(ctx, userID, Request{Query: input, Scopes: []string{agentmem.ScopeMemories}, TopK: max(p.TopK, 1), MinScore: cmp.Or(p.MinScore, DefaultMinRelevance)})
	if err != nil {
		return nil, err
	}
	out := make([]string, len(res.Results))
	for i, r := range res.Results {
		out[i] = r.Text
	}
	return out, nil
}
