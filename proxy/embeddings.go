package proxy

import (
	"encoding/json"
	"io"
	"net/http"

	"github.com/agentmem/agentmem"
)

// embeddings serves POST /openai/v1/embeddings: the request goes to the
// upstream of the chat completions, with its key, and its answer comes
// back as it is (vectors, usage, base64 or float), so that an
// application's embeddings work through the same base URL as its chat.
// Nothing is stored and no user is needed: embeddings are no one's
// memory. The request is checked only as far as the proxy must (a JSON
// object, a model, an input); the upstream judges the rest.
func (p *proxy) embeddings(w http.ResponseWriter, r *http.Request) (err error) {
	defer func() { p.m.request("embeddings", agentmem.MemoryOff, err) }()
	noWriteDeadline(w) // a large batch may take longer than any REST answer: the upstream's timeout bounds it
	body, err := p.readBody(r)
	if err != nil {
		return err
	}
	model, err := str(body, "model")
	if err != nil {
		return err
	}
	if model == "" {
		return invalid("model", "model is required.")
	}
	if err := checkEmbeddingInput(body["input"]); err != nil {
		return err
	}
	x, err := p.send(r.Context(), http.MethodPost, "embeddings", model, rawObject(body))
	if err != nil {
		return err
	}
	defer x.Close()
	copyHeaders(w.Header(), x.res.Header)
	w.WriteHeader(x.res.StatusCode)
	if _, err := io.Copy(w, x.body); err != nil {
		// Too late for an error answer: the client sees its body cut.
		p.log.DebugContext(r.Context(), "proxy: embeddings answer broken off", "timed_out", x.timedOut.Load(), agentmem.LogErr, err)
	}
	return nil
}

// checkEmbeddingInput checks an embeddings request's input as OpenAI's
// API takes it: a string, or a non-empty array of strings, of tokens
// (integers) or of arrays of tokens; never empty.
func checkEmbeddingInput(raw json.RawMessage) error {
	var in any
	if len(raw) == 0 || json.Unmarshal(raw, &in) != nil || in == nil {
		return invalid("input", "input is required: a string, or an array of strings (or of token arrays).")
	}
	switch v := in.(type) {
	case string:
		if v == "" {
			return invalid("input", "input must not be an empty string.")
		}
		return nil
	case []any:
		if len(v) == 0 {
			return invalid("input", "input must not be an empty array.")
		}
		for i, item := range v {
			if !embeddingItem(item) {
				return invalid("input", "input[%d] must be a non-empty string, a token (an integer) or an array of tokens.", i)
			}
		}
		return nil
	}
	return invalid("input", "input must be a string or an array of strings (or of token arrays).")
}

// embeddingItem reports whether an item of an input array is one OpenAI
// takes: a non-empty string, a token, or a non-empty array of tokens.
func embeddingItem(item any) bool {
	switch v := item.(type) {
	case string:
		return v != ""
	case float64:
		return v >= 0 && v == float64(int64(v))
	case []any:
		if len(v) == 0 {
			return false
		}
		for _, tok := range v {
			if f, ok := tok.(float64); !ok || f < 0 || f != float64(int64(f)) {
				return false
			}
		}
		return true
	}
	return false
}
