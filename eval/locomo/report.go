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

// WriteComparison writes reports of several searchers on the same data as
// one table: a row per searcher, with its Recall@k over categories 1–4,
// the Recall@k of multi-hop and open-domain questions at the second
// cutoff (5 by default), and the time its run took.
func WriteComparison(w io.Writer, reps []*Report) error {
	if len(reps) == 0 {
		return nil
	}
	bw := bufio.NewWriter(w)
	r0 := reps[0]
	fmt.Fprintf(bw, "LoCoMo evidence retrieval: %d conversations, %d turns, %d questions (categories 1–4: %d)\n\n",
		r0.Conversations, r0.Turns, r0.QA, r0.Overall.N)
	at := min(1, len(r0.K)-1) // R@5 of the default cutoffs 1, 5, 10
	for i, r := range reps {
		fmt.Fprintf(bw, "%d. %s\n", i+1, r.Searcher)
	}
	fmt.Fprintf(bw, "\n%-3s", "")
	for _, k := range r0.K {
		fmt.Fprintf(bw, " %6s", "R@"+strconv.Itoa(k))
	}
	fmt.Fprintf(bw, " %12s %12s %9s %9s\n", "multi-hop@"+strconv.Itoa(r0.K[at]), "open-dom@"+strconv.Itoa(r0.K[at]), "index s", "total s")
	for i, r := range reps {
		fmt.Fprintf(bw, "%-3s", strconv.Itoa(i+1)+".")
		for _, v := range r.Overall.Recall {
			fmt.Fprintf(bw, " %6.3f", v)
		}
		cat := func(c int) float64 {
			for _, s := range r.Categories {
				if s.Category == c && at < len(s.Recall) {
					return s.Recall[at]
				}
			}
			return 0
		}
		fmt.Fprintf(bw, " %12.3f %12.3f %9.1f %9.1f\n", cat(MultiHop), cat(OpenDomain), r.Timing.IndexSeconds, r.Timing.TotalSeconds)
	}
	return bw.Flush()
}
