package retrieve

import (
	"slices"
	"testing"

	"github.com/agentmem/agentmem"
)

func TestNames(t *testing.T) {
	porto := agentmem.MemorySource{Text: "User lives in Porto.", SupersededText: "User moved to Lisbon."}
	for _, tc := range []struct {
		text string
		src  agentmem.MemorySource
		want bool
	}{
		{"hey! I live in Porto and I work as a nurse.", porto, true},
		{"I walk my dog Rex by the sea.", porto, false},
		{"I live by the sea.", porto, false}, // "lives" is not "live", and short or shared words do not count
		{"porto is lovely", porto, true},
		{"I'm vegetarian and my sister lives in Berlin.", agentmem.MemorySource{Text: "User is vegetarian."}, true},
		{"My sister lives in Berlin.", agentmem.MemorySource{Text: "User lives in Oslo.", SupersededText: "User lives in Berlin."}, false},
	} {
		if got := names(tc.text, tc.src); got != tc.want {
			t.Errorf("names(%q, %q) = %v, want %v", tc.text, tc.src.Text, got, tc.want)
		}
	}
}

// TestAsUser: the user's names in a query are searched as "they"; in a
// query written with capitals, only where the name has its capital, so
// that a name that is also a word ("Joy") leaves the word alone.
func TestAsUser(t *testing.T) {
	for _, tt := range []struct {
		query, want string
		named       []string
	}{
		{"what's Joy's job now?", "what's they's job now?", []string{"Joy"}},
		{"what's joy's job now", "what's they's job now", []string{"Joy"}},
		{"What brings her joy?", "What brings her joy?", nil},
		{"Where does Sophie live?", "Where does they live?", []string{"Sophie"}},
		{"Where does Sophiea live?", "Where does Sophiea live?", nil},
	} {
		got, named := asUser(tt.query, []string{"Joy", "Sophie"})
		if got != tt.want || !slices.Equal(named, tt.named) {
			t.Errorf("asUser(%q) = %q, %q; want %q, %q", tt.query, got, named, tt.want, tt.named)
		}
	}
}
