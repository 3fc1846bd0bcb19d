package metrics

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/agentmem/agentmem"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// scope is the instrumentation scope of agentmem's spans.
const scope = "github.com/agentmem/agentmem"

// tracer returns tp's tracer of agentmem's spans, nil for a nil tp (no
// spans, at the cost of a nil check).
func tracer(tp trace.TracerProvider) trace.Tracer {
	if tp == nil {
		return nil
	}
	return tp.Tracer(scope)
}

// startChild starts the span name under the span of ctx, if ctx has one:
// the calls made for a request (the store's, the models') are traced as
// part of it, and the background work's calls (a worker polling for jobs
// every second) start no traces of their own. A nil t starts nothing.
func startChild(t trace.Tracer, ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	if t == nil || !trace.SpanContextFromContext(ctx).IsValid() {
		return ctx, nil
	}
	return t.Start(ctx, name, opts...)
}

// endSpan ends span (none when nil), marked failed when err is not nil
// with the error's agentmem code as error.type: the code says what
// failed; the message, which may quote a user's data, stays out.
func endSpan(span trace.Span, err error) {
	if span == nil {
		return
	}
	if err != nil {
		code := agentmem.ErrorCode(err)
		span.SetAttributes(attribute.String("error.type", code))
		span.SetStatus(codes.Error, code)
	}
	span.End()
}

// TraceHTTP returns a middleware that traces each request in a server
// span, continuing the trace of the W3C traceparent header the caller
// sent, named by its method and route once served ("GET
// /v1/users/{user}/threads", the route that served reports; the path,
// which holds user IDs, is not recorded) and marked failed for a 5xx. A
// nil tp returns next unchanged.
func TraceHTTP(tp trace.TracerProvider, served Served) func(http.Handler) http.Handler {
	if tp == nil {
		return func(next http.Handler) http.Handler { return next }
	}
	t := tracer(tp)
	var prop propagation.TraceContext
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			method := methodLabel(r.Method)
			ctx := prop.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
			ctx, span := t.Start(ctx, method, trace.WithSpanKind(trace.SpanKindServer),
				trace.WithAttributes(attribute.String("http.request.method", method)))
			defer func() {
				route, status := served(r)
				span.SetName(method + " " + route)
				span.SetAttributes(attribute.String("http.route", route), attribute.Int("http.response.status_code", status))
				if status >= 500 {
					span.SetStatus(codes.Error, strconv.Itoa(status))
				}
				span.End()
			}()
			next.ServeHTTP(w, r.WithContext(ctx))
		})
	}
}

// Tracing returns the tracer provider that exports spans over OTLP/HTTP
// (protobuf) where the standard variables, read through getenv, say:
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (the URL spans are posted to), else
// OTEL_EXPORTER_OTLP_ENDPOINT (a base URL, to which /v1/traces is
// added). The service is named by OTEL_SERVICE_NAME ("agentmem" when
// unset) and version. The exporter reads the other OTEL_EXPORTER_OTLP_*
// variables (headers, timeout, compression) and the SDK OTEL_TRACES_SAMPLER
// from the process's environment, as every OpenTelemetry SDK does.
//
// With neither endpoint set, or OTEL_SDK_DISABLED=true, or
// OTEL_TRACES_EXPORTER=none, it returns a nil provider: nothing is
// traced. shutdown flushes the spans not exported yet and stops the
// exporter (it does nothing without a provider).
func Tracing(ctx context.Context, getenv func(string) string, version string) (tp trace.TracerProvider, shutdown func(context.Context) error, err error) {
	none := func(context.Context) error { return nil }
	endpoint := getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
	if endpoint == "" {
		if base := getenv("OTEL_EXPORTER_OTLP_ENDPOINT"); base != "" {
			endpoint = strings.TrimSuffix(base, "/") + "/v1/traces"
		}
	}
	if endpoint == "" || strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true") || getenv("OTEL_TRACES_EXPORTER") == "none" {
		return nil, none, nil
	}
	if u, err := url.Parse(endpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, none, fmt.Errorf("OTLP traces endpoint %q: want an http:// or https:// URL", endpoint)
	}
	protocol := cmp.Or(getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"), getenv("OTEL_EXPORTER_OTLP_PROTOCOL"), "http/protobuf")
	if protocol != "http/protobuf" {
		return nil, none, fmt.Errorf("OTLP protocol %q: agentmem exports traces over http/protobuf only", protocol)
	}
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(endpoint))
	if err != nil {
		return nil, none, fmt.Errorf("OTLP traces exporter: %w", err)
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(
		attribute.String("service.name", cmp.Or(getenv("OTEL_SERVICE_NAME"), "agentmem")),
		attribute.String("service.version", version)))
	if err != nil {
		return nil, none, fmt.Errorf("OpenTelemetry resource: %w", err)
	}
	sdk := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return sdk, sdk.Shutdown, nil
}
