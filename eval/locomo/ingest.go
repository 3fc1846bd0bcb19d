package locomo

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/agentmem/agentmem"
)

// Store is what the evaluation needs of a store: ingestion creates threads
// and appends messages, and the BM25 baseline reads them back.
type Store interface {
	agentmem.ThreadStore
	agentmem.MessageStore
}

// UserID returns the user a sample is stored as: "locomo-" + sample_id,
// e.g. "locomo-conv-26".
func UserID(sampleID string) string { return "locomo-" + sampleID }

// ThreadID returns the thread that holds session n: "session-<n>".
func ThreadID(n int) string { return "session-" + strconv.Itoa(n) }

// TurnKey names a stored message: its thread and seq.
type TurnKey struct {
	ThreadID string
	Seq      int64
}

// Conversation is a sample as stored: its user and the dia_id of each of
// its messages, for scoring what a search returns.
type Conversation struct {
	Sample *Sample
	UserID string
	DiaIDs map[TurnKey]string // (thread, seq) → dia_id

	lastSeq map[string]int64 // thread → its last seq
	turns   map[string]bool  // the dia_ids of the conversation
	count   int              // messages stored
}

// Turns returns the number of messages stored.
func (c *Conversation) Turns() int { return c.count }

// HasTurn reports whether the conversation has a turn with this dia_id.
func (c *Conversation) HasTurn(diaID string) bool { return c.turns[diaID] }

// Ingest stores a sample as user UserID(s.ID) with one thread per session,
// ThreadID(n), titled with the session's date. Each turn becomes a message
// in order:
//
//   - role "user" for speaker_a and "assistant" for speaker_b. LoCoMo is
//     two people talking, and the store's model is a user and an
//     assistant; the role only says which side a turn is on, and both
//     speakers' facts are asked about equally, so Name carries who spoke;
//   - name: the speaker's name;
//   - content: Turn.Content (the text, plus the caption of a shared image);
//   - created_at: the session's date plus one second per turn, so that
//     turns keep their order in time as they do in seq;
//   - metadata: {"dia_id": "D1:3"}.
//
// It returns ECONFLICT (from the store) when the user already has one of
// the threads: ingest into a fresh store.
func Ingest(ctx context.Context, store Store, s *Sample) (*Conversation, error) {
	c := &Conversation{
		Sample:  s,
		UserID:  UserID(s.ID),
		DiaIDs:  map[TurnKey]string{},
		lastSeq: map[string]int64{},
		turns:   map[string]bool{},
	}
	for _, ses := range s.Sessions {
		meta, err := json.Marshal(map[string]any{"locomo_sample": s.ID, "session": ses.N, "date_time": ses.DateTime})
		if err != nil {
			return nil, err
		}
		th := &agentmem.Thread{
			ID:       ThreadID(ses.N),
			UserID:   c.UserID,
			Title:    fmt.Sprintf("Session %d, %s", ses.N, ses.DateTime),
			Metadata: meta,
		}
		if err := store.CreateThread(ctx, th); err != nil {
			return nil, fmt.Errorf("create thread %s of %s: %w", th.ID, c.UserID, err)
		}
		msgs := make([]*agentmem.Message, len(ses.Turns))
		for i, t := range ses.Turns {
			meta, err := json.Marshal(map[string]string{"dia_id": t.DiaID})
			if err != nil {
				return nil, err
			}
			role := agentmem.RoleUser
			if t.Speaker == s.SpeakerB {
				role = agentmem.RoleAssistant
			}
			msgs[i] = &agentmem.Message{
				Role:      role,
				Name:      t.Speaker,
				Content:   t.Content(),
				CreatedAt: ses.Time.Add(time.Duration(i) * time.Second),
				Metadata:  meta,
			}
			c.turns[t.DiaID] = true
		}
		for start := 0; start < len(msgs); start += agentmem.MaxBatchMessages {
			batch := msgs[start:min(start+agentmem.MaxBatchMessages, len(msgs))]
			stored, err := store.AppendMessages(ctx, c.UserID, th.ID, batch, agentmem.AppendOptions{})
			if err != nil {
				return nil, fmt.Errorf("append session %d of %s: %w", ses.N, c.UserID, err)
			}
			if len(stored) != len(batch) {
				return nil, fmt.Errorf("append session %d of %s: stored %d messages of %d", ses.N, c.UserID, len(stored), len(batch))
			}
			for i, m := range stored {
				c.DiaIDs[TurnKey{th.ID, m.Seq}] = ses.Turns[start+i].DiaID
				c.lastSeq[th.ID] = max(c.lastSeq[th.ID], m.Seq)
			}
			c.count += len(stored)
		}
	}
	return c, nil
}

// Ranked is a dia_id at its rank among the turns the hits stand for (from
// 1), and the rank of the hit that first named it.
type Ranked struct {
	DiaID string `json:"dia_id"`
	Rank  int    `json:"rank"`
	Hit   int    `json:"hit"`
}

// Rank maps hits, best first, to the turns they stand for, ranked in that
// order: the top k turns are what Recall@k counts. A message hit stands
// for its own turn (its SeqFrom); a chunk, summary or memory hit for every
// turn of SeqFrom…SeqTo in its thread, in seq order, one rank each. A
// dia_id keeps its first (best) rank and is not counted again. unmapped
// counts the hits that stand for no stored turn (no thread, an unknown
// thread, or seqs outside it).
func (c *Conversation) Rank(hits []Hit) (ranked []Ranked, unmapped int) {
	seen := map[string]bool{}
	for i, h := range hits {
		from, to := h.SeqFrom, max(h.SeqFrom, h.SeqTo)
		if h.Scope == agentmem.ScopeMessages {
			to = from
		}
		// Clip to the thread, so that a bogus range costs nothing.
		from, to = max(from, 1), min(to, c.lastSeq[h.ThreadID])
		mapped := false
		for seq := from; seq <= to; seq++ {
			dia, ok := c.DiaIDs[TurnKey{h.ThreadID, seq}]
			if !ok {
				continue
			}
			mapped = true
			if !seen[dia] {
				seen[dia] = true
				ranked = append(ranked, Ranked{DiaID: dia, Rank: len(ranked) + 1, Hit: i + 1})
			}
		}
		if !mapped {
			unmapped++
		}
	}
	return ranked, unmapped
}
