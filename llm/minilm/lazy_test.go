package minilm_test

import (
	"testing"

	"github.com/agentmem/agentmem/llm/minilm"
)

// TestLazy checks that nothing is decoded until a first Embed. It must run
// before any other test of the package embeds: go test runs the files in
// name order, and gemm_test.go's tests do not embed; should that change,
// it skips and says why.
func TestLazy(t *testing.T) {
	if model, static := minilm.Loaded(); model || static {
		t.Skip("another test embedded first (run alone: go test -run TestLazy)")
	}
	_ = minilm.New().Space()
	_ = minilm.NewStatic().Space()
	if model, static := minilm.Loaded(); model || static {
		t.Fatalf("decoded without an Embed: model %v, static %v", model, static)
	}
	MustEmbed(t, minilm.NewStatic(), "hi")
	if model, static := minilm.Loaded(); model || !static {
		t.Fatalf("after Static.Embed: model %v (want false), static %v (want true)", model, static)
	}
	MustEmbed(t, minilm.New(), "hi")
	if model, _ := minilm.Loaded(); !model {
		t.Fatal("after Embed: the model is not decoded")
	}
}

// FuzzTokenize checks that any text tokenizes to [CLS] … [SEP] of at most
// MaxTokens valid ids.
func FuzzTokenize(f *testing.F) {
	for _, s := range []string{"", "hi", "[MASK] x", "東京\u0301", "\xff\xfe", "a\u0000b", "[SEP"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ids := minilm.Tokenize(s)
		if len(ids) < 2 || len(ids) > minilm.MaxTokens || ids[0] != 101 || ids[len(ids)-1] != 102 {
			t.Fatalf("%q: ids %v", s, ids)
		}
		for _, id := range ids {
			if id < 0 || id >= 30522 {
				t.Fatalf("%q: id %d out of the vocabulary", s, id)
			}
		}
	})
}
