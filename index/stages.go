package index

import (
	"sync/atomic"
	"time"

	"github.com/agentmem/agentmem"
)

// Stages of the index job, whose cost the Indexer accounts for (see
// Indexer.StageCosts).
const (
	StageWindows     = "windows"     // each turn's window: full-text and its vector
	StageChunks      = "chunks"      // the chunks the turns complete: description and vectors
	StageExtract     = "extract"     // the memories the turns hold, proposed and weighed
	StageConsolidate = "consolidate" // each proposal embedded and decided against the user's memories
	StageEntities    = "entities"    // the entities the turns mention
)

// stageNames is every stage, in the order the job runs them.
var stageNames = [...]string{StageWindows, StageChunks, StageExtract, StageConsolidate, StageEntities}

// StageCost is the time the index jobs of an Indexer have spent in one
// stage since it was made.
type StageCost = agentmem.StageCost

// stageClock accumulates the time of each stage and the messages indexed.
type stageClock struct {
	ns       [len(stageNames)]atomic.Int64
	messages atomic.Int64
}

// since adds the time since start to stage i.
func (c *stageClock) since(i int, start time.Time) { c.ns[i].Add(int64(time.Since(start))) }

// stage indexes of stageNames.
const (
	stWindows = iota
	stChunks
	stExtract
	stConsolidate
	stEntities
)

// StageCosts returns the time the Indexer's jobs have spent in each stage
// since it was made (the wall time of the stage: the model's forward
// passes in extract and consolidate use every core), and how many
// messages they indexed: the per-message cost of each stage is their
// quotient. For metrics and benchmarks; every stage costs 0 without an
// Indexer.
func (ix *Indexer) StageCosts() (costs []StageCost, messages int64) {
	for i, name := range stageNames {
		costs = append(costs, StageCost{Stage: name})
		if ix != nil {
			costs[i].Time = time.Duration(ix.clock.ns[i].Load())
		}
	}
	if ix == nil {
		return costs, 0
	}
	return costs, ix.clock.messages.Load()
}
