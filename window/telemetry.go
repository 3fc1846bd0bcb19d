package window

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/agentmem/agentmem"
)

// omitted records in t what was left out: the history before the oldest
// message included, and how far the summary is behind it.
func (bl *build) omitted(t *Telemetry) {
	first := bl.th.LastSeq + 1
	if len(bl.history) > 0 {
		first = bl.history[0].Seq
	} else if bl.inputMsg != nil && bl.inputMsg.Seq > 0 {
		first = bl.inputMsg.Seq
	}
	if first > 1 {
		t.OmittedMessages = first - 1
		t.OmittedSeqs = []SeqRange{{From: 1, To: first - 1}}
	} else {
		t.OmittedSeqs = []SeqRange{}
	}
	if bl.summary != nil {
		t.SummaryThroughSeq, t.SummaryVersion = bl.sum.ThroughSeq, bl.sum.Version
	}
	if bl.req.Strategy == StrategySummarize {
		t.SummaryLag = bl.th.LastSeq - t.SummaryThroughSeq
		// Messages after the summary that are not in the context verbatim
		// were trimmed: the summary is behind.
		if first-1 > t.SummaryThroughSeq {
			t.SummaryBehind = true
			bl.warnings = append(bl.warnings, fmt.Sprintf("The summary is behind: messages %d to %d are neither summarised nor in the context (trimmed to fit until the summary catches up).",
				t.SummaryThroughSeq+1, first-1))
		}
	}
}

// warn adds the warnings about the counts and the budget's use, and sets
// t.Warnings.
func (bl *build) warn(t *Telemetry) {
	if !bl.exact {
		bl.warnings = append(bl.warnings, "Token counts are estimates: the tokenizer of model "+strconv.Quote(bl.req.Model)+" is not known.")
	}
	if bl.cnt.toolApprox {
		bl.warnings = append(bl.warnings, "Tool calls are counted approximately: OpenAI does not document how it tokenizes them.")
	}
	if t.Fraction >= bl.b.opt.WarnFraction {
		bl.warnings = append(bl.warnings, fmt.Sprintf("The context uses %.0f%% of the budget.", 100*t.Fraction))
	}
	t.Warnings = bl.warnings
	if t.Warnings == nil {
		t.Warnings = []string{}
	}
}

// indexLag fills in how far indexing is behind on th (Options.IndexLag).
func (b *Builder) indexLag(ctx context.Context, th *agentmem.Thread, t *Telemetry) {
	if b.opt.IndexLag == nil {
		return
	}
	n, since, err := b.opt.IndexLag(ctx, th)
	if err != nil {
		if b.opt.Log != nil {
			b.opt.Log.WarnContext(ctx, "index lag not read", agentmem.LogThread, th.ID, agentmem.LogErr, err)
		}
		return
	}
	t.IndexLag = n
	if n > 0 && !since.IsZero() {
		t.IndexLagSeconds = max(0, time.Since(since).Seconds())
	}
}
