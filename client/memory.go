package client

import (
	"context"
	"iter"
	"net/http"
	"net/url"
	"strconv"

	"github.com/agentmem/agentmem"
)

// The MemoryService over REST: memories, search and facts.

func memoryPath(userID string, rest ...string) []string {
	return append([]string{"v1", "users", userID, "memories"}, rest...)
}

// CreateMemory implements agentmem.MemoryService: POST …/memories.
func (c *Client) CreateMemory(ctx context.Context, userID string, in agentmem.MemoryInput) (*agentmem.Memory, error) {
	var out agentmem.Memory
	return &out, c.do(ctx, call{method: http.MethodPost, path: memoryPath(userID), in: in, out: &out})
}

// FindMemoryByID implements agentmem.MemoryService: GET
// …/memories/{memory}.
func (c *Client) FindMemoryByID(ctx context.Context, userID, id string) (*agentmem.Memory, error) {
	var out agentmem.Memory
	return &out, c.do(ctx, call{method: http.MethodGet, path: memoryPath(userID, id), out: &out})
}

// FindMemories implements agentmem.MemoryService: GET …/memories with
// kind, category, agent_id, thread_id, processed, include_invalid, limit
// and cursor. UpdatedAfter has no parameter (EINVALID).
func (c *Client) FindMemories(ctx context.Context, userID string, f agentmem.MemoryFilter) ([]*agentmem.Memory, string, error) {
	if f.UpdatedAfter != nil {
		return nil, "", notInAPI("MemoryFilter.UpdatedAfter")
	}
	q := url.Values{}
	setPtr(q, "kind", f.Kind)
	setPtr(q, "category", f.Category)
	setPtr(q, "agent_id", f.AgentID)
	setPtr(q, "thread_id", f.ThreadID)
	if f.Processed != nil {
		q.Set("processed", strconv.FormatBool(*f.Processed))
	}
	if f.IncludeInvalid {
		q.Set("include_invalid", "true")
	}
	setPage(q, f.Limit, f.Cursor)
	return list[*agentmem.Memory](ctx, c, memoryPath(userID), q)
}

// AllMemories iterates over the user's memories that f selects.
func (c *Client) AllMemories(ctx context.Context, userID string, f agentmem.MemoryFilter) iter.Seq2[*agentmem.Memory, error] {
	return all(f.Cursor, func(cursor string) ([]*agentmem.Memory, string, error) {
		f.Cursor = cursor
		return c.FindMemories(ctx, userID, f)
	})
}

// UpdateMemory implements agentmem.MemoryService: PATCH
// …/memories/{memory}. A change's provenance (upd.ThreadID, SeqFrom,
// SeqTo) is set by extraction in the server and cannot be sent
// (EINVALID).
func (c *Client) UpdateMemory(ctx context.Context, userID, id string, upd agentmem.MemoryUpdate) (*agentmem.Memory, error) {
	if upd.ThreadID != "" || upd.SeqFrom != 0 || upd.SeqTo != 0 {
		return nil, notInAPI("MemoryUpdate's provenance (ThreadID, SeqFrom, SeqTo)")
	}
	var out agentmem.Memory
	return &out, c.do(ctx, call{method: http.MethodPatch, path: memoryPath(userID, id), in: upd, out: &out})
}

// DeleteMemory implements agentmem.MemoryService: DELETE
// …/memories/{memory}.
func (c *Client) DeleteMemory(ctx context.Context, userID, id string) error {
	return c.do(ctx, call{method: http.MethodDelete, path: memoryPath(userID, id)})
}

// InvalidateMemory implements agentmem.MemoryService: POST
// …/memories/{memory}/invalidate. Invalidating twice changes nothing, so
// it is retried.
func (c *Client) InvalidateMemory(ctx context.Context, userID, id string, inv agentmem.MemoryInvalidation) (*agentmem.Memory, error) {
	var out agentmem.Memory
	return &out, c.do(ctx, call{method: http.MethodPost, path: memoryPath(userID, id, "invalidate"), idempotent: true, in: inv, out: &out})
}

// FindMemoryHistory implements agentmem.MemoryService: GET
// …/memories/{memory}/history.
func (c *Client) FindMemoryHistory(ctx context.Context, userID, id string) ([]*agentmem.MemoryChange, error) {
	var out page[*agentmem.MemoryChange]
	err := c.do(ctx, call{method: http.MethodGet, path: memoryPath(userID, id, "history"), out: &out})
	return out.Data, err
}

// Search implements agentmem.MemoryService: POST …/search. A search
// reads only, so it is retried.
func (c *Client) Search(ctx context.Context, userID string, req agentmem.SearchRequest) (*agentmem.SearchResponse, error) {
	var out agentmem.SearchResponse
	return &out, c.do(ctx, call{method: http.MethodPost, path: []string{"v1", "users", userID, "search"}, idempotent: true, in: req, out: &out})
}

// Facts implements agentmem.MemoryService: POST …/facts. It is not
// retried: with a model, each attempt is a paid model call.
func (c *Client) Facts(ctx context.Context, userID string, req agentmem.SearchRequest) (*agentmem.FactsResponse, error) {
	var out agentmem.FactsResponse
	return &out, c.do(ctx, call{method: http.MethodPost, path: []string{"v1", "users", userID, "facts"}, in: req, out: &out})
}
