package proxy_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/httpapi"
	"github.com/agentmem/agentmem/llm/llmtest"
	"github.com/agentmem/agentmem/proxy"
	"github.com/google/go-cmp/cmp"
	"github.com/openai/openai-go/v3"
)

// TestEmbeddings_RoundTrip: an application on the official SDK that only
// changed its base URL gets its embeddings from the proxy's upstream, with
// the operator's key: the vectors exactly as the upstream gave them, its
// usage and model, and the request's own fields passed on. Nothing is
// stored.
func TestEmbeddings_RoundTrip(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.client()
	want := [][]float32{{0.1, -0.25, 3.5e-7, 1}, {-1, 0, 0.333333, 42.5}}
	e.fake.PushEmbedding(llmtest.Reply{Vectors: want})
	res, err := c.Embeddings.New(ctx, openai.EmbeddingNewParams{
		Model:      openai.EmbeddingModelTextEmbedding3Small,
		Input:      openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: []string{"I live in Lisbon", "peanuts are off the menu"}},
		Dimensions: openai.Int(4),
		User:       openai.String("end-user-7"),
	})
	if err != nil {
		t.Fatal(err)
	}
	var got [][]float32
	for i, d := range res.Data {
		if d.Index != int64(i) {
			t.Errorf("data[%d].index = %d", i, d.Index)
		}
		v := make([]float32, len(d.Embedding))
		for j, x := range d.Embedding {
			v[j] = float32(x)
		}
		got = append(got, v)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("vectors mismatch (-want +got):\n%s", diff)
	}
	if res.Model != "text-embedding-3-small" || res.Usage.PromptTokens != 9 || res.Usage.TotalTokens != 9 {
		t.Errorf("model %q, usage %+v; want text-embedding-3-small, 9 and 9 tokens", res.Model, res.Usage)
	}

	reqs := e.fake.Requests()
	if len(reqs) != 1 || reqs[0].Path != "/v1/embeddings" || reqs[0].Header.Get("Authorization") != "Bearer upstream-key" {
		t.Fatalf("upstream requests: %+v", reqs)
	}
	var sent map[string]any
	if err := json.Unmarshal(reqs[0].Body, &sent); err != nil {
		t.Fatal(err)
	}
	if sent["user"] != "end-user-7" || sent["dimensions"] != 4.0 || sent["model"] != "text-embedding-3-small" {
		t.Errorf("upstream got %s", reqs[0].Body)
	}

	// The default vectors, in the SDK's base64 too: the body is the
	// upstream's, byte for byte.
	body := `{"model":"text-embedding-3-small","input":"hello there","encoding_format":"base64"}`
	res2, err := http.Post(e.srv.URL+"/openai/v1/embeddings", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res2.Body)
	res2.Body.Close()
	direct, err := http.Post(e.fake.BaseURL()+"/embeddings", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	wantBody, _ := io.ReadAll(direct.Body)
	direct.Body.Close()
	if res2.StatusCode != 200 || string(b) != string(wantBody) || res2.Header.Get("Content-Type") != "application/json" {
		t.Errorf("base64: %d %s\nwant %s", res2.StatusCode, b, wantBody)
	}

	threads, _, err := e.mem.FindThreads(ctx, proxy.DefaultLocalUser, agentmem.ThreadFilter{})
	if err != nil || len(threads) != 0 {
		t.Errorf("embeddings stored threads: %v, %v", threads, err)
	}
}

// TestEmbeddings_Azure: with Azure OpenAI upstream, the request goes to
// the deployment the model names, with the api-key header.
func TestEmbeddings_Azure(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(o *envOptions) { o.noUp = true })
	fake := llmtest.NewServer(t)
	e.srv.Config.Handler = httpapi.NewHandler(nil, e.mem.Service, httpapi.Options{Proxy: proxy.NewHandler(nil, e.mem.Service, proxy.Options{
		Upstream: &proxy.Upstream{AzureEndpoint: fake.URL, APIKey: "az-key"},
	})})
	c := e.client()
	res, err := c.Embeddings.New(ctx, openai.EmbeddingNewParams{Model: "my-embedder", Input: openai.EmbeddingNewParamsInputUnion{OfString: openai.String("hello Azure")}})
	if err != nil {
		t.Fatal(err)
	}
	reqs := fake.Requests()
	if len(res.Data) != 1 || len(res.Data[0].Embedding) != llmtest.DefaultDimensions || len(reqs) != 1 ||
		reqs[0].Path != "/openai/deployments/my-embedder/embeddings" || reqs[0].Header.Get("Api-Key") != "az-key" ||
		reqs[0].Query.Get("api-version") != proxy.DefaultAzureAPIVersion {
		t.Errorf("Azure: %d vectors, requests %+v", len(res.Data), reqs)
	}
}

// TestEmbeddings_BadInput: what the proxy must check itself is a 400 in
// OpenAI's shape naming the field, and never reaches the upstream.
func TestEmbeddings_BadInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, c := range []struct {
		body, param string
	}{
		{`{"input":"hi"}`, "model"},
		{`{"model":"","input":"hi"}`, "model"},
		{`{"model":7,"input":"hi"}`, "model"},
		{`{"model":"m"}`, "input"},
		{`{"model":"m","input":null}`, "input"},
		{`{"model":"m","input":""}`, "input"},
		{`{"model":"m","input":[]}`, "input"},
		{`{"model":"m","input":[""]}`, "input"},
		{`{"model":"m","input":[[]]}`, "input"},
		{`{"model":"m","input":[1.5]}`, "input"},
		{`{"model":"m","input":{"text":"hi"}}`, "input"},
		{`["not an object"]`, ""},
	} {
		res, err := http.Post(e.srv.URL+"/openai/v1/embeddings", "application/json", strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		typ, code, param, msg := openAIError(t, res)
		if res.StatusCode != 400 || typ != "invalid_request_error" || code != agentmem.EINVALID || param != c.param || msg == "" {
			t.Errorf("%s: %d %q %q %q %q, want 400 naming %q", c.body, res.StatusCode, typ, code, param, msg, c.param)
		}
	}
	if n := len(e.upstreamBodies("/v1/embeddings")); n != 0 {
		t.Errorf("%d bad requests reached the upstream", n)
	}
	// Token arrays are OpenAI's too.
	res, err := http.Post(e.srv.URL+"/openai/v1/embeddings", "application/json", strings.NewReader(`{"model":"m","input":[[1,2,3],[4]]}`))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if n := len(e.upstreamBodies("/v1/embeddings")); n != 1 {
		t.Errorf("token arrays: %d (%d upstream requests), want forwarded", res.StatusCode, n)
	}
}
