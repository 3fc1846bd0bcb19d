package agentmem

import (
	"context"
	"time"
)

// Session is the active thread of a (user, agent) pair (seed 003): the
// thread a client resumes when it does not know one.
type Session struct {
	UserID    string    `json:"user_id"`
	AgentID   string    `json:"agent_id"`
	ThreadID  string    `json:"thread_id"`
	UpdatedAt time.Time `json:"updated_at"`
}

// SessionStore stores active sessions.
type SessionStore interface {
	// FindSession returns the active session of the user and agent. Returns
	// ENOTFOUND if none is set or its thread no longer exists.
	FindSession(ctx context.Context, userID, agentID string) (*Session, error)

	// SetSession makes threadID the active thread of the user and agent.
	// Concurrent OpenSession calls never undo it: one that comes first
	// made a session that this one replaces, one that comes after finds
	// this one. Returns ENOTFOUND if the thread does not exist.
	SetSession(ctx context.Context, userID, agentID, threadID string) (*Session, error)

	// OpenSession returns the active session of the user and agent, or,
	// when there is none (or its thread no longer exists), creates t (as
	// CreateThread does) and makes it the active thread, atomically:
	// concurrent calls for one user and agent create one thread, and the
	// others return its session. created reports whether t was created.
	OpenSession(ctx context.Context, userID, agentID string, t *Thread) (s *Session, created bool, err error)
}
