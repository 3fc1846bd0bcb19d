package metrics_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/app"
	"github.com/agentmem/agentmem/httpapi"
	"github.com/agentmem/agentmem/internal/apptest"
	"github.com/agentmem/agentmem/llm/llmtest"
	"github.com/agentmem/agentmem/mcp"
	"github.com/agentmem/agentmem/metrics"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// tracedServer serves the real REST handler over agentmem opened in
// process, with a model (the fake server) and the lexical embedder,
// instrumented as serve instruments it, its spans ending in the exporter
// returned.
func tracedServer(t *testing.T) (*httptest.Server, *tracetest.InMemoryExporter) {
	t.Helper()
	fake := llmtest.NewServer(t)
	tp, exp, _ := newTracing(t)
	reg := prometheus.NewRegistry()
	mem := apptest.Open(t, func(cfg *app.Config) {
		cfg.LLMBaseURL, cfg.Embedder = fake.BaseURL(), "lexical"
		cfg.WrapStore = func(s agentmem.Store) agentmem.Store { return metrics.Store(s, reg, tp) }
		cfg.WrapChat = func(c agentmem.Chat, model string) agentmem.Chat { return metrics.Chat(c, model, reg, tp) }
		cfg.WrapEmbedder = func(e agentmem.Embedder, space string) agentmem.Embedder { return metrics.Embedder(e, space, reg, tp) }
	})
	measure, traced := metrics.HTTP(reg, httpapi.Served), metrics.TraceHTTP(tp, httpapi.Served)
	srv := httptest.NewServer(httpapi.NewHandler(nil, metrics.Service(mem.Service, tp), httpapi.Options{
		Middleware: func(h http.Handler) http.Handler { return traced(measure(h)) },
		MCP:        mcp.NewHTTPHandler(metrics.Service(mem.Service, tp), mcp.HTTPOptions{LocalUser: "alice"}),
	}))
	t.Cleanup(srv.Close)
	return srv, exp
}

// spanTree indexes the spans ended by their ID.
type spanTree map[trace.SpanID]tracetest.SpanStub

func newSpanTree(spans tracetest.SpanStubs) spanTree {
	tree := spanTree{}
	for _, s := range spans {
		tree[s.SpanContext.SpanID()] = s
	}
	return tree
}

// path returns the names of s's ancestors and s's, root first ("?" for a
// parent that did not end).
func (tree spanTree) path(s tracetest.SpanStub) string {
	names := []string{s.Name}
	for p := s.Parent; p.IsValid(); {
		parent, ok := tree[p.SpanID()]
		if !ok {
			names = append(names, "?")
			break
		}
		names = append(names, parent.Name)
		p = parent.Parent
	}
	for i, j := 0, len(names)-1; i < j; i, j = i+1, j-1 {
		names[i], names[j] = names[j], names[i]
	}
	return strings.Join(names, " > ")
}

// paths returns the paths of the spans whose name has prefix, each once.
func (tree spanTree) paths(prefix string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range tree {
		if p := tree.path(s); strings.HasPrefix(s.Name, prefix) && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// TestTrace_REST: one REST request, a facts question, is one trace: the
// server span of its route, under it the service's call (metrics.Service),
// and under that the model's calls (where to search, the answer), the
// query's embedding and the store's calls.
func TestTrace_REST(t *testing.T) {
	srv, exp := tracedServer(t)
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/users/alice/facts", strings.NewReader(`{"query":"Where does Alice live?"}`))
	req.Header.Set("Content-Type", "application/json")
	// The caller's trace continues.
	const callerTrace, callerSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	req.Header.Set("traceparent", "00-"+callerTrace+"-"+callerSpan+"-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("facts: %d", resp.StatusCode)
	}

	spans := exp.GetSpans()
	tree := newSpanTree(spans)
	var root tracetest.SpanStub
	for _, s := range spans {
		if s.Name == "POST /v1/users/{user}/facts" {
			root = s
		}
	}
	if !root.SpanContext.IsValid() {
		t.Fatalf("no span POST /v1/users/{user}/facts among %v", tree.paths(""))
	}
	if root.SpanKind != trace.SpanKindServer || root.Parent.TraceID().String() != callerTrace || root.Parent.SpanID().String() != callerSpan {
		t.Errorf("request span: kind %v, parent %v; want a server span under the caller's traceparent", root.SpanKind, root.Parent)
	}
	for _, prefix := range []string{"store.", "chat ", "embeddings "} {
		paths := tree.paths(prefix)
		if len(paths) == 0 {
			t.Errorf("no %s… span: %v", prefix, tree.paths(""))
		}
		for _, p := range paths {
			if !strings.HasPrefix(p, "? > POST /v1/users/{user}/facts > service.facts > ") {
				t.Errorf("span %s is not under the request's", p)
			}
		}
	}
	for _, s := range spans {
		if s.SpanContext.TraceID() != root.SpanContext.TraceID() {
			t.Errorf("span %s is in trace %s, not the request's", s.Name, s.SpanContext.TraceID())
		}
	}
	// Search's cache loads the user's vectors as the store keeps them
	// (ScanVectors), not decoded through FindVectors: the wrappers between
	// search and the store keep the store's optional methods.
	if len(tree.paths("store.scan_vectors")) == 0 || len(tree.paths("store.find_vectors")) > 0 {
		t.Errorf("vectors loaded by %v and %v; want scan_vectors alone", tree.paths("store.scan_vectors"), tree.paths("store.find_vectors"))
	}
}

// TestTrace_MCP: an MCP tool call over the REST handler's /mcp is traced
// request > service > store: the MCP handler takes an agentmem.Service,
// decorated by metrics.Service.
func TestTrace_MCP(t *testing.T) {
	srv, exp := tracedServer(t)
	session, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(),
		&sdk.StreamableClientTransport{Endpoint: srv.URL + "/mcp", MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer session.Close()
	res, err := session.CallTool(context.Background(), &sdk.CallToolParams{Name: "remember", Arguments: map[string]any{"text": "Alice lives in Kyoto."}})
	if err != nil || res.IsError {
		t.Fatalf("remember: %v %+v", err, res)
	}

	tree := newSpanTree(exp.GetSpans())
	var found bool
	for _, p := range tree.paths("store.") {
		if strings.HasPrefix(p, "POST /mcp > service.create_memory > store.") {
			found = true
		}
	}
	if !found {
		t.Errorf("no store span under POST /mcp > service.create_memory: %v", tree.paths(""))
	}
}

// TestTracing_Settings: Tracing reads the standard variables: no endpoint
// (or the SDK disabled, or no exporter) traces nothing; an endpoint that
// is not an http(s) URL, or a protocol other than http/protobuf, is an
// error.
func TestTracing_Settings(t *testing.T) {
	for _, c := range []struct {
		name   string
		env    map[string]string
		traced bool
		err    string
	}{
		{"None", nil, false, ""},
		{"Endpoint", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, true, ""},
		{"TracesEndpoint", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "https://collector.example/v1/traces"}, true, ""},
		{"Disabled", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_SDK_DISABLED": "true"}, false, ""},
		{"NoExporter", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_TRACES_EXPORTER": "none"}, false, ""},
		{"NotURL", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "127.0.0.1:4318"}, false, "http:// or https://"},
		{"GRPC", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, false, "http/protobuf only"},
	} {
		t.Run(c.name, func(t *testing.T) {
			tp, shutdown, err := metrics.Tracing(context.Background(), func(k string) string { return c.env[k] }, "test")
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err=%v, want one saying %q", err, c.err)
				}
				return
			} else if err != nil {
				t.Fatal(err)
			}
			defer shutdown(context.Background())
			if (tp != nil) != c.traced {
				t.Errorf("provider %v, want one: %v", tp, c.traced)
			}
		})
	}
}

// TestTraceHTTP_Off: without a provider the middleware is none.
func TestTraceHTTP_Off(t *testing.T) {
	h := http.NewServeMux()
	if got := metrics.TraceHTTP(nil, httpapi.Served)(h); got != http.Handler(h) {
		t.Errorf("TraceHTTP(nil) wrapped the handler: %T", got)
	}
}
