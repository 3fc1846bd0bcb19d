// Package metrics is agentmem's instrumentation: Prometheus metrics and
// OpenTelemetry traces of every face of the server. It owns both
// technologies, so that the faces (httpapi, proxy) and the parts below
// them (stores, models) stay free of them; cmd/agentmem wires it.
//
//   - HTTP and TraceHTTP are middleware of the REST handler
//     (httpapi.Options.Middleware): request counts and times by route;
//     one span per request.
//   - Store, Chat and Embedder decorate the store and the models: every
//     call timed, counted and traced.
//   - Service traces every use case of an agentmem.Service.
//   - RegisterStats exposes what the service reports of its own work
//     (backlog, admission, indexing, the context cache).
//   - NewProxy records the OpenAI-compatible proxy's requests
//     (proxy.Options.Metrics).
//   - Tracing exports spans over OTLP/HTTP when the standard
//     OTEL_EXPORTER_OTLP_* variables say where.
//
// A nil Registerer records no metrics and a nil TracerProvider no spans:
// each decorator then returns what it was given, unchanged.
package metrics

import (
	"errors"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Register registers c with reg, or returns the equal collector registered
// before (so that two handlers, or a handler and a test, can share a
// registry).
//
// Any other failure is a collector of the same name with other labels: a
// wiring bug, found at start-up. It panics, as ServeMux.Handle does for
// conflicting patterns in the same constructor, because the decorators
// and middleware have no error to return it in.
func Register[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	if err := reg.Register(c); err != nil {
		var already prometheus.AlreadyRegisteredError
		if errors.As(err, &already) {
			if existing, ok := already.ExistingCollector.(C); ok {
				return existing
			}
		}
		panic("metrics: register metric: " + err.Error())
	}
	return c
}

// Handler serves the metrics of reg in Prometheus' text exposition format
// (httpapi.Options.Metrics serves it at GET /metrics).
func Handler(reg *prometheus.Registry) http.Handler {
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg})
}
