package agentmem

import "time"

// AdmissionStats is what the admission of expensive work reports of one
// class of it (search, bulk: see core.Admitter), for metrics.
type AdmissionStats struct {
	Work     string // the class: "search" or "bulk"
	Size     int64  // the weight that may run at once (0: no bound)
	Running  int64  // weight held now
	Waiting  int64  // requests waiting now
	Rejected uint64 // requests refused since the start
}

// StageCost is the time the index jobs have spent in one stage of
// indexing (windows, chunks, extract, consolidate, entities) since the
// start, for metrics.
type StageCost struct {
	Stage string
	Time  time.Duration
}
