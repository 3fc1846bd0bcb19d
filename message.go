package agentmem

import (
	"context"
	"encoding/json"
	"math"
	"strconv"
	"time"
)

// Message roles, as in the OpenAI chat format.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Limits on appends.
const (
	DefaultMaxMessageBytes = 1 << 20 // content, name, tool calls and metadata together
	MaxBatchMessages       = 1000
)

// Message is one entry of a thread. Messages are append-only and ordered by
// Seq, which runs 1, 2, 3… per thread with no gaps.
type Message struct {
	ID         string          `json:"id"`
	ThreadID   string          `json:"thread_id"`
	Seq        int64           `json:"seq"`
	Role       string          `json:"role"`
	Content    string          `json:"content"`
	Name       string          `json:"name,omitempty"`
	ToolCalls  []ToolCall      `json:"tool_calls,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
	Metadata   json.RawMessage `json:"metadata"`
	// TokenCount is the number of tokens of Content, Name and ToolCalls
	// counted at write by the store's TokenCounter; the context builder
	// adds the per-message overhead of the model's chat format.
	TokenCount int       `json:"token_count"`
	CreatedAt  time.Time `json:"created_at"`
}

// ToolCall is a call an assistant message asks for (OpenAI's shape).
type ToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function FunctionCall `json:"function"`
}

// FunctionCall names the function of a ToolCall and its JSON arguments.
type FunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Size returns the bytes of the message counted against the size limit.
func (m *Message) Size() int {
	n := len(m.Content) + len(m.Name) + len(m.ToolCallID) + len(m.Metadata)
	for _, c := range m.ToolCalls {
		n += len(c.ID) + len(c.Type) + len(c.Function.Name) + len(c.Function.Arguments)
	}
	return n
}

// IsTurn reports whether m is a turn: a user or assistant message with
// content, what search finds, chunks hold and models read.
func (m *Message) IsTurn() bool {
	return (m.Role == RoleUser || m.Role == RoleAssistant) && m.Content != ""
}

// TokenText returns the text whose tokens TokenCount counts.
func (m *Message) TokenText() string {
	if m.Name == "" && len(m.ToolCalls) == 0 {
		return m.Content
	}
	s := m.Name + "\n" + m.Content
	for _, c := range m.ToolCalls {
		s += "\n" + c.Function.Name + " " + c.Function.Arguments
	}
	return s
}

// ValidateMessages checks a batch about to be appended: it is not empty, has
// at most MaxBatchMessages entries, and each message has a known role, valid
// UTF-8, a well-formed id if given, and a size of at most maxBytes (0 means
// DefaultMaxMessageBytes). Metadata is normalised in place. Errors name the
// offending field as messages[i].field.
func ValidateMessages(msgs []*Message, maxBytes int) error {
	switch {
	case len(msgs) == 0:
		return Errorf(EINVALID, "messages must contain at least one message.")
	case len(msgs) > MaxBatchMessages:
		return Errorf(ETOOLARGE, "messages has %d entries; the limit is %d per request.", len(msgs), MaxBatchMessages)
	}
	return validateMessages(msgs, maxBytes)
}

// validateMessages checks each message of msgs as ValidateMessages does,
// however many there are: an import holds whole threads, which grew by
// many appends.
func validateMessages(msgs []*Message, maxBytes int) error {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxMessageBytes
	}
	ids := make(map[string]bool, len(msgs))
	for i, m := range msgs {
		if m == nil {
			return Errorf(EINVALID, "messages[%d] is null.", i)
		}
		switch m.Role {
		case RoleSystem, RoleUser, RoleAssistant, RoleTool:
		case "":
			return Errorf(EINVALID, "messages[%d].role is required (system, user, assistant or tool).", i)
		default:
			return Errorf(EINVALID, "messages[%d].role %q is unknown; use system, user, assistant or tool.", i, m.Role)
		}
		if m.ID != "" {
			if err := ValidateID("messages["+itoa(i)+"].id", m.ID); err != nil {
				return err
			}
			if ids[m.ID] {
				return Errorf(EINVALID, "messages[%d].id %q appears twice in the batch.", i, m.ID)
			}
			ids[m.ID] = true
		}
		if size := m.Size(); size > maxBytes {
			return Errorf(ETOOLARGE, "messages[%d] is %d bytes; the limit is %d bytes per message.", i, size, maxBytes)
		}
		field := "messages[" + itoa(i) + "]."
		if err := ValidateText(field+"content", m.Content); err != nil {
			return err
		}
		if err := ValidateText(field+"name", m.Name); err != nil {
			return err
		}
		if err := ValidateText(field+"tool_call_id", m.ToolCallID); err != nil {
			return err
		}
		if err := ValidateTime(field+"created_at", m.CreatedAt); err != nil {
			return err
		}
		for j, c := range m.ToolCalls {
			if err := ValidateText(field+"tool_calls["+itoa(j)+"]", c.ID+c.Type+c.Function.Name+c.Function.Arguments); err != nil {
				return err
			}
			if c.Function.Name == "" {
				return Errorf(EINVALID, "messages[%d].tool_calls[%d].function.name is required.", i, j)
			}
			if c.Type == "" {
				m.ToolCalls[j].Type = "function"
			}
		}
		if m.Role == RoleTool && m.ToolCallID == "" {
			return Errorf(EINVALID, "messages[%d].tool_call_id is required for role tool.", i)
		}
		var err error
		if m.Metadata, err = NormalizeMetadata("messages["+itoa(i)+"].metadata", m.Metadata); err != nil {
			return err
		}
	}
	return nil
}

func itoa(i int) string { return strconv.Itoa(i) }

// TokenCounter counts the tokens of a text. The store counts every message
// at write with it so that the context builder can sum stored counts.
type TokenCounter interface {
	CountTokens(text string) int
}

// EstimateTokens is the TokenCounter of last resort: about four bytes a
// token, never zero for a non-empty text.
type EstimateTokens struct{}

// CountTokens implements TokenCounter.
func (EstimateTokens) CountTokens(text string) int { return (len(text) + 3) / 4 }

// MessageFilter selects messages of one thread for FindMessages.
type MessageFilter struct {
	AfterSeq  int64 // only seq > AfterSeq (0: no bound)
	BeforeSeq int64 // only seq < BeforeSeq (0: no bound)
	// Desc returns newest first (the way to read the tail of a long thread).
	Desc bool
	// IncludeDeleted reads a soft-deleted thread too (for exports).
	IncludeDeleted bool
	Limit          int    // page size; 0 means DefaultPageSize, capped at MaxPageSize
	Cursor         string // opaque, from a previous page's next cursor
}

// AppendOptions modify AppendMessages.
type AppendOptions struct {
	// IdempotencyKey makes a retried append return the original result
	// instead of writing again. A key is scoped to its thread.
	IdempotencyKey string

	// Jobs, when not nil, returns the jobs that a batch asks for (to index
	// it, say). AppendMessages calls it inside its transaction with the
	// batch as stored (IDs, seqs and times assigned) and enqueues one of
	// the jobs in that same transaction, so that once it returns, the batch
	// and its job are stored together, even if the process dies right
	// after. A retry (see AppendMessages) stores nothing and does not call
	// it: the original append enqueued.
	//
	// The jobs are alternatives, tried in order (see PickJob), so that the
	// batches of a busy thread share jobs: one whose user, kind and key
	// have a queued job ends the search and nothing is stored (that job has
	// not started, so it will see the batch); one whose key has a running
	// job, which may have read the thread before the batch, passes to the
	// next; the first whose key has no active job (or that has no Key) is
	// stored, checked and filled in as EnqueueJob does (see PrepareJob: an
	// empty UserID is the appending user's; its Status becomes JobQueued),
	// and a bad one fails the append as it fails EnqueueJob. The other
	// jobs are left as they are.
	Jobs func(stored []*Message) []*Job
}

// MessageStore stores the messages of threads.
type MessageStore interface {
	// AppendMessages appends a batch to a thread atomically: all of it or
	// none. It assigns ID (when empty), Seq, TokenCount and CreatedAt (when
	// zero) on the given messages and returns the stored messages. Seqs are
	// consecutive after the thread's last one, also under concurrent
	// appends from many processes. The first user message of an untitled
	// thread titles it (AutoTitle); appending to an ended thread reopens it.
	//
	// A retry is recognised and answered with the originally stored
	// messages, writing nothing, when opt.IdempotencyKey was used before on
	// this thread with the same batch, or when every message carries a
	// client ID already stored in this thread with the same content.
	//
	// With opt.Jobs, the job that the batch asks for is enqueued in the
	// same transaction (see AppendOptions.Jobs).
	//
	// Returns ENOTFOUND if the thread does not exist (or is soft-deleted),
	// EINVALID or ETOOLARGE for a bad batch (see PrepareAppend: a
	// created_at in the future, too) or a bad job, and ECONFLICT when a key or message ID is reused for a different
	// batch, or a job's ID is taken.
	AppendMessages(ctx context.Context, userID, threadID string, msgs []*Message, opt AppendOptions) ([]*Message, error)

	// FindMessages returns a page of a thread's messages in seq order
	// (descending with filter.Desc) and the cursor of the next page ("" on
	// the last page). Returns ENOTFOUND if the thread does not exist, or is
	// soft-deleted and filter.IncludeDeleted is false.
	FindMessages(ctx context.Context, userID, threadID string, filter MessageFilter) ([]*Message, string, error)
}

// PrepareAppend does the work of AppendMessages that needs no database, for
// every backend: it checks the idempotency key and the batch (see
// ValidateMessages), checks that no created_at is in the future of now
// (see ValidateNotFuture), and counts each message's tokens with tc.
//
// A created_at before that of the thread's previous message is accepted:
// seq, not time, orders a thread, and a client may append history that
// happened before (messages carried over from another system).
func PrepareAppend(msgs []*Message, opt AppendOptions, maxBytes int, tc TokenCounter, now time.Time) error {
	if opt.IdempotencyKey != "" {
		if err := ValidateID("Idempotency-Key", opt.IdempotencyKey); err != nil {
			return err
		}
	}
	if err := ValidateMessages(msgs, maxBytes); err != nil {
		return err
	}
	if err := validateCreatedAt("messages", msgs, now); err != nil {
		return err
	}
	for _, m := range msgs {
		m.TokenCount = tc.CountTokens(m.TokenText())
		if !m.CreatedAt.IsZero() {
			m.CreatedAt = Timestamp(m.CreatedAt)
		}
	}
	return nil
}

// validateCreatedAt checks the client-given created_at of each message
// with ValidateNotFuture; field names the batch (messages[i].created_at).
func validateCreatedAt(field string, msgs []*Message, now time.Time) error {
	for i, m := range msgs {
		if err := ValidateNotFuture(field+"["+itoa(i)+"].created_at", m.CreatedAt, now); err != nil {
			return err
		}
	}
	return nil
}

// AfterAppend updates t for a stored batch whose seqs are assigned: the last
// seq and count move on, the first user message titles an untitled thread,
// an ended thread is reopened, and UpdatedAt moves to now.
func (t *Thread) AfterAppend(msgs []*Message, now time.Time) {
	t.LastSeq = msgs[len(msgs)-1].Seq
	t.MessageCount += int64(len(msgs))
	if t.Title == "" {
		for _, m := range msgs {
			if m.Role == RoleUser {
				t.Title = AutoTitle(m.Content)
				break
			}
		}
	}
	if t.Status == ThreadEnded {
		t.Status, t.EndedAt = ThreadActive, nil
	}
	t.UpdatedAt = now
}

// MatchRetry decides whether a batch is a retry of an append whose
// messages carried client IDs. stored holds the messages of the user found
// under the batch's IDs. It returns nil, nil when none was found (a new
// batch); the stored messages in batch order when all were found in thread
// threadID with the same role and content (a retry); ECONFLICT otherwise.
func MatchRetry(threadID string, msgs []*Message, stored map[string]*Message) ([]*Message, error) {
	if len(stored) == 0 {
		return nil, nil
	}
	out := make([]*Message, 0, len(msgs))
	for i, m := range msgs {
		s := stored[m.ID]
		if s == nil {
			for _, m := range msgs {
				if stored[m.ID] != nil {
					return nil, Errorf(ECONFLICT, "Message id %q is already stored; a retry must repeat the whole batch.", m.ID)
				}
			}
		}
		if s == nil || s.ThreadID != threadID {
			return nil, Errorf(ECONFLICT, "Message id %q is already used in another thread.", m.ID)
		}
		if s.Role != m.Role || s.Content != m.Content || s.Name != m.Name || s.ToolCallID != m.ToolCallID ||
			(i > 0 && s.Seq != out[i-1].Seq+1) {
			return nil, Errorf(ECONFLICT, "Message id %q is already stored with different content.", m.ID)
		}
		out = append(out, s)
	}
	return out, nil
}

// MessageList is the list FindMessages pages through: the thread's
// messages in the order of f.
func MessageList(userID, threadID string, f MessageFilter) CursorList {
	if f.Desc {
		return ListOf(ListMessagesDesc, userID, threadID)
	}
	return ListOf(ListMessages, userID, threadID)
}

// MessageRange resolves a MessageFilter of list (see MessageList) for a
// backend: the page size and the exclusive seq bounds (after, before) with
// the cursor applied.
func MessageRange(list CursorList, f MessageFilter) (limit int, after, before int64, err error) {
	if limit, err = PageSize(f.Limit); err != nil {
		return 0, 0, 0, err
	}
	if f.AfterSeq < 0 || f.BeforeSeq < 0 {
		return 0, 0, 0, Errorf(EINVALID, "after_seq and before_seq must not be negative.")
	}
	after, before = f.AfterSeq, f.BeforeSeq
	if before == 0 {
		before = math.MaxInt64
	}
	if f.Cursor != "" {
		var c SeqCursor
		if err := DecodeCursor(f.Cursor, list, &c); err != nil {
			return 0, 0, 0, err
		}
		if f.Desc {
			before = min(before, c.Seq)
		} else {
			after = max(after, c.Seq)
		}
	}
	return limit, after, before, nil
}

// MessagePage cuts a result fetched with limit+1 rows to limit and returns
// the cursor in list of the next page ("" when there is none).
func MessagePage(msgs []*Message, limit int, list CursorList) ([]*Message, string) {
	return CutPage(msgs, limit, list, func(last *Message) any { return SeqCursor{Seq: last.Seq} })
}
