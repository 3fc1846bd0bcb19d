package extract

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/extract/learned"
	"github.com/agentmem/agentmem/prompt"
)

// Defaults of Learned's zero thresholds.
const (
	// DefaultKeepMin: a memory the rules propose is dropped when the
	// classifier gives it a lower probability of being a durable fact.
	DefaultKeepMin = 0.25
	// DefaultSaidMin: a user's message from which the rules kept nothing
	// is stored in their words when the classifier gives it at least this
	// probability of stating a durable fact.
	DefaultSaidMin = 0.6
	// DefaultSlotMin: a slot the classifier names with at least this
	// probability files a memory under it, so that a newer statement of a
	// single-valued slot (residence, job, partner, …) replaces it.
	DefaultSlotMin = 0.5
	// DefaultKindMin: a slot the classifier names with at least this
	// probability is the memory's kind (Candidate.Kind), which decides
	// whether its figures update and what an end ends.
	DefaultKindMin = 0.3
	// DefaultEndMin: a message the change classifier takes for the end of
	// something with at least this probability ends the memories of its
	// kind that name what it names (Candidate.Ends).
	DefaultEndMin = 0.6
)

// slotSureMin: a statement of where the user lives that the rules read
// as an object of theirs ("have finally settled into the new place in
// leeds") is filed under the residence slot when the classifier names it
// with at least this probability, so that it replaces the old place;
// another's ("sister: live in leeds") never is. Other slots stay with
// the rules: filing their objects too cost LoCoMo 0.002 of R@5.
const slotSureMin = 0.8

// maxSaid bounds a memory in the user's words, in bytes.
const maxSaid = 400

// Learned weighs the rules' proposals with the classifiers learned from
// the labelled corpus (package learned), over the built-in model's
// embeddings (Embed must embed in learned.Space):
//
//   - a proposal the keep classifier doubts (below KeepMin) is dropped,
//     unless it is of a slot, a retraction or a correction;
//   - a proposal of no slot and no object is filed under the slot the
//     slot classifier names, when that slot holds one value (the user's
//     residence, job, partner, diet, …), so that a newer one replaces it;
//   - a message from which nothing is kept but that the fact classifier
//     takes for a durable fact (SaidMin) is stored in the user's words
//     ("User said: moved. footscray. 1 bed near the station, 420/wk"),
//     its questions left out, filed under its slot likewise;
//   - the statements of a message the change classifier takes for the
//     end of something said before ("we lost Bruno in May") end the
//     memories of their kind that name what they name (Candidate.Ends).
type Learned struct {
	Model *learned.Model
	Embed agentmem.Embedder
	// Thresholds; the defaults above when 0.
	KeepMin, SaidMin, SlotMin, KindMin, EndMin float64
}

// weigh returns cands, proposed by the rules from msgs, weighed.
func (l *Learned) weigh(ctx context.Context, msgs []*agentmem.Message, cands []Candidate) ([]Candidate, error) {
	// The classifiers read a message as it would be stored: its
	// statements, its questions left out.
	var said []*agentmem.Message
	var saids []string
	texts := make([]string, 0, len(msgs)+len(cands))
	for _, m := range msgs {
		if m == nil || m.Role != agentmem.RoleUser {
			continue
		}
		if s := Statements(m.Content); s != "" {
			said, saids = append(said, m), append(saids, s)
			texts = append(texts, s)
		}
	}
	for _, c := range cands {
		texts = append(texts, c.Text)
	}
	if len(texts) == 0 {
		return cands, nil
	}
	vecs, err := l.Embed.Embed(ctx, texts)
	if err != nil {
		return nil, fmt.Errorf("embed for the learned classifiers: %w", err)
	}
	if len(vecs) != len(texts) {
		return nil, fmt.Errorf("embed for the learned classifiers: %d vectors for %d texts", len(vecs), len(texts))
	}
	keepMin, saidMin, slotMin, endMin := cmp.Or(l.KeepMin, DefaultKeepMin), cmp.Or(l.SaidMin, DefaultSaidMin), cmp.Or(l.SlotMin, DefaultSlotMin), cmp.Or(l.EndMin, DefaultEndMin)
	kindMin := cmp.Or(l.KindMin, DefaultKindMin)

	kept := map[int64]bool{}
	out := cands[:0:0]
	for i, v := range vecs {
		vecs[i] = learned.Input(v, texts[i])
	}
	// A message the change classifier takes for the end of something
	// said before makes its statements endings.
	ends, index := map[int64]bool{}, map[int64]int{}
	for i, m := range said {
		index[m.Seq] = i
		if change, p := l.Model.ChangeOf(vecs[i]); change == "end" && p >= endMin && l.Model.FactP(vecs[i]) >= 0.5 {
			ends[m.Seq] = true
		}
	}
	for i, c := range cands {
		c.Ends = ends[c.SeqFrom] && !c.Retract && c.Corrects == ""
		x := vecs[len(said)+i]
		if c.Retract || c.Corrects != "" {
			out = append(out, c)
			kept[c.SeqFrom] = true
			continue
		}
		if c.Slot == "" && !strings.HasPrefix(c.Object, addressedObject) && l.Model.KeepP(x) < keepMin {
			continue // (a name the user is called by is no statement the classifier learned)
		}
		slot, p := l.Model.SlotOf(x)
		if p >= slotMin && c.Slot == "" && learned.Singular(slot) && (c.Object == "" || slot == "residence" && p >= slotSureMin && !strings.Contains(c.Object, ":")) {
			c.Slot = slotName(slot)
		}
		if j, ok := index[c.SeqFrom]; ok && p < slotMin {
			// Of its message, if surer: its kind, not a slot of one
			// value (the message may tell more than this statement does).
			if mslot, mp := l.Model.SlotOf(vecs[j]); mp > p {
				slot, p = mslot, mp
			}
		}
		if p >= kindMin {
			c.Kind = slot
		}
		out = append(out, c)
		kept[c.SeqFrom] = true
	}
	for i, m := range said {
		if kept[m.Seq] || l.Model.FactP(vecs[i]) < saidMin {
			continue
		}
		c := Candidate{Text: agentmem.SaidPrefix + saids[i], Category: "other", Confidence: l.Model.FactP(vecs[i]), Importance: 0.5, SeqFrom: m.Seq, SeqTo: m.Seq,
			Ends: ends[m.Seq]}
		slot, p := l.Model.SlotOf(vecs[i])
		c.Category = slotCategory[slot]
		if p >= kindMin {
			c.Kind = slot
		}
		if p >= slotMin && learned.Singular(slot) {
			c.Slot = slotName(slot)
		}
		out = append(out, c)
	}
	return out, nil
}

// Statements returns a message's sentences but its questions, at most
// maxSaid bytes of them: what the learned classifiers read of a message,
// and what a memory in the user's words keeps.
func Statements(content string) string {
	var b strings.Builder
	forSentences(content, func(s string, question bool) {
		if question || b.Len() >= maxSaid {
			return
		}
		if b.Len() > 0 {
			b.WriteString(" ")
		}
		b.WriteString(s)
		if last := s[len(s)-1]; last != '.' && last != '!' {
			b.WriteString(".")
		}
	})
	return truncate(b.String(), maxSaid)
}

// truncate cuts s to at most n bytes at a word's end (at a character
// boundary if the last word is long), marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if i := strings.LastIndexByte(s[:n], ' '); i > n/2 {
		return s[:i] + "…"
	}
	return prompt.Truncate(s, n) + "…"
}

// slotName is the rules' name of a learned slot (Candidate.Slot), so that
// the rules' statements and the learned ones replace each other.
func slotName(slot string) string {
	switch slot {
	case "education":
		return "study"
	case "partner":
		return "marital-status"
	case "body":
		return "weight"
	}
	return slot
}

// Section returns the category a memory is best shown under: its own,
// or, for the rules' catch-alls (fact, other), its learned kind's
// (metadata "kind": "User lives on their own in Dunedin." of kind
// residence is a place); "" when it knows none better. For
// profile.Profiler.Section.
func Section(m *agentmem.Memory) string {
	if m.Category != "" && m.Category != "fact" && m.Category != "other" {
		return m.Category
	}
	if c := slotCategory[metaOf(m).Kind]; c != "" && c != "other" {
		return c
	}
	return m.Category
}

// slotCategory files a learned slot's memories under a category of
// DefaultCategories.
var slotCategory = map[string]string{
	"none": "other", "residence": "place", "job": "job", "education": "job", "partner": "family", "family": "family",
	"pet": "family", "medication": "health", "health": "health", "diet": "preference", "allergy": "health",
	"age": "identity", "body": "health", "hobby": "activity", "preference": "preference", "possession": "possession",
	"finance": "other", "count": "other", "project": "activity", "language": "identity", "origin": "place",
	"name": "identity", "plan": "plan", "event": "date",
}

// Intent returns the category of memories a query asks about (the slot
// classifier's, "where does she live these days?": place) and how sure
// it is of it; see retrieve.Options.Intent.
func (l *Learned) Intent(ctx context.Context, query string) (string, float64, error) {
	vecs, err := l.Embed.Embed(ctx, []string{query})
	if err != nil {
		return "", 0, err
	}
	if len(vecs) != 1 {
		return "", 0, fmt.Errorf("embedder returned %d vectors for 1 text", len(vecs))
	}
	slot, p := l.Model.SlotOf(learned.Input(vecs[0], query))
	return slotCategory[slot], p, nil
}
