package metrics

import (
	"cmp"
	"context"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// modelMetrics are the metrics of the model calls, shared by the chat and
// the embedders (labelled by kind: "chat" or "embed").
type modelMetrics struct {
	calls    *prometheus.CounterVec   // by kind, model
	errors   *prometheus.CounterVec   // by kind, model, code
	tokens   *prometheus.CounterVec   // by kind, model, type: prompt, completion
	texts    *prometheus.CounterVec   // by model: the texts embedded
	duration *prometheus.HistogramVec // by kind, model
}

func newModelMetrics(reg prometheus.Registerer) *modelMetrics {
	if reg == nil {
		return nil
	}
	return &modelMetrics{
		calls: Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentmem_model_calls_total",
			Help: "Calls of the models, by kind (chat, embed) and model.",
		}, []string{"kind", "model"})),
		errors: Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentmem_model_errors_total",
			Help: "Calls of the models that failed, by kind, model and agentmem error code.",
		}, []string{"kind", "model", "code"})),
		tokens: Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentmem_model_tokens_total",
			Help: "Tokens the model server counted in its answers, by kind, model and type (prompt, completion).",
		}, []string{"kind", "model", "type"})),
		texts: Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentmem_model_embedded_texts_total",
			Help: "Texts embedded, by model (the embedder's vector space).",
		}, []string{"model"})),
		duration: Register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "agentmem_model_call_duration_seconds",
			Help:    "Time of a call of the models, by kind and model.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120},
		}, []string{"kind", "model"})),
	}
}

// observe records a call of kind to model begun at start.
func (m *modelMetrics) observe(kind, model string, start time.Time, err error) {
	if m == nil {
		return
	}
	m.calls.WithLabelValues(kind, model).Inc()
	m.duration.WithLabelValues(kind, model).Observe(time.Since(start).Seconds())
	if err != nil {
		m.errors.WithLabelValues(kind, model, agentmem.ErrorCode(err)).Inc()
	}
}

// Chat returns c with every call counted in
// agentmem_model_calls_total{kind="chat",model}, timed in
// agentmem_model_call_duration_seconds, its failures counted in
// agentmem_model_errors_total{kind,model,code} and the tokens its answers
// report in agentmem_model_tokens_total{kind,model,type="prompt"} and
// {type="completion"}; with a tp, each call made within a span is traced
// as a child span "chat MODEL" (OpenTelemetry's GenAI conventions). The
// model is the one the request names, model when it names none (the
// client's default). A nil c stays nil (no model), and with neither reg
// nor tp, c is returned unchanged.
func Chat(c agentmem.Chat, model string, reg prometheus.Registerer, tp trace.TracerProvider) agentmem.Chat {
	if c == nil || reg == nil && tp == nil {
		return c
	}
	return &chat{next: c, model: model, m: newModelMetrics(reg), tracer: tracer(tp)}
}

type chat struct {
	next   agentmem.Chat
	model  string // of a request that names none
	m      *modelMetrics
	tracer trace.Tracer
}

func (c *chat) Complete(ctx context.Context, req agentmem.ChatRequest) (resp *agentmem.ChatResponse, err error) {
	model := cmp.Or(req.Model, c.model)
	var span trace.Span
	if c.tracer != nil {
		ctx, span = startChild(c.tracer, ctx, "chat "+model, trace.WithSpanKind(trace.SpanKindClient),
			trace.WithAttributes(attribute.String("gen_ai.operation.name", "chat"), attribute.String("gen_ai.request.model", model)))
	}
	start := time.Now()
	resp, err = c.next.Complete(ctx, req)
	c.m.observe("chat", model, start, err)
	if resp != nil {
		if c.m != nil {
			c.m.tokens.WithLabelValues("chat", model, "prompt").Add(float64(resp.PromptTokens))
			c.m.tokens.WithLabelValues("chat", model, "completion").Add(float64(resp.CompletionTokens))
		}
		if span != nil {
			span.SetAttributes(attribute.String("gen_ai.response.model", resp.Model),
				attribute.Int("gen_ai.usage.input_tokens", resp.PromptTokens),
				attribute.Int("gen_ai.usage.output_tokens", resp.CompletionTokens))
		}
	}
	endSpan(span, err)
	return resp, err
}

// Embedder returns e with every call counted in
// agentmem_model_calls_total{kind="embed",model}, timed in
// agentmem_model_call_duration_seconds, its failures counted in
// agentmem_model_errors_total and its texts in
// agentmem_model_embedded_texts_total{model}; with a tp, each call made
// within a span is traced as a child span "embeddings MODEL". model names
// the embedder: its vector space ("openai/text-embedding-3-small/1536"),
// which names the model. An embedder that sums texts' vectors (the
// built-in model's static table: Sums) keeps Sums, counted as Embed is. A
// nil e stays nil, and with neither reg nor tp, e is returned unchanged.
func Embedder(e agentmem.Embedder, model string, reg prometheus.Registerer, tp trace.TracerProvider) agentmem.Embedder {
	if e == nil || reg == nil && tp == nil {
		return e
	}
	d := &embedder{next: e, model: model, m: newModelMetrics(reg), tracer: tracer(tp)}
	if s, ok := e.(summer); ok {
		return &summingEmbedder{d, s}
	}
	return d
}

// summer is an embedder whose vector of a text is its Sums normalised
// (index's summer: minilm.Static).
type summer interface {
	Sums(ctx context.Context, texts []string) ([][]float32, error)
}

type embedder struct {
	next   agentmem.Embedder
	model  string
	m      *modelMetrics
	tracer trace.Tracer
}

func (e *embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return e.call(ctx, texts, e.next.Embed)
}

// call records a call of embed.
func (e *embedder) call(ctx context.Context, texts []string, embed func(context.Context, []string) ([][]float32, error)) ([][]float32, error) {
	var span trace.Span
	if e.tracer != nil {
		ctx, span = startChild(e.tracer, ctx, "embeddings "+e.model, trace.WithSpanKind(trace.SpanKindClient),
			trace.WithAttributes(attribute.String("gen_ai.operation.name", "embeddings"), attribute.String("gen_ai.request.model", e.model),
				attribute.Int("agentmem.texts", len(texts))))
	}
	start := time.Now()
	vecs, err := embed(ctx, texts)
	e.m.observe("embed", e.model, start, err)
	if e.m != nil && err == nil {
		e.m.texts.WithLabelValues(e.model).Add(float64(len(texts)))
	}
	endSpan(span, err)
	return vecs, err
}

type summingEmbedder struct {
	*embedder
	summer summer
}

func (e *summingEmbedder) Sums(ctx context.Context, texts []string) ([][]float32, error) {
	return e.call(ctx, texts, e.summer.Sums)
}
