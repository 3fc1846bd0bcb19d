// Package tokens counts tokens exactly as OpenAI's models do, with the
// offline BPE tables of github.com/tiktoken-go/tokenizer.
package tokens

import (
	"strings"
	"sync"

	"github.com/agentmem/agentmem"
	"github.com/tiktoken-go/tokenizer"
)

// Counter counts tokens with one BPE encoding. It is safe for concurrent
// use.
type Counter struct {
	codec tokenizer.Codec
}

var _ agentmem.TokenCounter = (*Counter)(nil)

// Encoding returns the name of the counter's encoding, e.g. "o200k_base".
func (c *Counter) Encoding() string { return c.codec.GetName() }

// CountTokens implements agentmem.TokenCounter. Invalid UTF-8 (which the
// store rejects before counting) is counted as replacement characters.
func (c *Counter) CountTokens(text string) int {
	if text == "" {
		return 0
	}
	n, err := c.codec.Count(text)
	if err != nil {
		return agentmem.EstimateTokens{}.CountTokens(text)
	}
	return n
}

var encodings sync.Map // tokenizer.Encoding → *Counter

// get returns the shared counter of an encoding; the tables are built once.
func get(enc tokenizer.Encoding) *Counter {
	if c, ok := encodings.Load(enc); ok {
		return c.(*Counter)
	}
	codec, err := tokenizer.Get(enc)
	if err != nil { // only for an encoding this package does not name
		panic("tokens: " + err.Error())
	}
	c, _ := encodings.LoadOrStore(enc, &Counter{codec: codec})
	return c.(*Counter)
}

// Default returns the o200k_base counter (gpt-4o, gpt-4.1, o-series,
// gpt-5), used to count messages at write.
func Default() *Counter { return get(tokenizer.O200kBase) }

// ForModel returns the counter of a model's encoding and whether the count
// is exact: o200k_base for gpt-4o, gpt-4.1, gpt-5 and the o-series,
// cl100k_base for gpt-4 and gpt-3.5; for any other model the o200k_base
// count is an estimate and exact is false.
func ForModel(model string) (c *Counter, exact bool) {
	m := strings.ToLower(model)
	if i := strings.LastIndexByte(m, '/'); i >= 0 { // "openai/gpt-4o"
		m = m[i+1:]
	}
	switch {
	case strings.HasPrefix(m, "gpt-4o"), strings.HasPrefix(m, "gpt-4.1"), strings.HasPrefix(m, "gpt-4.5"),
		strings.HasPrefix(m, "gpt-5"), strings.HasPrefix(m, "chatgpt-4o"),
		strings.HasPrefix(m, "o1"), strings.HasPrefix(m, "o3"), strings.HasPrefix(m, "o4"):
		return get(tokenizer.O200kBase), true
	case strings.HasPrefix(m, "gpt-4"), strings.HasPrefix(m, "gpt-3.5"), strings.HasPrefix(m, "gpt-35"),
		strings.HasPrefix(m, "text-embedding-ada-002"), strings.HasPrefix(m, "text-embedding-3"):
		return get(tokenizer.Cl100kBase), true
	}
	return get(tokenizer.O200kBase), false
}
