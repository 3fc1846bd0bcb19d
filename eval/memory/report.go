package memory

import (
	"bufio"
	"fmt"
	"io"
)

// Report is the outcome of Run: each conversation's scores and misses,
// and their sum.
type Report struct {
	Pipeline string `json:"pipeline"`
	// SessionDates says how the sessions' dates reached the store.
	SessionDates  string    `json:"session_dates"`
	Conversations []*Result `json:"conversations"`
	Overall       Counts    `json:"overall"`
	Rates         Rates     `json:"rates"` // of Overall
	Sessions      int       `json:"sessions"`
	Messages      int       `json:"messages"`
	Timing        Timing    `json:"timing"` // Seconds: the whole run
}

// Result is one conversation scored.
type Result struct {
	ID       string `json:"id"`
	Style    string `json:"style"`
	User     string `json:"user"`
	Sessions int    `json:"sessions"`
	Messages int    `json:"messages"`
	Counts
	Misses Misses `json:"misses"`
	Timing Timing `json:"timing"`
}

// Timing is where the time of a conversation went (or of all of them):
// storing the sessions (appends and ends), waiting for the background
// jobs, and the searches and contexts of the questions. MessagesPerSecond
// is the messages stored and indexed per second of the first two.
type Timing struct {
	IngestSeconds     float64 `json:"ingest_seconds"`
	JobsSeconds       float64 `json:"jobs_seconds"`
	ScoreSeconds      float64 `json:"score_seconds"`
	Seconds           float64 `json:"seconds"`
	MessagesPerSecond float64 `json:"messages_per_second"`
}

// Rates are the shares of Counts: each over the questions, facts,
// memories, changes or past facts it counts among.
type Rates struct {
	Recall        float64 `json:"recall"`
	Precision     float64 `json:"precision"`
	Handled       float64 `json:"changes_handled"`
	MemoriesHit1  float64 `json:"memories_hit1"`
	MemoriesHit5  float64 `json:"memories_hit5"`
	DefaultHit1   float64 `json:"default_hit1"`
	DefaultHit5   float64 `json:"default_hit5"`
	ContextStale  float64 `json:"context_stale"`
	ContextAnswer float64 `json:"context_answer"`
	ProfileFacts  float64 `json:"profile_facts"`
	ProfilePast   float64 `json:"profile_past"`
}

// RatesOf returns the shares of c (0 where there is nothing to count).
func RatesOf(c Counts) Rates {
	q := c.Questions
	return Rates{
		Recall: share(c.Recalled, c.Facts), Precision: share(c.Precise, c.Memories), Handled: share(c.Handled, c.Changes),
		MemoriesHit1: share(c.SearchMemories.Hit1, q), MemoriesHit5: share(c.SearchMemories.Hit5, q),
		DefaultHit1: share(c.SearchDefault.Hit1, q), DefaultHit5: share(c.SearchDefault.Hit5, q),
		ContextStale: share(c.ContextStale, q), ContextAnswer: share(c.ContextAnswer, q),
		ProfileFacts: share(c.ProfileFacts, c.Facts), ProfilePast: share(c.ProfilePast, c.Past),
	}
}

func share(n, of int) float64 {
	if of == 0 {
		return 0
	}
	return float64(n) / float64(of)
}

// summarize sums the conversations' counts and timings.
func (r *Report) summarize() {
	r.Overall, r.Sessions, r.Messages = Counts{}, 0, 0
	var t Timing
	for _, c := range r.Conversations {
		r.Overall.add(c.Counts)
		r.Sessions += c.Sessions
		r.Messages += c.Messages
		t.IngestSeconds += c.Timing.IngestSeconds
		t.JobsSeconds += c.Timing.JobsSeconds
		t.ScoreSeconds += c.Timing.ScoreSeconds
	}
	if d := t.IngestSeconds + t.JobsSeconds; d > 0 {
		t.MessagesPerSecond = float64(r.Messages) / d
	}
	t.Seconds = r.Timing.Seconds
	r.Timing = t
	r.Rates = RatesOf(r.Overall)
}

// WriteText writes the report as a table, a row per conversation and one
// for all of them, then the rates, what each column means and the timing.
func (r *Report) WriteText(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "Memory eval: %d conversations, %d sessions, %d messages, %d questions\n", len(r.Conversations), r.Sessions, r.Messages, r.Overall.Questions)
	fmt.Fprintf(bw, "pipeline: %s\nsession dates: %s\n\n", r.Pipeline, r.SessionDates)
	fmt.Fprintf(bw, "%-8s %7s %5s %5s %5s %7s %5s %11s %11s %7s %7s %7s %6s\n",
		"conv", "facts", "mems", "prec", "false", "changes", "q", "mem h1/h5", "def h1/h5", "stale@5", "ctx", "profile", "s")
	row := func(id string, c Counts, t Timing) {
		fmt.Fprintf(bw, "%-8s %7s %5d %5.2f %5d %7s %5d %11s %11s %7s %7d %7s %6.1f\n", id,
			frac(c.Recalled, c.Facts), c.Memories, share(c.Precise, c.Memories), c.False, frac(c.Handled, c.Changes), c.Questions,
			frac(c.SearchMemories.Hit1, c.SearchMemories.Hit5), frac(c.SearchDefault.Hit1, c.SearchDefault.Hit5),
			frac(c.SearchMemories.Stale5, c.SearchDefault.Stale5), c.ContextStale, frac(c.ProfileFacts, c.ProfilePast), t.Seconds)
	}
	for _, c := range r.Conversations {
		row(c.ID, c.Counts, c.Timing)
	}
	row("all", r.Overall, Timing{Seconds: r.Timing.IngestSeconds + r.Timing.JobsSeconds + r.Timing.ScoreSeconds})

	o, x := r.Overall, r.Rates
	fmt.Fprintf(bw, "\nfacts recalled      %3d/%-3d %.2f\n", o.Recalled, o.Facts, x.Recall)
	fmt.Fprintf(bw, "strict precision    %3d/%-3d %.2f  (false facts: %d valid memories state a not-fact)\n", o.Precise, o.Memories, x.Precision, o.False)
	fmt.Fprintf(bw, "changes handled     %3d/%-3d %.2f\n", o.Handled, o.Changes, x.Handled)
	fmt.Fprintf(bw, "search, memories    hit@1 %d/%d %.2f, hit@5 %d/%d %.2f, stale@5 %d\n",
		o.SearchMemories.Hit1, o.Questions, x.MemoriesHit1, o.SearchMemories.Hit5, o.Questions, x.MemoriesHit5, o.SearchMemories.Stale5)
	fmt.Fprintf(bw, "search, default     hit@1 %d/%d %.2f, hit@5 %d/%d %.2f, stale@5 %d\n",
		o.SearchDefault.Hit1, o.Questions, x.DefaultHit1, o.SearchDefault.Hit5, o.Questions, x.DefaultHit5, o.SearchDefault.Stale5)
	fmt.Fprintf(bw, "contexts stale      %3d/%-3d (holding the answer: %d)\n", o.ContextStale, o.Questions, o.ContextAnswer)
	fmt.Fprintf(bw, "profile             states %d/%d facts, %d/%d past facts\n", o.ProfileFacts, o.Facts, o.ProfilePast, o.Past)
	fmt.Fprintf(bw, "memories            %d valid, %d invalidated; jobs dead %d, deferred %d\n", o.Memories, o.Invalidated, o.JobsDead, o.JobsDeferred)

	fmt.Fprint(bw, "\nfacts: true at the end, stated by a valid memory (for every keyword group, one alternative as a substring, any case);\n"+
		"prec: valid memories stating a fact or a past fact; changes: new fact stated, old one by no valid memory\n"+
		"(a memory that tells it ended, or tells the new value too, does not state it);\n"+
		"mem/def h1/h5: the answer in the top 1 / 5 of a search over memories / the default scopes;\n"+
		"stale@5: a stale value not marked superseded above the answer (memories/default); ctx: contexts for the\n"+
		"question that state the stale value outside lines marked as past; profile: facts / past facts it states.\n")
	t := r.Timing
	fmt.Fprintf(bw, "\ntime: store %.1f s, jobs %.1f s (%.1f messages/s), questions %.1f s; %.1f s in all\n",
		t.IngestSeconds, t.JobsSeconds, t.MessagesPerSecond, t.ScoreSeconds, t.Seconds)
	return bw.Flush()
}

func frac(a, b int) string { return fmt.Sprintf("%d/%d", a, b) }
