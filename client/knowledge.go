package client

import (
	"context"
	"iter"
	"net/http"
	"net/url"
	"slices"

	"github.com/agentmem/agentmem"
)

// The KnowledgeService over REST: profiles, notes and entities.

func profilePath(userID string, rest ...string) []string {
	return append([]string{"v1", "users", userID, "profile"}, rest...)
}

// FindProfile implements agentmem.KnowledgeService: GET …/profile.
func (c *Client) FindProfile(ctx context.Context, userID string) (*agentmem.Profile, error) {
	var out agentmem.Profile
	return &out, c.do(ctx, call{method: http.MethodGet, path: profilePath(userID), out: &out})
}

// FindProfiles implements agentmem.KnowledgeService: GET
// …/profile/versions with limit and cursor.
func (c *Client) FindProfiles(ctx context.Context, userID string, limit int, cursor string) ([]*agentmem.Profile, string, error) {
	q := url.Values{}
	setPage(q, limit, cursor)
	return list[*agentmem.Profile](ctx, c, profilePath(userID, "versions"), q)
}

// AllProfiles iterates over the user's profile versions, newest first,
// limit a page.
func (c *Client) AllProfiles(ctx context.Context, userID string, limit int) iter.Seq2[*agentmem.Profile, error] {
	return all("", func(cursor string) ([]*agentmem.Profile, string, error) {
		return c.FindProfiles(ctx, userID, limit, cursor)
	})
}

// RefreshProfile implements agentmem.KnowledgeService: POST
// …/profile/refresh.
func (c *Client) RefreshProfile(ctx context.Context, userID string) (*agentmem.Profile, error) {
	var out agentmem.Profile
	return &out, c.do(ctx, call{method: http.MethodPost, path: profilePath(userID, "refresh"), out: &out})
}

func notesPath(userID, agentID string, rest ...string) []string {
	return append([]string{"v1", "users", userID, "agents", agentID, "notes"}, rest...)
}

// FindNotes implements agentmem.KnowledgeService: GET
// …/agents/{agent}/notes.
func (c *Client) FindNotes(ctx context.Context, userID, agentID string) (*agentmem.Notes, error) {
	var out agentmem.Notes
	return &out, c.do(ctx, call{method: http.MethodGet, path: notesPath(userID, agentID), out: &out})
}

// EditNotes implements agentmem.KnowledgeService: POST
// …/agents/{agent}/notes/ops. A read (op.Operation "read" or "") is
// retried; writes are not.
func (c *Client) EditNotes(ctx context.Context, userID, agentID string, op agentmem.NotesOp) (*agentmem.Notes, error) {
	read := op.Operation == "" || op.Operation == agentmem.NotesRead
	var out agentmem.Notes
	return &out, c.do(ctx, call{method: http.MethodPost, path: notesPath(userID, agentID, "ops"), idempotent: read, in: op, out: &out})
}

// PutNotes overwrites the agent's notes about the user with content (""
// empties them), as their next version, if expectedVersion is nil or the
// current version (ECONFLICT otherwise): PUT …/agents/{agent}/notes. It
// is EditNotes with agentmem.NotesOverwrite, by its own route.
func (c *Client) PutNotes(ctx context.Context, userID, agentID, content string, expectedVersion *int64) (*agentmem.Notes, error) {
	in := struct {
		Content         string `json:"content"`
		ExpectedVersion *int64 `json:"expected_version,omitempty"`
	}{content, expectedVersion}
	var out agentmem.Notes
	return &out, c.do(ctx, call{method: http.MethodPut, path: notesPath(userID, agentID), in: in, out: &out})
}

// FindNotesHistory implements agentmem.KnowledgeService: GET
// …/agents/{agent}/notes/history with limit and cursor.
func (c *Client) FindNotesHistory(ctx context.Context, userID, agentID string, f agentmem.NotesFilter) ([]*agentmem.Notes, string, error) {
	q := url.Values{}
	setPage(q, f.Limit, f.Cursor)
	return list[*agentmem.Notes](ctx, c, notesPath(userID, agentID, "history"), q)
}

// AllNotesHistory iterates over every version of the notes, newest
// first.
func (c *Client) AllNotesHistory(ctx context.Context, userID, agentID string, f agentmem.NotesFilter) iter.Seq2[*agentmem.Notes, error] {
	return all(f.Cursor, func(cursor string) ([]*agentmem.Notes, string, error) {
		f.Cursor = cursor
		return c.FindNotesHistory(ctx, userID, agentID, f)
	})
}

func entityPath(userID string, rest ...string) []string {
	return append([]string{"v1", "users", userID, "entities"}, rest...)
}

// PutEntity implements agentmem.KnowledgeService: POST …/entities.
func (c *Client) PutEntity(ctx context.Context, userID string, in agentmem.EntityInput) (*agentmem.Entity, error) {
	var out agentmem.Entity
	return &out, c.do(ctx, call{method: http.MethodPost, path: entityPath(userID), in: in, out: &out})
}

// FindEntityByID implements agentmem.KnowledgeService: GET
// …/entities/{entity}.
func (c *Client) FindEntityByID(ctx context.Context, userID, id string) (*agentmem.Entity, error) {
	var out agentmem.Entity
	return &out, c.do(ctx, call{method: http.MethodGet, path: entityPath(userID, id), out: &out})
}

// FindEntities implements agentmem.KnowledgeService: GET …/entities with
// q, type, limit and cursor. The API looks entities up by one query,
// whose keys the server derives (agentmem.QueryKeys): f.Keys must be
// nil, or the keys of one query, as agentmem.QueryKeys returns them
// (EINVALID otherwise).
func (c *Client) FindEntities(ctx context.Context, userID string, f agentmem.EntityFilter) ([]*agentmem.Entity, string, error) {
	q := url.Values{}
	if f.Keys != nil {
		var query string
		if len(f.Keys) > 0 {
			query = f.Keys[0]
			if !slices.Equal(agentmem.QueryKeys(query), f.Keys) {
				return nil, "", agentmem.Errorf(agentmem.EINVALID,
					"EntityFilter.Keys %q cannot be sent over the REST API, which takes one query: give the keys agentmem.QueryKeys returns.", f.Keys)
			}
		}
		q.Set("q", query) // "" is refused by the server, as an empty lookup is
	}
	setPtr(q, "type", f.Type)
	setPage(q, f.Limit, f.Cursor)
	return list[*agentmem.Entity](ctx, c, entityPath(userID), q)
}

// AllEntities iterates over the user's entities that f selects.
func (c *Client) AllEntities(ctx context.Context, userID string, f agentmem.EntityFilter) iter.Seq2[*agentmem.Entity, error] {
	return all(f.Cursor, func(cursor string) ([]*agentmem.Entity, string, error) {
		f.Cursor = cursor
		return c.FindEntities(ctx, userID, f)
	})
}

// UpdateEntity implements agentmem.KnowledgeService: PATCH
// …/entities/{entity}.
func (c *Client) UpdateEntity(ctx context.Context, userID, id string, upd agentmem.EntityUpdate) (*agentmem.Entity, error) {
	var out agentmem.Entity
	return &out, c.do(ctx, call{method: http.MethodPatch, path: entityPath(userID, id), in: upd, out: &out})
}

// DeleteEntity implements agentmem.KnowledgeService: DELETE
// …/entities/{entity}.
func (c *Client) DeleteEntity(ctx context.Context, userID, id string) error {
	return c.do(ctx, call{method: http.MethodDelete, path: entityPath(userID, id)})
}

// FindEntityRefs implements agentmem.KnowledgeService: GET
// …/entities/{entity}/threads when f.EntityID is set, GET
// …/threads/{thread}/entities when f.ThreadID is, with action, limit and
// cursor. Exactly one of them must be set (EINVALID otherwise).
func (c *Client) FindEntityRefs(ctx context.Context, userID string, f agentmem.EntityRefFilter) ([]*agentmem.EntityRef, string, error) {
	var path []string
	switch {
	case (f.EntityID == "") == (f.ThreadID == ""):
		return nil, "", agentmem.Errorf(agentmem.EINVALID, "References are listed by entity_id or by thread_id, one of them.")
	case f.EntityID != "":
		path = entityPath(userID, f.EntityID, "threads")
	default:
		path = threadPath(userID, f.ThreadID, "entities")
	}
	q := url.Values{}
	setPtr(q, "action", f.Action)
	setPage(q, f.Limit, f.Cursor)
	return list[*agentmem.EntityRef](ctx, c, path, q)
}

// AllEntityRefs iterates over the references that f selects.
func (c *Client) AllEntityRefs(ctx context.Context, userID string, f agentmem.EntityRefFilter) iter.Seq2[*agentmem.EntityRef, error] {
	return all(f.Cursor, func(cursor string) ([]*agentmem.EntityRef, string, error) {
		f.Cursor = cursor
		return c.FindEntityRefs(ctx, userID, f)
	})
}
