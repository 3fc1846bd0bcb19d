package proxy_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/agentmem/agentmem/proxy"
)

// TestOddInputs: requests an application may well send are answered, and
// what they carry is stored as far as it is text.
func TestOddInputs(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, c := range []struct {
		name, body string
		status     int
	}{
		{"image only", `{"model":"gpt-4o","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA"}}]}]}`, 200},
		{"text and image", `{"model":"gpt-4o","messages":[{"role":"user","content":[{"type":"text","text":"What is in it?"},{"type":"image_url","image_url":{"url":"https://example.com/x.png"}}]}]}`, 200},
		{"system only", `{"model":"gpt-4o","messages":[{"role":"system","content":"You are terse."}]}`, 200},
		{"n=2 and usage", `{"model":"gpt-4o","n":2,"stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`, 200},
		{"unknown model", `{"model":"my-local-llama:8b","messages":[{"role":"user","content":"hi"}]}`, 200},
		{"null content", `{"model":"gpt-4o","messages":[{"role":"user","content":null}]}`, 200},
		{"number content", `{"model":"gpt-4o","messages":[{"role":"user","content":5}]}`, 400},
		{"messages object", `{"model":"gpt-4o","messages":{"role":"user"}}`, 400},
		{"tool without id", `{"model":"gpt-4o","messages":[{"role":"tool","content":"x"}]}`, 400},
		{"huge budget model", `{"model":"gpt-4.1","max_tokens":4000,"messages":[{"role":"user","content":"hi"}]}`, 200},
	} {
		res, err := http.Post(e.srv.URL+"/openai/v1/chat/completions", "application/json", strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != c.status {
			t.Errorf("%s: %d %s", c.name, res.StatusCode, b)
		}
		if c.status == 200 && res.Header.Get(proxy.HeaderThreadOut) == "" {
			t.Errorf("%s: no thread header", c.name)
		}
		if c.name == "huge budget model" && res.Header.Get(proxy.HeaderBudgetTokens) != "1043576" {
			t.Errorf("gpt-4.1 budget %q", res.Header.Get(proxy.HeaderBudgetTokens))
		}
	}
}
