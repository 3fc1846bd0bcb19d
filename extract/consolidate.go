package extract

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"

	"github.com/agentmem/agentmem"
)

// Store is what consolidation reads and writes.
type Store interface {
	agentmem.MemoryStore
	agentmem.VectorStore
}

// Decisions of consolidation.
const (
	OpAdd        = "add"        // a new memory
	OpUpdate     = "update"     // the candidate refines a memory: its next version
	OpInvalidate = "invalidate" // the candidate contradicts a memory: the old is invalidated, the new added
	OpNoop       = "noop"       // the candidate repeats a memory
)

// Similarities that decide, between a candidate and a memory of the same
// category (cosine of their vectors).
const (
	DuplicateSimilarity = 0.92 // at or above: the same statement (NOOP)
	RefineSimilarity    = 0.80 // at or above: a refinement of it (UPDATE)
)

// Decision is what consolidation did with one candidate.
type Decision struct {
	Op     string           `json:"op"`
	Memory *agentmem.Memory `json:"memory"`        // the new or updated memory; the existing one for NOOP
	Old    *agentmem.Memory `json:"old,omitempty"` // the invalidated memory
	Reason string           `json:"reason"`
	// Vec is the vector of an updated memory's new text, when it is not
	// the candidate's (the model merged the two).
	Vec []float32 `json:"-"`
}

// Consolidator merges candidates into a user's memories so that there is
// never a duplicate, nor a contradiction, side by side: a statement about
// a slot ("where the user lives") replaces the one it contradicts, which
// is kept invalidated with its history; a repeated statement changes
// nothing; a close variant becomes the memory's next version.
//
// With a Chat, the model decides each candidate against the memories most
// similar to it (see decideByModel); the rules remain the path without a
// model and the fallback when it fails or answers nonsense.
type Consolidator struct {
	Store Store
	Emb   agentmem.Embedder
	Space string // the vector space of Emb

	Chat  agentmem.Chat // nil: the rules alone decide
	Model string        // the chat model ("" for the client's default)
	Log   *slog.Logger
}

// memoryMeta is what consolidation keeps in a memory's metadata to
// compare later statements with it.
type memoryMeta struct {
	Slot    string `json:"slot,omitempty"`
	Object  string `json:"object,omitempty"`
	Negated bool   `json:"negated,omitempty"`
}

// Apply consolidates candidates drawn from a thread of the user (agentID
// and threadID are their provenance; either may be empty) and returns
// what it did with each, in order.
func (c *Consolidator) Apply(ctx context.Context, userID, agentID, threadID string, cands []Candidate) ([]Decision, error) {
	if len(cands) == 0 {
		return nil, nil
	}
	texts := make([]string, len(cands))
	for i, cd := range cands {
		texts[i] = cd.Text
	}
	vecs, err := c.Emb.Embed(ctx, texts)
	if err != nil {
		return nil, fmt.Errorf("embed candidates: %w", err)
	}
	// The user's memories of the candidates' categories, with vectors.
	existing := map[string][]*agentmem.Memory{}
	for _, cd := range cands {
		if _, ok := existing[cd.Category]; ok {
			continue
		}
		cat := cd.Category
		ms, err := c.allValid(ctx, userID, &cat)
		if err != nil {
			return nil, err
		}
		existing[cd.Category] = ms
	}
	stored, err := c.Store.FindVectors(ctx, userID, c.Space, []string{agentmem.ScopeMemories})
	if err != nil {
		return nil, err
	}
	vecOf := map[string][]float32{}
	for _, v := range stored {
		vecOf[v.ID] = v.Vec
	}

	var out []Decision
	for i, cd := range cands {
		d, err := c.decide(ctx, userID, agentID, threadID, cd, vecs[i], existing[cd.Category], vecOf)
		if err != nil {
			return out, err
		}
		out = append(out, *d)
		switch d.Op {
		case OpAdd, OpInvalidate:
			existing[cd.Category] = append(existing[cd.Category], d.Memory)
			vecOf[d.Memory.ID] = vecs[i]
			if d.Old != nil { // the model may invalidate a memory of another category
				for cat, ms := range existing {
					existing[cat] = removeMemory(ms, d.Old.ID)
				}
			}
		case OpUpdate:
			if d.Vec == nil {
				d.Vec = vecs[i]
			}
			vecOf[d.Memory.ID] = d.Vec
			for _, ms := range existing {
				for j, m := range ms {
					if m.ID == d.Memory.ID {
						ms[j] = d.Memory
					}
				}
			}
		}
	}
	return out, nil
}

// allValid returns the user's valid memories of a category.
func (c *Consolidator) allValid(ctx context.Context, userID string, category *string) ([]*agentmem.Memory, error) {
	var out []*agentmem.Memory
	f := agentmem.MemoryFilter{Category: category, Limit: agentmem.MaxPageSize}
	for {
		page, next, err := c.Store.FindMemories(ctx, userID, f)
		if err != nil {
			return nil, err
		}
		out = append(out, page...)
		if f.Cursor = next; next == "" {
			return out, nil
		}
	}
}

func removeMemory(ms []*agentmem.Memory, id string) []*agentmem.Memory {
	out := ms[:0:0]
	for _, m := range ms {
		if m.ID != id {
			out = append(out, m)
		}
	}
	return out
}

// decide finds the memory the candidate relates to and applies the
// decision.
func (c *Consolidator) decide(ctx context.Context, userID, agentID, threadID string, cd Candidate, vec []float32,
	same []*agentmem.Memory, vecOf map[string][]float32) (*Decision, error) {
	if c.Chat != nil {
		if d, err := c.decideByModel(ctx, userID, agentID, threadID, cd, vec, same, vecOf); d != nil || err != nil {
			return d, err
		}
	}
	norm := normalize(cd.Text)
	var best *agentmem.Memory
	bestSim := -1.0
	for _, m := range same {
		if normalize(m.Text) == norm {
			return &Decision{Op: OpNoop, Memory: m, Reason: "the same statement is stored"}, nil
		}
		sim := cosine(vec, vecOf[m.ID])
		meta := metaOf(m)
		switch {
		case cd.Slot != "" && meta.Slot == cd.Slot:
			if sim >= DuplicateSimilarity {
				return &Decision{Op: OpNoop, Memory: m, Reason: "the same statement is stored"}, nil
			}
			return c.replace(ctx, userID, agentID, threadID, cd, vec, m, fmt.Sprintf("a newer statement about %s", cd.Slot))
		case cd.Object != "" && meta.Object != "" && meta.Negated != cd.Negated && sameObject(meta.Object, cd.Object):
			return c.replace(ctx, userID, agentID, threadID, cd, vec, m, "the user's preference changed")
		}
		if sim > bestSim {
			best, bestSim = m, sim
		}
	}
	switch {
	case best != nil && bestSim >= DuplicateSimilarity && metaOf(best).Negated == cd.Negated:
		return &Decision{Op: OpNoop, Memory: best, Reason: fmt.Sprintf("a near-identical memory is stored (similarity %.2f)", bestSim)}, nil
	case best != nil && bestSim >= RefineSimilarity && metaOf(best).Negated == cd.Negated:
		text := cd.Text
		upd := agentmem.MemoryUpdate{Text: &text, Confidence: &cd.Confidence, ThreadID: threadID, SeqFrom: cd.SeqFrom, SeqTo: cd.SeqTo,
			Reason: fmt.Sprintf("refined by a similar statement (similarity %.2f)", bestSim)}
		m, err := c.Store.UpdateMemory(ctx, userID, best.ID, upd)
		if err != nil {
			return nil, err
		}
		if err := c.putVector(ctx, userID, m.ID, vec); err != nil {
			return nil, err
		}
		return &Decision{Op: OpUpdate, Memory: m, Reason: upd.Reason}, nil
	}
	m, err := c.add(ctx, userID, agentID, threadID, cd, vec)
	if err != nil {
		return nil, err
	}
	return &Decision{Op: OpAdd, Memory: m, Reason: "a new statement"}, nil
}

// replace adds the candidate and invalidates the memory it contradicts.
func (c *Consolidator) replace(ctx context.Context, userID, agentID, threadID string, cd Candidate, vec []float32, old *agentmem.Memory, reason string) (*Decision, error) {
	m, err := c.add(ctx, userID, agentID, threadID, cd, vec)
	if err != nil {
		return nil, err
	}
	old, err = c.Store.InvalidateMemory(ctx, userID, old.ID, m.ID, reason)
	if err != nil {
		return nil, err
	}
	return &Decision{Op: OpInvalidate, Memory: m, Old: old, Reason: reason}, nil
}

func (c *Consolidator) add(ctx context.Context, userID, agentID, threadID string, cd Candidate, vec []float32) (*agentmem.Memory, error) {
	meta, _ := json.Marshal(memoryMeta{Slot: cd.Slot, Object: cd.Object, Negated: cd.Negated})
	m := &agentmem.Memory{UserID: userID, Text: cd.Text, Category: cd.Category, Confidence: cd.Confidence, Importance: cd.Importance,
		AgentID: agentID, ThreadID: threadID, SeqFrom: cd.SeqFrom, SeqTo: cd.SeqTo, Source: agentmem.SourceExtracted, Metadata: meta}
	if threadID == "" {
		m.SeqFrom, m.SeqTo = 0, 0
	}
	if err := c.Store.CreateMemory(ctx, m); err != nil {
		return nil, err
	}
	return m, c.putVector(ctx, userID, m.ID, vec)
}

func (c *Consolidator) putVector(ctx context.Context, userID, id string, vec []float32) error {
	return c.Store.PutVectors(ctx, userID, []agentmem.Vector{{Scope: agentmem.ScopeMemories, ID: id, Space: c.Space, Vec: vec}})
}

func metaOf(m *agentmem.Memory) memoryMeta {
	var meta memoryMeta
	_ = json.Unmarshal(m.Metadata, &meta) // a memory written through the API may have other metadata
	return meta
}

func sameObject(a, b string) bool {
	a, b = normalize(a), normalize(b)
	return a == b || strings.Contains(a, b) || strings.Contains(b, a)
}

// normalize folds a statement for equality: lower case, words only.
func normalize(s string) string {
	return strings.Join(strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127)
	}), " ")
}

func cosine(a, b []float32) float64 {
	if len(a) != len(b) || len(a) == 0 {
		return 0
	}
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}
