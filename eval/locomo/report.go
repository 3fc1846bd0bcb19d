package locomo

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
)

// WriteText writes the report as a table, one row per category, then the
// data issues and the timings.
func (r *Report) WriteText(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "LoCoMo evidence retrieval: %d conversations, %d sessions, %d turns, %d questions\n",
		r.Conversations, r.Sessions, r.Turns, r.QA)
	fmt.Fprintf(bw, "searcher: %s\n\n", r.Searcher)

	depth := strconv.Itoa(r.K[len(r.K)-1])
	fmt.Fprintf(bw, "%-16s %5s", "category", "n")
	for _, k := range r.K {
		fmt.Fprintf(bw, " %6s", "R@"+strconv.Itoa(k))
	}
	for _, k := range r.K {
		fmt.Fprintf(bw, " %6s", "hit@"+strconv.Itoa(k))
	}
	fmt.Fprintf(bw, " %6s %9s\n", "MRR@"+depth, "tokens/q")
	row := func(label string, s Summary) {
		fmt.Fprintf(bw, "%-16s %5d", label, s.N)
		for _, v := range s.Recall {
			fmt.Fprintf(bw, " %6.3f", v)
		}
		for _, v := range s.Hit {
			fmt.Fprintf(bw, " %6.3f", v)
		}
		fmt.Fprintf(bw, " %6.3f %9.0f\n", s.MRR, s.Tokens)
	}
	for _, s := range r.Categories {
		row(strconv.Itoa(s.Category)+" "+s.Name, s)
	}
	row(r.Overall.Name, r.Overall)
	fmt.Fprintln(bw)
	row("5 "+r.Adversarial.Name, r.Adversarial)
	fmt.Fprintln(bw, "  (category 5 apart: the recall of the turns an adversarial question baits with; the right answer is \"not mentioned\")")

	fmt.Fprintf(bw, "\nR@k: share of a question's evidence turns within the top k hits; hit@k: some evidence within k;\n"+
		"MRR@%s: 1/rank of the first evidence turn; tokens/q: tokens of the top %s hits. Means over questions.\n", depth, depth)
	is := r.Issues
	fmt.Fprintf(bw, "\ndata: %d malformed evidence strings read as well as possible, %d evidence ids of no turn dropped, %d questions skipped\n",
		is.MalformedEvidence, is.UnknownEvidence, is.SkippedQuestions)
	for _, i := range is.List {
		if i.Evidence != "" {
			fmt.Fprintf(bw, "  %s qa[%d] %q: %s\n", i.Sample, i.Question, i.Evidence, i.Problem)
		} else {
			fmt.Fprintf(bw, "  %s qa[%d]: %s\n", i.Sample, i.Question, i.Problem)
		}
	}
	if r.UnmappedHits > 0 {
		fmt.Fprintf(bw, "hits that stood for no stored turn: %d\n", r.UnmappedHits)
	}
	t := r.Timing
	fmt.Fprintf(bw, "\ntime: ingest %.2f s, index %.2f s, search %.2f s (%d queries, mean %.2f ms, p95 %.2f ms); %.2f s in all\n",
		t.IngestSeconds, t.IndexSeconds, t.QuerySeconds, t.Queries, t.QueryMeanMillis, t.QueryP95Millis, t.TotalSeconds)
	return bw.Flush()
}
