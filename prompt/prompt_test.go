package prompt_test

import (
	"math"
	"testing"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/prompt"
)

func TestDecodeJSON(t *testing.T) {
	type answer struct {
		N *int `json:"n"`
	}
	for _, tt := range []struct {
		content string
		want    int // -1: malformed
	}{
		{`{"n": 3}`, 3},
		{"```json\n{\"n\": 4}\n```", 4},
		{"  {\"n\": 5}\n", 5},
		{`{"n": "3"}`, -1},
		{`{"n": 3} {"n": 4}`, -1},
		{`[{"n": 3}]`, -1},
		{`not json`, -1},
		{`{"n": 3`, -1},
	} {
		var a answer
		err := prompt.DecodeJSON(tt.content, &a)
		if tt.want < 0 {
			if agentmem.ErrorCode(err) != agentmem.EUNAVAILABLE {
				t.Errorf("DecodeJSON(%q) = %v, want EUNAVAILABLE", tt.content, err)
			}
			continue
		}
		if err != nil || a.N == nil || *a.N != tt.want {
			t.Errorf("DecodeJSON(%q) = %+v, %v; want n=%d", tt.content, a, err, tt.want)
		}
	}
}

func TestCut(t *testing.T) {
	if got := prompt.Cut("héllo", 10); got != "héllo" {
		t.Errorf("Cut of a short text = %q", got)
	}
	if got := prompt.Cut("héllo", 2); got != "h …" { // not inside é
		t.Errorf("Cut(héllo, 2) = %q, want %q", got, "h …")
	}
	if got := prompt.Truncate("héllo", 2); got != "h" {
		t.Errorf("Truncate(héllo, 2) = %q, want %q", got, "h")
	}
}

func TestClamp(t *testing.T) {
	for _, tt := range []struct{ in, want float64 }{{-1, 0}, {0.4, 0.4}, {2, 1}, {math.NaN(), 0}} {
		if got := prompt.Clamp(tt.in); got != tt.want {
			t.Errorf("Clamp(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
}
