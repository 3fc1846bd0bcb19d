package proxy

import "strings"

// contextWindows are the context windows (input tokens) of the known
// OpenAI model families, by name prefix; the longest matching prefix wins
// ("gpt-4o-mini-2024-07-18" is gpt-4o-mini's, "gpt-4-0613" gpt-4's).
var contextWindows = map[string]int{
	"gpt-3.5-turbo":     16_385,
	"gpt-4":             8_192,
	"gpt-4-32k":         32_768,
	"gpt-4-turbo":       128_000,
	"gpt-4-1106":        128_000,
	"gpt-4-0125":        128_000,
	"gpt-4o":            128_000,
	"gpt-4o-mini":       128_000,
	"chatgpt-4o":        128_000,
	"gpt-4.1":           1_047_576,
	"gpt-4.5":           128_000,
	"gpt-5":             272_000, // 400K in all, of which 128K are for the answer
	"o1":                200_000,
	"o1-mini":           128_000,
	"o3":                200_000,
	"o3-mini":           200_000,
	"o4-mini":           200_000,
	"gpt-oss":           131_072,
	"gpt-4o-realtime":   128_000,
	"gpt-4o-search":     128_000,
	"gpt-4o-audio":      128_000,
	"gpt-4o-transcribe": 16_000,
}

// DefaultAnswerTokens are kept free for the answer when the request does
// not set its maximum (seed 000: a 128K window less 8K).
const DefaultAnswerTokens = 8_192

// lookup returns the value of the longest key of m that is a prefix of
// model.
func lookup(m map[string]int, model string) (int, bool) {
	best, v := -1, 0
	for k, n := range m {
		if strings.HasPrefix(model, k) && len(k) > best {
			best, v = len(k), n
		}
	}
	return v, best >= 0
}

// budget returns the context budget of a request for model that leaves
// answer tokens for the answer (0: DefaultAnswerTokens): a configured
// budget as it is, else a known model's window less the answer's share
// (at most a quarter of a small window), else 0 (the server's default).
func (p *proxy) budget(model string, answer int) int {
	if n, ok := lookup(p.opt.Budgets, model); ok {
		return n
	}
	window, ok := lookup(contextWindows, model)
	if !ok {
		return 0
	}
	if answer <= 0 {
		answer = min(DefaultAnswerTokens, window/4)
	}
	return max(window-answer, window/4)
}
