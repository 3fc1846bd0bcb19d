package window

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/agentmem/agentmem"
)

// start begins a build: the request completed by the defaults and
// checked, its system prompt, the thread, its summary when the strategy
// wants it, and the optional sections. A non-nil given is the history a
// client holds (Augment): the summary is read only when it does not begin
// at the thread's first message.
func (b *Builder) start(ctx context.Context, userID, threadID string, req Request, given []*agentmem.Message) (*build, error) {
	req = merge(req, b.opt.Defaults)
	if err := validate(&req); err != nil {
		return nil, err
	}
	system, promptName, err := b.opt.Prompts.resolve(req)
	if err != nil {
		return nil, err
	}
	th, err := b.store.FindThreadByID(ctx, userID, threadID)
	if err != nil {
		return nil, err
	}
	var sum *agentmem.Summary
	wantSummary := given == nil || len(given) > 0 && given[0].Seq > 1
	if req.Strategy == StrategySummarize && on(req.Include.Summary) && wantSummary {
		sum, err = b.store.FindSummary(ctx, userID, threadID)
		if agentmem.ErrorCode(err) == agentmem.ENOTFOUND {
			sum, err = nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("find summary: %w", err)
		}
	}
	tok, exact := b.opt.Tokenizer(req.Model)
	cnt := &counter{tok: tok, useStored: b.opt.StoredEncoding != "" && tok.Encoding() == b.opt.StoredEncoding}
	bld := &build{b: b, req: req, th: th, sum: sum, cnt: cnt, exact: exact, promptName: promptName, given: given}
	if on(req.Include.System) {
		bld.system = system
	}
	if err := bld.sections(ctx); err != nil {
		return nil, err
	}
	return bld, nil
}

// finish fits and renders a build that the cache did not answer, and asks
// for a newer summary when the strategy wants one.
func (bl *build) finish(ctx context.Context) (*Context, error) {
	bl.b.misses.Add(1)
	if err := bl.fit(ctx); err != nil {
		return nil, err
	}
	c := bl.render()
	c.Telemetry.Prompt = bl.promptName
	if bl.req.Strategy == StrategySummarize {
		bl.maybeSummarize(ctx, &c.Telemetry)
	}
	bl.b.indexLag(ctx, bl.th, &c.Telemetry)
	return c, nil
}

// build is one Build in progress.
type build struct {
	b      *Builder
	req    Request
	th     *agentmem.Thread
	sum    *agentmem.Summary
	cnt    *counter
	exact  bool // the model's tokenizer is known
	system string
	// promptName is the template the system prompt came from ("" for
	// none or the request's own).
	promptName string

	init     []Section
	memories []string
	summary  *Section
	degraded bool // a provider failed: the context lacks its section

	// given is the history a client holds (Augment), read instead of the
	// store's when not nil.
	given []*agentmem.Message

	history     []*agentmem.Message // included, oldest first
	historyCost []int               // cost of each, in the format
	inputMsg    *agentmem.Message   // the input, or in responses format without input the newest user message
	turnsRead   int                 // complete turns among the messages read
	reachedEnd  bool                // the history was read down to the floor
	warnings    []string
}

// withSystem names what must fit: what, with the system prompt if any.
func (bl *build) withSystem(what string) string {
	if bl.system != "" {
		return "the system prompt and " + what
	}
	return what
}

// floor is the last seq not read: the summary covers 1..floor.
func (bl *build) floor() int64 {
	if bl.sum != nil {
		return bl.sum.ThroughSeq
	}
	return 0
}

// sections gathers the optional sections: the initialisation block and
// the memories are read side by side.
func (bl *build) sections(ctx context.Context) error {
	inc := bl.req.Include
	var wg sync.WaitGroup
	var initErr, memErr error
	if on(inc.Init) && bl.b.opt.Init != nil {
		wg.Go(func() {
			bl.init, initErr = bl.b.opt.Init.InitBlock(ctx, bl.th.UserID, bl.th.AgentID, bl.th.ID, bl.query())
		})
	}
	if q := bl.query(); on(inc.Memories) && bl.b.opt.Memories != nil && q != "" {
		wg.Go(func() { bl.memories, memErr = bl.b.opt.Memories.Memories(ctx, bl.th.UserID, bl.th.ID, q) })
	}
	wg.Wait()
	if initErr != nil {
		bl.b.opt.Log.WarnContext(ctx, "init block unavailable; building without it", agentmem.LogErr, initErr)
		bl.warnings = append(bl.warnings, "The initialisation block is unavailable; the context was built without it.")
		bl.degraded = true
	}
	if memErr != nil {
		bl.b.opt.Log.WarnContext(ctx, "memories unavailable; building without them", agentmem.LogErr, memErr)
		bl.warnings = append(bl.warnings, "Long-term memories are unavailable; the context was built without them.")
		bl.degraded = true
	}
	if bl.sum != nil && bl.sum.Text != "" {
		bl.summary = &Section{Name: "summary", Title: "Conversation Summary", Text: bl.sum.Text}
	}
	if bl.req.Input != "" {
		bl.inputMsg = &agentmem.Message{Role: agentmem.RoleUser, Content: bl.req.Input}
	}
	return nil
}

// query is what the memories and the initialisation block are drawn for:
// the input, else the request's query.
func (bl *build) query() string { return cmp.Or(bl.req.Input, bl.req.Query) }

// memorySection renders the memories as a bulleted section.
func (bl *build) memorySection() *Section {
	if len(bl.memories) == 0 {
		return nil
	}
	var b strings.Builder
	for i, m := range bl.memories {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString("- " + m)
	}
	return &Section{Name: "memories", Title: "Relevant Memories", Text: b.String()}
}
