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
