package metrics

import (
	"context"
	"log/slog"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/prometheus/client_golang/prometheus"
)

// Stats is what the service reports of its own work, for metrics
// (*core.Service).
type Stats interface {
	// JobBacklog reports the jobs queued or running, by kind.
	JobBacklog(ctx context.Context) ([]agentmem.JobBacklog, error)
	// AdmissionStats reports the admission of expensive work, by class.
	AdmissionStats() []agentmem.AdmissionStats
	// IndexStageCosts reports the time indexing spent in each stage, and
	// the messages it indexed.
	IndexStageCosts() ([]agentmem.StageCost, int64)
	// ContextCacheStats reports the context builds the cache answered and
	// those it built.
	ContextCacheStats() (hits, misses uint64)
	// IndexShedding reports whether indexing sheds its optional work now.
	IndexShedding() bool
	// ExtractionFallbacks reports the batches of turns extracted without
	// the model, because it failed and because it answered malformed.
	ExtractionFallbacks() (failed, malformed int64)
}

// RegisterStats registers with reg the metrics of what s reports, read at
// each scrape: the job backlog, admission, the cost of indexing by stage,
// the context cache, indexing's shedding and extraction's fallbacks (see
// each collector). A registry shared by two servers keeps the first one's.
// A nil log discards.
func RegisterStats(reg prometheus.Registerer, s Stats, log *slog.Logger) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	registerContextCache(reg, s)
	registerIndexShedding(reg, s)
	registerExtractionFallbacks(reg, s)
	Register(reg, prometheus.Collector(&backlogCollector{stats: s, log: log}))
	Register(reg, prometheus.Collector(&admissionCollector{stats: s}))
	Register(reg, prometheus.Collector(&indexStagesCollector{stats: s}))
}

// backlogCollector exposes the background work waiting, read from the
// store at each scrape: agentmem_jobs_backlog{kind} (jobs queued or
// running) and agentmem_jobs_backlog_oldest_seconds{kind} (how long ago
// the oldest of them was enqueued: the indexing lag when kind="index").
// A kind with nothing waiting reports nothing; a store that does not
// answer within two seconds leaves both out of that scrape, and says so
// in the log.
type backlogCollector struct {
	stats Stats
	log   *slog.Logger
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
	backlog, err := c.stats.JobBacklog(ctx)
	if err != nil {
		c.log.Warn("job backlog unavailable for metrics", "err", err)
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
type admissionCollector struct{ stats Stats }

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
	for _, st := range c.stats.AdmissionStats() {
		ch <- prometheus.MustNewConstMetric(admissionLimitDesc, prometheus.GaugeValue, float64(st.Size), st.Work)
		ch <- prometheus.MustNewConstMetric(admissionRunningDesc, prometheus.GaugeValue, float64(st.Running), st.Work)
		ch <- prometheus.MustNewConstMetric(admissionWaitingDesc, prometheus.GaugeValue, float64(st.Waiting), st.Work)
		ch <- prometheus.MustNewConstMetric(admissionRejectedDesc, prometheus.CounterValue, float64(st.Rejected), st.Work)
	}
}

// indexStagesCollector exposes the cost of indexing by stage, read at
// each scrape: agentmem_index_stage_seconds_total{stage} (the time the
// index jobs spent in the stage since the start) and
// agentmem_index_messages_total (the messages they indexed), so that a
// stage's cost per message is the rate of the one over the rate of the
// other.
type indexStagesCollector struct{ stats Stats }

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
	costs, messages := c.stats.IndexStageCosts()
	for _, st := range costs {
		ch <- prometheus.MustNewConstMetric(indexStageDesc, prometheus.CounterValue, st.Time.Seconds(), st.Stage)
	}
	ch <- prometheus.MustNewConstMetric(indexMessagesDesc, prometheus.CounterValue, float64(messages))
}

// registerContextCache exposes the hits and misses of the cache of built
// contexts as agentmem_context_cache_requests_total{result="hit"} and
// {result="miss"}: every context build is one or the other, so the hit
// rate is hit / (hit + miss).
func registerContextCache(reg prometheus.Registerer, s Stats) {
	for _, result := range []string{"hit", "miss"} {
		Register(reg, prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name:        "agentmem_context_cache_requests_total",
			Help:        "Context builds, by whether the cache of built contexts answered them (hit) or they were built (miss).",
			ConstLabels: prometheus.Labels{"result": result},
		}, func() float64 {
			hits, misses := s.ContextCacheStats()
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
func registerIndexShedding(reg prometheus.Registerer, s Stats) {
	Register(reg, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "agentmem_index_shedding",
		Help: "1 while indexing is so far behind that it describes chunks without the model and extracts no entities, 0 otherwise.",
	}, func() float64 {
		if s.IndexShedding() {
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
func registerExtractionFallbacks(reg prometheus.Registerer, s Stats) {
	for _, reason := range []string{"model_failed", "malformed"} {
		Register(reg, prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name:        "agentmem_extraction_fallbacks_total",
			Help:        "Batches of turns whose memories were extracted without the model, by why: it failed, or its answer was malformed.",
			ConstLabels: prometheus.Labels{"reason": reason},
		}, func() float64 {
			failed, malformed := s.ExtractionFallbacks()
			if reason == "model_failed" {
				return float64(failed)
			}
			return float64(malformed)
		}))
	}
}
