package agentmem

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
)

// EncodeCursor turns a backend's keyset position into an opaque cursor.
func EncodeCursor(v any) string {
	b, err := json.Marshal(v)
	if err != nil { // positions are plain structs of numbers and strings
		return ""
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// DecodeCursor reads a cursor made by EncodeCursor into v. Returns EINVALID
// for anything else.
func DecodeCursor(cursor string, v any) error {
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil || json.Unmarshal(b, v) != nil {
		return Errorf(EINVALID, "cursor is malformed; pass next_cursor from the previous page unchanged.")
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
// cursor of the next page, made by cursorOf from the page's last item (""
// when there is no next page). The page is never nil, so that it encodes
// as [] rather than null.
func CutPage[T any](items []T, limit int, cursorOf func(last T) any) ([]T, string) {
	if items == nil {
		items = []T{}
	}
	if len(items) <= limit {
		return items, ""
	}
	items = items[:limit]
	return items, EncodeCursor(cursorOf(items[limit-1]))
}
