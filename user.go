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
	// other user, and reports what it removed. The user's jobs go with
	// the rest, so that those running meanwhile store nothing after it
	// (see Store); the user may start again under the same ID at once. Erasing an unknown user
	// removes nothing and is not an error. API keys and audit events that
	// name the user are not user data and stay: the erasure's own audit
	// record must survive it, and revoking keys is a separate act.
	DeleteUser(ctx context.Context, userID string) (Counts, error)

	// FindUserIDs returns a page of user IDs in ascending order, after the
	// given one ("" for the first page).
	FindUserIDs(ctx context.Context, after string, limit int) ([]string, error)

	// FindUsers returns a page of users (those FindUserIDs lists) with
	// their counts, in ascending user ID order, and the next cursor (""
	// on the last page). It reads every user (an operator's view).
	// Returns EINVALID for a malformed cursor or limit.
	FindUsers(ctx context.Context, f UserFilter) ([]*UserSummary, string, error)

	// DeleteThreadsBefore permanently deletes the user's threads (soft-
	// deleted or not) last updated before cutoff, with their messages,
	// elements, sessions and summaries (as DeleteThread); with dryRun it
	// only counts them.
	DeleteThreadsBefore(ctx context.Context, userID string, cutoff time.Time, dryRun bool) (Counts, error)

	// Stats counts users, threads and messages and measures the store.
	Stats(ctx context.Context) (*Stats, error)
}

// UserSummary is a user as an operator's list shows them: what they hold
// and when they were last active.
type UserSummary struct {
	UserID   string `json:"user_id"`
	Threads  int64  `json:"threads"`  // threads not deleted
	Messages int64  `json:"messages"` // messages of those threads
	Memories int64  `json:"memories"` // valid memories (not invalidated)
	// LastActiveAt is the newest updated_at of the user's threads not
	// deleted; nil when there is none.
	LastActiveAt *time.Time `json:"last_active_at"`
}

// UserFilter pages through FindUsers.
type UserFilter struct {
	// UserID, when set, keeps only that user: a page of one, or none when
	// the store has no such user (an operator asking whether it has).
	UserID *string
	Limit  int    // page size; 0 means DefaultPageSize, capped at MaxPageSize
	Cursor string // opaque, from a previous page's next cursor
}

// UserCursor is the keyset position of FindUsers: the last user's ID.
type UserCursor struct {
	UserID string `json:"u"`
}

// UserPage cuts a result fetched with limit+1 rows to limit and returns
// the cursor of the next page ("" when there is none).
func UserPage(users []*UserSummary, limit int) ([]*UserSummary, string) {
	return CutPage(users, limit, ListOf(ListUsers), func(last *UserSummary) any { return UserCursor{UserID: last.UserID} })
}

// After returns the user ID the page of f begins after ("" for the first
// page). Returns EINVALID for a malformed cursor.
func (f UserFilter) After() (string, error) {
	if f.Cursor == "" {
		return "", nil
	}
	var c UserCursor
	if err := DecodeCursor(f.Cursor, ListOf(ListUsers), &c); err != nil {
		return "", err
	}
	return c.UserID, nil
}
