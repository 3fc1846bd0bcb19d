package minilm_test

import (
	"slices"
	"testing"

	"github.com/agentmem/agentmem/llm/minilm"
)

func TestStatic_Neighbours(t *testing.T) {
	s := minilm.NewStatic()
	for _, tc := range []struct {
		word string
		want []string // among the first ten
	}{
		{"pets", []string{"dogs", "cats"}},
		{"desserts", []string{"pudding", "pastry"}}, // not a whole entry: its singular is
		{"sports", []string{"football"}},
		{"instrument", []string{"violin"}},
	} {
		nb, err := s.Neighbours(tc.word, 10, 0.3)
		if err != nil {
			t.Fatal(err)
		}
		var words []string
		for i, n := range nb {
			words = append(words, n.Word)
			if i > 0 && n.Cosine > nb[i-1].Cosine || n.Cosine < 0.3 || n.Word == tc.word {
				t.Fatalf("%s: %v: want distinct words, nearest first, at 0.3 at least", tc.word, nb)
			}
		}
		for _, w := range tc.want {
			if !slices.Contains(words, w) {
				t.Errorf("%s: %v; want %s among them", tc.word, words, w)
			}
		}
	}
	for _, w := range []string{"lisinopril", "Maria", "xqzv", ""} { // pieces, a capital, nonsense
		if nb, err := s.Neighbours(w, 5, 0); err != nil || len(nb) != 0 {
			t.Errorf("%q: %v, %v; want none", w, nb, err)
		}
	}
	if nb, _ := s.Neighbours("pets", 3, 0); len(nb) != 3 {
		t.Errorf("at most 3: %v", nb)
	}
	words, err := minilm.NearWords("pets")
	if err != nil || len(words) == 0 || len(words) > minilm.NearWordsMax {
		t.Fatalf("NearWords(pets) = %v, %v", words, err)
	}
}

// BenchmarkNearWords: one word's neighbours (not cached), the table built.
func BenchmarkNearWords(b *testing.B) {
	if _, err := minilm.NearWords("pets"); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := (&minilm.Static{}).Neighbours("desserts", minilm.NearWordsMax, minilm.NearWordsCosine); err != nil {
			b.Fatal(err)
		}
	}
}
