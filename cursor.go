package agentmem

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"slices"
)

// CursorList is the list a cursor continues: its Name says what the list
// holds and in which order, its Scope whose items they are (the user, the
// thread…, and whatever else fixes the order). A cursor carries its list,
// and DecodeCursor refuses it on any other: a cursor of one list read as a
// position of another would restart or skip that list silently.
type CursorList struct {
	Name  string
	Scope []string
}

// The names of the lists that issue cursors.
const (
	ListThreads      = "threads"
	ListMessages     = "messages (oldest first)"
	ListMessagesDesc = "messages (newest first)"
	ListElements     = "elements"
	ListMemories     = "memories"
	ListEntities     = "entities"
	ListEntityRefs   = "entity references"
	ListJobs         = "jobs"
	ListKeys         = "API keys"
	ListAudit        = "audit events"
	ListNotes        = "notes versions"
	ListProfiles     = "profile versions"
	ListUsers        = "users"
)

var listNames = []string{ListThreads, ListMessages, ListMessagesDesc, ListElements, ListMemories, ListEntities,
	ListEntityRefs, ListJobs, ListKeys, ListAudit, ListNotes, ListProfiles, ListUsers}

// ListOf returns the list called name whose items belong to scope.
func ListOf(name string, scope ...string) CursorList {
	return CursorList{Name: name, Scope: scope}
}

// scopeHash fingerprints the scope, so that a cursor names its list
// without carrying the IDs of its scope in the clear (nor their length).
func (l CursorList) scopeHash() string {
	h := sha256.New()
	for _, s := range l.Scope {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:9])
}

// cursor is the encoded form of a cursor: its list's name, its scope's
// hash and the position in the list.
type cursor struct {
	List  string          `json:"l"`
	Scope string          `json:"s"`
	Pos   json.RawMessage `json:"p"`
}

// EncodeCursor turns a backend's keyset position in list into an opaque
// cursor.
func EncodeCursor(list CursorList, pos any) string {
	p, err := json.Marshal(pos)
	if err != nil { // positions are plain structs of numbers and strings
		return ""
	}
	b, _ := json.Marshal(cursor{List: list.Name, Scope: list.scopeHash(), Pos: p})
	return base64.RawURLEncoding.EncodeToString(b)
}

// DecodeCursor reads a cursor that EncodeCursor made for list into pos.
// Returns EINVALID naming cursor for anything else, saying so when the
// cursor was made for another list (another name, order or scope).
func DecodeCursor(c string, list CursorList, pos any) error {
	malformed := Errorf(EINVALID, "cursor is malformed; pass next_cursor from the previous page unchanged.")
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return malformed
	}
	var v cursor
	if json.Unmarshal(b, &v) != nil || !slices.Contains(listNames, v.List) || len(v.Pos) == 0 {
		return malformed
	}
	switch {
	case v.List != list.Name:
		return Errorf(EINVALID, "cursor belongs to another list (of %s), not to this list of %s; pass next_cursor from this list's previous page unchanged.", v.List, list.Name)
	case v.Scope != list.scopeHash():
		return Errorf(EINVALID, "cursor belongs to another list: of %s, but of another user, thread or filter; pass next_cursor from this list's previous page unchanged.", list.Name)
	}
	if json.Unmarshal(v.Pos, pos) != nil {
		return malformed
	}
	return nil
}

// ThreadCursor is the keyset position of a thread list: the last thread's
// updated_at in Unix microseconds and its id.
type ThreadCursor struct {
	UpdatedAt int64  `json:"u"`
	ID        string `json:"i"`
}

// SeqCursor is the keyset position of a message list: the last seq.
type SeqCursor struct {
	Seq int64 `json:"s"`
}

// TimeIDCursor is the keyset position of a list ordered by creation time
// (Unix microseconds) and id.
type TimeIDCursor struct {
	Time int64  `json:"t"`
	ID   string `json:"i"`
}

// BatchHash fingerprints a batch for idempotency: a retry with the same key
// must carry the same messages.
func BatchHash(msgs []*Message) string {
	h := sha256.New()
	enc := json.NewEncoder(h)
	for _, m := range msgs {
		_ = enc.Encode([]any{m.ID, m.Role, m.Content, m.Name, m.ToolCalls, m.ToolCallID, m.Metadata})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// CutPage cuts a list fetched with limit+1 rows to limit and returns the
// cursor in list of the next page, made by cursorOf from the page's last
// item ("" when there is no next page). The page is never nil, so that it
// encodes as [] rather than null.
func CutPage[T any](items []T, limit int, list CursorList, cursorOf func(last T) any) ([]T, string) {
	if items == nil {
		items = []T{}
	}
	if len(items) <= limit {
		return items, ""
	}
	items = items[:limit]
	return items, EncodeCursor(list, cursorOf(items[limit-1]))
}
