package extract

import (
	"strings"
	"testing"
)

// TestSameObject: objects are the same when equal or when one's words are
// a run of the other's, never a part of a word — as " "+a+" " holding
// " "+b+" " (or the other way) says, which hasWords checks without
// building the strings.
func TestSameObject(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"sushi", "sushi anymore", true},
		{"Sushi", "sushi", true},
		{"tea", "steak", false},
		{"tea", "green tea", true},
		{"green tea", "tea green", false},
		{"the dog", "dog", true},
		{"dogs", "dog", false},
		{"a b a", "a", true},
		{"ba a", "a", true},
		{"ab", "b", false},
		{"", "tea", false},
		{"tea", "", false},
		{"new york city", "york", true},
		{"new york city", "york cit", false},
	} {
		if got := sameObject(tc.a, tc.b); got != tc.want {
			t.Errorf("sameObject(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
		a, b := normalize(tc.a), normalize(tc.b)
		spaced := a != "" && b != "" && (strings.Contains(" "+a+" ", " "+b+" ") || strings.Contains(" "+b+" ", " "+a+" "))
		if got := sameNormalized(a, b); got != spaced {
			t.Errorf("sameNormalized(%q, %q) = %v, the spaced strings say %v", a, b, got, spaced)
		}
	}
}
