package agentmem

import (
	"context"
	"encoding/json"
	"time"
)

// MaxElementBytes bounds an element's content and URL together.
const MaxElementBytes = 1 << 20

// Element is something attached to a thread or to one of its messages: a
// citation, a file reference, an image (seed 000's elements).
type Element struct {
	ID        string          `json:"id"`
	ThreadID  string          `json:"thread_id"`
	MessageID string          `json:"message_id,omitempty"` // empty: attached to the thread
	Type      string          `json:"type"`                 // e.g. text, file, image, citation
	Name      string          `json:"name"`
	Content   string          `json:"content,omitempty"`
	URL       string          `json:"url,omitempty"`
	MimeType  string          `json:"mime_type,omitempty"`
	Display   string          `json:"display,omitempty"` // e.g. inline, side, page
	Metadata  json.RawMessage `json:"metadata"`
	CreatedAt time.Time       `json:"created_at"`
}

// Validate checks an element about to be created and normalises its
// metadata. Type defaults to "text".
func (e *Element) Validate() error {
	if e.ID != "" {
		if err := ValidateID("id", e.ID); err != nil {
			return err
		}
	}
	if e.MessageID != "" {
		if err := ValidateID("message_id", e.MessageID); err != nil {
			return err
		}
	}
	if e.Type == "" {
		e.Type = "text"
	}
	for _, f := range []struct{ name, v string }{{"type", e.Type}, {"name", e.Name}, {"content", e.Content}, {"url", e.URL}, {"mime_type", e.MimeType}, {"display", e.Display}} {
		if err := ValidateText(f.name, f.v); err != nil {
			return err
		}
	}
	if err := ValidateTime("created_at", e.CreatedAt); err != nil {
		return err
	}
	if n := len(e.Content) + len(e.URL) + len(e.Name); n > MaxElementBytes {
		return Errorf(ETOOLARGE, "element is %d bytes; the limit is %d bytes.", n, MaxElementBytes)
	}
	var err error
	e.Metadata, err = NormalizeMetadata("metadata", e.Metadata)
	return err
}

// ElementFilter selects the elements of a thread, oldest first.
type ElementFilter struct {
	MessageID *string // only elements of this message
	// IncludeDeleted reads a soft-deleted thread too (for exports).
	IncludeDeleted bool
	Limit          int
	Cursor         string
}

// Validate checks the filter's message ID, if set ("" selects the
// elements of no message).
func (f *ElementFilter) Validate() error {
	if f.MessageID != nil && *f.MessageID != "" {
		return ValidateID("message_id", *f.MessageID)
	}
	return nil
}

// ElementStore stores elements.
type ElementStore interface {
	// CreateElement attaches e to a thread (and to e.MessageID when set),
	// assigning ID when empty and CreatedAt when zero. Returns ENOTFOUND if
	// the thread or message does not exist, ECONFLICT if the ID is taken.
	CreateElement(ctx context.Context, userID, threadID string, e *Element) error

	// FindElements returns a page of a thread's elements in creation order
	// and the next cursor. Returns ENOTFOUND if the thread does not exist.
	FindElements(ctx context.Context, userID, threadID string, filter ElementFilter) ([]*Element, string, error)
}

// ElementPage cuts a result fetched with limit+1 rows to limit and returns
// the cursor in list of the next page ("" when there is none).
func ElementPage(els []*Element, limit int, list CursorList) ([]*Element, string) {
	return CutPage(els, limit, list, func(last *Element) any { return TimeIDCursor{Time: last.CreatedAt.UnixMicro(), ID: last.ID} })
}
