package entity_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/entity"
)

// locomoLabel is one hand-labelled turn of LoCoMo (testdata/locomo_entities.json):
// the entities a reader finds in the turn's text (its speaker's name not
// counted: the turn is read without it), with their types, and the names
// that are neither right nor wrong (a shorter form of a title, a breed).
// The file holds no text of LoCoMo, only turn ids and the labels.
type locomoLabel struct {
	Set      string `json:"set"` // "random": 60 turns drawn at random; "rich": 30 drawn among turns with a capitalised word inside a sentence
	SampleID string `json:"sample_id"`
	DiaID    string `json:"dia_id"`
	Entities []struct {
		Name, Type string
	} `json:"entities"`
	Acceptable []string `json:"acceptable"`
}

// TestNames_LoCoMo scores the entities found without a model in 90 turns
// of LoCoMo's conversations (not conv-26), labelled by hand before the
// extractor was changed and never used to tune it: precision (the names
// found that are right), recall (the labelled names found) and, of the
// right names, how many carry the labelled type. Each turn is read alone,
// as a user's turn, as indexing a thread one append at a time does. The
// data is read from AGENTMEM_LOCOMO or ../../shared/data/locomo; the test
// skips without it (the data's licence keeps it out of the repository).
func TestNames_LoCoMo(t *testing.T) {
	path := os.Getenv("AGENTMEM_LOCOMO")
	if path == "" {
		path = filepath.Join("..", "..", "shared", "data", "locomo", "locomo-dev.json")
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Skipf("no LoCoMo data (set AGENTMEM_LOCOMO): %v", err)
	}
	var data []struct {
		SampleID     string                     `json:"sample_id"`
		Conversation map[string]json.RawMessage `json:"conversation"`
	}
	if err := json.Unmarshal(raw, &data); err != nil {
		t.Fatal(err)
	}
	text := map[string]string{} // by sample_id and dia_id
	for _, c := range data {
		for k, v := range c.Conversation {
			if !strings.HasPrefix(k, "session_") {
				continue
			}
			var turns []struct {
				DiaID string `json:"dia_id"`
				Text  string `json:"text"`
			}
			if json.Unmarshal(v, &turns) != nil {
				continue // a session's date
			}
			for _, tu := range turns {
				text[c.SampleID+" "+tu.DiaID] = tu.Text
			}
		}
	}
	var labels []locomoLabel
	b, err := os.ReadFile(filepath.Join("testdata", "locomo_entities.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &labels); err != nil {
		t.Fatal(err)
	}
	type score struct{ found, right, labelled, typed int }
	scores := map[string]*score{"random": {}, "rich": {}, "all": {}}
	for _, l := range labels {
		content, ok := text[l.SampleID+" "+l.DiaID]
		if !ok {
			t.Fatalf("%s %s: no such turn", l.SampleID, l.DiaID)
		}
		want := map[string]string{}
		for _, e := range l.Entities {
			want[strings.ToLower(e.Name)] = e.Type
		}
		neutral := map[string]bool{}
		for _, a := range l.Acceptable {
			neutral[strings.ToLower(a)] = true
		}
		got := entity.ProperNouns([]*agentmem.Message{{Role: agentmem.RoleUser, Content: content}}, 20)
		var wrong []string
		for _, s := range []*score{scores[l.Set], scores["all"]} {
			s.labelled += len(want)
		}
		for _, n := range got {
			k := strings.ToLower(n.Name)
			typ, right := want[k]
			if neutral[k] {
				continue
			}
			for _, s := range []*score{scores[l.Set], scores["all"]} {
				s.found++
				if right {
					s.right++
					if typ == n.Type {
						s.typed++
					}
				}
			}
			if !right {
				wrong = append(wrong, n.Name)
			}
		}
		if testing.Verbose() {
			t.Logf("%s %s: got %v, labelled %v, wrong %q", l.SampleID, l.DiaID, got, l.Entities, wrong)
		}
	}
	for _, set := range []string{"random", "rich", "all"} {
		s := scores[set]
		t.Logf("%-6s precision %d/%d %.2f, recall %d/%d %.2f, typed as labelled %d/%d", set,
			s.right, s.found, ratio(s.right, s.found), s.right, s.labelled, ratio(s.right, s.labelled), s.typed, s.right)
	}
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}
