package agentmem

import (
	"context"
	"time"
)

// What search looks through (the scopes of a search request) and the
// kinds of the vectors and full-text entries the stores keep.
const (
	ScopeMemories  = "memories"  // Memory.Text
	ScopeMessages  = "messages"  // Message.Content (user and assistant turns)
	ScopeChunks    = "chunks"    // k turns flattened (issue 5, later)
	ScopeSummaries = "summaries" // thread summaries (later)
)

// Vector is an embedding of one item of a user: a memory, a message…
// Space names the embedder and its dimension ("lexical-v1/256",
// "openai/text-embedding-3-small/1536"): vectors of different spaces are
// never compared.
type Vector struct {
	Scope string    `json:"scope"` // ScopeMemories, ScopeMessages…
	ID    string    `json:"id"`    // the item's ID (a message's ID, not its seq)
	Space string    `json:"space"`
	Vec   []float32 `json:"vec"` // L2-normalised
}

// VectorStore stores embeddings. Exact search over one user's vectors is
// done in Go (package retrieve), which keeps it fast at any number of
// users and needs no database extension.
type VectorStore interface {
	// PutVectors stores vectors of the user, replacing those of the same
	// scope, ID and space. Returns EINVALID for an empty space or vector.
	PutVectors(ctx context.Context, userID string, vs []Vector) error

	// FindVectors returns all the user's vectors of a space in the given
	// scopes (all scopes when empty), in no particular order.
	FindVectors(ctx context.Context, userID, space string, scopes []string) ([]Vector, error)

	// VectorsVersion returns a value that changes whenever the user's
	// vectors of a space change (put, replaced or deleted with their
	// item), so that a cache of them knows when it is stale. It must be
	// cheap: it is read before every search.
	VectorsVersion(ctx context.Context, userID, space string) (string, error)
}

// TextQuery asks the store's full-text index for candidates.
type TextQuery struct {
	Query  string   // words; the store stems them and ORs them, best match first
	Scopes []string // ScopeMemories and/or ScopeMessages (both when empty)
	Limit  int      // at most this many hits (DefaultPageSize when 0)
	Filter SearchFilter
}

// SearchFilter narrows a search. Nil fields do not filter.
type SearchFilter struct {
	AgentID        *string
	ThreadID       *string
	Category       *string // memories only
	Since, Until   *time.Time
	IncludeInvalid bool // memories: also invalidated ones
}

// TextHit is one full-text candidate, best first. Score is the backend's
// relevance (higher is better: SQLite's -bm25, PostgreSQL's ts_rank_cd);
// scores are comparable within one result list only.
type TextHit struct {
	Scope     string    `json:"scope"`
	ID        string    `json:"id"`
	Score     float64   `json:"score"`
	Text      string    `json:"text"`
	ThreadID  string    `json:"thread_id,omitempty"`
	SeqFrom   int64     `json:"seq_from,omitempty"`
	SeqTo     int64     `json:"seq_to,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// TextSearcher is a store's full-text index.
type TextSearcher interface {
	// SearchText returns the best full-text candidates of the user for q,
	// best first. An empty query (no searchable words) returns no hits.
	SearchText(ctx context.Context, userID string, q TextQuery) ([]TextHit, error)

	// FindItems returns the searchable items of the user by scope and ID
	// (as TextHits with Score 0), for the vector candidates that full-text
	// did not return. Unknown IDs are left out.
	FindItems(ctx context.Context, userID, scope string, ids []string) ([]TextHit, error)
}
