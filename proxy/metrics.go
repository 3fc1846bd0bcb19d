package proxy

import (
	"net/http"
	"time"

	"github.com/agentmem/agentmem"
)

// Metrics records the proxy's work (metrics.NewProxy records it in
// Prometheus).
type Metrics interface {
	// Request counts a request by API (chat, responses, embeddings),
	// memory mode and the status it was answered with.
	Request(api, mode string, status int)
	// Upstream records how long the model server took to send the header
	// of its answer.
	Upstream(api string, d time.Duration)
	// ContextTokens counts the tokens of a context sent and of the
	// history it was drawn from: the difference is the saving.
	ContextTokens(sent, history float64)
	// Answer counts an answer by outcome: stored, truncated (stored cut
	// to the store's bound on a message) or failed (not stored).
	Answer(api, outcome string)
}

// metrics adapts the proxy's events to Options.Metrics; a nil *metrics
// records nothing.
type metrics struct{ m Metrics }

func newMetrics(m Metrics) *metrics {
	if m == nil {
		return nil
	}
	return &metrics{m}
}

// request counts a request by its outcome.
func (m *metrics) request(api, mode string, err error) {
	if m == nil {
		return
	}
	status := http.StatusOK
	if err != nil {
		status = errorOf(err).status
	}
	m.m.Request(api, mode, status)
}

func (m *metrics) upstream(api string, d time.Duration) {
	if m != nil {
		m.m.Upstream(api, d)
	}
}

// tokens counts a context sent and the history it stands for: its
// messages as sent, and those it left out at their mean size.
func (m *metrics) tokens(t agentmem.Telemetry) {
	if m == nil {
		return
	}
	history := float64(t.Sections["messages"])
	if t.IncludedMessages > 0 {
		history += float64(t.OmittedMessages) * history / float64(t.IncludedMessages)
	}
	m.m.ContextTokens(float64(t.UsedTokens), history)
}

// answer counts an answer stored, by outcome.
func (m *metrics) answer(api, outcome string) {
	if m != nil {
		m.m.Answer(api, outcome)
	}
}
