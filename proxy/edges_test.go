package proxy_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
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
		t.Fatalf("%d answer is not an OpenAI error: %s", res.StatusCode, b)
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
