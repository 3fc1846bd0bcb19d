package agentmem

import "testing"

func TestReplaceWord(t *testing.T) {
	for _, tt := range []struct {
		s, old, new, want string
		ok                bool
	}{
		{"User's sister lives in Porto.", "Porto", "Braga", "User's sister lives in Braga.", true},
		{"User's sister lives in porto.", "Porto", "Braga", "User's sister lives in Braga.", true},
		{"User lives in Portobello.", "Porto", "Braga", "User lives in Portobello.", false},
		{"User is 45 years old, not 145.", "45", "54", "User is 54 years old, not 145.", true},
		{"User works at New York Times.", "New York", "Boston", "User works at Boston Times.", true},
		{"", "Porto", "Braga", "", false},
		{"User lives in Porto.", "", "Braga", "User lives in Porto.", false},
	} {
		got, ok := ReplaceWord(tt.s, tt.old, tt.new)
		if got != tt.want || ok != tt.ok {
			t.Errorf("ReplaceWord(%q, %q, %q) = %q, %v; want %q, %v", tt.s, tt.old, tt.new, got, ok, tt.want, tt.ok)
		}
	}
}
