package extract

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"text/template"
	"unicode/utf8"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/prompt"
)

// ModelNeighbours is how many of the user's memories most similar to a
// candidate the model compares it with (mem0 compares with 5 too).
const ModelNeighbours = 5

var consolidatePrompt = template.Must(template.ParseFS(promptFS, "prompts/consolidate.tmpl"))

// decideByModel asks the model what to do with the candidate, given the
// valid memories most similar to it, and applies the answer: ADD, UPDATE
// (with the model's merged text), INVALIDATE (the old memory superseded by
// the candidate) or NOOP. It returns nil and no error when the rules are
// to decide instead: there is no memory to compare with, the model failed
// (after the client's retries), or its answer is malformed; the last two
// are logged. Errors are those of the store and the embedder.
func (c *Consolidator) decideByModel(ctx context.Context, userID, agentID, threadID string, cd Candidate, vec []float32,
	same []*agentmem.Memory, p *pool) (*Decision, error) {
	near, err := c.neighbours(ctx, userID, cd, vec, same, p)
	if err != nil || len(near) == 0 {
		return nil, err
	}
	for _, m := range near {
		if normalize(m.Text) == normalize(cd.Text) {
			return &Decision{Op: OpNoop, Memory: m, Reason: "the same statement is stored"}, nil
		}
	}
	prompt, err := ConsolidatePrompt(cd, near)
	if err != nil {
		return nil, err
	}
	resp, err := c.Chat.Complete(ctx, agentmem.ChatRequest{
		Model:     c.Model,
		Messages:  []agentmem.ChatMessage{{Role: agentmem.RoleUser, Content: prompt}},
		MaxTokens: 1000,
		JSON:      true,
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		c.log().WarnContext(ctx, "consolidation model failed; deciding by the rules", agentmem.LogUser, userID, agentmem.LogErr, err)
		return nil, nil
	}
	op, old, text, reason, err := parseModelDecision(resp.Content, cd, near)
	if err != nil {
		c.log().WarnContext(ctx, "consolidation model answered nonsense; deciding by the rules", agentmem.LogUser, userID, agentmem.LogErr, err)
		c.log().DebugContext(ctx, "malformed consolidation answer", "answer", resp.Content)
		return nil, nil
	}
	switch op {
	case OpNoop:
		return &Decision{Op: OpNoop, Memory: old, Reason: reason}, nil
	case OpInvalidate:
		return c.replace(ctx, userID, agentID, threadID, cd, vec, []*agentmem.Memory{old}, reason, nil)
	case OpUpdate:
		v := vec
		if text != cd.Text {
			vecs, err := c.Emb.Embed(ctx, []string{text})
			if err != nil {
				return nil, fmt.Errorf("embed merged memory: %w", err)
			}
			v = vecs[0]
		}
		upd := agentmem.MemoryUpdate{Text: &text, Confidence: &cd.Confidence, ThreadID: threadID, SeqFrom: cd.SeqFrom, SeqTo: cd.SeqTo, Reason: reason}
		if threadID == "" {
			upd.SeqFrom, upd.SeqTo = 0, 0
		}
		m, err := c.updateMemory(old, upd)
		if err != nil {
			return nil, err
		}
		c.putVector(m.ID, v)
		return &Decision{Op: OpUpdate, Memory: m, Reason: reason, Vec: v}, nil
	}
	m, err := c.add(ctx, userID, agentID, threadID, cd, vec)
	if err != nil {
		return nil, err
	}
	return &Decision{Op: OpAdd, Memory: m, Reason: reason}, nil
}

// Boosts of a stored memory's similarity to a candidate when the model's
// neighbours are chosen: one of the candidate's category is likelier to be
// about the same thing than its words alone tell (the built-in embedder
// sees "moved to Porto" and "lives in Lisbon" as far apart), and one about
// the same slot must be seen, to be replaced.
const (
	sameCategoryBoost = 0.25
	sameSlotBoost     = 1
)

// neighbours returns the user's valid memories most similar to the
// candidate, at most ModelNeighbours, most similar first: by the cosine of
// their vectors, boosted for memories of the candidate's category (same,
// the category's valid memories) and more for those about its slot.
func (c *Consolidator) neighbours(ctx context.Context, userID string, cd Candidate, vec []float32,
	same []*agentmem.Memory, p *pool) ([]*agentmem.Memory, error) {
	vecOf := p.vecOf
	valid := make(map[string]*agentmem.Memory, len(p.valid))
	for _, m := range p.valid {
		valid[m.ID] = m
	}
	boost := map[string]float64{}
	for _, m := range same {
		boost[m.ID] = sameCategoryBoost
		if cd.Slot != "" && metaOf(m).Slot == cd.Slot {
			boost[m.ID] += sameSlotBoost
		}
	}
	type scored struct {
		id  string
		sim float64
	}
	ranked := make([]scored, 0, len(vecOf))
	for id, v := range vecOf {
		ranked = append(ranked, scored{id, Cosine(vec, v) + boost[id]})
	}
	slices.SortFunc(ranked, func(a, b scored) int { return cmp.Or(cmp.Compare(b.sim, a.sim), strings.Compare(a.id, b.id)) })
	var out []*agentmem.Memory
	// vecOf holds invalidated memories too: look a few more up.
	for i := 0; i < len(ranked) && i < 4*ModelNeighbours && len(out) < ModelNeighbours; i++ {
		if m := valid[ranked[i].id]; m != nil { // as this consolidator left it, perhaps not written yet
			out = append(out, m)
			continue
		}
		m, err := c.Store.FindMemoryByID(ctx, userID, ranked[i].id)
		if agentmem.ErrorCode(err) == agentmem.ENOTFOUND {
			continue // deleted meanwhile
		} else if err != nil {
			return nil, err
		}
		if m.Valid() {
			out = append(out, m)
		}
	}
	return out, nil
}

// ConsolidatePrompt renders the prompt that asks a model what to do with
// a candidate given stored memories, which it names "1", "2"… in order
// (short names, which a model copies back without mistakes, unlike IDs).
func ConsolidatePrompt(cd Candidate, memories []*agentmem.Memory) (string, error) {
	type memory struct{ Ref, Text, Category, Since string }
	data := struct {
		Memories       []memory
		Text, Category string
	}{Text: cd.Text, Category: cd.Category}
	for i, m := range memories {
		data.Memories = append(data.Memories, memory{Ref: strconv.Itoa(i + 1), Text: m.Text, Category: m.Category, Since: m.ValidFrom.UTC().Format("2006-01-02")})
	}
	var b strings.Builder
	if err := consolidatePrompt.Execute(&b, data); err != nil {
		return "", fmt.Errorf("render consolidation prompt: %w", err)
	}
	return b.String(), nil
}

// parseModelDecision validates the model's answer: an operation, the
// memory it concerns (by its name in the prompt, a string or a number;
// required but for ADD), the merged text of an UPDATE (the candidate's
// when empty) and a reason (a default one when empty).
func parseModelDecision(content string, cd Candidate, near []*agentmem.Memory) (op string, old *agentmem.Memory, text, reason string, err error) {
	var answer struct {
		Op     *string         `json:"op"`
		ID     json.RawMessage `json:"id"`
		Text   *string         `json:"text"`
		Reason *string         `json:"reason"`
	}
	if err := prompt.DecodeJSON(content, &answer); err != nil {
		return "", nil, "", "", err
	}
	if answer.Op == nil {
		return "", nil, "", "", prompt.Malformed(`no "op"`)
	}
	op = strings.ToLower(strings.TrimSpace(*answer.Op))
	switch op {
	case OpAdd, OpUpdate, OpInvalidate, OpNoop:
	default:
		return "", nil, "", "", prompt.Malformed("unknown op %q", op)
	}
	if op != OpAdd {
		var ref string
		var n json.Number
		if json.Unmarshal(answer.ID, &ref) != nil && json.Unmarshal(answer.ID, &n) == nil {
			ref = n.String()
		}
		i, err := strconv.Atoi(strings.Trim(strings.TrimSpace(ref), "[]"))
		if err != nil || i < 1 || i > len(near) {
			return "", nil, "", "", prompt.Malformed("%s names no listed memory (id %s)", op, answer.ID)
		}
		old = near[i-1]
	}
	text = cd.Text
	if op == OpUpdate && answer.Text != nil {
		if t := strings.Join(strings.Fields(*answer.Text), " "); t != "" {
			if len(t) > agentmem.MaxMemoryBytes || agentmem.ValidateText("text", t) != nil {
				return "", nil, "", "", prompt.Malformed("the merged text cannot be stored")
			}
			text = t
		}
	}
	if answer.Reason != nil {
		reason = strings.Join(strings.Fields(*answer.Reason), " ")
		if utf8.RuneCountInString(reason) > 200 || agentmem.ValidateText("reason", reason) != nil {
			reason = ""
		}
	}
	if reason == "" {
		reason = map[string]string{
			OpAdd:        "a new statement",
			OpUpdate:     "refined by a newer statement",
			OpInvalidate: "contradicted by a newer statement",
			OpNoop:       "the same statement is stored",
		}[op]
	}
	return op, old, text, "model: " + reason, nil
}

func (c *Consolidator) log() *slog.Logger { return agentmem.LoggerOr(c.Log) }
