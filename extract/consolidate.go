package extract

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"
	"unicode"

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
	OpInvalidate = "invalidate" // the candidate contradicts a memory: the old is invalidated, the new added (none for a retraction)
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
	Memory *agentmem.Memory `json:"memory"`        // the new or updated memory; the existing one for NOOP; nil for a retraction
	Old    *agentmem.Memory `json:"old,omitempty"` // the invalidated memory
	Reason string           `json:"reason"`
	// Vec is the vector of an updated memory's new text, when it is not
	// the candidate's (the model merged the two).
	Vec []float32 `json:"-"`
	// repeat is set on a decision that invalidates other memories, and
	// whose Memory is an existing one that the candidate says again (see
	// confirm): its turn is a source of that memory, as a NOOP's is.
	repeat bool
}

// Consolidator merges candidates into a user's memories so that there is
// never a duplicate, nor a contradiction, side by side: a statement about
// a slot ("where the user lives") replaces the one it contradicts, which
// is kept invalidated with its history; a retraction ("I'm not vegetarian
// anymore") invalidates what it ends and adds nothing; facts of no slot
// accumulate, each known by its object ("daughter mia", "daughter lea");
// a repeated statement changes nothing but the memory's sources, which
// gain its turn (a memory keeps every turn it came from); a close variant
// becomes the memory's next version (see decide), whose sources gain its
// turn too.
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

	// kept is the user's valid memories and their vectors as the last
	// Apply left them, for the next Apply of the same user (see Apply).
	kept     *pool
	keptUser string
	stale    bool                   // others may have written since the pool was read (Stale)
	writes   []agentmem.MemoryWrite // the memories decided, for flush
	pending  []agentmem.Vector      // their vectors, for flush
}

// memoryMeta is what consolidation keeps in a memory's metadata to
// compare later statements with it: the candidate's slot, object and
// polarity. A memory stored without them (before, or through the API) is
// compared by its text and vector alone.
type memoryMeta struct {
	Slot    string `json:"slot,omitempty"`
	Object  string `json:"object,omitempty"`
	Negated bool   `json:"negated,omitempty"`
	Kind    string `json:"kind,omitempty"`
}

// Apply consolidates candidates drawn from a thread of the user (agentID
// and threadID are their provenance; either may be empty) and returns
// what it did with each, in order. The memories it decides are written
// when it returns (MemoryStore.WriteMemories, then their vectors), also
// those decided before a failure.
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
	p, err := c.pool(ctx, userID)
	if err != nil {
		return nil, err
	}
	out, err := c.apply(ctx, userID, agentID, threadID, cands, vecs, p)
	// What was decided is written together: the memories in one batch,
	// then their vectors (each was a commit of its own), also when a
	// decision failed (what it wrote before the failure).
	if ferr := c.flush(ctx, userID); err == nil {
		err = ferr
	}
	if err != nil {
		c.kept = nil // some of its writes may be done: read them again
	}
	return out, err
}

// flushWrites is how many memory writes one batch (one transaction)
// holds: a write of the request path waits for at most one (on SQLite).
const flushWrites = 64

// flush writes the memories decided since the last flush, in batches of
// flushWrites, then their vectors.
func (c *Consolidator) flush(ctx context.Context, userID string) error {
	writes, vectors := c.writes, c.pending
	c.writes, c.pending = nil, nil
	for len(writes) > 0 {
		n := min(len(writes), flushWrites)
		if _, err := c.Store.WriteMemories(ctx, userID, writes[:n]); err != nil {
			return err
		}
		writes = writes[n:]
	}
	if len(vectors) > 0 {
		return c.Store.PutVectors(ctx, userID, vectors)
	}
	return nil
}

// apply decides the candidates in turn, with p the user's memories.
func (c *Consolidator) apply(ctx context.Context, userID, agentID, threadID string, cands []Candidate, vecs [][]float32, p *pool) ([]Decision, error) {
	var out []Decision
	for i, cd := range cands {
		d, err := c.decide(ctx, userID, agentID, threadID, cd, vecs[i], p)
		if err != nil {
			return out, err
		}
		if d.Op == OpNoop && d.Memory != nil {
			if err := c.heal(ctx, d.Memory, p); err != nil {
				return out, err
			}
		}
		if (d.Op == OpNoop || d.repeat) && d.Memory != nil {
			c.saidAgain(d.Memory, threadID, cd)
		}
		out = append(out, *d)
		if d.Old != nil {
			p.drop(d.Old.ID)
		}
		if cd.Slot == "residence" && !cd.Negated && !cd.Retract && d.Memory != nil {
			// The plan to move there is done: "moving to Seattle next
			// month", then "I live in Seattle now".
			if err := c.endMovePlans(ctx, userID, cd, d.Memory, p); err != nil {
				return out, err
			}
		}
		switch d.Op {
		case OpAdd, OpInvalidate:
			if d.Memory != nil { // nil: a retraction
				p.put(d.Memory, vecs[i])
			}
		case OpUpdate:
			if d.Vec == nil {
				d.Vec = vecs[i]
			}
			p.put(d.Memory, d.Vec)
		}
	}
	return out, nil
}

// pool returns the user's valid memories, with vectors: a slot or an
// object is compared across categories (an extractor may file
// "vegetarian" under diet once and preference another time). They are
// read from the store at the first Apply of a user, then kept as Apply
// changes them, and brought up to date with what others wrote since at
// the first Apply after Stale (refresh): the pages of an index job, and
// the jobs of a user one after the other, read them once (reading them was most of
// the job's time once a user has thousands of memories). They are read
// again in full after a deletion of one of the user's vectors, and at
// least every poolReload.
func (c *Consolidator) pool(ctx context.Context, userID string) (*pool, error) {
	if p := c.kept; p != nil && c.keptUser == userID && time.Since(p.loaded) < poolReload {
		if !c.stale {
			return p, nil
		}
		ok, err := c.refresh(ctx, userID, p)
		if err != nil || ok {
			c.stale = false
			return p, err
		}
	}
	c.stale = false
	// Where the vectors stand and the time, before reading: what is
	// written meanwhile is read again by the next refresh.
	state, err := c.Store.VectorsState(ctx, userID, c.Space)
	if err != nil {
		return nil, err
	}
	loaded := time.Now()
	valid, err := c.allValid(ctx, userID, nil)
	if err != nil {
		return nil, err
	}
	stored, err := c.Store.FindVectors(ctx, userID, c.Space, []string{agentmem.ScopeMemories})
	if err != nil {
		return nil, err
	}
	p := &pool{valid: valid, vecOf: make(map[string][]float32, len(valid)), state: state, loaded: loaded, seen: loaded}
	ids := make(map[string]bool, len(valid))
	for _, m := range valid {
		ids[m.ID] = true
	}
	for _, v := range stored {
		if ids[v.ID] {
			p.vecOf[v.ID] = v.Vec
		}
	}
	c.kept, c.keptUser = p, userID
	return p, nil
}

// Stale tells c that others may have changed the user's memories since
// its last Apply (a Consolidator kept from one job to the next): the
// next Apply brings what it kept up to date first. Within a job, a
// Consolidator sees its own writes alone.
func (c *Consolidator) Stale() { c.stale = true }

// poolReload bounds how long a pool is brought up to date by refresh
// rather than read again: a memory deleted without a vector (its
// embedding failed) moves no vector state, and stays in the pool until
// then.
const poolReload = time.Minute

// refreshSlack is how far before the last refresh the next one reads the
// memories updated: clocks of other writers may lag ours.
const refreshSlack = 2 * time.Second

// refresh brings p up to date with what was written since it was read:
// the memories updated since (added, edited, invalidated) and the
// vectors put since. It reports false when it cannot: one of the user's
// vectors was deleted since (a memory may be gone), or their count
// restarted (the user was erased); p must then be read again.
func (c *Consolidator) refresh(ctx context.Context, userID string, p *pool) (bool, error) {
	state, err := c.Store.VectorsState(ctx, userID, c.Space)
	if err != nil {
		return false, err
	}
	// (A pool read while the user had no vectors is read again: each
	// read of such a state names a new count, and an erasure since would
	// go unseen.)
	if !p.state.CanCatchUp(state) {
		return false, nil
	}
	since := p.seen.Add(-refreshSlack)
	seen := time.Now()
	f := agentmem.MemoryFilter{UpdatedAfter: &since, IncludeInvalid: true, Limit: agentmem.MaxPageSize}
	for {
		page, next, err := c.Store.FindMemories(ctx, userID, f)
		if err != nil {
			return false, err
		}
		for _, m := range page {
			switch i, ok := p.index()[m.ID]; {
			case !m.Valid():
				p.drop(m.ID)
			case ok && p.valid[i].Version == m.Version && p.valid[i].UpdatedAt.Equal(m.UpdatedAt):
				// as kept (one of ours): what decide read of it stands
			default:
				p.putMemory(m)
			}
		}
		if f.Cursor = next; next == "" {
			break
		}
	}
	vs, err := c.Store.FindVectorsSince(ctx, userID, c.Space, p.state.Seq)
	if err != nil {
		return false, err
	}
	for _, v := range vs {
		if v.Scope == agentmem.ScopeMemories {
			p.vecOf[v.ID] = v.Vec
		}
	}
	p.state, p.seen = state, seen
	return true, nil
}

// pool is the user's valid memories as consolidation goes, and the
// vectors of the memories it has seen valid (of those it has invalidated
// since too).
type pool struct {
	valid []*agentmem.Memory
	vecOf map[string][]float32
	// state is where the user's vectors stood when the pool was last
	// brought up to date, at time seen; loaded is when it was read.
	state        agentmem.VectorsState
	loaded, seen time.Time
	at           map[string]int // positions in valid by ID (index), nil when to be rebuilt
	// derived is what decide reads of each memory, computed once:
	// decide compares every candidate with the user's memories.
	derived map[*agentmem.Memory]*derived
}

// derived is what decide reads of a memory: its normalized text, its
// metadata and its object normalized.
type derived struct {
	norm, object string
	meta         memoryMeta
}

// derive returns m's derived, computed once.
func (p *pool) derive(m *agentmem.Memory) *derived {
	d := p.derived[m]
	if d == nil {
		if p.derived == nil {
			p.derived = map[*agentmem.Memory]*derived{}
		}
		meta := metaOf(m)
		d = &derived{norm: normalize(m.Text), object: normalize(meta.Object), meta: meta}
		p.derived[m] = d
	}
	return d
}

func (p *pool) object(m *agentmem.Memory) string   { return p.derive(m).object }
func (p *pool) meta(m *agentmem.Memory) memoryMeta { return p.derive(m).meta }

// of returns the valid memories of a category.
func (p *pool) of(category string) []*agentmem.Memory {
	var out []*agentmem.Memory
	for _, m := range p.valid {
		if m.Category == category {
			out = append(out, m)
		}
	}
	return out
}

func (p *pool) drop(id string) {
	if _, ok := p.index()[id]; !ok {
		return
	}
	p.valid = slices.DeleteFunc(p.valid, func(m *agentmem.Memory) bool { return m.ID == id })
	p.at = nil // positions moved
}

// index returns the position of each valid memory in p.valid by ID.
func (p *pool) index() map[string]int {
	if p.at == nil {
		p.at = make(map[string]int, len(p.valid))
		for i, m := range p.valid {
			p.at[m.ID] = i
		}
	}
	return p.at
}

// put adds a memory, or its new version, with its vector.
func (p *pool) put(m *agentmem.Memory, vec []float32) {
	p.vecOf[m.ID] = vec
	p.putMemory(m)
}

// putMemory adds a memory, or its new version.
func (p *pool) putMemory(m *agentmem.Memory) {
	at := p.index()
	if i, ok := at[m.ID]; ok {
		p.valid[i] = m
		return
	}
	at[m.ID] = len(p.valid)
	p.valid = append(p.valid, m)
}

// allValid returns the user's valid memories, of a category when it is
// not nil.
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

// decide finds the memory the candidate relates to and applies the
// decision. A retraction is the rules' to decide, with a model too: it
// adds nothing, so the model's ADD, UPDATE or INVALIDATE by a new memory
// do not fit it.
//
// The rules, without a model:
//   - A retraction (Retract) invalidates the valid memories it ends, those
//     of its slot (of its object, when both tell one) or, without a slot,
//     the positive ones of its object (of a memory stored without one: its
//     text tells the object alone, "User is vegetarian."), superseded by
//     none; when there is none it is a NOOP.
//   - A candidate of a slot that the user has a valid memory of is a NOOP
//     if it tells the same value (its object, or else its text, see
//     sameValue), else it replaces every memory of the slot.
//     The job and the employer are one slot for a job at an employer: a
//     candidate of either that names one replaces a memory of the other
//     that names another (see atAnother).
//   - A candidate of an object (no slot) replaces the valid memories of
//     the same object (of a slot or not) of the other polarity ("User likes coffee." and
//     "User does not like coffee."); of the same polarity, it is a NOOP
//     if it tells nothing they do not (see residue), an UPDATE of one
//     whose words it all tells and more.
//   - Otherwise the most similar memory of its category decides by cosine
//     (a NOOP at DuplicateSimilarity, an UPDATE at RefineSimilarity), among
//     those of the same polarity that are not about another object or
//     another slot: "User's daughter Mia plays the violin." is never
//     merged with "User's daughter Lea plays the violin.".
//   - Anything else is added.
func (c *Consolidator) decide(ctx context.Context, userID, agentID, threadID string, cd Candidate, vec []float32, p *pool) (*Decision, error) {
	if cd.Retract {
		return c.retract(ctx, userID, cd, p)
	}
	if cd.Corrects != "" {
		return c.correct(ctx, userID, agentID, threadID, cd, p)
	}
	same := p.of(cd.Category)
	if c.Chat != nil {
		if d, err := c.decideByModel(ctx, userID, agentID, threadID, cd, vec, same, p); d != nil || err != nil {
			return d, err
		}
	}
	norm := normalize(cd.Text)
	for _, m := range same {
		if d := p.derive(m); d.norm == norm && (cd.Slot == "" || d.meta.Slot != cd.Slot) { // of its slot: confirm decides
			return &Decision{Op: OpNoop, Memory: m, Reason: "the same statement is stored"}, nil
		}
	}
	if cd.Slot != "" {
		var slot []*agentmem.Memory
		for _, m := range p.valid {
			if p.meta(m).Slot == cd.Slot || atAnother(cd, m) || ofSlotKind(cd, m) {
				slot = append(slot, m)
			}
		}
		for _, m := range slot {
			if c.sameValue(cd, vec, m, p) {
				return c.confirm(ctx, userID, cd, vec, m, slot, p)
			}
		}
		if len(slot) > 0 {
			return c.replace(ctx, userID, agentID, threadID, cd, vec, slot, fmt.Sprintf("a newer statement about %s", cd.Slot), p)
		}
	}
	if olds := endedBy(cd, p.valid); len(olds) > 0 {
		return c.replace(ctx, userID, agentID, threadID, cd, vec, olds, fmt.Sprintf("ended: %s", cd.Text), p)
	}
	if olds, thing := updatedFigures(cd, p.valid); len(olds) > 0 {
		return c.replace(ctx, userID, agentID, threadID, cd, vec, olds, fmt.Sprintf("a newer figure of %s", thing), p)
	}
	if cd.Object != "" && cd.Slot == "" {
		var opposite, alike []*agentmem.Memory
		object := normalize(cd.Object)
		for _, m := range p.valid {
			meta := p.meta(m)
			switch {
			case !sameNormalized(p.object(m), object):
			case meta.Negated != cd.Negated:
				opposite = append(opposite, m)
			default:
				alike = append(alike, m)
			}
		}
		if len(opposite) > 0 {
			return c.replace(ctx, userID, agentID, threadID, cd, vec, opposite, fmt.Sprintf("the user's statement about %s changed", cd.Object), p)
		}
		for _, m := range alike {
			if subset(residue(cd.Text, cd.Object), residue(m.Text, cd.Object)) {
				return &Decision{Op: OpNoop, Memory: m, Reason: fmt.Sprintf("the same statement about %s is stored", cd.Object)}, nil
			}
		}
		for _, m := range alike {
			if subset(residue(m.Text, cd.Object), residue(cd.Text, cd.Object)) {
				return c.update(ctx, userID, threadID, cd, vec, m, fmt.Sprintf("refined by a fuller statement about %s", cd.Object))
			}
		}
	}
	var best *agentmem.Memory
	bestSim := -1.0
	object := normalize(cd.Object)
	for _, m := range same {
		d := p.derive(m)
		if meta := d.meta; meta.Negated != cd.Negated || meta.Slot != "" && meta.Slot != cd.Slot ||
			meta.Object != "" && cd.Object != "" && !sameNormalized(d.object, object) {
			continue
		}
		if sim := Cosine(vec, p.vecOf[m.ID]); sim > bestSim {
			best, bestSim = m, sim
		}
	}
	switch {
	case best != nil && bestSim >= DuplicateSimilarity:
		return &Decision{Op: OpNoop, Memory: best, Reason: fmt.Sprintf("a near-identical memory is stored (similarity %.2f)", bestSim)}, nil
	case best != nil && bestSim >= RefineSimilarity:
		return c.update(ctx, userID, threadID, cd, vec, best, fmt.Sprintf("refined by a similar statement (similarity %.2f)", bestSim))
	}
	m, err := c.add(ctx, userID, agentID, threadID, cd, vec)
	if err != nil {
		return nil, err
	}
	return &Decision{Op: OpAdd, Memory: m, Reason: "a new statement"}, nil
}

// confirm is the decision on a candidate of a slot that tells the value
// of m, a valid memory of the slot: a NOOP, but for the other memories of
// the slot that tell another value, which it invalidates, superseded by m.
// A slot holds one value: two stand side by side only when a replace was
// cut short (its new memory added, the old not invalidated yet), and
// the statement said again, as when the job runs again, ends the old.
func (c *Consolidator) confirm(ctx context.Context, userID string, cd Candidate, vec []float32, m *agentmem.Memory, slot []*agentmem.Memory, p *pool) (*Decision, error) {
	d := &Decision{Op: OpNoop, Memory: m, Reason: fmt.Sprintf("the same %s is stored", cd.Slot), repeat: true}
	for _, o := range slot {
		if o.ID == m.ID || metaOf(o).Slot != cd.Slot || c.sameValue(cd, vec, o, p) {
			continue
		}
		reason := fmt.Sprintf("a newer statement about %s", cd.Slot)
		o, err := c.invalidate(o, m.ID, reason)
		if err != nil {
			return nil, err
		}
		p.drop(o.ID)
		if d.Old == nil {
			d.Op, d.Old, d.Reason = OpInvalidate, o, reason
		}
	}
	return d, nil
}

// sameValue reports whether a candidate of a slot tells the value that m,
// a memory of the slot, does: the same object of the same polarity when
// both have one, else the same text but for articles, or a near-identical
// one (DuplicateSimilarity).
func (c *Consolidator) sameValue(cd Candidate, vec []float32, m *agentmem.Memory, p *pool) bool {
	meta := metaOf(m)
	if meta.Object != "" && cd.Object != "" {
		return meta.Negated == cd.Negated && normalize(meta.Object) == normalize(cd.Object)
	}
	if placeSlots[cd.Slot] && !cd.Negated && !meta.Negated {
		// "User lives in Bristol." and "User is in Bristol.": the same
		// place, named alike.
		if a, b := namesIn(cd.Text), namesIn(m.Text); a != "" && a == b {
			return true
		}
	}
	return bare(cd.Text) == bare(m.Text) || Cosine(vec, p.vecOf[m.ID]) >= DuplicateSimilarity
}

// ofSlotKind reports whether m, a memory of the user's own filed under
// no slot, is of the kind of fact the candidate's slot holds (its
// learned kind, see Learned): "User lives on their own in Dunedin." (an
// object of the rules', kind residence) holds the slot that "User lives
// in Christchurch." (slot residence) tells anew. Only the slots
// kindSlots name: a move and a new job.
func ofSlotKind(cd Candidate, m *agentmem.Memory) bool {
	meta := metaOf(m)
	if !kindSlots[cd.Slot] || meta.Slot != "" || meta.Negated || meta.Kind == "" || slotName(meta.Kind) != cd.Slot || strings.Contains(meta.Object, ":") {
		return false
	}
	// The classifier's kind of a job is loose ("User heard stories from a
	// veteran."): a job is one that names an occupation.
	return cd.Slot != "job" || slices.ContainsFunc(strings.Fields(normalize(m.Text)), func(w string) bool { return jobs[w] || jobs[strings.TrimSuffix(w, "s")] })
}

var kindSlots = map[string]bool{"residence": true, "job": true}

var placeSlots = map[string]bool{"residence": true, "origin": true, "birthplace": true}

// namesIn returns the capitalised words of a memory after its first, in
// order, lower-cased: the names it tells ("bristol", "new york").
func namesIn(text string) string {
	var out []string
	for i, w := range strings.Fields(text) {
		w = strings.TrimFunc(w, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
		if i > 0 && w != "" && unicode.IsUpper([]rune(w)[0]) {
			out = append(out, strings.ToLower(w))
		}
	}
	return strings.Join(out, " ")
}

// ends reports whether a retraction of object ended ends the fact of
// object fact: the same object, or one whose words tell every word of it,
// a final s aside ("coffee" ends "drink about 5 coffees a day", "drink
// beer" ends "drink two beers every night"). A fact about someone else
// ("dad: drink coffee every day") is ended only by a retraction of them
// ("dog rex" ends "dog rex: sleep in the garden") or of that fact of
// theirs: "I quit coffee" is not the dad's.
func ends(fact, ended string) bool {
	who, _, about := strings.Cut(fact, ": ")
	if about && !strings.Contains(ended, ": ") {
		return sameObject(who, ended)
	}
	if sameObject(fact, ended) {
		return true
	}
	if about {
		return false
	}
	for _, w := range strings.Fields(normalize(fact)) {
		if habitWords[stemS(w)] == ended {
			return true // "I've stopped drinking" ends "has a glass of wine most nights"
		}
	}
	words := residue(fact, "")
	for _, w := range strings.Fields(normalize(ended)) {
		if w = stemS(w); !words[w] && w != "a" && w != "an" && w != "the" {
			return false
		}
	}
	return true
}

// atAnother reports whether m, a memory of the job or the employer, tells
// a job at another employer than the candidate of the other of the two
// slots does: "User is an accountant at KPMG." (job) is ended by "User
// started a new job at Shopify." (employer), not by "User works at
// KPMG."; a memory or a candidate that names no employer ("User works as
// a nurse.") is not at another.
func atAnother(cd Candidate, m *agentmem.Memory) bool {
	ms := metaOf(m).Slot
	if !(cd.Slot == "employer" && ms == "job" || cd.Slot == "job" && ms == "employer") {
		return false
	}
	theirs, ours := employerIn(m.Text), employerIn(cd.Text)
	return theirs != "" && ours != "" && !sameObject(theirs, ours)
}

// employerIn returns the employer a statement of a job names, normalised:
// the words after "at", "for" or "joined" up to a time, a place or
// another phrase ("User is a nurse at St Mary's Hospital in Leeds." → "st
// mary s hospital"), or "" ("User has been a teacher for ten years.").
func employerIn(text string) string {
	ws := strings.Fields(normalize(text))
	for i, w := range ws {
		if w != "at" && w != "for" && w != "joined" {
			continue
		}
		var name []string
		for _, n := range ws[i+1:] {
			if stops[n] || timeWords[n] || n == "as" || n == "and" || n == "but" || n == "now" {
				break
			}
			if n != "a" && n != "an" && n != "the" {
				name = append(name, n)
			}
		}
		if len(name) > 0 && !isNumber(name[0]) && !timeUnits[strings.TrimSuffix(name[0], "s")] {
			return strings.Join(name, " ")
		}
	}
	return ""
}

// retract invalidates the valid memories that a retraction ends (see
// decide), each superseded by none, the history's reason quoting the
// retraction; the Decision's Memory is nil and Old the first of them.
func (c *Consolidator) retract(ctx context.Context, userID string, cd Candidate, p *pool) (*Decision, error) {
	var ended []*agentmem.Memory
	for _, m := range p.valid {
		meta := metaOf(m)
		switch {
		case cd.Category == "plan" && m.Category != "plan":
			// A cancelled plan ends plans alone: "the Japan trip" is
			// not "User's sister lives in Japan.".
		case cd.Slot != "":
			// Of an object, the memory of the slot must tell it: "I left
			// Google" ends "User is a software engineer at Google.", not
			// "User works as a nurse.".
			if meta.Slot == cd.Slot && (cd.Object == "" || meta.Object == "" && sameObject(normalize(m.Text), cd.Object) || sameObject(meta.Object, cd.Object)) {
				ended = append(ended, m)
			} else if rel, ok := strings.CutPrefix(cd.Slot, "name-of:"); ok && meta.Slot == "" && cd.Object != "" && !meta.Negated &&
				(normalize(meta.Object) == normalize(rel+" "+cd.Object) || strings.HasPrefix(meta.Object, rel+" "+cd.Object+": ") && !renamed(cd.Text)) {
				// "I broke up with Tom" ends "User has a boyfriend named
				// Tom." (of no slot, its object the relation and name).
				ended = append(ended, m)
			}
		case cd.Object != "" && strings.HasPrefix(meta.Slot, "age-of:") && sameObject(strings.TrimPrefix(meta.Slot, "age-of:"), cd.Object):
			ended = append(ended, m) // "Luna died" ends "User's cat Luna is 14."
		case cd.Object != "" && meta.Object != "":
			if !meta.Negated && ends(meta.Object, cd.Object) {
				ended = append(ended, m)
			}
		case cd.Object != "" && meta.Slot == "" && !meta.Negated:
			// Stored before objects were: a statement of the object
			// alone ("User is vegetarian.").
			if r := residue(m.Text, cd.Object); len(r) == 0 && sameObject(normalize(m.Text), cd.Object) {
				ended = append(ended, m)
			}
		}
	}
	if len(ended) == 0 {
		return &Decision{Op: OpNoop, Reason: "nothing stored to retract"}, nil
	}
	reason := fmt.Sprintf("retracted: %s", cd.Text)
	d := &Decision{Op: OpInvalidate, Reason: reason}
	for _, m := range ended {
		old, err := c.invalidate(m, "", reason)
		if err != nil {
			return nil, err
		}
		p.drop(m.ID)
		if d.Old == nil {
			d.Old = old
		}
	}
	return d, nil
}

// renamed reports whether a retraction of a partner's name tells a
// marriage or an engagement: the girlfriend becomes the wife, and what
// was said of her still holds ("User's girlfriend Chloe is a vet."),
// unlike after a break-up.
func renamed(text string) bool {
	t := strings.ToLower(text)
	return strings.Contains(t, "married") || strings.Contains(t, "engaged")
}

// endMovePlans invalidates the valid plans of moving to the place that a
// new residence memory names, superseded by it.
func (c *Consolidator) endMovePlans(ctx context.Context, userID string, cd Candidate, m *agentmem.Memory, p *pool) error {
	place := namesIn(cd.Text)
	if place == "" {
		return nil
	}
	for _, o := range slices.Clone(p.valid) {
		if o.Category != "plan" || o.ID == m.ID {
			continue
		}
		if t := normalize(o.Text); (strings.Contains(t, "move") || strings.Contains(t, "moving") || strings.Contains(t, "relocat")) && strings.Contains(" "+t+" ", " "+place+" ") {
			if _, err := c.invalidate(o, m.ID, "done: "+cd.Text); err != nil {
				return err
			}
			p.drop(o.ID)
		}
	}
	return nil
}

// correct applies a correction ("sorry, I meant Braga, not Porto"): the
// newest valid memory whose text names the old value (a whole word, any
// case) is rewritten with the new one, which supersedes it, keeping its
// category, slot and polarity; its object is rewritten too. With no such
// memory the correction is a NOOP: it is not a fact of its own.
func (c *Consolidator) correct(ctx context.Context, userID, agentID, threadID string, cd Candidate, p *pool) (*Decision, error) {
	var m *agentmem.Memory
	for _, v := range p.valid {
		if _, ok := agentmem.ReplaceWord(v.Text, cd.Corrects, ""); ok && (m == nil || !v.CreatedAt.Before(m.CreatedAt)) {
			m = v
		}
	}
	if m == nil {
		return &Decision{Op: OpNoop, Reason: fmt.Sprintf("nothing stored names %q to correct", cd.Corrects)}, nil
	}
	newValue := meant(cd)
	meta := metaOf(m)
	text, _ := agentmem.ReplaceWord(m.Text, cd.Corrects, newValue)
	object, _ := agentmem.ReplaceWord(meta.Object, cd.Corrects, strings.ToLower(newValue))
	fixed := Candidate{Text: text, Category: m.Category, Confidence: cd.Confidence, Importance: m.Importance,
		Slot: meta.Slot, Object: object, Negated: meta.Negated, SeqFrom: cd.SeqFrom, SeqTo: cd.SeqTo}
	vecs, err := c.Emb.Embed(ctx, []string{fixed.Text})
	if err != nil {
		return nil, fmt.Errorf("embed correction: %w", err)
	}
	return c.replace(ctx, userID, agentID, threadID, fixed, vecs[0], []*agentmem.Memory{m}, fmt.Sprintf("corrected: %s", cd.Text), p)
}

// correctionOf is the candidate of a correction: the value meant (as the
// user wrote it) for the one taken back. Its text, "User meant Braga, not
// Porto.", is read back by meant.
func correctionOf(value, old string) Candidate {
	return Candidate{Text: "User meant " + value + ", not " + old + ".", Category: "fact", Confidence: 0.8, Importance: 0.6,
		Object: strings.ToLower(value), Corrects: old}
}

// meant returns the value a correction candidate (correctionOf) means, as
// the user wrote it.
func meant(cd Candidate) string {
	return strings.TrimSuffix(strings.TrimPrefix(cd.Text, "User meant "), ", not "+cd.Corrects+".")
}

// update makes the candidate m's next version.
func (c *Consolidator) update(ctx context.Context, userID, threadID string, cd Candidate, vec []float32, m *agentmem.Memory, reason string) (*Decision, error) {
	text := cd.Text
	upd := agentmem.MemoryUpdate{Text: &text, Confidence: &cd.Confidence, ThreadID: threadID, SeqFrom: cd.SeqFrom, SeqTo: cd.SeqTo, Reason: reason}
	if cd.Slot != "" || cd.Object != "" || cd.Kind != "" {
		meta := mergeMeta(m.Metadata, cd)
		upd.Metadata = &meta
	}
	m, err := c.updateMemory(m, upd)
	if err != nil {
		return nil, err
	}
	c.putVector(m.ID, vec)
	return &Decision{Op: OpUpdate, Memory: m, Reason: reason}, nil
}

// replace adds the candidate and invalidates the memories it
// contradicts, superseded by it; the Decision's Old is the first.
func (c *Consolidator) replace(ctx context.Context, userID, agentID, threadID string, cd Candidate, vec []float32, olds []*agentmem.Memory, reason string, p *pool) (*Decision, error) {
	m, err := c.add(ctx, userID, agentID, threadID, cd, vec)
	if err != nil {
		return nil, err
	}
	d := &Decision{Op: OpInvalidate, Memory: m, Reason: reason}
	for _, o := range olds {
		o, err = c.invalidate(o, m.ID, reason)
		if err != nil {
			return nil, err
		}
		if p != nil {
			p.drop(o.ID)
		}
		if d.Old == nil {
			d.Old = o
		}
	}
	return d, nil
}

func (c *Consolidator) add(ctx context.Context, userID, agentID, threadID string, cd Candidate, vec []float32) (*agentmem.Memory, error) {
	meta, _ := json.Marshal(memoryMeta{Slot: cd.Slot, Object: cd.Object, Negated: cd.Negated, Kind: cd.Kind})
	m := &agentmem.Memory{UserID: userID, Text: cd.Text, Category: cd.Category, Confidence: cd.Confidence, Importance: cd.Importance,
		AgentID: agentID, ThreadID: threadID, SeqFrom: cd.SeqFrom, SeqTo: cd.SeqTo, Source: agentmem.SourceExtracted, Metadata: meta}
	if now := c.now(); !cd.At.IsZero() && cd.At.Before(now) {
		m.ValidFrom = agentmem.Timestamp(cd.At) // when it was said
	}
	if threadID == "" {
		m.SeqFrom, m.SeqTo = 0, 0
	}
	if err := c.create(m); err != nil {
		return nil, err
	}
	c.putVector(m.ID, vec)
	return m, nil
}

// now is the time of the writes the consolidator queues, in the
// precision the stores keep.
func (c *Consolidator) now() time.Time { return agentmem.Timestamp(time.Now()) }

// create queues a new memory, prepared here (Memory.Prepare) so that the
// writes after it can name its ID.
func (c *Consolidator) create(m *agentmem.Memory) error {
	if err := m.Prepare(c.now()); err != nil {
		return err
	}
	c.writes = append(c.writes, agentmem.MemoryWrite{Create: m})
	return nil
}

// updateMemory queues the next version of m, a valid memory as the
// consolidator last left it, and returns that version.
func (c *Consolidator) updateMemory(m *agentmem.Memory, upd agentmem.MemoryUpdate) (*agentmem.Memory, error) {
	if err := upd.Validate(); err != nil {
		return nil, err
	}
	next := *m
	if err := next.ApplyUpdate(upd, c.now()); err != nil {
		return nil, err
	}
	c.writes = append(c.writes, agentmem.MemoryWrite{ID: m.ID, Update: &upd})
	return &next, nil
}

// invalidate queues the invalidation of m, superseded by the memory
// supersededBy ("" for none), and returns m as it leaves it.
func (c *Consolidator) invalidate(m *agentmem.Memory, supersededBy, reason string) (*agentmem.Memory, error) {
	if err := agentmem.ValidateInvalidation(m.ID, supersededBy, reason); err != nil {
		return nil, err
	}
	next := *m
	if !next.Invalidate(supersededBy, c.now()) {
		return m, nil
	}
	c.writes = append(c.writes, agentmem.MemoryWrite{ID: m.ID, Invalidate: &agentmem.MemoryInvalidation{SupersededBy: supersededBy, Reason: reason}})
	return &next, nil
}

// saidAgain queues the candidate's turns (threadID, its seqs) as a source
// of m, a memory it says again, unless m has them already (the same turn
// consolidated again) or there is no thread. m, the pool's, gains them
// too, so that the next repeat of the turn in the job adds nothing.
func (c *Consolidator) saidAgain(m *agentmem.Memory, threadID string, cd Candidate) {
	r := agentmem.ThreadRange{ThreadID: threadID, SeqFrom: cd.SeqFrom, SeqTo: cd.SeqTo}
	if threadID == "" || r.SeqFrom < 0 || r.SeqTo < r.SeqFrom || !m.AddSource(r) {
		return
	}
	c.writes = append(c.writes, agentmem.MemoryWrite{ID: m.ID, AddSource: &r})
}

// putVector queues the vector of a memory written, for flush.
func (c *Consolidator) putVector(id string, vec []float32) {
	c.pending = append(c.pending, agentmem.Vector{Scope: agentmem.ScopeMemories, ID: id, Space: c.Space, Vec: vec})
}

// heal queues the vector of m, a valid memory a candidate repeats, when
// it has none: a job stopped between writing a memory and flushing its
// vector, and runs again.
func (c *Consolidator) heal(ctx context.Context, m *agentmem.Memory, p *pool) error {
	if _, ok := p.vecOf[m.ID]; ok {
		return nil
	}
	vecs, err := c.Emb.Embed(ctx, []string{m.Text})
	if err != nil {
		return fmt.Errorf("embed memory: %w", err)
	}
	p.vecOf[m.ID] = vecs[0]
	c.putVector(m.ID, vecs[0])
	return nil
}

func metaOf(m *agentmem.Memory) memoryMeta {
	var meta memoryMeta
	_ = json.Unmarshal(m.Metadata, &meta) // a memory written through the API may have other metadata
	return meta
}

// sameObject reports whether two objects name the same thing: equal, or
// one's words a run of the other's ("sushi" and "sushi anymore"), never a
// part of a word ("tea" is not "steak").
func sameObject(a, b string) bool { return sameNormalized(normalize(a), normalize(b)) }

// sameNormalized is sameObject of objects normalized (see normalize).
func sameNormalized(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	return hasWords(a, b) || hasWords(b, a)
}

// hasWords reports whether the words of run occur in s, one after the
// other, whole: " "+s+" " holds " "+run+" ".
func hasWords(s, run string) bool {
	for from := 0; from+len(run) <= len(s); {
		i := strings.Index(s[from:], run)
		if i < 0 {
			return false
		}
		i += from
		if (i == 0 || s[i-1] == ' ') && (i+len(run) == len(s) || s[i+len(run)] == ' ') {
			return true
		}
		from = i + 1
	}
	return false
}

// mergeMeta returns a memory's metadata with the candidate's slot, object
// and polarity, keeping its other keys.
func mergeMeta(raw json.RawMessage, cd Candidate) json.RawMessage {
	m := map[string]json.RawMessage{}
	_ = json.Unmarshal(raw, &m) // not an object: replaced
	for k, v := range map[string]string{"slot": cd.Slot, "object": cd.Object, "kind": cd.Kind} {
		if v != "" { // a candidate without a slot refines one of a slot
			m[k], _ = json.Marshal(v)
		}
	}
	delete(m, "negated")
	if cd.Negated {
		m["negated"] = json.RawMessage("true")
	}
	b, _ := json.Marshal(m)
	return b
}

// lightWords tell no fact of their own: articles, pronouns, auxiliaries
// and the verbs that only link a subject to what it is or has. Negations
// are not among them.
var lightWords = map[string]bool{
	"user": true, "users": true, "s": true, "a": true, "an": true, "the": true, "is": true, "are": true, "am": true, "was": true,
	"be": true, "has": true, "have": true, "had": true, "can": true, "does": true, "do": true, "named": true, "called": true,
	"name": true, "as": true, "works": true, "work": true, "of": true, "their": true, "his": true, "her": true, "who": true,
	"that": true, "also": true, "really": true, "still": true,
}

// residue is what a statement tells beyond its object: its words less
// the object's and light words, a final s dropped ("speaks", "speak").
func residue(text, object string) map[string]bool {
	skip := map[string]bool{}
	for _, w := range strings.Fields(normalize(object)) {
		skip[stemS(w)] = true
	}
	out := map[string]bool{}
	for _, w := range strings.Fields(normalize(text)) {
		if w = stemS(w); !lightWords[w] && !skip[w] {
			out[w] = true
		}
	}
	return out
}

func stemS(w string) string {
	if len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") {
		return w[:len(w)-1]
	}
	return w
}

// subset reports whether every word of a is in b.
func subset(a, b map[string]bool) bool {
	for w := range a {
		if !b[w] {
			return false
		}
	}
	return true
}

// bare is a statement normalised without its articles: "User works as a
// teacher." and "User works as teacher." are the same.
func bare(s string) string {
	ws := strings.Fields(normalize(s))
	return strings.Join(slices.DeleteFunc(ws, func(w string) bool { return w == "a" || w == "an" || w == "the" }), " ")
}

// normalize folds a statement for equality: lower case, words only.
func normalize(s string) string {
	return strings.Join(strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127)
	}), " ")
}

// Cosine returns the dot product of a and b, their cosine similarity when
// both are L2-normalised (as every embedder's vectors are here); 0 for
// vectors of different spaces (lengths).
func Cosine(a, b []float32) float64 {
	if len(a) != len(b) || len(a) == 0 {
		return 0
	}
	// Four sums side by side: consolidation compares every candidate with
	// each of the user's memories.
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(a); i += 4 {
		a4, b4 := a[i:i+4:i+4], b[i:i+4:i+4]
		s0 += float64(a4[0]) * float64(b4[0])
		s1 += float64(a4[1]) * float64(b4[1])
		s2 += float64(a4[2]) * float64(b4[2])
		s3 += float64(a4[3]) * float64(b4[3])
	}
	for ; i < len(a); i++ {
		s0 += float64(a[i]) * float64(b[i])
	}
	return (s0 + s1) + (s2 + s3)
}
