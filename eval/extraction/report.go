package extraction

import (
	"bufio"
	"fmt"
	"io"
)

// WriteText writes the report as tables: the figures per category, the
// distractors, the change cases, and the change cases that failed with
// what went wrong.
func (r *Report) WriteText(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "Memory extraction: %d statements (%d expected memories), %d distractors, %d change cases\n",
		r.Statements, r.Expected, r.Distractors, r.Changes)
	fmt.Fprintf(bw, "extractor: %s\n\n", r.Extractor)

	fmt.Fprintf(bw, "%-12s %8s %9s %7s %9s %6s %6s\n", "category", "expected", "extracted", "matched", "precision", "recall", "F1")
	row := func(label string, expected, extracted, matched int, p, rc, f float64) {
		if expected == 0 { // a category of statements only (mixed): what they yielded that matched nothing
			fmt.Fprintf(bw, "%-12s %8d %9d %7d %9.3f %6s %6s\n", label, expected, extracted, matched, p, "-", "-")
			return
		}
		fmt.Fprintf(bw, "%-12s %8d %9d %7d %9.3f %6.3f %6.3f\n", label, expected, extracted, matched, p, rc, f)
	}
	for _, c := range r.Categories {
		if c.Category == Distractor {
			continue
		}
		row(c.Category, c.Expected, c.Extracted, c.Matched, c.Precision, c.Recall, c.F1)
	}
	row("all", r.Expected, r.Extracted, r.Matched, r.Precision, r.Recall, r.F1)

	fmt.Fprintf(bw, "\ndistractors: %d of %d yielded a memory (%d memories, all false positives, counted in \"all\")\n",
		r.DistractorsWithMemory, r.Distractors, r.DistractorMemories)
	if r.Changes > 0 {
		fmt.Fprintf(bw, "changes: %d of %d correct (accuracy %.3f): the valid memories at the end are exactly those expected,\n"+
			"  the expected ones are invalidated, and a repeat updated nothing\n", r.ChangesCorrect, r.Changes, r.ChangeAccuracy)
		for _, c := range r.ChangeResults {
			if c.Correct {
				continue
			}
			fmt.Fprintf(bw, "  %s %s (%s):", c.ID, c.Name, c.Category)
			for _, l := range []struct {
				name string
				list []string
			}{{"missing", c.Missing}, {"extra", c.Extra}, {"not invalidated", c.NotInvalid}, {"updated", c.Updated}} {
				if len(l.list) > 0 {
					fmt.Fprintf(bw, " %s %q;", l.name, l.list)
				}
			}
			fmt.Fprintln(bw)
		}
	}
	fmt.Fprintf(bw, "\nAn expected memory counts in its category; an extracted one in the category of the expected memory it\n"+
		"matches, else in its statement's (mixed: statements of several facts).\n")
	fmt.Fprintf(bw, "A memory matches an expected one when it has the same polarity, every name, place and number of it,\n"+
		"%.0f%% of its content words (stemmed), and at least %.0f%% of its own are expected ones; --json lists every statement.\n",
		MinCoverage*100, MinPrecision*100)
	return bw.Flush()
}
