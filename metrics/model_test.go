package metrics_test

import (
	"context"
	"strings"
	"testing"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/metrics"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

type chatFunc func(context.Context, agentmem.ChatRequest) (*agentmem.ChatResponse, error)

func (f chatFunc) Complete(ctx context.Context, req agentmem.ChatRequest) (*agentmem.ChatResponse, error) {
	return f(ctx, req)
}

type embedFunc func(context.Context, []string) ([][]float32, error)

func (f embedFunc) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return f(ctx, texts)
}

// summingEmbed is an embedder with Sums (the built-in model's static
// table).
type summingEmbed struct{ embedFunc }

func (e summingEmbed) Sums(ctx context.Context, texts []string) ([][]float32, error) {
	return e.embedFunc(ctx, texts)
}

// TestChat checks that the chat's calls, failures and tokens are counted
// by model, the request's or the default, and that each call within a
// span is traced with its tokens.
func TestChat(t *testing.T) {
	reg := prometheus.NewRegistry()
	tp, exp, ctx := newTracing(t)
	c := metrics.Chat(chatFunc(func(_ context.Context, req agentmem.ChatRequest) (*agentmem.ChatResponse, error) {
		if req.Messages[0].Content == "fail" {
			return nil, agentmem.Errorf(agentmem.EUNAVAILABLE, "down")
		}
		return &agentmem.ChatResponse{Content: "ok", Model: "small-2024", PromptTokens: 12, CompletionTokens: 3}, nil
	}), "small", reg, tp)
	say := func(ctx context.Context, model, content string) {
		c.Complete(ctx, agentmem.ChatRequest{Model: model, Messages: []agentmem.ChatMessage{{Role: "user", Content: content}}})
	}
	say(ctx, "", "hello")
	say(context.Background(), "", "hello") // outside a span: counted, not traced
	say(ctx, "large", "hello")
	say(ctx, "", "fail")

	want := `
# HELP agentmem_model_calls_total Calls of the models, by kind (chat, embed) and model.
# TYPE agentmem_model_calls_total counter
agentmem_model_calls_total{kind="chat",model="large"} 1
agentmem_model_calls_total{kind="chat",model="small"} 3
# HELP agentmem_model_errors_total Calls of the models that failed, by kind, model and agentmem error code.
# TYPE agentmem_model_errors_total counter
agentmem_model_errors_total{code="unavailable",kind="chat",model="small"} 1
# HELP agentmem_model_tokens_total Tokens the model server counted in its answers, by kind, model and type (prompt, completion).
# TYPE agentmem_model_tokens_total counter
agentmem_model_tokens_total{kind="chat",model="large",type="completion"} 3
agentmem_model_tokens_total{kind="chat",model="large",type="prompt"} 12
agentmem_model_tokens_total{kind="chat",model="small",type="completion"} 6
agentmem_model_tokens_total{kind="chat",model="small",type="prompt"} 24
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "agentmem_model_calls_total", "agentmem_model_errors_total", "agentmem_model_tokens_total"); err != nil {
		t.Error(err)
	}
	if n := testutil.CollectAndCount(reg, "agentmem_model_call_duration_seconds"); n != 2 {
		t.Errorf("%d duration series, want 2 (small, large)", n)
	}

	spans := exp.GetSpans()
	var names []string
	for _, s := range spans {
		names = append(names, s.Name)
	}
	if strings.Join(names, ",") != "chat small,chat large,chat small" {
		t.Fatalf("spans %v, want chat small, chat large, chat small (the call outside a span untraced)", names)
	}
	attrs := map[string]string{}
	for _, a := range spans[0].Attributes {
		attrs[string(a.Key)] = a.Value.Emit()
	}
	if attrs["gen_ai.usage.input_tokens"] != "12" || attrs["gen_ai.usage.output_tokens"] != "3" || attrs["gen_ai.response.model"] != "small-2024" {
		t.Errorf("span attributes %v, want the tokens and the model that answered", attrs)
	}
	if spans[2].Status.Description != agentmem.EUNAVAILABLE {
		t.Errorf("failed call's span status %+v, want %s", spans[2].Status, agentmem.EUNAVAILABLE)
	}
}

// TestEmbedder checks that embedding calls and texts are counted by
// space, and that an embedder with Sums keeps it, counted too.
func TestEmbedder(t *testing.T) {
	reg := prometheus.NewRegistry()
	embed := embedFunc(func(_ context.Context, texts []string) ([][]float32, error) {
		return make([][]float32, len(texts)), nil
	})
	plain := metrics.Embedder(embed, "lexical/256", reg, nil)
	if _, ok := plain.(interface {
		Sums(context.Context, []string) ([][]float32, error)
	}); ok {
		t.Error("an embedder without Sums has Sums once decorated")
	}
	plain.Embed(context.Background(), []string{"a", "b"})
	summing := metrics.Embedder(summingEmbed{embed}, "static/384", reg, nil)
	s, ok := summing.(interface {
		Sums(context.Context, []string) ([][]float32, error)
	})
	if !ok {
		t.Fatal("an embedder with Sums lost it once decorated")
	}
	s.Sums(context.Background(), []string{"a", "b", "c"})

	want := `
# HELP agentmem_model_calls_total Calls of the models, by kind (chat, embed) and model.
# TYPE agentmem_model_calls_total counter
agentmem_model_calls_total{kind="embed",model="lexical/256"} 1
agentmem_model_calls_total{kind="embed",model="static/384"} 1
# HELP agentmem_model_embedded_texts_total Texts embedded, by model (the embedder's vector space).
# TYPE agentmem_model_embedded_texts_total counter
agentmem_model_embedded_texts_total{model="lexical/256"} 2
agentmem_model_embedded_texts_total{model="static/384"} 3
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "agentmem_model_calls_total", "agentmem_model_embedded_texts_total"); err != nil {
		t.Error(err)
	}
	if got := metrics.Embedder(nil, "x", reg, nil); got != nil {
		t.Errorf("Embedder(nil) = %v, want nil", got)
	}
	if got := metrics.Chat(nil, "x", reg, nil); got != nil {
		t.Errorf("Chat(nil) = %v, want nil", got)
	}
}
