package agentmem

import "context"

// Store is everything a storage backend provides. The sqlite and postgres
// packages implement it, and storetest checks both against one contract.
// Every method but Stats, FindUserIDs, ClaimJobs, FindJobs and those of
// KeyStore and AuditStore reads or writes one user's data only: user_id
// leads every key. Jobs, summaries, memories and vectors are user data
// too; the job queue is shared, so claiming and listing jobs visit every
// user. API keys and the audit log are reference data shared by all
// users; erasing a user leaves both in place.
//
// Every write made with the context of a job's run (WithJob) is the job's:
// the store makes it only if, in the write's own transaction, the job is
// still there and running under the run's owner (ENOTFOUND when it is
// gone, ECONFLICT when another worker holds it; see CheckJobRun), and
// stores nothing otherwise. DeleteUser deletes the user's jobs, so a job
// that was running when its user was erased stores nothing after the
// erasure, whatever it had read or computed before it.
type Store interface {
	ThreadStore
	MessageStore
	ElementStore
	SessionStore
	UserStore
	ImportStore
	KeyStore
	AuditStore
	JobStore
	SummaryStore
	ChunkStore
	ReflectionStore
	ProfileStore
	NotesStore
	MemoryStore
	EntityStore
	VectorStore
	TextSearcher

	// Ping checks that the database answers.
	Ping(ctx context.Context) error

	// Close releases the store's connections; in-flight calls finish first.
	Close() error
}
