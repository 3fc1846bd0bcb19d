package agentmem

import "context"

// Store is everything a storage backend provides. The sqlite and postgres
// packages implement it, and storetest checks both against one contract.
// Every method but Stats and FindUserIDs reads or writes one user's data
// only: user_id leads every key.
type Store interface {
	ThreadStore
	MessageStore
	ElementStore
	SessionStore
	UserStore
	ImportStore

	// Ping checks that the database answers.
	Ping(ctx context.Context) error

	// Close releases the store's connections; in-flight calls finish first.
	Close() error
}
