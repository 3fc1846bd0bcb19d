package openai

import (
	"context"
	"net/http"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/agentmem/agentmem"
)

const embedOp = "Embedding model"

// Embed returns one vector per text, in the order of texts, all of one
// length (Config.Dimensions if set). Texts go to the server in batches of
// Config.EmbeddingBatchSize; each batch is one call for retries and the
// circuit breaker, and a failed batch fails the whole Embed. No texts make
// no request.
//
// Returns EINVALID if a text is empty or the server refused a batch (HTTP
// 400, 413, 422), and EUNAVAILABLE as Complete does, or if the server
// answered the wrong number of vectors or vectors of differing lengths.
func (c *Client) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	for i, t := range texts {
		if t == "" {
			return nil, agentmem.Errorf(agentmem.EINVALID, "Text %d is empty; there is nothing to embed.", i)
		}
	}
	vecs := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += c.cfg.EmbeddingBatchSize {
		batch := texts[start:min(start+c.cfg.EmbeddingBatchSize, len(texts))]
		out, err := c.embedBatch(ctx, batch)
		if err != nil {
			return nil, err
		}
		vecs = append(vecs, out...)
	}
	for _, v := range vecs {
		if len(v) != len(vecs[0]) {
			return nil, agentmem.Errorf(agentmem.EUNAVAILABLE, "%s unavailable: it answered vectors of differing lengths.", embedOp)
		}
	}
	return vecs, nil
}

func (c *Client) embedBatch(ctx context.Context, texts []string) ([][]float32, error) {
	model := c.cfg.EmbeddingModel
	if c.azure {
		model = c.cfg.AzureEmbeddingDeployment
	}
	p := oai.EmbeddingNewParams{
		Input:          oai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: texts},
		Model:          oai.EmbeddingModel(model),
		EncodingFormat: oai.EmbeddingNewParamsEncodingFormatFloat, // base64 is smaller, but not every compatible server has it
	}
	if c.cfg.Dimensions > 0 {
		p.Dimensions = oai.Int(int64(c.cfg.Dimensions))
	}
	var vecs [][]float32
	err := c.call(ctx, embedOp, c.embedBreaker, func(ctx context.Context, res **http.Response) error {
		resp, err := c.embeddings.New(ctx, p, option.WithResponseInto(res))
		if err != nil {
			return err
		}
		bad := agentmem.Errorf(agentmem.EUNAVAILABLE, "%s unavailable: it answered %d vectors for %d texts.", embedOp, len(resp.Data), len(texts))
		if len(resp.Data) != len(texts) {
			return bad
		}
		// The answer is ordered by index, which the spec does not
		// promise to be the order of the data array.
		vecs = make([][]float32, len(texts))
		for _, e := range resp.Data {
			if e.Index < 0 || e.Index >= int64(len(texts)) || vecs[e.Index] != nil {
				return bad
			}
			if len(e.Embedding) == 0 || (c.cfg.Dimensions > 0 && len(e.Embedding) != c.cfg.Dimensions) {
				return agentmem.Errorf(agentmem.EUNAVAILABLE, "%s unavailable: it answered a vector of %d dimensions.", embedOp, len(e.Embedding))
			}
			v := make([]float32, len(e.Embedding))
			for i, x := range e.Embedding {
				v[i] = float32(x)
			}
			vecs[e.Index] = v
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return vecs, nil
}
