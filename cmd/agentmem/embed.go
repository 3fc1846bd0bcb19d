package main

import (
	"context"
	"fmt"
	"math"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/llm/lexical"
	"github.com/agentmem/agentmem/llm/openai"
	"github.com/agentmem/agentmem/retrieve"
)

// newEmbedder returns the embedder of search that cfg chooses and the name
// of its vector space, which records the embedder and its dimension
// ("lexical-v1/512", "openai/text-embedding-3-small/1536"): vectors of
// different spaces are never compared, so changing either means
// re-embedding (see extract.Reembedder).
//
// The openai embedder reaches the server the chat model does (OPENAI_*,
// --llm-base-url, or the Azure variables); its dimension is the model's,
// learnt from one call at start, which also checks that the server
// answers: serve does not start with an embedder it cannot reach.
func newEmbedder(ctx context.Context, cfg Config, getenv func(string) string) (agentmem.Embedder, string, error) {
	if cfg.Embedder != "openai" {
		emb := lexical.New(0)
		return emb, emb.Space(), nil
	}
	oc := openai.ConfigFromEnv(getenv)
	if cfg.LLMBaseURL != "" && oc.AzureEndpoint == "" {
		oc.BaseURL = cfg.LLMBaseURL
	}
	oc.EmbeddingModel = cfg.EmbedModel
	if !openai.Configured(oc) {
		return nil, "", fmt.Errorf("--embedder openai needs an embeddings server: set OPENAI_API_KEY, OPENAI_BASE_URL or the Azure OpenAI variables")
	}
	c, err := openai.New(oc)
	if err != nil {
		return nil, "", fmt.Errorf("embeddings client: %w", err)
	}
	vecs, err := c.Embed(ctx, []string{"agentmem"})
	if err != nil {
		return nil, "", fmt.Errorf("embeddings model %s: %s", cfg.EmbedModel, agentmem.ErrorMessage(err))
	}
	space := fmt.Sprintf("openai/%s/%d", cfg.EmbedModel, len(vecs[0]))
	if err := agentmem.ValidateSpace(space); err != nil {
		return nil, "", fmt.Errorf("--embed-model: %s", agentmem.ErrorMessage(err))
	}
	return unitVectors{c}, space, nil
}

// unitVectors scales an embedder's vectors to unit length, which search
// and consolidation compare by their dot product (OpenAI's models answer
// unit vectors already; other servers' models need not).
type unitVectors struct{ agentmem.Embedder }

func (u unitVectors) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	vecs, err := u.Embedder.Embed(ctx, texts)
	if err != nil {
		return nil, err
	}
	for _, v := range vecs {
		var sum float64
		for _, x := range v {
			sum += float64(x) * float64(x)
		}
		if norm := math.Sqrt(sum); norm > 0 {
			for i := range v {
				v[i] = float32(float64(v[i]) / norm)
			}
		}
	}
	return vecs, nil
}

// vectorWeight is the weight of the vector signal in search's fusion for
// an embedder (see retrieve.Options.VectorWeight): the built-in lexical
// embedder breaks ties, a model's embeddings vote as full-text does.
func vectorWeight(embedder string) float64 {
	if embedder == "" || embedder == "builtin" {
		return retrieve.VectorWeightLexical
	}
	return 1
}
