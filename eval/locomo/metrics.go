package locomo

// Metrics are one question's scores, for each k of a list of cutoffs.
type Metrics struct {
	// Recall holds Recall@k: the share of the question's evidence turns
	// ranked within k (|evidence ∩ top k| / |evidence|).
	Recall []float64 `json:"recall"`
	// Hit holds any-hit@k: 1 when at least one evidence turn is ranked
	// within k, else 0.
	Hit []float64 `json:"hit"`
	// RR is the reciprocal rank of the best-ranked evidence turn, 0 when
	// none was ranked at all.
	RR float64 `json:"rr"`
}

// Score computes a question's metrics at each cutoff of ks from its
// evidence (distinct dia_ids, not empty) and the ranked dia_ids of its
// search (see Conversation.Rank). Ranks are those of the turns, so a
// chunk of ten turns ranked first fills the top 5 by itself.
func Score(evidence []string, ranked []Ranked, ks []int) Metrics {
	m := Metrics{Recall: make([]float64, len(ks)), Hit: make([]float64, len(ks))}
	if len(evidence) == 0 {
		return m
	}
	want := make(map[string]bool, len(evidence))
	for _, id := range evidence {
		want[id] = true
	}
	var found []int // the ranks of the evidence turns found, best first
	for _, r := range ranked {
		if want[r.DiaID] {
			want[r.DiaID] = false // count a dia_id once even if ranked twice
			found = append(found, r.Rank)
		}
	}
	if len(found) > 0 {
		m.RR = 1 / float64(found[0])
	}
	for i, k := range ks {
		n := 0
		for _, rank := range found {
			if rank <= k {
				n++
			}
		}
		m.Recall[i] = float64(n) / float64(len(want))
		if n > 0 {
			m.Hit[i] = 1
		}
	}
	return m
}

// Summary is the mean of a group of questions' metrics (a macro average:
// each question weighs the same, whatever its number of evidence turns).
type Summary struct {
	Category int       `json:"category,omitempty"` // 0 for a group of several categories
	Name     string    `json:"name"`
	N        int       `json:"n"`      // questions scored
	Recall   []float64 `json:"recall"` // mean Recall@k for each k of Report.K
	Hit      []float64 `json:"hit"`    // mean any-hit@k for each k of Report.K
	MRR      float64   `json:"mrr"`    // mean reciprocal rank within the deepest k
	// Tokens is the mean number of tokens of the hits' texts within the
	// deepest k: what a prompt would carry.
	Tokens float64 `json:"tokens_per_question"`
}

func summarize(category int, name string, results []*QuestionResult, ks []int) Summary {
	s := Summary{Category: category, Name: name, Recall: make([]float64, len(ks)), Hit: make([]float64, len(ks))}
	for _, r := range results {
		s.N++
		for i := range ks {
			s.Recall[i] += r.Recall[i]
			s.Hit[i] += r.Hit[i]
		}
		s.MRR += r.RR
		s.Tokens += float64(r.Tokens)
	}
	if s.N == 0 {
		return s
	}
	n := float64(s.N)
	for i := range ks {
		s.Recall[i] /= n
		s.Hit[i] /= n
	}
	s.MRR /= n
	s.Tokens /= n
	return s
}
