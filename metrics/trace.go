package metrics

import (
	"context"

	"github.com/agentmem/agentmem"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
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
