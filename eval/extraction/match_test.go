package extraction_test

import (
	"testing"

	"github.com/agentmem/agentmem/eval/extraction"
	"github.com/google/go-cmp/cmp"
)

func TestMatches(t *testing.T) {
	tests := []struct {
		expected, extracted string
		want                bool
	}{
		// The same fact in other words.
		{"User lives in Lisbon.", "User lives in Lisbon", true},
		{"User takes sertraline 50 mg.", "User takes sertraline 50mg.", true},
		{"User's grandmother is 92 years old.", "User's nan is 92.", true},
		{"User was raised by their stepfather.", "User's stepdad raised them.", true},
		{"User takes sertraline 50 mg.", "User takes sertraline 20mg.", false},
		{"User lives in Lisbon.", "user LIVES in lisbon!", true},
		{"User's sister Ana lives in Porto.", "User's sister, Ana, lives in Porto.", true},
		{"User's sister Ana lives in Porto.", "User has a sister, Ana, who lives in Porto.", true},
		{"User has two children, Leo and Mia.", "User has 2 kids: Leo and Mia.", true},
		{"User cannot eat peanuts.", "User can't eat peanuts.", true},
		{"User does not like horror movies.", "User doesn't like horror movies.", true},
		{"User moved from Berlin to Lisbon last year.", "User moved from Berlin to Lisbon (last year).", true},
		{"User is 34 years old.", "User is 34.", true},
		{"User works as a nurse.", "User is working as a nurse.", true},
		{"User studies computer science at MIT.", "User is studying computer science at MIT.", true},
		{"User's daughter Mia starts school in September.", "User's daughter Mia starts school in September.", true},
		// A different fact.
		{"User lives in Lisbon.", "User lives in Porto.", false},
		{"User likes coffee.", "User does not like coffee.", false},
		{"User does not drink alcohol.", "User drinks alcohol.", false},
		{"User's daughter Mia is 6.", "User's daughter Zoe is 6.", false},
		{"User is 34 years old.", "User is 43 years old.", false},
		{"User's daughter Mia starts school in September.", "User's daughter Mia starts school.", false}, // the month is a key term
		{"User works as a nurse.", "User likes sushi.", false},
		{"User is allergic to peanuts.", "User is allergic.", false},
		// One memory that strings several facts together passes for none.
		{"User lives in Oslo.", "User lives in Oslo, works at Equinor and cycles to work even in winter.", false},
	}
	for _, tt := range tests {
		if _, got := extraction.Matches(tt.expected, tt.extracted); got != tt.want {
			t.Errorf("Matches(%q, %q)=%v, want %v", tt.expected, tt.extracted, got, tt.want)
		}
	}
}

func TestMatch(t *testing.T) {
	t.Run("OneToOne", func(t *testing.T) {
		// Two expected memories, one extracted that could match either:
		// it counts once, for the better.
		got := extraction.Match([]string{"User has a dog named Rex.", "User has a dog."}, []string{"User has a dog named Rex."})
		if len(got) != 1 || got[0].Expected != 0 || got[0].Extracted != 0 {
			t.Fatalf("Match=%+v, want the first expected with the extracted", got)
		}
	})
	t.Run("BestPairs", func(t *testing.T) {
		got := extraction.Match(
			[]string{"User lives in Oslo.", "User works at Equinor.", "User cycles to work even in winter."},
			[]string{"User works at Equinor.", "User likes skiing.", "User lives in Oslo."})
		var pairs [][2]int
		for _, p := range got {
			pairs = append(pairs, [2]int{p.Expected, p.Extracted})
		}
		if diff := cmp.Diff([][2]int{{0, 2}, {1, 0}}, pairs); diff != "" {
			t.Fatalf("pairs mismatch (-want +got):\n%s", diff)
		}
	})
	t.Run("Empty", func(t *testing.T) {
		if got := extraction.Match([]string{"User lives in Oslo."}, nil); len(got) != 0 {
			t.Fatalf("Match=%+v, want none", got)
		}
	})
}

func TestMatches_Liking(t *testing.T) {
	tests := []struct {
		expected, extracted string
		want                bool
	}{
		{"User loves sushi.", "User likes sushi.", true},
		{"User hates cilantro.", "User does not like cilantro.", true},
		{"User cannot stand loud restaurants.", "User doesn't like loud restaurants.", true},
		{"User's wife is named Julia.", "User's wife is Julia.", true},
		{"User hates cilantro.", "User likes cilantro.", false},
		{"User prefers tea over coffee.", "User likes tea.", false}, // what it is preferred to is part of the fact
		{"User has a dog named Biscuit.", "User has a dog.", false},
	}
	for _, tt := range tests {
		if _, got := extraction.Matches(tt.expected, tt.extracted); got != tt.want {
			t.Errorf("Matches(%q, %q)=%v, want %v", tt.expected, tt.extracted, got, tt.want)
		}
	}
}

func TestMatches_Numbers(t *testing.T) {
	tests := []struct {
		expected, extracted string
		want                bool
	}{
		{"User was born on October 3, 1991.", "User was born on October 3rd 1991.", true},
		{"User will be in Rome from June 3 to June 10.", "User will be in Rome from June 3rd to June 10th.", true},
		{"User has three grandchildren.", "User has 3 grandkids.", true},
		{"User was born on October 3, 1991.", "User was born on October 13, 1991.", false},
	}
	for _, tt := range tests {
		if _, got := extraction.Matches(tt.expected, tt.extracted); got != tt.want {
			t.Errorf("Matches(%q, %q)=%v, want %v", tt.expected, tt.extracted, got, tt.want)
		}
	}
}
