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

// TestHeuristic_Unfinished: a clause the rules cut short is no memory
// ("User's mother lives.", "User will book.", "User is parking that."),
// but a noun that is also a verb, an acronym and a statement that goes on
// are kept; an adverb before a verb is no verb ("nearly died").
func TestHeuristic_Unfinished(t *testing.T) {
	for _, tt := range []struct {
		say  string
		want []want
	}{
		{"We have no idea about the wedding yet, maybe Lyon where my mother lives.", nil},
		{"Thanks, I will book.", nil},
		{"the market thing, I'm parking that.", nil},
		{"I pay £950 rent.", []want{w("User pays £950 rent.", "object=pay £950 rent")}},
		{"I work in IT.", []want{w("User works in IT.", "slot=workplace", "object=it")}},
		{"I sell most of them at the market", []want{w("User sells most of them at the market.", "object=sell most of them at the market")}},
		{"i nearly died lol", []want{w("User nearly died.", "object=nearly died")}},
	} {
		checkHeuristic(t, tt.say, tt.want)
	}
}
