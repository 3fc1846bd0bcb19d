package httpapi_test

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/agentmem/agentmem/httpapi"
	"github.com/agentmem/agentmem/metrics"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Validating returns h checking every answer against the OpenAPI document
// (httpapi.OpenAPI): the status must be one the request's operation
// documents (or its default), and a JSON body must fit the schema of that
// status; a request that h accepted (2xx) must fit the request body's
// schema. A mismatch fails tb. MustServe installs it, so that every HTTP
// test of the package checks the document against the real handler.
func Validating(tb testing.TB, h http.Handler) http.Handler {
	v := theDocument(tb)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var reqBody bytes.Buffer
		if r.Body != nil {
			r.Body = struct {
				io.Reader
				io.Closer
			}{io.TeeReader(r.Body, &reqBody), r.Body}
		}
		rec := &recorder{ResponseWriter: w}
		h.ServeHTTP(rec, r) // a panic (an aborted answer) passes on, unchecked
		if err := v.check(r, reqBody.Bytes(), rec.code(), rec.Header(), rec.body.Bytes()); err != nil {
			tb.Errorf("%s %s: the answer does not fit the OpenAPI document: %v", r.Method, r.URL.Path, err)
		}
	})
}

// recorder keeps a copy of the answer it passes on.
type recorder struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (r *recorder) code() int {
	if r.status == 0 {
		return http.StatusOK
	}
	return r.status
}

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 && code >= 200 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	r.body.Write(b)
	return r.ResponseWriter.Write(b)
}

func (r *recorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// docValidator checks requests and answers against the document.
type docValidator struct {
	doc      map[string]any // as jsonschema reads JSON
	ops      *http.ServeMux // the document's operations, by their patterns
	compiler *jsonschema.Compiler

	mu      sync.Mutex
	schemas map[string]*jsonschema.Schema // by JSON pointer into the document
	checked map[string]map[int]int        // pattern → status → answers checked
}

const docURL = "mem://agentmem/openapi.json"

var (
	docOnce sync.Once
	docV    *docValidator
	docErr  error
)

// theDocument returns the validator of the document of every route (with
// /metrics), built once.
func theDocument(tb testing.TB) *docValidator {
	tb.Helper()
	docOnce.Do(func() {
		b, err := httpapi.OpenAPI(httpapi.Options{Metrics: metrics.Handler(prometheus.NewRegistry()), Auth: httpapi.Auth{Mode: httpapi.AuthAPIKey}})
		if err == nil {
			docV, err = newDocValidator(b)
		}
		docErr = err
	})
	if docErr != nil {
		tb.Fatalf("OpenAPI document: %v", docErr)
	}
	return docV
}

// newDocValidator reads the document b. Its response objects are closed
// (additionalProperties false) for the check, so that an answer with a
// field the document does not name fails: the document leaves them open,
// for clients to tolerate fields added later.
func newDocValidator(b []byte) (*docValidator, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	v := &docValidator{doc: doc.(map[string]any), ops: http.NewServeMux(), compiler: jsonschema.NewCompiler(),
		schemas: map[string]*jsonschema.Schema{}, checked: map[string]map[int]int{}}
	for _, s := range v.doc["components"].(map[string]any)["schemas"].(map[string]any) {
		closeObjects(s)
	}
	for path, item := range v.doc["paths"].(map[string]any) {
		for method := range item.(map[string]any) {
			v.ops.Handle(strings.ToUpper(method)+" "+path, http.NotFoundHandler())
		}
	}
	v.compiler.DefaultDraft(jsonschema.Draft2020)
	v.compiler.AssertFormat() // date-time is checked, not only annotated
	if err := v.compiler.AddResource(docURL, v.doc); err != nil {
		return nil, err
	}
	return v, nil
}

// closeObjects sets additionalProperties false on the object schemas of
// s that have properties and say nothing of others.
func closeObjects(s any) {
	switch s := s.(type) {
	case map[string]any:
		if _, ok := s["properties"]; ok {
			if _, ok := s["additionalProperties"]; !ok {
				s["additionalProperties"] = false
			}
		}
		for _, sub := range s {
			closeObjects(sub)
		}
	case []any:
		for _, sub := range s {
			closeObjects(sub)
		}
	}
}

// schema returns the compiled schema at the JSON pointer ptr of the
// document.
func (v *docValidator) schema(ptr string) (*jsonschema.Schema, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if s, ok := v.schemas[ptr]; ok {
		return s, nil
	}
	s, err := v.compiler.Compile(docURL + "#" + ptr)
	if err != nil {
		return nil, err
	}
	v.schemas[ptr] = s
	return s, nil
}

// pointer returns the JSON pointer of the tokens.
func pointer(tokens ...string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteString("/" + strings.NewReplacer("~", "~0", "/", "~1").Replace(t))
	}
	return b.String()
}

// at returns the value of the document at the tokens, nil if none.
func (v *docValidator) at(tokens ...string) any {
	var cur any = v.doc
	for _, t := range tokens {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[t]
	}
	return cur
}

// validate checks the JSON body against the schema at ptr.
func (v *docValidator) validate(ptr string, body []byte) error {
	s, err := v.schema(ptr)
	if err != nil {
		return err
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("the body is not JSON: %v: %.200q", err, body)
	}
	if err := s.Validate(inst); err != nil {
		return fmt.Errorf("%v\nbody: %.2000s", err, body)
	}
	return nil
}

// check checks a request and its answer.
func (v *docValidator) check(r *http.Request, reqBody []byte, status int, header http.Header, body []byte) error {
	if r.Method == http.MethodHead || status == 499 { // no body; a client that went away
		return nil
	}
	_, pattern := v.ops.Handler(r)
	if pattern == "" {
		// No operation: a path that no route serves (a JSON 404 or 405,
		// or a 400 for a path that is not clean), or a face that is not
		// REST (the proxy, MCP, the web UI), whose answers are theirs.
		if strings.HasPrefix(r.URL.Path, "/v1/") && isJSON(header) {
			return v.validate(pointer("components", "schemas", "Error"), body)
		}
		return nil
	}
	method, path, _ := strings.Cut(pattern, " ")
	opPtr := []string{"paths", path, strings.ToLower(method)}
	v.mu.Lock()
	if v.checked[pattern] == nil {
		v.checked[pattern] = map[int]int{}
	}
	v.checked[pattern][status]++
	v.mu.Unlock()

	respTokens := append(slices.Clone(opPtr), "responses", strconv.Itoa(status))
	if v.at(respTokens...) == nil {
		respTokens = append(slices.Clone(opPtr), "responses", "default")
		if status < 400 || v.at(respTokens...) == nil {
			return fmt.Errorf("status %d is not documented for %s", status, pattern)
		}
	}
	if ref, ok := v.at(append(respTokens, "$ref")...).(string); ok {
		respTokens = strings.Split(strings.TrimPrefix(ref, "#/"), "/")
	}
	content, _ := v.at(append(respTokens, "content")...).(map[string]any)
	mediaType, _, _ := mime.ParseMediaType(header.Get("Content-Type"))
	switch {
	case content == nil && len(body) > 0:
		return fmt.Errorf("status %d has no body in the document, but the answer has %d bytes", status, len(body))
	case content == nil:
	case content[mediaType] == nil:
		return fmt.Errorf("status %d: Content-Type %q is not documented", status, header.Get("Content-Type"))
	case mediaType == "application/json":
		if err := v.validate(pointer(append(respTokens, "content", mediaType, "schema")...), body); err != nil {
			return fmt.Errorf("status %d: %w", status, err)
		}
	}

	if status >= 300 || len(bytes.TrimSpace(reqBody)) == 0 {
		return nil
	}
	if v.at(append(opPtr, "requestBody")...) == nil {
		return fmt.Errorf("the handler accepted a body, but the document gives %s none", pattern)
	}
	if err := v.validate(pointer(append(opPtr, "requestBody", "content", "application/json", "schema")...), reqBody); err != nil {
		return fmt.Errorf("the handler accepted (%d) a request body that the document refuses: %w", status, err)
	}
	return nil
}

func isJSON(h http.Header) bool {
	mt, _, _ := mime.ParseMediaType(h.Get("Content-Type"))
	return mt == "application/json"
}

// unchecked returns the operations of the document for which no 2xx answer
// was checked.
func (v *docValidator) unchecked() []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	var out []string
	for path, item := range v.doc["paths"].(map[string]any) {
		for method := range item.(map[string]any) {
			pattern := strings.ToUpper(method) + " " + path
			ok := false
			for status := range v.checked[pattern] {
				ok = ok || status < 300
			}
			if !ok {
				out = append(out, pattern)
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestMain runs the tests, then, when all of them ran, fails if an
// operation of the document had no successful answer checked against it
// (see Validating): every route's answers are then known to fit.
func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	all := flag.Lookup("test.run").Value.String() == "" && flag.Lookup("test.skip").Value.String() == "" && !testing.Short()
	if code == 0 && all && docV != nil {
		if missing := docV.unchecked(); len(missing) > 0 {
			fmt.Fprintf(os.Stderr, "FAIL: no successful answer of these operations was checked against the OpenAPI document: %s\n",
				strings.Join(missing, ", "))
			code = 1
		}
	}
	os.Exit(code)
}
