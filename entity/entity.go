// Package entity finds the entities that turns mention (the workflows,
// projects, people… a user talks about) and records them with the
// threads' references to them: by a model's JSON answer or, without one,
// by the names the turns discuss (ProperNouns) and the verbs of their sentences
// (Action). It also writes the context builder's lines about the entities
// an input names (Context).
package entity

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"unicode"

	"github.com/agentmem/agentmem"
)

// maxPageEntities bounds the new entities that one page of messages
// proposes (the proper nouns it repeats most).
const maxPageEntities = 20

// candidate is an entity that a page of turns may mention: one the
// user has, or a new one the turns name.
type candidate struct {
	e    *agentmem.Entity
	keys []string // its name's key and its aliases'
	// refs by action: the last turn that mentions it so.
	refs map[string]*agentmem.EntityRef
	// byModel: its references are the model's, not read from sentences.
	byModel bool
}

// Indexer records the entities that turns mention, and the threads'
// references to them (seed 004's both-way index): the index job calls it
// with each page of new messages.
type Indexer struct {
	Store agentmem.EntityStore
	// Chat, when set, names the entities of the turns (ModelExtractor);
	// Model names its model.
	Chat  agentmem.Chat
	Model string
	Log   *slog.Logger
}

// Index records the entities that a page of messages of a thread
// mentions, and the thread's references to them. The entities are the
// user's entities whose name or alias a turn says (compared as
// agentmem.EntityKey does, so "my task workflow" refers to "Task
// Management" by its alias "task workflow"), and those the turns name:
// with a model (x.Chat), the model's (ModelExtractor, with their types,
// aliases and actions); without one, or when it fails, the names the
// turns discuss (ProperNouns: people, places, organisations and things,
// with the types the turns tell; speakers are persons). New ones are created. The
// action of a reference the model did not give is what the sentence that
// mentions the entity says was done with it (Action), at the last turn
// that says so. Without a model, indexing the same messages again adds
// nothing.
func (x *Indexer) Index(ctx context.Context, th *agentmem.Thread, msgs []*agentmem.Message) error {
	var turns []*agentmem.Message
	for _, m := range msgs {
		if m.IsTurn() {
			turns = append(turns, m)
		}
	}
	if len(turns) == 0 {
		return nil
	}
	mentions, byModel, err := x.mentions(ctx, th, turns)
	if err != nil {
		return err
	}
	cands, err := candidates(ctx, x.Store, th.UserID, turns, mentions)
	if err != nil {
		return err
	}
	done := agentmem.BackgroundCPU(ctx)
	refer(th.ID, turns, mentions, cands, byModel)
	done()
	return x.put(ctx, th.UserID, cands)
}

// mentions returns the entities that turns name: the model's
// (modelMentions), and reports whether they are; without a model, or when
// it fails, the names that the turns discuss, with the types they tell
// (ProperNouns; the speakers' names are persons).
func (x *Indexer) mentions(ctx context.Context, th *agentmem.Thread, turns []*agentmem.Message) ([]Mention, bool, error) {
	mentions, byModel, err := x.modelMentions(ctx, th, turns)
	if err != nil || byModel {
		return mentions, byModel, err
	}
	done := agentmem.BackgroundCPU(ctx)
	defer done()
	for _, n := range ProperNouns(turns, maxPageEntities) {
		e := &agentmem.Entity{UserID: th.UserID, Name: n.Name, Type: n.Type}
		if e.Validate() == nil {
			mentions = append(mentions, Mention{Entity: e})
		}
	}
	return mentions, false, nil
}

// refer records the references of a thread's turns to the candidates:
// the model's mentions (when byModel) at the turns the model gave, then,
// for the candidates the model did not name, every sentence that says
// their name or an alias, and every turn of a speaker by their name.
func refer(threadID string, turns []*agentmem.Message, mentions []Mention, cands []*candidate, byModel bool) {
	at := map[int64]*agentmem.Message{}
	for _, m := range turns {
		at[m.Seq] = m
	}
	for _, mn := range mentions {
		if c := mn.candidate; c != nil && byModel && at[mn.Seq] != nil {
			c.byModel = true
			c.mention(threadID, mn.Action, at[mn.Seq])
		}
	}
	// The other references, sentence by sentence.
	if !slices.ContainsFunc(cands, func(c *candidate) bool { return !c.byModel }) {
		return
	}
	for _, m := range turns {
		for _, s := range sentences(m.Content) {
			said := map[string]bool{}
			for _, k := range agentmem.MentionKeys(s) {
				said[k] = true
			}
			action := Action(s)
			for _, c := range cands {
				if c.byModel {
					continue
				}
				for _, k := range c.keys {
					if said[k] {
						c.mention(threadID, action, m)
						break
					}
				}
			}
		}
		if speaker := agentmem.EntityKey(m.Name); speaker != "" {
			for _, c := range cands {
				if !c.byModel && slices.Contains(c.keys, speaker) {
					c.mention(threadID, agentmem.EntityDiscussed, m)
				}
			}
		}
	}
}

// put stores the new entities among the candidates that turns mention,
// then the references of every candidate.
func (x *Indexer) put(ctx context.Context, userID string, cands []*candidate) error {
	var news []*agentmem.Entity
	for _, c := range cands {
		if c.e.ID == "" && len(c.refs) > 0 {
			news = append(news, c.e)
		}
	}
	if len(news) > 0 {
		if err := x.Store.PutEntities(ctx, userID, news); err != nil {
			return fmt.Errorf("put entities: %w", err)
		}
	}
	var refs []*agentmem.EntityRef
	for _, c := range cands {
		for _, action := range []string{agentmem.EntityCreated, agentmem.EntityModified, agentmem.EntityDiscussed} {
			if r := c.refs[action]; r != nil {
				r.EntityID = c.e.ID
				refs = append(refs, r)
			}
		}
	}
	if len(refs) == 0 {
		return nil
	}
	if err := x.Store.PutEntityRefs(ctx, userID, refs); err != nil {
		return fmt.Errorf("put entity refs: %w", err)
	}
	return nil
}

// mention records that turn m of a thread mentions c with action.
func (c *candidate) mention(threadID, action string, m *agentmem.Message) {
	if c.refs == nil {
		c.refs = map[string]*agentmem.EntityRef{}
	}
	if r := c.refs[action]; r == nil || r.Seq < m.Seq {
		c.refs[action] = &agentmem.EntityRef{ThreadID: threadID, Action: action, Seq: m.Seq, At: m.CreatedAt}
	}
}

// candidates returns the user's entities that turns may mention
// (whose name or alias is a run of their words, a speaker's name, or a
// name or alias of a mention), then the new entities of the mentions
// that are none of them. It sets each mention's candidate.
func candidates(ctx context.Context, store agentmem.EntityStore, userID string, turns []*agentmem.Message, mentions []Mention) ([]*candidate, error) {
	seen := map[string]bool{}
	var keys []string
	add := func(ks ...string) {
		for _, k := range ks {
			if k != "" && !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	done := agentmem.BackgroundCPU(ctx)
	for _, m := range turns {
		add(agentmem.MentionKeys(m.Content)...)
		add(agentmem.EntityKey(m.Name))
	}
	for _, mn := range mentions {
		_, aliases := mn.Entity.Keys()
		add(agentmem.QueryKeys(mn.Entity.Name)...)
		add(aliases...)
	}
	done()
	var cands []*candidate
	known := map[string]*candidate{} // by each key of the user's entities found, names first
	// A user with fewer entities than a page: all of them, read at once and
	// matched here, rather than a lookup of every run of words.
	all, next, err := store.FindEntities(ctx, userID, agentmem.EntityFilter{Limit: agentmem.MaxPageSize})
	if err != nil {
		return nil, fmt.Errorf("find entities: %w", err)
	}
	few := next == ""
	for start := 0; start < len(keys); start += agentmem.MaxEntityKeys {
		f := agentmem.EntityFilter{Keys: keys[start:min(start+agentmem.MaxEntityKeys, len(keys))], Limit: agentmem.MaxPageSize}
		for {
			var es []*agentmem.Entity
			var next string
			if few {
				es = withKeys(all, f.Keys)
			} else if es, next, err = store.FindEntities(ctx, userID, f); err != nil {
				return nil, fmt.Errorf("find entities: %w", err)
			}
			for _, e := range es {
				if !Plausible(e) {
					continue // a word that a turn capitalised, found before the names were read as they are now
				}
				c := newCandidate(e)
				if known[c.keys[0]] == nil || known[c.keys[0]].keys[0] != c.keys[0] {
					known[c.keys[0]] = c
				}
				for _, k := range c.keys[1:] {
					if known[k] == nil {
						known[k] = c
					}
				}
				cands = append(cands, c)
			}
			if f.Cursor = next; next == "" {
				break
			}
		}
	}
	for i := range mentions {
		mn := &mentions[i]
		c := newCandidate(mn.Entity)
		// The user's entity by that name or alias, said with or without a
		// determiner ("the task workflow").
		var k *candidate
		for _, q := range agentmem.QueryKeys(mn.Entity.Name) {
			if k = known[q]; k != nil {
				break
			}
		}
		if k != nil {
			mn.candidate = k
			continue
		}
		for _, k := range c.keys {
			known[k] = c
		}
		mn.candidate = c
		cands = append(cands, c)
	}
	return cands, nil
}

// withKeys returns the entities of es (in the store's order: the most
// recently updated first) that FindEntities finds by keys: those named so
// first, then those with an alias of them.
func withKeys(es []*agentmem.Entity, keys []string) []*agentmem.Entity {
	want := make(map[string]bool, len(keys))
	for _, k := range keys {
		want[k] = true
	}
	var named, aliased []*agentmem.Entity
	for _, e := range es {
		name, aliases := e.Keys()
		switch {
		case want[name]:
			named = append(named, e)
		case slices.ContainsFunc(aliases, func(a string) bool { return want[a] }):
			aliased = append(aliased, e)
		}
	}
	return append(named, aliased...)
}

func newCandidate(e *agentmem.Entity) *candidate {
	name, aliases := e.Keys()
	return &candidate{e: e, keys: append([]string{name}, aliases...)}
}

// sentences splits text where a sentence ends: at '.', '!', '?' or ';'
// followed by a space or the end, and at line breaks. "Node.js" stays
// one word.
func sentences(text string) []string {
	var out []string
	start := 0
	rs := []rune(text)
	for i, r := range rs {
		end := r == '\n' || strings.ContainsRune(".!?;", r) && (i+1 == len(rs) || unicode.IsSpace(rs[i+1]))
		if end {
			if s := strings.TrimSpace(string(rs[start : i+1])); s != "" {
				out = append(out, s)
			}
			start = i + 1
		}
	}
	if s := strings.TrimSpace(string(rs[start:])); s != "" {
		out = append(out, s)
	}
	return out
}

// Verbs of Action, as the words of agentmem.EntityKey.
var (
	createdVerbs = wordSet(`create created creates creating build built builds building launch launched launches founded
		set-up sets-up setting-up`)
	modifiedVerbs = wordSet(`update updated updates updating change changed changes changing modify modified modifies modifying
		edit edited edits editing rename renamed renames renaming fix fixed fixes fixing adjust adjusted adjusts extend extended
		add added adds adding remove removed removes removing delete deleted deletes replace replaced tweak tweaked`)
)

func wordSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[strings.ReplaceAll(w, "-", " ")] = true
	}
	return m
}

// Action returns what a sentence says was done with the entities it
// mentions: agentmem.EntityCreated when it has a verb of creation
// ("created", "built", "set up"…), agentmem.EntityModified when it has one
// of change ("updated", "renamed", "added"…), agentmem.EntityDiscussed
// otherwise.
func Action(sentence string) string {
	words := strings.Fields(agentmem.EntityKey(sentence))
	modified := false
	for i, w := range words {
		if createdVerbs[w] || i+1 < len(words) && createdVerbs[w+" "+words[i+1]] {
			return agentmem.EntityCreated
		}
		modified = modified || modifiedVerbs[w]
	}
	if modified {
		return agentmem.EntityModified
	}
	return agentmem.EntityDiscussed
}

// maxContextAliases bounds the aliases an entity's context line shows;
// maxContextPages the pages of entities Context reads for its plausible
// ones.
const (
	maxContextAliases = 3
	maxContextPages   = 3
)

// Context returns the context builder's source of entities
// (window.Init.Entities): the user's entities that the input names by
// name or alias (as agentmem.FindMentionedEntities finds them) and that
// are Plausible,
// at most limit (5 when 0), those named by name first, one line each with
// its type, the aliases it was given (not the generated ones) and its
// newest reference:
//
//	Task Management (workflow; also "TM"): created Mar 01, 2026 in thread t1
//
// Each entity costs one more lookup, for its reference.
func Context(store agentmem.EntityStore, limit int) func(ctx context.Context, userID, input string) ([]string, error) {
	if limit <= 0 {
		limit = 5
	}
	return func(ctx context.Context, userID, input string) ([]string, error) {
		keys := agentmem.MentionKeys(input)
		if len(keys) == 0 {
			return []string{}, nil
		}
		// The plausible ones of the first pages: an input that says many
		// words an older version took for names reads more than one.
		var es []*agentmem.Entity
		f := agentmem.EntityFilter{Keys: keys, Limit: 2 * limit}
		for range maxContextPages {
			page, next, err := store.FindEntities(ctx, userID, f)
			if err != nil {
				return nil, err
			}
			for _, e := range page {
				if Plausible(e) && len(es) < limit {
					es = append(es, e)
				}
			}
			if f.Cursor = next; next == "" || len(es) == limit {
				break
			}
		}
		lines := make([]string, 0, len(es))
		for _, e := range es {
			refs, _, err := store.FindEntityRefs(ctx, userID, agentmem.EntityRefFilter{EntityID: e.ID, Limit: 1})
			if err != nil && agentmem.ErrorCode(err) != agentmem.ENOTFOUND { // deleted meanwhile: no reference
				return nil, err
			}
			lines = append(lines, Line(e, refs))
		}
		return lines, nil
	}
}

// Line describes an entity in one line (see Context), with
// the first of refs, when there is one.
func Line(e *agentmem.Entity, refs []*agentmem.EntityRef) string {
	var b strings.Builder
	b.WriteString(e.Name)
	generated := map[string]bool{agentmem.EntityKey(e.Name): true}
	for _, a := range agentmem.EntityAliases(e.Name, e.Type) {
		generated[agentmem.EntityKey(a)] = true
	}
	var given []string
	for _, a := range e.Aliases {
		if !generated[agentmem.EntityKey(a)] && len(given) < maxContextAliases {
			given = append(given, fmt.Sprintf("%q", a))
		}
	}
	var about []string
	if e.Type != "" {
		about = append(about, e.Type)
	}
	if len(given) > 0 {
		about = append(about, "also "+strings.Join(given, ", "))
	}
	if len(about) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(about, "; "))
	}
	if len(refs) > 0 {
		r := refs[0]
		fmt.Fprintf(&b, ": %s %s in thread %s", r.Action, r.At.Format("Jan 02, 2006"), r.ThreadID)
	}
	return b.String()
}

// Plausible reports whether an entity is one that the context and the
// indexer take: one with a type (given by a client or a model, or told
// by the turns), or one whose name is a name. A name of ordinary words
// only ("Check", "Next Steps", "Monday", "I'm"), one that opens with a
// greeting ("Thanks Priya") or holds code or JSON's punctuation is not:
// entities found without a model before names were read as they are now
// (issue 30) may be such words, and would match every input that says
// them.
func Plausible(e *agentmem.Entity) bool {
	if e.Type != "" {
		return true
	}
	if strings.ContainsAny(e.Name, "{}[]\"`=<>") {
		return false
	}
	words := strings.Fields(e.Name)
	trim := func(w string) string {
		return strings.TrimFunc(w, func(r rune) bool { return !isWordRune(r) && r != '\'' && r != '’' })
	}
	if len(words) > 1 && has(greetings, trim(words[0])) {
		return false
	}
	for _, w := range words {
		if w = trim(w); w != "" && !has(never, w) && !has(openers, w) && !has(connectors, w) {
			return true
		}
	}
	return false
}
