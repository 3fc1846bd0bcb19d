package agentmem

import (
	"context"
	"time"
)

// Counts tells how many records an erasure or clean-up removed (or, in a
// dry run, would remove).
type Counts struct {
	Users    int64 `json:"users,omitempty"`
	Threads  int64 `json:"threads"`
	Messages int64 `json:"messages"`
	Elements int64 `json:"elements"`
	Sessions int64 `json:"sessions"`
}

// Add adds o to c.
func (c *Counts) Add(o Counts) {
	c.Users += o.Users
	c.Threads += o.Threads
	c.Messages += o.Messages
	c.Elements += o.Elements
	c.Sessions += o.Sessions
}

// Stats describes a whole store, for operators.
type Stats struct {
	Users      int64 `json:"users"`
	Threads    int64 `json:"threads"`
	Messages   int64 `json:"messages"`
	StoreBytes int64 `json:"store_bytes"`
	// Tables is what each table of the store takes, with its indexes
	// (and, on SQLite, an FTS index's tables under their own names),
	// largest first: where the bytes per message go.
	Tables []TableSize `json:"tables"`
}

// TableSize is the bytes a table of the store takes.
type TableSize struct {
	Table string `json:"table"`
	Bytes int64  `json:"bytes"`
}

// UserStore holds what concerns a user as a whole, and the few operator
// calls that visit every user.
type UserStore interface {
	// DeleteUser erases everything stored for the user and nothing of any
	// other user, and reports what it removed. Erasing an unknown user
	// removes nothing and is not an error. API keys and audit events that
	// name the user are not user data and stay: the erasure's own audit
	// record must survive it, and revoking keys is a separate act.
	DeleteUser(ctx context.Context, userID string) (Counts, error)

	// FindUserIDs returns a page of user IDs in ascending order, after the
	// given one ("" for the first page).
	FindUserIDs(ctx context.Context, after string, limit int) ([]string, error)

	// DeleteThreadsBefore permanently deletes the user's threads (soft-
	// deleted or not) last updated before cutoff, with their messages,
	// elements, sessions and summaries (as DeleteThread); with dryRun it
	// only counts them.
	DeleteThreadsBefore(ctx context.Context, userID string, cutoff time.Time, dryRun bool) (Counts, error)

	// Stats counts users, threads and messages and measures the store.
	Stats(ctx context.Context) (*Stats, error)
}
