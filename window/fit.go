package window

import (
	"context"
	"fmt"
	"slices"

	"github.com/agentmem/agentmem"
)

// fixedCost is what the context costs without its history: system prompt,
// sections, input, and the format's wrapping.
func (bl *build) fixedCost(init []Section, mem, sum *Section) int {
	c := bl.cnt
	n := 0
	sec := func(s Section) int { return c.constant(header(s)) + c.text(s.Text) }
	blocks := 0 // text blocks separated by blank lines
	var ctxText int
	if len(init) > 0 {
		ctxText += c.constant(initOpen) + c.constant(initClose)
		for i, s := range init {
			ctxText += sec(s)
			if i > 0 {
				ctxText += c.constant(blankLine)
			}
		}
		blocks++
	}
	for _, s := range []*Section{mem, sum} {
		if s != nil {
			ctxText += sec(*s)
			blocks++
		}
	}
	if blocks > 1 {
		ctxText += (blocks - 1) * c.constant(blankLine)
	}
	switch bl.req.Format {
	case FormatMessages:
		if bl.system != "" {
			n += tokensPerMessage + c.text(bl.system)
		}
		if blocks > 0 {
			n += tokensPerMessage + ctxText
		}
		if bl.inputMsg != nil {
			n += tokensPerMessage + c.text(bl.inputMsg.Content)
		}
		n += tokensReplyPrime
	case FormatResponses:
		// instructions and input travel as two messages.
		n += 2*tokensPerMessage + tokensReplyPrime
		if bl.system != "" {
			n += c.text(bl.system) + c.constant(blankLine)
		}
		if blocks > 0 {
			n += ctxText + c.constant(blankLine)
		}
		if bl.inputMsg != nil {
			n += c.text(bl.inputMsg.Content)
		}
	case FormatText:
		if bl.system != "" {
			n += c.text(bl.system) + c.constant(blankLine)
		}
		if blocks > 0 {
			n += ctxText + c.constant(blankLine)
		}
		n += c.constant(activeHead)
		if bl.inputMsg != nil {
			n += c.line(bl.inputMsg, plain)
		}
	}
	return n
}

// messageCost is the cost of a history message in the request's format.
func (bl *build) messageCost(m *agentmem.Message) int {
	switch bl.req.Format {
	case FormatMessages:
		return bl.cnt.chatMessage(m)
	case FormatResponses:
		return bl.cnt.line(m, bracketed)
	}
	return bl.cnt.line(m, plain)
}

// fit chooses the sections that fit and reads the newest messages
// backwards until the budget (or the window) is full.
func (bl *build) fit(ctx context.Context) error {
	avail, err := bl.fitSections()
	if err != nil {
		return err
	}
	if !on(bl.req.Include.Messages) {
		bl.reachedEnd = bl.th.LastSeq <= bl.floor()
		return nil
	}
	return bl.fitHistory(ctx, avail)
}

// fitSections checks that the system prompt and the newest message fit
// the budget, leaves out the optional sections, least important first,
// until they fit too, and returns the tokens left for the history.
func (bl *build) fitSections() (int, error) {
	budget := bl.req.BudgetTokens
	mem := bl.memorySection()
	sum := bl.summary
	init := bl.init

	// The system prompt and the newest message must fit; the optional
	// sections go, least important first, until they do too.
	if required := bl.fixedCost(nil, nil, nil); required > budget {
		what := bl.withSystem("the format's own tokens")
		if bl.inputMsg != nil {
			what = bl.withSystem("the input")
		}
		return 0, agentmem.Errorf(agentmem.EUNPROCESSABLE,
			"budget_tokens %d cannot hold %s: they need at least %d tokens.", budget, what, required)
	}
	for bl.fixedCost(init, mem, sum) > budget { // ends: without them it fits (above)
		switch {
		case len(init) > 0:
			// Its sections go last first: entities, recent summaries,
			// notes, and the profile last.
			last := init[len(init)-1]
			init = init[:len(init)-1]
			bl.warnings = append(bl.warnings, fmt.Sprintf("The initialisation block's %s section did not fit the budget and was left out.", last.Name))
		case mem != nil:
			mem = nil
			bl.warnings = append(bl.warnings, "The memories did not fit the budget and were left out.")
		default:
			sum = nil
			bl.warnings = append(bl.warnings, "The summary did not fit the budget and was left out.")
		}
	}
	bl.init, bl.summary = init, sum
	if mem == nil {
		bl.memories = nil
	}
	return budget - bl.fixedCost(init, mem, sum), nil
}

// fitHistory reads the newest messages backwards, down to the summary (or
// the thread's start without it), until avail tokens or the window are
// full, and keeps them as the history.
func (bl *build) fitHistory(ctx context.Context, avail int) error {
	budget := bl.req.BudgetTokens
	floor := bl.floor()
	if bl.summary == nil || bl.given != nil {
		floor = 0 // without its summary in the context, the whole history is candidate; a client's, all of it
	}
	before := bl.th.LastSeq + 1
	var newestFirst []*agentmem.Message
	var costs []int
	used := 0
	full := false
	limitMsgs, limitTurns := 0, 0
	if bl.req.Strategy == StrategyWindow {
		limitMsgs, limitTurns = bl.req.WindowMessages, bl.req.WindowTurns
	}
	turns := 0
	// In the responses format without input, the newest user message is
	// the input.
	takeInput := bl.req.Format == FormatResponses && bl.inputMsg == nil
	var visitErr error
	visit := func(m *agentmem.Message) bool {
		before = m.Seq
		if takeInput {
			takeInput = false
			if m.Role == agentmem.RoleUser {
				cost := bl.cnt.text(m.Content)
				if cost > avail {
					visitErr = agentmem.Errorf(agentmem.EUNPROCESSABLE,
						"budget_tokens %d cannot hold %s: they need at least %d tokens.", budget, bl.withSystem("the newest message"), budget-avail+cost)
					return false
				}
				bl.inputMsg = m
				avail -= cost
				turns++
				return true
			}
		}
		if limitMsgs > 0 && len(newestFirst) >= limitMsgs || limitTurns > 0 && turns >= limitTurns {
			full = true
			return false
		}
		cost := bl.messageCost(m)
		if used+cost > avail {
			if len(newestFirst) == 0 && bl.inputMsg == nil {
				visitErr = agentmem.Errorf(agentmem.EUNPROCESSABLE,
					"budget_tokens %d cannot hold %s: they need at least %d tokens.", budget, bl.withSystem("the newest message"), budget-avail+cost)
				return false
			}
			full = true
			return false
		}
		used += cost
		newestFirst = append(newestFirst, m)
		costs = append(costs, cost)
		if m.Role == agentmem.RoleUser {
			turns++
		}
		return true
	}
	if bl.given != nil {
		for i := len(bl.given) - 1; i >= 0 && visit(bl.given[i]); i-- {
		}
	} else if err := bl.b.tails.newest(ctx, bl.b.store, bl.th, floor, pageSize(avail), visit); err != nil {
		return err
	}
	if visitErr != nil {
		return visitErr
	}
	bl.reachedEnd = !full && (bl.given != nil || before <= floor+1)
	bl.turnsRead = turns
	// A tool answer without the assistant message that called it is
	// refused by chat APIs: drop such orphans from the oldest end.
	for len(newestFirst) > 0 && newestFirst[len(newestFirst)-1].Role == agentmem.RoleTool {
		newestFirst = newestFirst[:len(newestFirst)-1]
		costs = costs[:len(costs)-1]
		bl.reachedEnd = false
	}
	slices.Reverse(newestFirst)
	slices.Reverse(costs)
	bl.history, bl.historyCost = newestFirst, costs
	return nil
}

// pageSize guesses how many messages to read at once for a budget: a few
// more than fit at 40 tokens each, between 16 and 500.
func pageSize(avail int) int { return min(max(avail/40+1, 16), 500) }
