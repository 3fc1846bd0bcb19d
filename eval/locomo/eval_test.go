package locomo_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/eval/locomo"
	"github.com/agentmem/agentmem/internal/testutil"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// searchFunc is a Searcher made of a function.
type searchFunc func(ctx context.Context, userID, query string, topK int) ([]locomo.Hit, error)

func (f searchFunc) Search(ctx context.Context, userID, query string, topK int) ([]locomo.Hit, error) {
	return f(ctx, userID, query, topK)
}

// indexFunc is an Indexer made of a function.
type indexFunc func(ctx context.Context, userID string) error

func (f indexFunc) Index(ctx context.Context, userID string) error { return f(ctx, userID) }

// Each hit's text is "x", one token for agentmem.EstimateTokens.
func msgHit(thread string, seq int64) locomo.Hit {
	return locomo.Hit{Scope: agentmem.ScopeMessages, ThreadID: thread, SeqFrom: seq, SeqTo: seq, Text: "x"}
}

func TestRun(t *testing.T) {
	// The hits of each question of the fixture, and what they score
	// (evidence in brackets).
	answers := map[string][]locomo.Hit{
		// [D1:1] at rank 1.
		"What instrument is Ines learning?": {msgHit("session-1", 1)},
		// [D1:4 D3:2]: a chunk of D3:1–D3:3 first takes ranks 1–3 (D3:2
		// at 2); D1:4 comes at rank 8.
		"What is the name of Marek's boat and where did he sail it?": {
			{Scope: agentmem.ScopeChunks, ThreadID: "session-3", SeqFrom: 1, SeqTo: 3, Text: "x"},
			msgHit("session-2", 1), msgHit("session-2", 2), msgHit("session-2", 4), msgHit("session-1", 5),
			msgHit("session-1", 4),
		},
		// [D2:1] beyond the top 10 turns: two chunks (5 and 3 turns), a
		// repeated turn (no new rank) and two turns fill them; only the
		// five hits that name them count their tokens.
		"In which year did Marek adopt Mist?": {
			{Scope: agentmem.ScopeChunks, ThreadID: "session-1", SeqFrom: 1, SeqTo: 5, Text: "x"},
			{Scope: agentmem.ScopeChunks, ThreadID: "session-3", SeqFrom: 1, SeqTo: 3, Text: "x"},
			msgHit("session-1", 2), msgHit("session-2", 2), msgHit("session-2", 3), msgHit("session-2", 1),
		},
		// [D2:1 D2:4]: a memory of D2:3–D2:4 third, at ranks 3 and 4.
		"Would Mist be a fast runner?": {
			msgHit("session-1", 1), msgHit("session-1", 2),
			{Scope: agentmem.ScopeMemories, ThreadID: "session-2", SeqFrom: 3, SeqTo: 4, Text: "x"},
		},
		// [D3:3], read from the malformed "D:3:3", at rank 1.
		"What piece will Ines play at her recital?": {msgHit("session-3", 3)},
		// [D2:3] (D9:9 is no turn) at rank 1: the memory before it, without
		// provenance, stands for no turn.
		"What was Mist doing in the photo Marek shared?": {
			{Scope: agentmem.ScopeMemories, Text: "x"}, msgHit("session-2", 3),
		},
		// Category 5, [D1:4] at rank 1.
		"What did Ines name her cello?": {msgHit("session-1", 4)},
	}
	var asked []string
	search := searchFunc(func(ctx context.Context, userID, query string, topK int) ([]locomo.Hit, error) {
		if userID != "locomo-conv-demo" || topK != 20 {
			t.Errorf("Search(%q, %q, %d), want user locomo-conv-demo and top 20 (twice the deepest k)", userID, query, topK)
		}
		asked = append(asked, query)
		return answers[query], nil
	})
	var indexed []string
	index := indexFunc(func(ctx context.Context, userID string) error {
		indexed = append(indexed, userID)
		return nil
	})

	var progress []string
	rep, err := locomo.Run(context.Background(), testutil.MustOpenSQLite(t), index, search, []*locomo.Sample{mustReadFixture(t)},
		locomo.Options{K: []int{10, 1, 5, 5}, Searcher: "fake", Progress: func(stage string, done, total int) {
			progress = append(progress, fmt.Sprintf("%d/%d %s", done, total, stage))
		}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"locomo-conv-demo"}, indexed); diff != "" {
		t.Errorf("indexed mismatch (-want +got):\n%s", diff)
	}
	// Each stage from 0, then after each item: the skipped question counts.
	wantProgress := []string{"0/1 conversations stored", "1/1 conversations stored", "0/1 conversations indexed", "1/1 conversations indexed", "0/8 questions"}
	for i := 1; i <= 8; i++ {
		wantProgress = append(wantProgress, fmt.Sprintf("%d/8 questions", i))
	}
	if diff := cmp.Diff(wantProgress, progress); diff != "" {
		t.Errorf("progress mismatch (-want +got):\n%s", diff)
	}
	if len(asked) != 7 || len(rep.Questions) != 7 { // the question without evidence is not asked
		t.Errorf("asked %d questions, %d results; want 7", len(asked), len(rep.Questions))
	}

	want := &locomo.Report{
		Searcher: "fake", K: []int{1, 5, 10},
		Conversations: 1, Sessions: 3, Turns: 13, QA: 8,
		Categories: []locomo.Summary{
			{Category: 1, Name: "multi-hop", N: 1, Recall: []float64{0, 0.5, 1}, Hit: []float64{0, 1, 1}, MRR: 0.5, Tokens: 6},
			{Category: 2, Name: "temporal", N: 1, Recall: []float64{0, 0, 0}, Hit: []float64{0, 0, 0}, MRR: 0, Tokens: 5},
			{Category: 3, Name: "open-domain", N: 1, Recall: []float64{0, 0.5, 0.5}, Hit: []float64{0, 1, 1}, MRR: 0.25, Tokens: 3},
			{Category: 4, Name: "single-hop", N: 3, Recall: []float64{1, 1, 1}, Hit: []float64{1, 1, 1}, MRR: 1, Tokens: 4.0 / 3},
		},
		Overall: locomo.Summary{
			Name: "all (1–4)", N: 6,
			Recall: []float64{3.0 / 6, 4.0 / 6, 4.5 / 6},
			Hit:    []float64{3.0 / 6, 5.0 / 6, 5.0 / 6},
			MRR:    (0.5 + 0 + 0.25 + 3) / 6,
			Tokens: (6 + 5 + 3 + 1 + 1 + 2) / 6.0,
		},
		Adversarial: locomo.Summary{Category: 5, Name: "adversarial", N: 1, Recall: []float64{1, 1, 1}, Hit: []float64{1, 1, 1}, MRR: 1, Tokens: 1},
		Issues: locomo.DataIssues{
			MalformedEvidence: 1, UnknownEvidence: 1, SkippedQuestions: 1,
			List: []locomo.Issue{
				{Sample: "conv-demo", Question: 4, Evidence: "D:3:3", Problem: "malformed: read as D3:3"},
				{Sample: "conv-demo", Question: 5, Evidence: "D9:9", Problem: "D9:9 is no turn of the conversation: dropped"},
				{Sample: "conv-demo", Question: 6, Problem: "no evidence: question skipped"},
			},
		},
		UnmappedHits: 1,
	}
	opts := cmp.Options{
		cmpopts.EquateApprox(0, 1e-12),
		cmpopts.IgnoreFields(locomo.Report{}, "Timing", "Questions"),
	}
	if diff := cmp.Diff(want, rep, opts); diff != "" {
		t.Fatalf("report mismatch (-want +got):\n%s", diff)
	}
	if rep.Timing.Queries != 7 {
		t.Errorf("Timing.Queries = %d, want 7", rep.Timing.Queries)
	}
	q := rep.Questions[1]
	if q.Index != 1 || q.Category != 1 || !cmp.Equal(q.Evidence, []string{"D1:4", "D3:2"}) || len(q.Ranked) != 8 || q.Tokens != 6 {
		t.Errorf("Questions[1] = %+v", q)
	}

	var text bytes.Buffer
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"category             n    R@1    R@5   R@10  hit@1  hit@5 hit@10 MRR@10  tokens/q",
		"1 multi-hop          1  0.000  0.500  1.000  0.000  1.000  1.000  0.500         6",
		"all (1–4)            6  0.500  0.667  0.750  0.500  0.833  0.833  0.625         3",
		"5 adversarial        1  1.000  1.000  1.000  1.000  1.000  1.000  1.000         1",
		`conv-demo qa[4] "D:3:3": malformed: read as D3:3`,
	} {
		if !strings.Contains(text.String(), line) {
			t.Errorf("text report lacks %q:\n%s", line, text.String())
		}
	}
}

func TestRun_Err(t *testing.T) {
	ctx := context.Background()
	sample := mustReadFixture(t)
	boom := errors.New("boom")
	search := searchFunc(func(context.Context, string, string, int) ([]locomo.Hit, error) { return nil, boom })
	if _, err := locomo.Run(ctx, testutil.MustOpenSQLite(t), nil, search, []*locomo.Sample{sample}, locomo.Options{}); !errors.Is(err, boom) {
		t.Errorf("search error: %v, want boom", err)
	}
	index := indexFunc(func(context.Context, string) error { return boom })
	if _, err := locomo.Run(ctx, testutil.MustOpenSQLite(t), index, search, []*locomo.Sample{sample}, locomo.Options{}); !errors.Is(err, boom) || !strings.Contains(err.Error(), "index locomo-conv-demo") {
		t.Errorf("index error: %v, want boom", err)
	}
	if _, err := locomo.Run(ctx, testutil.MustOpenSQLite(t), nil, search, []*locomo.Sample{sample}, locomo.Options{K: []int{0, 5}}); err == nil {
		t.Errorf("k 0: no error")
	}
}
