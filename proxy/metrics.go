package proxy

import (
	"strconv"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/httpapi"
	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the proxy's Prometheus metrics; a nil *metrics records
// nothing.
type metrics struct {
	requests      *prometheus.CounterVec   // by api, mode, status
	latency       *prometheus.HistogramVec // upstream time to the answer's header, by api
	contextTokens *prometheus.CounterVec   // by kind: sent, history
	answers       *prometheus.CounterVec   // by api, outcome: stored, truncated, failed
}

func newMetrics(reg *prometheus.Registry) *metrics {
	if reg == nil {
		return nil
	}
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentmem_proxy_requests_total",
			Help: "Requests to the OpenAI-compatible proxy, by API, memory mode and status.",
		}, []string{"api", "mode", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "agentmem_proxy_upstream_seconds",
			Help:    "Time from forwarding a request to the model server until its answer's header arrived.",
			Buckets: []float64{.05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120},
		}, []string{"api"}),
		contextTokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentmem_proxy_context_tokens_total",
			Help: "Tokens of the contexts the proxy sent (kind=sent) against the tokens of the histories they were drawn from (kind=history, estimated from the turns sent): the difference is the saving.",
		}, []string{"kind"}),
	}
	m.answers = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "agentmem_proxy_answers_total",
		Help: "Model answers the proxy stored, by API and outcome: stored, truncated (longer than the store's message bound: stored cut to it) or failed (not stored).",
	}, []string{"api", "outcome"})
	m.requests = httpapi.Register(reg, m.requests)
	m.answers = httpapi.Register(reg, m.answers)
	m.latency = httpapi.Register(reg, m.latency)
	m.contextTokens = httpapi.Register(reg, m.contextTokens)
	return m
}

// request counts a request by its outcome.
func (m *metrics) request(api, mode string, err error) {
	if m == nil {
		return
	}
	status := "200"
	if err != nil {
		status = strconv.Itoa(errorOf(err).status)
	}
	m.requests.WithLabelValues(api, mode, status).Inc()
}

func (m *metrics) upstream(api string, d time.Duration) {
	if m != nil {
		m.latency.WithLabelValues(api).Observe(d.Seconds())
	}
}

// tokens counts a context sent and the history it stands for: its
// messages as sent, and those it left out at their mean size.
func (m *metrics) tokens(t agentmem.Telemetry) {
	if m == nil {
		return
	}
	m.contextTokens.WithLabelValues("sent").Add(float64(t.UsedTokens))
	history := float64(t.Sections["messages"])
	if t.IncludedMessages > 0 {
		history += float64(t.OmittedMessages) * history / float64(t.IncludedMessages)
	}
	m.contextTokens.WithLabelValues("history").Add(history)
}

// answer counts an answer stored, by outcome.
func (m *metrics) answer(api, outcome string) {
	if m != nil {
		m.answers.WithLabelValues(api, outcome).Inc()
	}
}
