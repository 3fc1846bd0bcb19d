package locomo

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agentmem/agentmem"
)

// Hit is one search result, best first in its list. A message hit names
// one turn (SeqFrom, with SeqTo equal or 0); a chunk, summary or memory
// hit names the turns SeqFrom…SeqTo of its thread that it was drawn from.
type Hit struct {
	Scope    string  `json:"scope"` // agentmem.ScopeMessages, ScopeChunks, ScopeSummaries or ScopeMemories
	ThreadID string  `json:"thread_id"`
	SeqFrom  int64   `json:"seq_from"`
	SeqTo    int64   `json:"seq_to"`
	Text     string  `json:"text"`
	Score    float64 `json:"score"`
}

// Searcher answers a question with the user's best hits, best first, at
// most topK of them (extra hits are ignored).
type Searcher interface {
	Search(ctx context.Context, userID, query string, topK int) ([]Hit, error)
}

// Indexer prepares a user's stored conversation for search once it is
// ingested: embeddings, chunks, summaries, memories.
type Indexer interface {
	Index(ctx context.Context, userID string) error
}

// Options tune Run. The zero value works.
type Options struct {
	K []int // the cutoffs of Recall@k and hit@k: 1, 5, 10 when empty
	// Tokens counts the tokens of retrieved texts
	// (agentmem.EstimateTokens when nil).
	Tokens agentmem.TokenCounter
	// Searcher describes the searcher in the report, e.g. "bm25 (messages)".
	Searcher string
	// Progress, when set, is told how far Run is: at the start of each
	// stage with done 0, then after each item. The stages are
	// "conversations stored", "conversations indexed" and "questions"
	// (asked or skipped, of all the file's questions).
	Progress func(stage string, done, total int)
}

// WithDefaults returns o with its zero fields set to their defaults and
// K sorted, without duplicates.
func (o Options) WithDefaults() Options {
	if len(o.K) == 0 {
		o.K = []int{1, 5, 10}
	}
	o.K = slices.Compact(slices.Sorted(slices.Values(o.K)))
	if o.Tokens == nil {
		o.Tokens = agentmem.EstimateTokens{}
	}
	o.Searcher = cmp.Or(o.Searcher, "unnamed")
	if o.Progress == nil {
		o.Progress = func(string, int, int) {}
	}
	return o
}

// Report is the outcome of Run.
type Report struct {
	Searcher      string `json:"searcher"`
	K             []int  `json:"k"` // the cutoffs, ascending; MRR and tokens are measured at the last
	Conversations int    `json:"conversations"`
	Sessions      int    `json:"sessions"`
	Turns         int    `json:"turns"`
	QA            int    `json:"qa"` // question items in the file, scored or not

	// Categories holds categories 1–4 in order; Overall is their
	// questions together (a macro average over questions).
	Categories []Summary `json:"categories"`
	Overall    Summary   `json:"overall"`
	// Adversarial is category 5 apart: questions about things the
	// conversation never says, whose evidence is the turns they bait
	// with. Their evidence recall says how well the search finds that
	// bait, not whether a reader would answer "not mentioned".
	Adversarial Summary `json:"adversarial"`

	Issues DataIssues `json:"issues"`
	// UnmappedHits counts hits that stood for no stored turn (say, a
	// memory without provenance); they took a rank all the same.
	UnmappedHits int `json:"unmapped_hits"`

	Timing Timing `json:"timing"`
	// Questions holds each scored question, in file order.
	Questions []*QuestionResult `json:"questions,omitempty"`
}

// DataIssues counts the flaws of the data file that Run worked around.
type DataIssues struct {
	// MalformedEvidence counts evidence strings that were not one dia_id
	// written canonically ("D3:6; D4:12", "D:7:14", "D"); the ids in
	// them were read (see ParseEvidence).
	MalformedEvidence int `json:"malformed_evidence"`
	// UnknownEvidence counts evidence ids of no turn of the conversation;
	// they were dropped.
	UnknownEvidence int `json:"unknown_evidence"`
	// SkippedQuestions counts questions left without evidence (or of an
	// unknown category); they were not asked.
	SkippedQuestions int     `json:"skipped_questions"`
	List             []Issue `json:"list"`
}

// Issue is one flaw of the data file.
type Issue struct {
	Sample   string `json:"sample"`
	Question int    `json:"question"` // index in the sample's qa list, from 0
	Evidence string `json:"evidence,omitempty"`
	Problem  string `json:"problem"`
}

// Timing is how long each phase took.
type Timing struct {
	IngestSeconds float64 `json:"ingest_seconds"`
	IndexSeconds  float64 `json:"index_seconds"`
	// QuerySeconds is the time spent in Search, all questions together;
	// scoring and counting tokens come on top (see TotalSeconds).
	QuerySeconds    float64 `json:"query_seconds"`
	Queries         int     `json:"queries"`
	QueryMeanMillis float64 `json:"query_mean_ms"`
	QueryP95Millis  float64 `json:"query_p95_ms"`
	TotalSeconds    float64 `json:"total_seconds"` // the whole run
}

// QuestionResult is one scored question.
type QuestionResult struct {
	Sample   string   `json:"sample"`
	Index    int      `json:"index"` // in the sample's qa list, from 0
	Category int      `json:"category"`
	Question string   `json:"question"`
	Evidence []string `json:"evidence"` // the dia_ids scored against
	Ranked   []Ranked `json:"ranked"`   // what the hits stood for
	Metrics
	Tokens int     `json:"tokens"` // of the texts of the hits that name the deepest k turns
	Millis float64 `json:"ms"`     // the search's duration
}

// Run stores every sample in store (see Ingest), lets ix index each user
// (nil: nothing to index), asks every question through search for the
// deepest k of opt.K hits and scores the hits against the question's
// evidence (see Conversation.Rank and Score). A question's evidence is
// every well-formed id of its evidence strings that names a turn of the
// conversation; a question left with none is skipped, and Report.Issues
// says so. Questions are asked one at a time, so that the timings are
// those of one query.
func Run(ctx context.Context, store Store, ix Indexer, search Searcher, samples []*Sample, opt Options) (*Report, error) {
	opt = opt.WithDefaults()
	depth := opt.K[len(opt.K)-1]
	if opt.K[0] < 1 {
		return nil, fmt.Errorf("k must be at least 1, not %d", opt.K[0])
	}
	rep := &Report{Searcher: opt.Searcher, K: opt.K, Conversations: len(samples)}

	begin := time.Now()
	start := begin
	convs := make([]*Conversation, len(samples))
	opt.Progress("conversations stored", 0, len(samples))
	for i, s := range samples {
		c, err := Ingest(ctx, store, s)
		if err != nil {
			return nil, fmt.Errorf("ingest %s: %w", s.ID, err)
		}
		convs[i] = c
		rep.Sessions += len(s.Sessions)
		rep.Turns += c.Turns()
		rep.QA += len(s.QA)
		opt.Progress("conversations stored", i+1, len(samples))
	}
	rep.Timing.IngestSeconds = time.Since(start).Seconds()

	start = time.Now()
	if ix != nil {
		opt.Progress("conversations indexed", 0, len(convs))
		for i, c := range convs {
			if err := ix.Index(ctx, c.UserID); err != nil {
				return nil, fmt.Errorf("index %s: %w", c.UserID, err)
			}
			opt.Progress("conversations indexed", i+1, len(convs))
		}
	}
	rep.Timing.IndexSeconds = time.Since(start).Seconds()

	var durations []time.Duration
	asked := 0
	opt.Progress("questions", 0, rep.QA)
	for _, c := range convs {
		for i, q := range c.Sample.QA {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			asked++
			opt.Progress("questions", asked, rep.QA)
			evidence, ok := resolveEvidence(c, i, q, &rep.Issues)
			if !ok {
				continue
			}
			r, unmapped, d, err := ask(ctx, search, c, i, q, evidence, depth, opt)
			if err != nil {
				return nil, err
			}
			durations = append(durations, d)
			rep.UnmappedHits += unmapped
			rep.Questions = append(rep.Questions, r)
		}
	}
	rep.timeQueries(durations)
	rep.summarize(opt.K)
	rep.Timing.TotalSeconds = time.Since(begin).Seconds()
	return rep, nil
}

// ask asks question i of c through search and scores its deepest turns
// against evidence; unmapped counts the hits that name no turn.
func ask(ctx context.Context, search Searcher, c *Conversation, i int, q *QA, evidence []string, depth int, opt Options) (r *QuestionResult, unmapped int, d time.Duration, err error) {
	t0 := time.Now()
	// More hits than turns wanted: a hit may stand for turns already
	// ranked, or for several.
	hits, err := search.Search(ctx, c.UserID, q.Question, 2*depth)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("search %s question %d %q: %w", c.Sample.ID, i, q.Question, err)
	}
	d = time.Since(t0)
	ranked, _ := c.Rank(hits)
	// The deepest k turns, and the hits that named them.
	ranked = ranked[:min(len(ranked), depth)]
	if len(ranked) == depth {
		hits = hits[:ranked[depth-1].Hit]
	}
	_, unmapped = c.Rank(hits)
	r = &QuestionResult{
		Sample:   c.Sample.ID,
		Index:    i,
		Category: q.Category,
		Question: q.Question,
		Evidence: evidence,
		Ranked:   ranked,
		Metrics:  Score(evidence, ranked, opt.K),
		Millis:   float64(d.Microseconds()) / 1000,
	}
	for _, h := range hits {
		r.Tokens += opt.Tokens.CountTokens(h.Text)
	}
	return r, unmapped, d, nil
}

// timeQueries records the count, total, mean and p95 of the queries'
// durations.
func (rep *Report) timeQueries(durations []time.Duration) {
	rep.Timing.Queries = len(durations)
	if len(durations) == 0 {
		return
	}
	var sum time.Duration
	for _, d := range durations {
		sum += d
	}
	rep.Timing.QuerySeconds = sum.Seconds()
	rep.Timing.QueryMeanMillis = float64(sum.Microseconds()) / 1000 / float64(len(durations))
	slices.Sort(durations)
	rep.Timing.QueryP95Millis = float64(durations[(len(durations)*95-1)/100].Microseconds()) / 1000
}

// summarize scores the questions by category, overall (categories 1–4)
// and the adversarial ones apart.
func (rep *Report) summarize(k []int) {
	byCategory := map[int][]*QuestionResult{}
	var overall []*QuestionResult
	for _, r := range rep.Questions {
		byCategory[r.Category] = append(byCategory[r.Category], r)
		if r.Category != Adversarial {
			overall = append(overall, r)
		}
	}
	for c := MultiHop; c <= SingleHop; c++ {
		rep.Categories = append(rep.Categories, summarize(c, CategoryName(c), byCategory[c], k))
	}
	rep.Overall = summarize(0, "all (1–4)", overall, k)
	rep.Adversarial = summarize(Adversarial, CategoryName(Adversarial), byCategory[Adversarial], k)
}

// resolveEvidence returns the dia_ids a question is scored against and
// whether to ask it, recording the flaws it meets in issues.
func resolveEvidence(c *Conversation, index int, q *QA, issues *DataIssues) ([]string, bool) {
	add := func(evidence, problem string) {
		issues.List = append(issues.List, Issue{Sample: c.Sample.ID, Question: index, Evidence: evidence, Problem: problem})
	}
	if q.Category < MultiHop || q.Category > Adversarial {
		issues.SkippedQuestions++
		add("", fmt.Sprintf("unknown category %d: question skipped", q.Category))
		return nil, false
	}
	var ids []string
	for _, e := range q.Evidence {
		read, ok := ParseEvidence(e)
		if !ok {
			issues.MalformedEvidence++
			if len(read) == 0 {
				add(e, "malformed: no dia_id in it")
			} else {
				add(e, "malformed: read as "+strings.Join(read, ", "))
			}
		}
		for _, id := range read {
			switch {
			case !c.HasTurn(id):
				issues.UnknownEvidence++
				add(e, id+" is no turn of the conversation: dropped")
			case !slices.Contains(ids, id):
				ids = append(ids, id)
			}
		}
	}
	if len(ids) == 0 {
		issues.SkippedQuestions++
		add("", "no evidence: question skipped")
		return nil, false
	}
	return ids, true
}
