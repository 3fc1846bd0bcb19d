package httpapi

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/core"
	"github.com/prometheus/client_golang/prometheus"
)

// httpMetrics are the request metrics of NewHandler.
type httpMetrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

func newHTTPMetrics(reg prometheus.Registerer) *httpMetrics {
	return &httpMetrics{
		requests: Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentmem_http_requests_total",
			Help: "HTTP requests served, by method, route pattern and status code.",
		}, []string{"method", "route", "code"})),
		duration: Register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "agentmem_http_request_duration_seconds",
			Help:    "Time to serve an HTTP request, by method and route pattern.",
			Buckets: prometheus.DefBuckets,
		}, []string{"method", "route"})),
	}
}

// measure counts and times each request under its route pattern
// ("unmatched" when none matched, so that scanners probing random paths
// cannot grow the label set). Methods outside the standard ones are
// labelled "other" for the same reason.
func (m *httpMetrics) measure(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info, w, r := track(w, r)
		start := time.Now()
		defer func() {
			method, route := methodLabel(r.Method), info.routeLabel()
			m.requests.WithLabelValues(method, route, strconv.Itoa(info.code())).Inc()
			m.duration.WithLabelValues(method, route).Observe(time.Since(start).Seconds())
		}()
		next.ServeHTTP(w, r)
	})
}

func methodLabel(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return method
	}
	return "other"
}

// backlogCollector exposes the background work waiting, read from the
// store at each scrape: agentmem_jobs_backlog{kind} (jobs queued or
// running) and agentmem_jobs_backlog_oldest_seconds{kind} (how long ago
// the oldest of them was enqueued: the indexing lag when kind="index").
// A kind with nothing waiting reports nothing; a store that does not
// answer within two seconds leaves both out of that scrape, and says so
// in the log.
type backlogCollector struct {
	svc *core.Service
	log *slog.Logger
}

var (
	backlogJobsDesc = prometheus.NewDesc("agentmem_jobs_backlog",
		"Background jobs queued or running, by kind.", []string{"kind"}, nil)
	backlogOldestDesc = prometheus.NewDesc("agentmem_jobs_backlog_oldest_seconds",
		"Age of the oldest background job queued or running, by kind (for index jobs: how far indexing lags).", []string{"kind"}, nil)
)

func (c *backlogCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- backlogJobsDesc
	ch <- backlogOldestDesc
}

func (c *backlogCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	backlog, err := c.svc.JobBacklog(ctx)
	if err != nil {
		c.log.Warn("job backlog unavailable for metrics", agentmem.LogErr, err)
		return
	}
	now := time.Now()
	for _, b := range backlog {
		ch <- prometheus.MustNewConstMetric(backlogJobsDesc, prometheus.GaugeValue, float64(b.Jobs), b.Kind)
		ch <- prometheus.MustNewConstMetric(backlogOldestDesc, prometheus.GaugeValue, max(now.Sub(b.Oldest).Seconds(), 0), b.Kind)
	}
}

// admissionCollector exposes the admission of expensive work
// (core.Admitter), by class of work (search, bulk), read at each scrape:
// agentmem_admission_limit{work} (the weight that may run at once; no
// class is reported when nothing is bounded), agentmem_admission_running
// and agentmem_admission_waiting (now), and
// agentmem_admission_rejected_total (requests refused with 503 since the
// start, and contexts built without their memories).
type admissionCollector struct{ svc *core.Service }

var (
	admissionLimitDesc = prometheus.NewDesc("agentmem_admission_limit",
		"Weight of expensive work of the class that may run at once (0: no bound).", []string{"work"}, nil)
	admissionRunningDesc = prometheus.NewDesc("agentmem_admission_running",
		"Weight of expensive work of the class running now.", []string{"work"}, nil)
	admissionWaitingDesc = prometheus.NewDesc("agentmem_admission_waiting",
		"Requests waiting for their turn in the class now.", []string{"work"}, nil)
	admissionRejectedDesc = prometheus.NewDesc("agentmem_admission_rejected_total",
		"Requests of the class refused as the server was busy (503 with Retry-After; a context's memories left out).", []string{"work"}, nil)
)

func (c *admissionCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- admissionLimitDesc
	ch <- admissionRunningDesc
	ch <- admissionWaitingDesc
	ch <- admissionRejectedDesc
}

func (c *admissionCollector) Collect(ch chan<- prometheus.Metric) {
	for _, st := range c.svc.AdmissionStats() {
		w := string(st.Work)
		ch <- prometheus.MustNewConstMetric(admissionLimitDesc, prometheus.GaugeValue, float64(st.Size), w)
		ch <- prometheus.MustNewConstMetric(admissionRunningDesc, prometheus.GaugeValue, float64(st.Running), w)
		ch <- prometheus.MustNewConstMetric(admissionWaitingDesc, prometheus.GaugeValue, float64(st.Waiting), w)
		ch <- prometheus.MustNewConstMetric(admissionRejectedDesc, prometheus.CounterValue, float64(st.Rejected), w)
	}
}

// indexStagesCollector exposes the cost of indexing by stage, read at
// each scrape: agentmem_index_stage_seconds_total{stage} (the time the
// index jobs spent in the stage since the start) and
// agentmem_index_messages_total (the messages they indexed), so that a
// stage's cost per message is the rate of the one over the rate of the
// other.
type indexStagesCollector struct{ svc *core.Service }

var (
	indexStageDesc = prometheus.NewDesc("agentmem_index_stage_seconds_total",
		"Time the index jobs spent in the stage since the start: windows, chunks, extract, consolidate, entities.", []string{"stage"}, nil)
	indexMessagesDesc = prometheus.NewDesc("agentmem_index_messages_total",
		"Messages the index jobs indexed since the start.", nil, nil)
)

func (c *indexStagesCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- indexStageDesc
	ch <- indexMessagesDesc
}

func (c *indexStagesCollector) Collect(ch chan<- prometheus.Metric) {
	costs, messages := c.svc.IndexStageCosts()
	for _, st := range costs {
		ch <- prometheus.MustNewConstMetric(indexStageDesc, prometheus.CounterValue, st.Time.Seconds(), st.Stage)
	}
	ch <- prometheus.MustNewConstMetric(indexMessagesDesc, prometheus.CounterValue, float64(messages))
}

// registerContextCache exposes the hits and misses of svc's cache of
// built contexts as agentmem_context_cache_requests_total{result="hit"}
// and {result="miss"}: every context build is one or the other, so the
// hit rate is hit / (hit + miss). A registry shared by two handlers keeps
// the first one's.
func registerContextCache(reg prometheus.Registerer, svc *core.Service) {
	for _, result := range []string{"hit", "miss"} {
		Register(reg, prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name:        "agentmem_context_cache_requests_total",
			Help:        "Context builds, by whether the cache of built contexts answered them (hit) or they were built (miss).",
			ConstLabels: prometheus.Labels{"result": result},
		}, func() float64 {
			hits, misses := svc.ContextCacheStats()
			if result == "hit" {
				return float64(hits)
			}
			return float64(misses)
		}))
	}
}

// registerIndexShedding exposes agentmem_index_shedding: 1 while indexing
// sheds its optional work, being far behind (index.Indexer.ShedBacklog),
// 0 otherwise.
func registerIndexShedding(reg prometheus.Registerer, svc *core.Service) {
	Register(reg, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "agentmem_index_shedding",
		Help: "1 while indexing is so far behind that it describes chunks without the model and extracts no entities, 0 otherwise.",
	}, func() float64 {
		if svc.IndexShedding() {
			return 1
		}
		return 0
	}))
}

// registerExtractionFallbacks exposes
// agentmem_extraction_fallbacks_total{reason="model_failed"} and
// {reason="malformed"}: the batches of turns extracted without the model
// because it failed, or answered in a shape other than the one asked for
// (see extract.ModelExtractor); both stay 0 without a model.
func registerExtractionFallbacks(reg prometheus.Registerer, svc *core.Service) {
	for _, reason := range []string{"model_failed", "malformed"} {
		Register(reg, prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name:        "agentmem_extraction_fallbacks_total",
			Help:        "Batches of turns whose memories were extracted without the model, by why: it failed, or its answer was malformed.",
			ConstLabels: prometheus.Labels{"reason": reason},
		}, func() float64 {
			failed, malformed := svc.ExtractionFallbacks()
			if reason == "model_failed" {
				return float64(failed)
			}
			return float64(malformed)
		}))
	}
}

// Register registers c with reg, or returns the equal collector registered
// before (so that two handlers, or a handler and a test, can share a
// registry).
//
// Any other failure is a collector of the same name with other labels: a
// wiring bug, found at start-up. It panics, as ServeMux.Handle does for
// conflicting patterns in the same constructor, because NewHandler and
// InstrumentStore have no error to return it in.
func Register[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	if err := reg.Register(c); err != nil {
		var already prometheus.AlreadyRegisteredError
		if errors.As(err, &already) {
			if existing, ok := already.ExistingCollector.(C); ok {
				return existing
			}
		}
		panic("httpapi: register metric: " + err.Error())
	}
	return c
}

// InstrumentStore returns s with every call timed into the histogram
// agentmem_store_operation_duration_seconds{op} and every failure counted
// in agentmem_store_operation_errors_total{op,code}, where op is the
// method's name in snake case (append_messages) and code its
// agentmem.ErrorCode. A nil reg returns s unchanged.
//
// A method added to agentmem.Store later passes through the embedded Store
// untimed until it is added here.
func InstrumentStore(s agentmem.Store, reg prometheus.Registerer) agentmem.Store {
	if reg == nil {
		return s
	}
	return &instrumentedStore{
		Store: s,
		duration: Register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "agentmem_store_operation_duration_seconds",
			Help:    "Time of a store call, by operation.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"op"})),
		errors: Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentmem_store_operation_errors_total",
			Help: "Store calls that failed, by operation and agentmem error code.",
		}, []string{"op", "code"})),
	}
}

type instrumentedStore struct {
	agentmem.Store
	duration *prometheus.HistogramVec
	errors   *prometheus.CounterVec
}

// observe records a call of op begun at start; it is deferred, so it reads
// the call's error through a pointer to the named result.
func (s *instrumentedStore) observe(op string, start time.Time, err *error) {
	s.duration.WithLabelValues(op).Observe(time.Since(start).Seconds())
	if *err != nil {
		s.errors.WithLabelValues(op, agentmem.ErrorCode(*err)).Inc()
	}
}

func (s *instrumentedStore) CreateThread(ctx context.Context, t *agentmem.Thread) (err error) {
	defer s.observe("create_thread", time.Now(), &err)
	return s.Store.CreateThread(ctx, t)
}

func (s *instrumentedStore) FindThreadByID(ctx context.Context, userID, id string) (_ *agentmem.Thread, err error) {
	defer s.observe("find_thread_by_id", time.Now(), &err)
	return s.Store.FindThreadByID(ctx, userID, id)
}

func (s *instrumentedStore) FindThreads(ctx context.Context, userID string, f agentmem.ThreadFilter) (_ []*agentmem.Thread, _ string, err error) {
	defer s.observe("find_threads", time.Now(), &err)
	return s.Store.FindThreads(ctx, userID, f)
}

func (s *instrumentedStore) UpdateThread(ctx context.Context, userID, id string, upd agentmem.ThreadUpdate) (_ *agentmem.Thread, err error) {
	defer s.observe("update_thread", time.Now(), &err)
	return s.Store.UpdateThread(ctx, userID, id, upd)
}

func (s *instrumentedStore) EndThread(ctx context.Context, userID, id string) (_ *agentmem.Thread, err error) {
	defer s.observe("end_thread", time.Now(), &err)
	return s.Store.EndThread(ctx, userID, id)
}

func (s *instrumentedStore) DeleteThread(ctx context.Context, userID, id string, permanent bool) (err error) {
	defer s.observe("delete_thread", time.Now(), &err)
	return s.Store.DeleteThread(ctx, userID, id, permanent)
}

func (s *instrumentedStore) AppendMessages(ctx context.Context, userID, threadID string, msgs []*agentmem.Message, opt agentmem.AppendOptions) (_ []*agentmem.Message, err error) {
	defer s.observe("append_messages", time.Now(), &err)
	return s.Store.AppendMessages(ctx, userID, threadID, msgs, opt)
}

func (s *instrumentedStore) FindMessages(ctx context.Context, userID, threadID string, f agentmem.MessageFilter) (_ []*agentmem.Message, _ string, err error) {
	defer s.observe("find_messages", time.Now(), &err)
	return s.Store.FindMessages(ctx, userID, threadID, f)
}

func (s *instrumentedStore) CreateElement(ctx context.Context, userID, threadID string, e *agentmem.Element) (err error) {
	defer s.observe("create_element", time.Now(), &err)
	return s.Store.CreateElement(ctx, userID, threadID, e)
}

func (s *instrumentedStore) FindElements(ctx context.Context, userID, threadID string, f agentmem.ElementFilter) (_ []*agentmem.Element, _ string, err error) {
	defer s.observe("find_elements", time.Now(), &err)
	return s.Store.FindElements(ctx, userID, threadID, f)
}

func (s *instrumentedStore) FindSession(ctx context.Context, userID, agentID string) (_ *agentmem.Session, err error) {
	defer s.observe("find_session", time.Now(), &err)
	return s.Store.FindSession(ctx, userID, agentID)
}

func (s *instrumentedStore) SetSession(ctx context.Context, userID, agentID, threadID string) (_ *agentmem.Session, err error) {
	defer s.observe("set_session", time.Now(), &err)
	return s.Store.SetSession(ctx, userID, agentID, threadID)
}

func (s *instrumentedStore) DeleteUser(ctx context.Context, userID string) (_ agentmem.Counts, err error) {
	defer s.observe("delete_user", time.Now(), &err)
	return s.Store.DeleteUser(ctx, userID)
}

func (s *instrumentedStore) FindUserIDs(ctx context.Context, after string, limit int) (_ []string, err error) {
	defer s.observe("find_user_ids", time.Now(), &err)
	return s.Store.FindUserIDs(ctx, after, limit)
}

func (s *instrumentedStore) DeleteThreadsBefore(ctx context.Context, userID string, cutoff time.Time, dryRun bool) (_ agentmem.Counts, err error) {
	defer s.observe("delete_threads_before", time.Now(), &err)
	return s.Store.DeleteThreadsBefore(ctx, userID, cutoff, dryRun)
}

func (s *instrumentedStore) Stats(ctx context.Context) (_ *agentmem.Stats, err error) {
	defer s.observe("stats", time.Now(), &err)
	return s.Store.Stats(ctx)
}

func (s *instrumentedStore) ImportThread(ctx context.Context, userID string, x *agentmem.ThreadExport) (_ *agentmem.Thread, err error) {
	defer s.observe("import_thread", time.Now(), &err)
	return s.Store.ImportThread(ctx, userID, x)
}

func (s *instrumentedStore) Ping(ctx context.Context) (err error) {
	defer s.observe("ping", time.Now(), &err)
	return s.Store.Ping(ctx)
}

func (s *instrumentedStore) Close() (err error) {
	defer s.observe("close", time.Now(), &err)
	return s.Store.Close()
}

func (s *instrumentedStore) FindKeyByID(ctx context.Context, id string) (_ *agentmem.APIKey, err error) {
	defer s.observe("find_key_by_id", time.Now(), &err)
	return s.Store.FindKeyByID(ctx, id)
}

func (s *instrumentedStore) PutSummary(ctx context.Context, sum *agentmem.Summary) (_ *agentmem.Summary, err error) {
	defer s.observe("put_summary", time.Now(), &err)
	return s.Store.PutSummary(ctx, sum)
}

func (s *instrumentedStore) FindSummary(ctx context.Context, userID, threadID string) (_ *agentmem.Summary, err error) {
	defer s.observe("find_summary", time.Now(), &err)
	return s.Store.FindSummary(ctx, userID, threadID)
}

func (s *instrumentedStore) EnqueueJob(ctx context.Context, j *agentmem.Job) (_ *agentmem.Job, err error) {
	defer s.observe("enqueue_job", time.Now(), &err)
	return s.Store.EnqueueJob(ctx, j)
}

func (s *instrumentedStore) ClaimJobs(ctx context.Context, owner string, kinds []string, n int, lease time.Duration) (_ []*agentmem.Job, err error) {
	defer s.observe("claim_jobs", time.Now(), &err)
	return s.Store.ClaimJobs(ctx, owner, kinds, n, lease)
}

func (s *instrumentedStore) CompleteJob(ctx context.Context, userID, id, owner string) (err error) {
	defer s.observe("complete_job", time.Now(), &err)
	return s.Store.CompleteJob(ctx, userID, id, owner)
}

func (s *instrumentedStore) FailJob(ctx context.Context, userID, id, owner, errMsg string, retryAt time.Time) (err error) {
	defer s.observe("fail_job", time.Now(), &err)
	return s.Store.FailJob(ctx, userID, id, owner, errMsg, retryAt)
}
func (s *instrumentedStore) VectorSpaces(ctx context.Context, userID string) (_ []string, err error) {
	defer s.observe("vector_spaces", time.Now(), &err)
	return s.Store.VectorSpaces(ctx, userID)
}
func (s *instrumentedStore) DeleteVectorSpace(ctx context.Context, userID, space string) (err error) {
	defer s.observe("delete_vector_space", time.Now(), &err)
	return s.Store.DeleteVectorSpace(ctx, userID, space)
}

func (s *instrumentedStore) OpenSession(ctx context.Context, userID, agentID string, t *agentmem.Thread) (_ *agentmem.Session, _ bool, err error) {
	defer s.observe("open_session", time.Now(), &err)
	return s.Store.OpenSession(ctx, userID, agentID, t)
}

func (s *instrumentedStore) ReleaseJob(ctx context.Context, userID, id, owner string) (err error) {
	defer s.observe("release_job", time.Now(), &err)
	return s.Store.ReleaseJob(ctx, userID, id, owner)
}
