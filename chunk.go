package agentmem

import (
	"context"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Limits of chunks.
const (
	DefaultChunkTurns = 10 // turns per chunk (seed 001's interactions)
	MaxChunkBytes     = 1 << 20
	MaxChunkLabels    = 50 // topics or entities of a chunk
)

// Chunk is a passage of k consecutive turns of a thread (seed 001's
// interactions): their flattened text (ChunkText), the seqs it covers, a
// summary, its topics and the entities it names. Search finds chunks by
// their text, summary, topics and entities (scope chunks).
// A thread's chunks do not overlap; each is identified by its thread and
// SeqFrom, and writing a chunk again replaces it (keeping its ID).
type Chunk struct {
	ID        string    `json:"id"`
	UserID    string    `json:"user_id"`
	ThreadID  string    `json:"thread_id"`
	SeqFrom   int64     `json:"seq_from"`
	SeqTo     int64     `json:"seq_to"`
	Turns     int       `json:"turns"` // user and assistant turns in it
	Text      string    `json:"text"`  // ChunkText of its turns, which stores read rather than keep
	Summary   string    `json:"summary"`
	Topics    []string  `json:"topics"`
	Entities  []string  `json:"entities"`
	CreatedAt time.Time `json:"created_at"` // the time of its last turn
}

// Validate checks a chunk about to be put and fills in empty label lists.
// Its Text is not checked: a store derives it from the chunk's turns (see
// ChunkStore.PutChunks).
func (c *Chunk) Validate() error {
	if err := ValidateUserID(c.UserID); err != nil {
		return err
	}
	if c.ID != "" {
		if err := ValidateID("id", c.ID); err != nil {
			return err
		}
	}
	if err := ValidateID("thread_id", c.ThreadID); err != nil {
		return err
	}
	if c.SeqFrom < 1 || c.SeqTo < c.SeqFrom {
		return Errorf(EINVALID, "A chunk's seqs must make a range (1 ≤ seq_from ≤ seq_to), not %d…%d.", c.SeqFrom, c.SeqTo)
	}
	if err := ValidateText("summary", c.Summary); err != nil {
		return err
	}
	if len(c.Summary) > MaxChunkBytes {
		return Errorf(ETOOLARGE, "A chunk's summary is larger than the limit of %d bytes.", MaxChunkBytes)
	}
	for _, l := range []struct {
		name string
		list *[]string
	}{{"topics", &c.Topics}, {"entities", &c.Entities}} {
		if *l.list == nil {
			*l.list = []string{}
		}
		if len(*l.list) > MaxChunkLabels {
			return Errorf(EINVALID, "A chunk has at most %d %s, not %d.", MaxChunkLabels, l.name, len(*l.list))
		}
		for _, s := range *l.list {
			if err := ValidateText(l.name, s); err != nil {
				return err
			}
		}
	}
	return ValidateTime("created_at", c.CreatedAt)
}

// ChunkText returns the text of a chunk of msgs: each turn among them
// (Message.IsTurn: tool and system messages are left out) on a line of its
// own, as its name, or its role when it has none, then ": " and its
// content ("user: I ran a marathon\nCoach: Well done!"), cut by
// CutChunkText. The indexer builds a chunk's text with it; the stores,
// which keep no copy of the text, join the turns in the same way (in SQL)
// whenever they read the chunk.
func ChunkText(msgs []*Message) string {
	var b strings.Builder
	for _, m := range msgs {
		if !m.IsTurn() {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		who := m.Role
		if m.Name != "" {
			who = m.Name
		}
		b.WriteString(who)
		b.WriteString(": ")
		b.WriteString(m.Content)
		if b.Len() > MaxChunkBytes {
			break
		}
	}
	return CutChunkText(b.String())
}

// CutChunkText returns the first MaxChunkBytes of a chunk's text (its
// turns joined as ChunkText joins them), cut at the start of a character.
func CutChunkText(s string) string {
	if len(s) <= MaxChunkBytes {
		return s
	}
	n := MaxChunkBytes
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// SummaryVectorSuffix ends the vector ID of a chunk's summary: a chunk
// has two vectors of scope chunks, its text's (ID) and its summary's
// (ID + SummaryVectorSuffix).
const SummaryVectorSuffix = "#s"

// MessageWindow is how full-text search finds a message: by the words of
// the turns around it as well as its own (its window: the Window turns
// on each side, its own words weighing double, as WindowText writes it).
// A turn's words often answer a question only with its neighbours: "What
// did she paint?" is answered by "A sunset!", right after "I painted
// something last week". Stores index each turn once and add a window's
// score up from its turns' (see ScoreWindows).
type MessageWindow struct {
	Seq int64 `json:"seq"`
	// Turns are the seqs of the window's turns (WindowTurns), in order,
	// Seq among them.
	Turns []int64 `json:"turns"`
}

// Validate checks a window about to be put.
func (w MessageWindow) Validate() error {
	if len(w.Turns) == 0 || len(w.Turns) > 2*Window+1 || !slices.Contains(w.Turns, w.Seq) {
		return Errorf(EINVALID, "A window's turns must hold its own seq (%d) and at most %d turns, not %v.", w.Seq, 2*Window+1, w.Turns)
	}
	return nil
}

// TurnWindows returns the windows of a thread's turns, their seqs in
// order (of user and assistant messages with content).
func TurnWindows(seqs []int64) []MessageWindow {
	ws := make([]MessageWindow, len(seqs))
	for i, seq := range seqs {
		from, to := WindowTurns(len(seqs), i)
		ws[i] = MessageWindow{Seq: seq, Turns: slices.Clone(seqs[from:to])}
	}
	return ws
}

// Window is how many turns on each side of a message its window holds.
const Window = 2

// WindowText returns the window of turns[i]: the Window turns before it,
// the turn itself twice (its own words weigh double), and the Window turns
// after it, each on its own line. The same text is indexed for full-text
// search and embedded, on every backend.
func WindowText(turns []string, i int) string {
	var b strings.Builder
	from, to := WindowTurns(len(turns), i)
	for j := from; j < to; j++ {
		b.WriteString(turns[j])
		b.WriteByte('\n')
		if j == i {
			b.WriteString(turns[j])
			b.WriteByte('\n')
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// WindowTurns returns the turns of the window of turns[i] among n turns:
// turns[from:to] (turns[i] among them, twice in its text).
func WindowTurns(n, i int) (from, to int) { return max(0, i-Window), min(n, i+Window+1) }

// ChunkStore stores chunks and message windows.
type ChunkStore interface {
	// PutChunks stores chunks of a user, each replacing the chunk of its
	// thread with the same SeqFrom (which keeps its ID); a new chunk gets a
	// new ID. It fills in the IDs. A chunk's Text is not stored: it is
	// ChunkText of the thread's messages SeqFrom..SeqTo, which PutChunks
	// sets it to (whatever it was) and indexes, and which every read of the
	// chunk (FindChunks, search, FindItems) assembles again from the
	// messages. Returns ENOTFOUND if a chunk's thread does not exist,
	// EINVALID as Chunk.Validate or if its seqs hold no turn.
	PutChunks(ctx context.Context, userID string, cs []*Chunk) error

	// FindChunks returns a thread's chunks in seq order, with their text
	// (see PutChunks); an empty slice when it has none. Returns ENOTFOUND
	// if the thread does not exist.
	FindChunks(ctx context.Context, userID, threadID string) ([]*Chunk, error)

	// LastChunkEnd returns the SeqTo of a thread's last chunk, 0 when it
	// has none: where the next chunk starts, read without the chunks.
	// Returns ENOTFOUND if the thread does not exist.
	LastChunkEnd(ctx context.Context, userID, threadID string) (int64, error)

	// PutMessageWindows sets the full-text windows of messages of a thread
	// by seq, replacing earlier ones. Until a message has a window, search
	// finds it by its content. Seqs of no user or assistant message are
	// ignored, as are such turns of a window. Returns ENOTFOUND if the
	// thread does not exist, EINVALID as MessageWindow.Validate.
	PutMessageWindows(ctx context.Context, userID, threadID string, ws []MessageWindow) error
}
