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

// Required names what a write depends on, for a write made on the request
// path after reads in other transactions (an embedding stored once its
// memory is; a summary job asked for once the thread is read): with the
// context of WithRequired, a store makes the write only if the thread and
// the memory named (those not "") still exist, checked in the write's own
// transaction, and returns ENOTFOUND, storing nothing, otherwise. So a
// request in flight while its user is erased (or the item deleted) leaves
// nothing behind. (A job's writes are guarded by their job: see WithJob.)
type Required struct {
	UserID   string
	ThreadID string // a thread not permanently deleted
	MemoryID string
}

type requiredKey struct{}

// WithRequired returns ctx with the requirement r for the writes made
// with it (see Required).
func WithRequired(ctx context.Context, r Required) context.Context {
	return context.WithValue(ctx, requiredKey{}, r)
}

// RequiredFromContext returns the requirement of WithRequired, if any.
func RequiredFromContext(ctx context.Context) (Required, bool) {
	r, ok := ctx.Value(requiredKey{}).(Required)
	return r, ok
}

// MissingRequired is the error of a write whose requirement does not hold:
// the thread (or memory, when thread is false) of r is gone.
func MissingRequired(r Required, thread bool) error {
	if thread {
		return Errorf(ENOTFOUND, "Thread %q not found.", r.ThreadID)
	}
	return Errorf(ENOTFOUND, "Memory %q not found.", r.MemoryID)
}
