package proxy

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"
)

// Upstream is the model server requests are forwarded to.
type Upstream struct {
	// BaseURL is an OpenAI-compatible server's base URL, /v1 included
	// ("http://localhost:11434/v1" for Ollama); "" is OpenAI's.
	BaseURL string
	// APIKey is sent as Authorization: Bearer (or api-key to Azure); ""
	// sends none, as a local server wants.
	APIKey string
	// AzureEndpoint selects Azure OpenAI ("https://RESOURCE.openai.azure.com"):
	// the model of a request names the deployment.
	AzureEndpoint   string
	AzureAPIVersion string // default "2025-04-01-preview"
	// HTTPClient sends the requests (a client of the package's own when
	// nil). Its Timeout, if any, bounds whole answers, streams included.
	HTTPClient *http.Client
}

// DefaultAzureAPIVersion is the api-version sent to Azure OpenAI when
// Upstream.AzureAPIVersion is "": one that has the Responses API.
const DefaultAzureAPIVersion = "2025-04-01-preview"

var defaultClient = &http.Client{}

// endpoint returns the URL of an API ("chat/completions", "responses",
// "models", or "model": models/ID) for model. The model is escaped as
// one path segment wherever it goes into the path.
func (u *Upstream) endpoint(api, model string) (string, error) {
	path := api
	if api == "model" {
		path = "models/" + url.PathEscape(model)
	}
	if u.AzureEndpoint != "" {
		base := strings.TrimRight(u.AzureEndpoint, "/") + "/openai/"
		q := "?api-version=" + url.QueryEscape(cmp.Or(u.AzureAPIVersion, DefaultAzureAPIVersion))
		if api == "chat/completions" {
			return base + "deployments/" + url.PathEscape(model) + "/chat/completions" + q, nil
		}
		return base + path + q, nil
	}
	base := cmp.Or(u.BaseURL, "https://api.openai.com/v1")
	if p, err := url.Parse(base); err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
		return "", fmt.Errorf("upstream base URL %q is not an http(s) URL", base)
	}
	return strings.TrimRight(base, "/") + "/" + path, nil
}

// host names the upstream in messages (never its key).
func (u *Upstream) host() string {
	s := cmp.Or(u.AzureEndpoint, u.BaseURL, "https://api.openai.com/v1")
	if p, err := url.Parse(s); err == nil && p.Host != "" {
		return p.Host
	}
	return "the model server"
}

// exchange is one upstream call in progress.
type exchange struct {
	res      *http.Response
	body     io.ReadCloser // res.Body, each read rearming the idle timer
	cancel   context.CancelFunc
	timedOut *atomic.Bool
}

func (x *exchange) Close() {
	x.body.Close()
	x.cancel()
}

// send calls the upstream. The timeout bounds the wait for the answer's
// header, then each pause between reads of its body. An answer that is
// not 2xx is returned as an *apiError in OpenAI's shape with the
// upstream's status and Retry-After; a failed or timed-out call as 502 or
// 504.
func (p *proxy) send(ctx context.Context, method, api, model string, body []byte) (*exchange, error) {
	if p.up == nil {
		return nil, &apiError{status: http.StatusServiceUnavailable, typ: "server_error", code: "no_upstream", upstream: true,
			message: "No model server is configured for the proxy: run serve with --proxy-upstream URL (an OpenAI-compatible base URL such as https://api.openai.com/v1 or http://localhost:11434/v1) and OPENAI_API_KEY, or the Azure OpenAI variables."}
	}
	u, err := p.up.endpoint(api, model)
	if err != nil {
		return nil, &apiError{status: http.StatusServiceUnavailable, typ: "server_error", code: "no_upstream", upstream: true, message: "The proxy's model server is misconfigured: " + err.Error() + "."}
	}
	ctx, cancel := context.WithCancel(ctx)
	timedOut := new(atomic.Bool)
	timer := time.AfterFunc(p.opt.Timeout, func() { timedOut.Store(true); cancel() })
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		timer.Stop()
		cancel()
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if p.up.APIKey != "" {
		if p.up.AzureEndpoint != "" {
			req.Header.Set("Api-Key", p.up.APIKey)
		} else {
			req.Header.Set("Authorization", "Bearer "+p.up.APIKey)
		}
	}
	hc := cmp.Or(p.up.HTTPClient, defaultClient)
	start := time.Now()
	res, err := hc.Do(req)
	p.m.upstream(api, time.Since(start))
	if err != nil {
		timer.Stop()
		cancel()
		switch {
		case timedOut.Load():
			return nil, &apiError{status: http.StatusGatewayTimeout, typ: "server_error", code: "upstream_timeout", upstream: true,
				message: fmt.Sprintf("The model server (%s) did not answer within %s.", p.up.host(), p.opt.Timeout)}
		case ctx.Err() != nil && errors.Is(context.Cause(ctx), context.Canceled):
			return nil, err // the client went away
		}
		return nil, &apiError{status: http.StatusBadGateway, typ: "server_error", code: "upstream_unreachable", upstream: true,
			message: fmt.Sprintf("The model server (%s) could not be reached.", p.up.host())}
	}
	x := &exchange{res: res, cancel: func() { timer.Stop(); cancel() }, timedOut: timedOut}
	x.body = &idleBody{ReadCloser: res.Body, timer: timer, d: p.opt.Timeout}
	if res.StatusCode/100 != 2 {
		defer x.Close()
		return nil, upstreamError(res, p.up.host())
	}
	return x, nil
}

// idleBody rearms the timeout at each read that returns data.
type idleBody struct {
	io.ReadCloser
	timer *time.Timer
	d     time.Duration
}

func (b *idleBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.timer.Reset(b.d)
	}
	return n, err
}

// upstreamError returns the upstream's error answer as the client's: its
// status, its Retry-After headers, and its body when it is OpenAI's error
// shape, else an error of that shape saying what the upstream answered.
func upstreamError(res *http.Response, host string) *apiError {
	body, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	e := &apiError{status: res.StatusCode, typ: "upstream_error", code: "upstream_error", upstream: true, header: http.Header{},
		message: fmt.Sprintf("The model server (%s) answered %d %s.", host, res.StatusCode, http.StatusText(res.StatusCode))}
	for _, h := range []string{"Retry-After", "Retry-After-Ms", "X-Should-Retry"} {
		if v := res.Header.Get(h); v != "" {
			e.header.Set(h, v)
		}
	}
	var shaped struct {
		Error *struct {
			Message string          `json:"message"`
			Type    string          `json:"type"`
			Param   *string         `json:"param"`
			Code    json.RawMessage `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &shaped) == nil && shaped.Error != nil && shaped.Error.Message != "" {
		e.message, e.typ = shaped.Error.Message, cmp.Or(shaped.Error.Type, e.typ)
		if shaped.Error.Param != nil {
			e.param = *shaped.Error.Param
		}
		var code string
		if json.Unmarshal(shaped.Error.Code, &code) == nil && code != "" {
			e.code = code
		}
	}
	if res.StatusCode == http.StatusNotFound {
		e.message += " (If the model exists, check that the proxy's upstream is the server's base URL, /v1 included: http://localhost:11434/v1, not http://localhost:11434.)"
	}
	if e.status < 400 { // a 1xx or 3xx the client cannot follow
		e.status = http.StatusBadGateway
	}
	return e
}

// timeoutError is the error of a stream that paused longer than the
// timeout.
func (p *proxy) timeoutError() *apiError {
	return &apiError{status: http.StatusGatewayTimeout, typ: "server_error", code: "upstream_timeout", upstream: true,
		message: fmt.Sprintf("The model server (%s) paused longer than %s.", p.up.host(), p.opt.Timeout)}
}
