package proxy_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/httpapi"
	"github.com/agentmem/agentmem/llm/llmtest"
	"github.com/agentmem/agentmem/proxy"
	"github.com/google/go-cmp/cmp"
)

// openAIError reads an answer in OpenAI's error shape.
func openAIError(t testing.TB, res *http.Response) (typ, code, param, message string) {
	t.Helper()
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	var body struct {
		Error *struct {
			Message string  `json:"message"`
			Type    string  `json:"type"`
			Param   *string `json:"param"`
			Code    *string `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(b, &body); err != nil || body.Error == nil {
		t.Fatalf("%d answer is not an OpenAI error: %.300s", res.StatusCode, b)
	}
	e := body.Error
	if e.Param != nil {
		param = *e.Param
	}
	if e.Code != nil {
		code = *e.Code
	}
	return e.Type, code, param, e.Message
}

// TestModels_PlainIDOnly: GET /openai/v1/models/{model} takes a plain
// model ID; one that could name another path or a query upstream is a
// 400 in OpenAI's shape and never reaches the upstream, however it is
// encoded.
func TestModels_PlainIDOnly(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, id := range []string{
		"..%2F..%2Fv1%2Ffiles%3Fpurpose%3Dfine-tune",
		"..%2f..%2fv1%2ffiles",
		"%2E%2E",
		"a..b",
		"gpt-4o%3Fpurpose%3Dx",
		"gpt-4o%23frag",
		"gpt-4o%252F..",
		"a%5C..%5Cb",
		"a%2Fb",
		"gpt%00x",
		"gpt%0Ax",
		"gpt%7Fx",
		"%20", // a blank ID: empty once trimmed is no ID
	} {
		res, err := http.Get(e.srv.URL + "/openai/v1/models/" + id)
		if err != nil {
			t.Fatal(err)
		}
		if res.StatusCode != http.StatusBadRequest {
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			t.Errorf("%s: %d %s, want 400", id, res.StatusCode, b)
			continue
		}
		typ, _, param, msg := openAIError(t, res)
		if typ != "invalid_request_error" || param != "model" || !strings.Contains(msg, "model ID") {
			t.Errorf("%s: type %q, param %q, message %q", id, typ, param, msg)
		}
	}
	// A literal .. segment is refused before the proxy (httpapi's clean
	// path check, in the REST API's error shape).
	if res, err := http.Get(e.srv.URL + "/openai/v1/models/.."); err != nil || res.StatusCode != http.StatusBadRequest {
		t.Errorf("literal ..: %v %v", res.StatusCode, err)
	}
	for _, r := range e.fake.Requests() {
		t.Errorf("the upstream received %s %s?%s", r.Method, r.Path, r.Query.Encode())
	}

	// Plain IDs pass, escaped as one path segment.
	for _, id := range []string{"gpt-4o", "llama3:8b", "ft:gpt-4o-mini:acme:ours:AbC123", "model%20with%20space"} {
		res, err := http.Get(e.srv.URL + "/openai/v1/models/" + id)
		if err != nil {
			t.Fatal(err)
		}
		var m struct{ ID string }
		json.NewDecoder(res.Body).Decode(&m)
		res.Body.Close()
		if want := strings.ReplaceAll(id, "%20", " "); res.StatusCode != 200 || m.ID != want {
			t.Errorf("%s: %d, model %q, want %q", id, res.StatusCode, m.ID, want)
		}
	}
	for _, r := range e.fake.Requests() {
		if !strings.HasPrefix(r.Path, "/v1/models/") || strings.Count(r.Path, "/") != 3 || len(r.Query) != 0 {
			t.Errorf("the upstream received %s %s?%s", r.Method, r.Path, r.Query.Encode())
		}
	}
}

// TestJSONBodiesOnly: the model routes take JSON bodies only, as the
// rest of the API does: text/plain, a form, or no Content-Type is 415 in
// OpenAI's shape, nothing is stored and the upstream is not called.
func TestJSONBodiesOnly(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	chat := `{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}],"metadata":{"thread_id":"typed"}}`
	resp := `{"model":"gpt-4o","input":"hi","metadata":{"thread_id":"typed"}}`
	for _, c := range []struct{ path, ct, body string }{
		{"/openai/v1/chat/completions", "text/plain", chat},
		{"/openai/v1/chat/completions", "text/plain; charset=utf-8", chat},
		{"/openai/v1/chat/completions", "application/x-www-form-urlencoded", chat},
		{"/openai/v1/chat/completions", "multipart/form-data; boundary=x", chat},
		{"/openai/v1/chat/completions", "", chat},
		{"/openai/v1/chat/completions", "application/json; charset=latin1", chat},
		{"/openai/v1/chat/completions", "not a type", chat},
		{"/openai/v1/responses", "text/plain", resp},
		{"/openai/v1/responses", "application/x-www-form-urlencoded", resp},
	} {
		req, _ := http.NewRequest("POST", e.srv.URL+c.path, strings.NewReader(c.body))
		if c.ct != "" {
			req.Header.Set("Content-Type", c.ct)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if res.StatusCode != http.StatusUnsupportedMediaType {
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			t.Errorf("%s as %q: %d %s, want 415", c.path, c.ct, res.StatusCode, b)
			continue
		}
		if typ, _, _, msg := openAIError(t, res); typ != "invalid_request_error" || !strings.Contains(msg, "application/json") {
			t.Errorf("%s as %q: type %q, message %q", c.path, c.ct, typ, msg)
		}
	}
	if n := len(e.fake.Requests()); n != 0 {
		t.Errorf("the upstream was called %d times", n)
	}
	if _, err := e.mem.FindThreadByID(ctx, "local-user", "typed"); err == nil {
		t.Error("a refused request created its thread")
	}
	// JSON, and a +json type, pass.
	for _, ct := range []string{"application/json", "application/json; charset=utf-8", "application/vnd.api+json"} {
		res, err := http.Post(e.srv.URL+"/openai/v1/chat/completions", ct, strings.NewReader(chat))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 200 {
			t.Errorf("%q: %d", ct, res.StatusCode)
		}
	}
}

// TestUpstreamErrors_Hidden: what identifies the upstream (its error
// text, which names the operator's organisation, its address and its
// Openai-Organization, Openai-Project and Set-Cookie headers) never
// reaches the client: an error keeps its status, Retry-After, and its
// type and code when they are plain words; the message is the proxy's.
func TestUpstreamErrors_Hidden(t *testing.T) {
	e := newEnv(t, func(o *envOptions) { o.proxy.Timeout = 300 * time.Millisecond })
	secret := http.Header{
		"Openai-Organization": {"org-SECRET"}, "Openai-Project": {"proj_SECRET"}, "Set-Cookie": {"__cf_bm=SECRET; path=/"},
		"Openai-Processing-Ms": {"12"}, "X-Ratelimit-Remaining-Requests": {"99"}, "Server": {"cloudflare"}, "Cf-Ray": {"SECRET-LIS"},
	}
	leaked := func(where string, h http.Header, body string) {
		t.Helper()
		for _, s := range []string{"SECRET", "Rate limit reached", "help.openai.com", "Scripted failure", strings.TrimPrefix(e.fake.URL, "http://")} {
			if strings.Contains(body, s) {
				t.Errorf("%s: the body holds %q: %s", where, s, body)
			}
		}
		for _, k := range []string{"Openai-Organization", "Openai-Project", "Set-Cookie", "Cf-Ray"} {
			if h.Get(k) != "" {
				t.Errorf("%s: header %s: %q passed on", where, k, h.Get(k))
			}
		}
	}
	post := func(body string) (*http.Response, string) {
		t.Helper()
		res, err := http.Post(e.srv.URL+"/openai/v1/chat/completions", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		return res, string(b)
	}
	chat := `{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]}`
	for _, c := range []struct {
		name                    string
		reply                   llmtest.Reply
		status                  int
		typ, code, param, retry string
	}{
		{"OpenAI's rate limit", llmtest.Reply{Status: 429, RetryAfter: "7", Header: secret,
			Body: `{"error":{"message":"Rate limit reached for gpt-4o in organization org-SECRET on tokens per min (TPM). Visit help.openai.com.","type":"tokens","param":null,"code":"rate_limit_exceeded"}}`},
			429, "tokens", "rate_limit_exceeded", "", "7"},
		{"a bad parameter", llmtest.Reply{Status: 400, Header: secret,
			Body: `{"error":{"message":"Invalid value for 'temperature' in org-SECRET","type":"invalid_request_error","param":"temperature","code":"invalid_value"}}`},
			400, "invalid_request_error", "invalid_value", "temperature", ""},
		{"identifiers in type and code", llmtest.Reply{Status: 403, Header: secret,
			Body: `{"error":{"message":"no","type":"org-SECRET","param":"x y SECRET","code":"proj_SECRET1"}}`},
			403, "upstream_error", "upstream_error", "", ""},
		{"an HTML error page", llmtest.Reply{Status: 502, Header: secret, ContentType: "text/html", Body: "<html>Bad gateway at SECRET</html>"},
			502, "upstream_error", "upstream_error", "", ""},
		{"the fake's own error", llmtest.Fail(500), 500, "server_error", "server_error", "", ""},
		{"no answer", llmtest.Hang(), 504, "server_error", "upstream_timeout", "", ""},
	} {
		e.fake.Push(c.reply)
		res, body := post(chat)
		leaked(c.name, res.Header, body)
		if res.StatusCode != c.status || res.Header.Get("Retry-After") != c.retry {
			t.Errorf("%s: %d (Retry-After %q), want %d (%q)", c.name, res.StatusCode, res.Header.Get("Retry-After"), c.status, c.retry)
			continue
		}
		res.Body = io.NopCloser(strings.NewReader(body))
		typ, code, param, msg := openAIError(t, res)
		if typ != c.typ || code != c.code || param != c.param || !strings.Contains(msg, "model server") {
			t.Errorf("%s: type %q, code %q, param %q, message %q; want %q, %q, %q", c.name, typ, code, param, msg, c.typ, c.code, c.param)
		}
	}

	// A success passes the upstream's timing and rate limits, not who it is.
	e.fake.Push(llmtest.Reply{Content: "hello", Header: secret})
	res, body := post(chat)
	leaked("an answer", res.Header, body)
	if res.StatusCode != 200 || res.Header.Get("Openai-Processing-Ms") != "12" || res.Header.Get("X-Ratelimit-Remaining-Requests") != "99" {
		t.Errorf("an answer: %d, headers %v", res.StatusCode, res.Header)
	}
	e.fake.Push(llmtest.Reply{Content: "hello", Header: secret})
	res, body = post(`{"model":"gpt-4o","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	leaked("a stream", res.Header, body)

	// An unreachable upstream is not named either.
	down := newEnv(t, func(o *envOptions) { o.noUp = true })
	down.srv.Config.Handler = httpapi.NewHandler(nil, down.mem.Service, httpapi.Options{Proxy: proxy.NewHandler(nil, down.mem.Service, proxy.Options{
		Upstream: &proxy.Upstream{BaseURL: "http://127.0.0.1:1/v1"},
	})})
	res, err := http.Post(down.srv.URL+"/openai/v1/chat/completions", "application/json", strings.NewReader(chat))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, msg := openAIError(t, res); res.StatusCode != 502 || strings.Contains(msg, "127.0.0.1") {
		t.Errorf("unreachable: %d %q", res.StatusCode, msg)
	}
}

// TestAnswerTooLarge: an answer read whole (not streamed) larger than
// MaxAnswerBytes is a 502 saying so, not a process holding all of it; a
// streamed answer's line over it ends the stream with an error event.
// The user's turn is stored all the same.
func TestAnswerTooLarge(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(o *envOptions) { o.proxy.MaxAnswerBytes = 64 << 10 })
	big := strings.Repeat("many words ", 10<<10) // 110 KiB
	for _, c := range []struct{ path, body string }{
		{"/openai/v1/chat/completions", `{"model":"gpt-4o","messages":[{"role":"user","content":"say a lot"}],"metadata":{"thread_id":"big"}}`},
		{"/openai/v1/responses", `{"model":"gpt-4o","input":"say a lot again","metadata":{"thread_id":"big"}}`},
	} {
		e.fake.Push(llmtest.Text(big))
		res, err := http.Post(e.srv.URL+c.path, "application/json", strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		typ, code, _, msg := openAIError(t, res)
		if res.StatusCode != 502 || typ != "server_error" || code != "upstream_answer_too_large" || !strings.Contains(msg, "65536 bytes") {
			t.Errorf("%s: %d %q %q %q", c.path, res.StatusCode, typ, code, msg)
		}
	}
	if diff := cmp.Diff([]string{"user: say a lot", "user: say a lot again"}, e.thread(t, proxy.DefaultLocalUser, "big")); diff != "" {
		t.Errorf("stored (-want +got):\n%s", diff)
	}

	// One streamed event longer than the bound.
	e.fake.Push(llmtest.Text(strings.Repeat("x", 100<<10)))
	res, err := http.Post(e.srv.URL+"/openai/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"gpt-4o","stream":true,"messages":[{"role":"user","content":"one long word"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.Contains(string(b), `"code":"upstream_answer_too_large"`) || strings.Contains(string(b), "xxxx") || strings.Contains(string(b), "[DONE]") {
		t.Errorf("stream with a long line: %.300s", b)
	}
}

// TestAnswerOverMessageLimit: an answer longer than the store's message
// bound is stored cut to it, marked "truncated" with its
// "original_bytes", never silently dropped: the client of an answer that
// is not streamed is told by X-Agentmem-Answer-Truncated, and /metrics
// counts it, for both APIs, streamed and not.
func TestAnswerOverMessageLimit(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	word := strings.Repeat("é", 500) + " " // 1001 bytes, a 2-byte character to cut
	big := strings.Repeat(word, 1500)      // 1.43 MiB
	for _, c := range []struct {
		name, path, body string
		streamed         bool
	}{
		{"chat", "/openai/v1/chat/completions", `{"model":"gpt-4o","messages":[{"role":"user","content":"q1"}]}`, false},
		{"chat streamed", "/openai/v1/chat/completions", `{"model":"gpt-4o","stream":true,"messages":[{"role":"user","content":"q2"}]}`, true},
		{"responses", "/openai/v1/responses", `{"model":"gpt-4o","input":"q3"}`, false},
		{"responses streamed", "/openai/v1/responses", `{"model":"gpt-4o","stream":true,"input":"q4"}`, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			thread := strings.ReplaceAll(c.name, " ", "-")
			e.fake.Push(llmtest.Text(big))
			req, _ := http.NewRequest("POST", e.srv.URL+c.path, strings.NewReader(c.body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set(proxy.HeaderThread, thread)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != 200 || len(b) < len(big) {
				t.Fatalf("%d, %d bytes", res.StatusCode, len(b))
			}
			if got := res.Header.Get(proxy.HeaderAnswerTruncated); !c.streamed && got != "true" {
				t.Errorf("%s: %q", proxy.HeaderAnswerTruncated, got)
			}
			m := e.lastMessage(t, proxy.DefaultLocalUser, thread)
			var md struct {
				Truncated     bool `json:"truncated"`
				OriginalBytes int  `json:"original_bytes"`
			}
			json.Unmarshal(m.Metadata, &md)
			if m.Role != "assistant" || !strings.HasPrefix(big, m.Content) || m.Size() > agentmem.DefaultMaxMessageBytes ||
				len(m.Content) < agentmem.DefaultMaxMessageBytes-1024 || !md.Truncated || md.OriginalBytes != len(big) {
				t.Errorf("stored %s of %d bytes (%d in all), metadata %s", m.Role, len(m.Content), m.Size(), m.Metadata)
			}
		})
	}
	res, err := http.Get(e.srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	for _, want := range []string{`agentmem_proxy_answers_total{api="chat",outcome="truncated"} 2`, `agentmem_proxy_answers_total{api="responses",outcome="truncated"} 2`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// TestUpstreamErrors_InAnswers: an error the upstream reports inside a
// 200 answer (an error event of a stream, a failed response) reaches the
// client with its type and code, and the proxy's message, not the
// upstream's.
func TestUpstreamErrors_InAnswers(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	sse := func(events ...string) llmtest.Reply {
		return llmtest.Reply{ContentType: "text/event-stream", Body: strings.Join(events, "\n\n") + "\n\n"}
	}
	for _, c := range []struct {
		name, path, body string
		reply            llmtest.Reply
		want             []string
	}{
		{"chat stream", "/openai/v1/chat/completions", `{"model":"gpt-4o","stream":true,"messages":[{"role":"user","content":"hi"}]}`,
			sse(`data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Hel"}}]}`,
				`data: {"error":{"message":"The server had an error in org-SECRET","type":"server_error","param":null,"code":null}}`),
			[]string{`"Hel"`, `"type":"server_error"`, "model server"}},
		{"responses stream", "/openai/v1/responses", `{"model":"gpt-4o","stream":true,"input":"hi"}`,
			sse(`event: response.created`+"\n"+`data: {"type":"response.created","response":{"id":"resp_1","status":"in_progress","output":[]}}`,
				`event: error`+"\n"+`data: {"type":"error","code":"server_error","message":"boom in org-SECRET","param":null,"sequence_number":1}`,
				`event: response.failed`+"\n"+`data: {"type":"response.failed","response":{"id":"resp_1","status":"failed","error":{"code":"server_error","message":"org-SECRET failed"},"output":[]}}`),
			[]string{`"code":"server_error"`, `"status":"failed"`, "model server"}},
		{"failed response", "/openai/v1/responses", `{"model":"gpt-4o","input":"hi"}`,
			llmtest.Reply{Body: `{"id":"resp_2","object":"response","status":"failed","error":{"code":"server_error","message":"org-SECRET failed"},"output":[]}`},
			[]string{`"code":"server_error"`, `"status":"failed"`, "model server"}},
	} {
		e.fake.Push(c.reply)
		res, err := http.Post(e.srv.URL+c.path, "application/json", strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if strings.Contains(string(b), "SECRET") {
			t.Errorf("%s: the upstream's message passed on: %s", c.name, b)
		}
		for _, w := range c.want {
			if !strings.Contains(string(b), w) {
				t.Errorf("%s: no %s in %s", c.name, w, b)
			}
		}
	}
}
