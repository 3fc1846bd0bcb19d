package locomo_test

import (
	"strings"
	"testing"

	"github.com/agentmem/agentmem/eval/locomo"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestScore(t *testing.T) {
	ks := []int{1, 5, 10}
	for name, tc := range map[string]struct {
		evidence []string
		ranked   []locomo.Ranked
		want     locomo.Metrics
	}{
		"FirstHit": {
			evidence: []string{"D1:1"},
			ranked:   []locomo.Ranked{{DiaID: "D1:1", Rank: 1}, {DiaID: "D2:2", Rank: 2}},
			want:     locomo.Metrics{Recall: []float64{1, 1, 1}, Hit: []float64{1, 1, 1}, RR: 1},
		},
		// Two of three evidence turns: one at rank 3, one at rank 7.
		"TwoOfThree": {
			evidence: []string{"D1:1", "D1:2", "D1:3"},
			ranked:   []locomo.Ranked{{DiaID: "D9:1", Rank: 1}, {DiaID: "D9:2", Rank: 2}, {DiaID: "D1:2", Rank: 3}, {DiaID: "D9:3", Rank: 4}, {DiaID: "D1:3", Rank: 7}},
			want:     locomo.Metrics{Recall: []float64{0, 1.0 / 3, 2.0 / 3}, Hit: []float64{0, 1, 1}, RR: 1.0 / 3},
		},
		// A chunk, the second hit, brings both evidence turns at ranks 2
		// and 3.
		"Chunk": {
			evidence: []string{"D1:1", "D1:2"},
			ranked:   []locomo.Ranked{{DiaID: "D5:5", Rank: 1, Hit: 1}, {DiaID: "D1:1", Rank: 2, Hit: 2}, {DiaID: "D1:2", Rank: 3, Hit: 2}},
			want:     locomo.Metrics{Recall: []float64{0, 1, 1}, Hit: []float64{0, 1, 1}, RR: 0.5},
		},
		"BeyondTheDeepestK": {
			evidence: []string{"D1:1"},
			ranked:   []locomo.Ranked{{DiaID: "D1:1", Rank: 12}},
			want:     locomo.Metrics{Recall: []float64{0, 0, 0}, Hit: []float64{0, 0, 0}, RR: 1.0 / 12},
		},
		"NotFound": {
			evidence: []string{"D1:1", "D1:2"},
			ranked:   []locomo.Ranked{{DiaID: "D3:1", Rank: 1}},
			want:     locomo.Metrics{Recall: []float64{0, 0, 0}, Hit: []float64{0, 0, 0}},
		},
		"DuplicateEvidence": {
			evidence: []string{"D1:1", "D1:1", "D1:2"},
			ranked:   []locomo.Ranked{{DiaID: "D1:1", Rank: 4}},
			want:     locomo.Metrics{Recall: []float64{0, 0.5, 0.5}, Hit: []float64{0, 1, 1}, RR: 0.25},
		},
		"NoEvidence": {
			ranked: []locomo.Ranked{{DiaID: "D1:1", Rank: 1}},
			want:   locomo.Metrics{Recall: []float64{0, 0, 0}, Hit: []float64{0, 0, 0}},
		},
	} {
		t.Run(name, func(t *testing.T) {
			got := locomo.Score(tc.evidence, tc.ranked, ks)
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
				t.Fatalf("Score mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestWriteComparison: one row per report, with its overall recall, the
// multi-hop and open-domain recall at the second cutoff, and its times.
func TestWriteComparison(t *testing.T) {
	rep := func(name string, r5 float64) *locomo.Report {
		return &locomo.Report{Searcher: name, K: []int{1, 5, 10}, Overall: locomo.Summary{N: 3, Recall: []float64{0.1, r5, 0.9}},
			Categories: []locomo.Summary{{Category: locomo.MultiHop, Recall: []float64{0, 0.25, 0}}, {Category: locomo.OpenDomain, Recall: []float64{0, 0.75, 0}}},
			Timing:     locomo.Timing{IndexSeconds: 2, TotalSeconds: 3}}
	}
	var b strings.Builder
	if err := locomo.WriteComparison(&b, []*locomo.Report{rep("fulltext", 0.5), rep("hybrid", 0.625)}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"1. fulltext", "2. hybrid", "1.   0.100  0.500  0.900        0.250        0.750       2.0       3.0", "2.   0.100  0.625"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("comparison lacks %q:\n%s", want, b.String())
		}
	}
}
