package metrics

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Proxy records the work of the OpenAI-compatible proxy
// (proxy.Options.Metrics) in Prometheus metrics.
type Proxy struct {
	requests      *prometheus.CounterVec   // by api, mode, status
	latency       *prometheus.HistogramVec // upstream time to the answer's header, by api
	contextTokens *prometheus.CounterVec   // by kind: sent, history
	answers       *prometheus.CounterVec   // by api, outcome: stored, truncated, failed
}

// NewProxy returns the proxy's metrics, registered with reg.
func NewProxy(reg prometheus.Registerer) *Proxy {
	return &Proxy{
		requests: Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentmem_proxy_requests_total",
			Help: "Requests to the OpenAI-compatible proxy, by API, memory mode and status.",
		}, []string{"api", "mode", "status"})),
		latency: Register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "agentmem_proxy_upstream_seconds",
			Help:    "Time from forwarding a request to the model server until its answer's header arrived.",
			Buckets: []float64{.05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120},
		}, []string{"api"})),
		contextTokens: Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentmem_proxy_context_tokens_total",
			Help: "Tokens of the contexts the proxy sent (kind=sent) against the tokens of the histories they were drawn from (kind=history, estimated from the turns sent): the difference is the saving.",
		}, []string{"kind"})),
		answers: Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentmem_proxy_answers_total",
			Help: "Model answers the proxy stored, by API and outcome: stored, truncated (longer than the store's message bound: stored cut to it) or failed (not stored).",
		}, []string{"api", "outcome"})),
	}
}

// Request counts a request in agentmem_proxy_requests_total{api,mode,status}.
func (m *Proxy) Request(api, mode string, status int) {
	m.requests.WithLabelValues(api, mode, strconv.Itoa(status)).Inc()
}

// Upstream observes in agentmem_proxy_upstream_seconds{api} the time the
// model server took to send its answer's header.
func (m *Proxy) Upstream(api string, d time.Duration) {
	m.latency.WithLabelValues(api).Observe(d.Seconds())
}

// ContextTokens counts in agentmem_proxy_context_tokens_total the tokens
// of a context sent (kind="sent") and of the history it stands for
// (kind="history").
func (m *Proxy) ContextTokens(sent, history float64) {
	m.contextTokens.WithLabelValues("sent").Add(sent)
	m.contextTokens.WithLabelValues("history").Add(history)
}

// Answer counts an answer in agentmem_proxy_answers_total{api,outcome}.
func (m *Proxy) Answer(api, outcome string) {
	m.answers.WithLabelValues(api, outcome).Inc()
}
