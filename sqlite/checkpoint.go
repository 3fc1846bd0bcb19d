package sqlite

import "time"

// checkpointInterval is the least time between two checkpoints.
const checkpointInterval = 100 * time.Millisecond

// journalSizeLimit is the size, in bytes, to which the write-ahead log is
// cut back when it starts over.
const journalSizeLimit = 1 << 20

// checkpointLoop copies what the write-ahead log holds into the database
// file after commits, at most every checkpointInterval, with a PASSIVE
// checkpoint on a connection of its own: it waits for no reader and no
// writer, and no commit waits for it. It runs with synchronous NORMAL,
// where a commit does not fsync and SQLite's own checkpoint (in the
// connection that commits, each time the log passes 1,000 pages) was the
// only fsync on the request path: one append in a hundred took ~16 ms
// (docs/benchmarks.md). With FULL, where every commit fsyncs the log, the
// same loop made appends slower (p50 0.65 → 0.95 ms), so SQLite keeps
// checkpointing there. The log restarts from its beginning at the first
// write after a checkpoint that copied all of it.
func (s *Store) checkpointLoop() {
	defer close(s.checkpointed)
	for range s.committed {
		// A failure (the disk full, say) leaves the log as it is, to be
		// copied at the next try; commits go on meanwhile.
		_, _ = s.checkpointer.Exec(`PRAGMA wal_checkpoint(PASSIVE)`)
		select {
		case <-time.After(checkpointInterval):
		case <-s.stopped: // closing: the last connection's close checkpoints
		}
	}
}
