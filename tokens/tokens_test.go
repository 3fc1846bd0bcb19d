package tokens_test

import (
	"testing"

	"github.com/agentmem/agentmem/tokens"
)

func TestCountTokens(t *testing.T) {
	for _, tt := range []struct {
		model     string
		text      string
		want      int
		wantExact bool
	}{
		// Counts checked against OpenAI's tiktoken.
		{"gpt-4o", "hello world", 2, true},
		{"gpt-4", "hello world", 2, true},
		{"gpt-4o-mini", "", 0, true},
		{"gpt-3.5-turbo", "tiktoken is great!", 6, true},
		{"llama3", "hello world", 2, false},
	} {
		c, exact := tokens.ForModel(tt.model)
		if got := c.CountTokens(tt.text); got != tt.want {
			t.Errorf("%s: CountTokens(%q)=%d, want %d", tt.model, tt.text, got, tt.want)
		}
		if exact != tt.wantExact {
			t.Errorf("%s: exact=%v, want %v", tt.model, exact, tt.wantExact)
		}
	}
	if got := tokens.Default().Encoding(); got != "o200k_base" {
		t.Errorf("Default().Encoding()=%q, want o200k_base", got)
	}
}
