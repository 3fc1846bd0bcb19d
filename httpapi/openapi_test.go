package httpapi_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentmem/agentmem/httpapi"
	"github.com/agentmem/agentmem/internal/goldenfile"
	"github.com/agentmem/agentmem/internal/testutil"
	"github.com/agentmem/agentmem/metrics"
	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
)

var update = flag.Bool("update", false, "rewrite docs/openapi.json from the code")

// documentOptions are those of the document in the repository: every
// route (with /metrics), and API keys.
func documentOptions() httpapi.Options {
	return httpapi.Options{Metrics: metrics.Handler(prometheus.NewRegistry()), Auth: httpapi.Auth{Mode: httpapi.AuthAPIKey}}
}

// TestOpenAPI_Document keeps docs/openapi.json what the code generates:
// `go test ./httpapi -run TestOpenAPI_Document -update` rewrites it.
func TestOpenAPI_Document(t *testing.T) {
	got, err := httpapi.OpenAPI(documentOptions())
	if err != nil {
		t.Fatal(err)
	}
	goldenfile.Check(t, filepath.Join("..", "docs", "openapi.json"), got, *update)
}

// document is the part of an OpenAPI document the tests read.
type document struct {
	OpenAPI    string
	Security   []map[string][]string
	Paths      map[string]map[string]operationDoc
	Components struct {
		SecuritySchemes map[string]struct{ Type, In, Name, Scheme string }
	}
}

type operationDoc struct {
	OperationID string
	Security    *[]map[string][]string
	Access      string `json:"x-agentmem-access"`
}

func mustDocument(t *testing.T, opt httpapi.Options) document {
	t.Helper()
	b, err := httpapi.OpenAPI(opt)
	if err != nil {
		t.Fatal(err)
	}
	var doc document
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestOpenAPI_Routes checks that the document has every route of the
// route table, with its access, and nothing else; that the faces that are
// not REST (the proxy, MCP, the web UI) are left out; and that the table
// of operations has no entry without a route.
func TestOpenAPI_Routes(t *testing.T) {
	h := http.NotFoundHandler()
	opt := documentOptions()
	opt.Proxy, opt.MCP, opt.Web = h, h, h
	doc := mustDocument(t, opt)
	notREST := []string{"/openai/v1/", "/mcp", "/{$}", "/static/"}

	routes := map[string]string{}
	for _, r := range httpapi.RouteTable(opt) {
		routes[r.Pattern] = r.Access
		if slices.Contains(notREST, r.Pattern) {
			if _, ok := doc.Paths[r.Pattern]; ok {
				t.Errorf("%s is not REST, but the document has it", r.Pattern)
			}
			continue
		}
		method, path, _ := strings.Cut(r.Pattern, " ")
		op, ok := doc.Paths[path][strings.ToLower(method)]
		if !ok {
			t.Errorf("route %s is not in the OpenAPI document", r.Pattern)
			continue
		}
		if op.Access != r.Access {
			t.Errorf("%s: x-agentmem-access=%q, want %q", r.Pattern, op.Access, r.Access)
		}
		if public := r.Access == "public"; public != (op.Security != nil && len(*op.Security) == 0) {
			t.Errorf("%s: security=%v for a route of access %s", r.Pattern, op.Security, r.Access)
		}
	}
	for path, item := range doc.Paths {
		for method := range item {
			if pattern := strings.ToUpper(method) + " " + path; routes[pattern] == "" {
				t.Errorf("the document has %s, which is no route", pattern)
			}
		}
	}
	for _, pattern := range httpapi.Operations() {
		if routes[pattern] == "" {
			t.Errorf("operations has %s, which is no route", pattern)
		}
	}
	if got := len(httpapi.Operations()); got != len(routes)-len(notREST) {
		t.Errorf("operations has %d entries for %d REST routes", got, len(routes)-len(notREST))
	}
}

// TestOpenAPI_Auth checks the document's security for each mode of
// authentication.
func TestOpenAPI_Auth(t *testing.T) {
	for _, tt := range []struct {
		name     string
		auth     httpapi.Auth
		want     []map[string][]string
		wantUser string // the header of userHeader, "" for none
	}{
		{"None", httpapi.Auth{}, nil, ""},
		{"APIKey", httpapi.Auth{Mode: httpapi.AuthAPIKey}, []map[string][]string{{"bearerAuth": {}}, {"apiKeyAuth": {}}}, ""},
		{"Header", httpapi.Auth{Mode: httpapi.AuthHeader, UserHeader: "x-user"},
			[]map[string][]string{{"bearerAuth": {}}, {"apiKeyAuth": {}}, {"userHeader": {}}}, "X-User"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			doc := mustDocument(t, httpapi.Options{Auth: tt.auth})
			if diff := cmp.Diff(tt.want, doc.Security); diff != "" {
				t.Errorf("security mismatch (-want +got):\n%s", diff)
			}
			if got := doc.Components.SecuritySchemes["userHeader"].Name; got != tt.wantUser {
				t.Errorf("userHeader's name=%q, want %q", got, tt.wantUser)
			}
			if got := doc.Components.SecuritySchemes["apiKeyAuth"]; got.In != "header" || got.Name != "X-API-Key" {
				t.Errorf("apiKeyAuth=%+v, want X-API-Key in header", got)
			}
			if _, ok := doc.Paths["/metrics"]; ok {
				t.Errorf("/metrics is documented, but is not served without Metrics")
			}
		})
	}
}

// TestOpenAPI_Served checks GET /openapi.json: public, even with API
// keys, and the document of the server's options.
func TestOpenAPI_Served(t *testing.T) {
	opt := documentOptions()
	srv := MustServe(t, testutil.MustOpenSQLite(t), opt)
	resp, body := Do(t, "GET", srv.URL+"/openapi.json", nil, "")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status=%d, want 200: %s", resp.StatusCode, body)
	}
	if got := resp.Header.Get("Content-Type"); got != "application/json" {
		t.Errorf("Content-Type=%q, want application/json", got)
	}
	want, err := httpapi.OpenAPI(opt)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), string(body)); diff != "" {
		t.Errorf("served document mismatch (-want +got):\n%s", diff)
	}
}

// TestValidating shows that the check of answers against the document
// (Validating, which MustServe installs) fails on an answer or a request
// that does not fit, and passes one that does.
func TestValidating(t *testing.T) {
	v := theDocument(t)
	thread := `{"id":"t1","user_id":"alice","agent_id":"","title":"Hi","status":"active","metadata":{},"tags":[],` +
		`"created_at":"2026-01-02T03:04:05Z","updated_at":"2026-01-02T03:04:05Z","message_count":0,"last_seq":0}`
	for _, tt := range []struct {
		name        string
		method, url string
		reqBody     string
		status      int
		contentType string
		body        string
		wantErr     string // "" when it fits
	}{
		{name: "OK", method: "GET", url: "/v1/users/alice/threads/t1", status: 200, body: thread},
		{name: "WrongType", method: "GET", url: "/v1/users/alice/threads/t1", status: 200,
			body: strings.Replace(thread, `"title":"Hi"`, `"title":42`, 1), wantErr: "/title"},
		{name: "UnknownField", method: "GET", url: "/v1/users/alice/threads/t1", status: 200,
			body: strings.Replace(thread, `"title":"Hi"`, `"title":"Hi","colour":"red"`, 1), wantErr: "colour"},
		{name: "MissingField", method: "GET", url: "/v1/users/alice/threads/t1", status: 200,
			body: strings.Replace(thread, `"status":"active",`, ``, 1), wantErr: "status"},
		{name: "NotAnEnumValue", method: "GET", url: "/v1/users/alice/threads/t1", status: 200,
			body: strings.Replace(thread, `"status":"active"`, `"status":"open"`, 1), wantErr: "/status"},
		{name: "NotADateTime", method: "GET", url: "/v1/users/alice/threads/t1", status: 200,
			body: strings.Replace(thread, `"created_at":"2026-01-02T03:04:05Z"`, `"created_at":"yesterday"`, 1), wantErr: "date-time"},
		{name: "NullArray", method: "GET", url: "/v1/users/alice/threads", status: 200,
			body: `{"data":null,"next_cursor":""}`, wantErr: "/data"},
		{name: "StatusNotDocumented", method: "GET", url: "/v1/users/alice/threads/t1", status: 201, body: thread, wantErr: "status 201 is not documented"},
		{name: "ContentTypeNotDocumented", method: "GET", url: "/v1/users/alice/threads/t1", status: 200,
			contentType: "text/plain", body: "hi", wantErr: "Content-Type"},
		{name: "BodyOfNoContent", method: "DELETE", url: "/v1/users/alice/threads/t1", status: 204, body: "{}", wantErr: "has no body"},
		{name: "Error", method: "GET", url: "/v1/users/alice/threads/t1", status: 404, body: `{"error":{"code":"not_found","message":"No."}}`},
		{name: "ErrorOfAnotherShape", method: "GET", url: "/v1/users/alice/threads/t1", status: 404, body: `{"error":"No."}`, wantErr: "/error"},
		{name: "ErrorCodeUnknown", method: "GET", url: "/v1/users/alice/threads/t1", status: 418,
			body: `{"error":{"code":"teapot","message":"No."}}`, wantErr: "/error/code"},
		{name: "ErrorOfNoRoute", method: "GET", url: "/v1/nothing", status: 404, body: `{"error":{"code":"not_found"}}`, wantErr: "message"},
		{name: "RequestAccepted", method: "POST", url: "/v1/users/alice/threads", reqBody: `{"title":"Hi"}`, status: 201, body: thread},
		{name: "RequestAcceptedThatDoesNotFit", method: "POST", url: "/v1/users/alice/threads", reqBody: `{"title":7}`, status: 201,
			body: thread, wantErr: "request body that the document refuses"},
		{name: "RequestRefused", method: "POST", url: "/v1/users/alice/threads", reqBody: `{"title":7}`, status: 400,
			body: `{"error":{"code":"invalid","message":"No."}}`},
		{name: "ContextOfFormatText", method: "POST", url: "/v1/users/alice/threads/t1/context", status: 200,
			body: `{"text":"hi","telemetry":{}}`, wantErr: "telemetry"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, err := http.NewRequest(tt.method, tt.url, strings.NewReader(tt.reqBody))
			if err != nil {
				t.Fatal(err)
			}
			header := http.Header{"Content-Type": {contentType(tt.contentType)}}
			err = v.check(r, []byte(tt.reqBody), tt.status, header, []byte(tt.body))
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("check: %v, want no error", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("check: %v, want an error naming %q", err, tt.wantErr)
			}
		})
	}

	// Through the middleware, a mismatch fails the test.
	rec := &recordingTB{TB: t}
	h := Validating(rec, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"status":17}`))
	}))
	req, _ := http.NewRequest("GET", "/healthz", nil)
	h.ServeHTTP(httptest.NewRecorder(), req)
	if len(rec.errs) != 1 || !strings.Contains(rec.errs[0], "/status") {
		t.Fatalf("errors=%q, want one naming /status", rec.errs)
	}
}

// recordingTB records the errors reported to it.
type recordingTB struct {
	testing.TB
	errs []string
}

func (r *recordingTB) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func contentType(ct string) string {
	if ct == "" {
		return "application/json"
	}
	return ct
}
