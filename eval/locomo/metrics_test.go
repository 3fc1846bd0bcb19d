package locomo_test

import (
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
