package agentmem

import (
	"context"
	"strings"
	"time"
)

// Summary methods.
const (
	SummaryLLM        = "llm"        // written by a model
	SummaryExtractive = "extractive" // the salient sentences, no model needed
)

// MaxSummaryBytes bounds a summary's text.
const MaxSummaryBytes = 1 << 20

// Summary is the cumulative summary of a thread's older messages: it
// covers seqs 1..ThroughSeq. Each new summary of a thread is a new
// version; the newest is the one the context builder uses.
type Summary struct {
	UserID     string    `json:"user_id"`
	ThreadID   string    `json:"thread_id"`
	Version    int64     `json:"version"`     // 1, 2, 3… per thread
	ThroughSeq int64     `json:"through_seq"` // the last seq it covers
	Text       string    `json:"text"`
	TokenCount int       `json:"token_count"` // of Text, counted with the store's TokenCounter
	Method     string    `json:"method"`      // SummaryLLM or SummaryExtractive
	Model      string    `json:"model,omitempty"`
	CreatedAt  time.Time `json:"created_at"`
}

// SummaryStore stores thread summaries.
type SummaryStore interface {
	// PutSummary stores s as the thread's next version if it reaches
	// further than the newest (s.ThroughSeq > newest.ThroughSeq), and
	// returns the newest summary afterwards; otherwise it stores nothing
	// and returns the newest. So a job that runs twice, or late, cannot
	// replace a summary with an older one. It fills in Version, CreatedAt
	// and TokenCount. Returns ENOTFOUND if the thread does not exist, and
	// EINVALID if ThroughSeq is beyond the thread's last seq or a field is
	// bad (see Summary.Validate). A soft-deleted thread does not exist.
	PutSummary(ctx context.Context, s *Summary) (*Summary, error)

	// FindSummary returns the newest summary of a thread. Returns
	// ENOTFOUND if the thread has none (or does not exist, or is
	// soft-deleted).
	FindSummary(ctx context.Context, userID, threadID string) (*Summary, error)
}

// Validate checks a summary about to be put: its user and thread, a
// ThroughSeq of at least 1, a known Method, and a Text that is not empty
// (ETOOLARGE beyond MaxSummaryBytes).
func (s *Summary) Validate() error {
	if err := ValidateUserID(s.UserID); err != nil {
		return err
	}
	if err := ValidateID("thread_id", s.ThreadID); err != nil {
		return err
	}
	if s.ThroughSeq < 1 {
		return Errorf(EINVALID, "through_seq must be at least 1.")
	}
	if s.Method != SummaryLLM && s.Method != SummaryExtractive {
		return Errorf(EINVALID, "method must be %q or %q, not %q.", SummaryLLM, SummaryExtractive, s.Method)
	}
	if err := ValidateText("model", s.Model); err != nil {
		return err
	} else if len(s.Model) > MaxIDBytes {
		return Errorf(EINVALID, "model is longer than %d bytes.", MaxIDBytes)
	}
	switch err := ValidateText("text", s.Text); {
	case err != nil:
		return err
	case strings.TrimSpace(s.Text) == "":
		return Errorf(EINVALID, "text is required.")
	case len(s.Text) > MaxSummaryBytes:
		return Errorf(ETOOLARGE, "text is larger than the limit of %d bytes.", MaxSummaryBytes)
	}
	return nil
}
