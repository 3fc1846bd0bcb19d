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
