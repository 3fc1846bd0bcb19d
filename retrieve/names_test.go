package retrieve

import (
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
