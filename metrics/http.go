package metrics

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Served reports what became of a request once it was served: the label
// of the route pattern it matched ("/v1/users/{user}/threads", or
// "unmatched"), and the status sent. The handler that routes knows both
// (httpapi.Served); a middleware reads them after calling its next
// handler.
type Served func(r *http.Request) (route string, status int)

// HTTP returns a middleware that counts each request in
// agentmem_http_requests_total{method,route,code} and times it in
// agentmem_http_request_duration_seconds{method,route}, the route being
// the pattern served reports ("unmatched" when none matched, so that
// scanners probing random paths cannot grow the label set). Methods
// outside the standard ones are labelled "other" for the same reason.
func HTTP(reg prometheus.Registerer, served Served) func(http.Handler) http.Handler {
	requests := Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "agentmem_http_requests_total",
		Help: "HTTP requests served, by method, route pattern and status code.",
	}, []string{"method", "route", "code"}))
	duration := Register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "agentmem_http_request_duration_seconds",
		Help:    "Time to serve an HTTP request, by method and route pattern.",
		Buckets: prometheus.DefBuckets,
	}, []string{"method", "route"}))
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			defer func() { // deferred, so that a panicking handler is counted too
				route, status := served(r)
				method := methodLabel(r.Method)
				requests.WithLabelValues(method, route, strconv.Itoa(status)).Inc()
				duration.WithLabelValues(method, route).Observe(time.Since(start).Seconds())
			}()
			next.ServeHTTP(w, r)
		})
	}
}

func methodLabel(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return method
	}
	return "other"
}
