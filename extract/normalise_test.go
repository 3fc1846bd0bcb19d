package extract_test

import "testing"

// TestHeuristic_Normalise: the memory's words (normalise.go): the
// abbreviations of chat written out ("wfh", "4x", "feb"), and "US" is
// not "us".
func TestHeuristic_Normalise(t *testing.T) {
	for _, tt := range []struct {
		say  string
		want []want
	}{
		{"I'm a US citizen", []want{w("User is a US citizen.", "object=be a us citizen")}},
		// Abbreviations of chat are written out.
		{"wfh on fridays", []want{w("User works from home on Fridays.", "object=work from home on fridays")}},
		{"i swim 4x a week", []want{w("User swims 4 times a week.", "object=swim 4x a week")}},
		{"we're getting the roof fixed in feb", []want{w("User is getting the roof fixed in February.", "object=get the roof fixed in feb")}},
	} {
		checkHeuristic(t, tt.say, tt.want)
	}
}
