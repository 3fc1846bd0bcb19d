package extract

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/agentmem/agentmem"
)

// maxPageEntities bounds the new entities that one page of messages
// proposes (the proper nouns it repeats most).
const maxPageEntities = 20

// entityStore returns the store of entities, when ix.Store is one (every
// agentmem.Store is); nil otherwise, and entities are not indexed.
func (ix *Indexer) entityStore() agentmem.EntityStore {
	es, _ := ix.Store.(agentmem.EntityStore)
	return es
}

// entityCandidate is an entity that a page of turns may mention: one the
// user has, or a new one the turns name.
type entityCandidate struct {
	e    *agentmem.Entity
	keys []string // its name's key and its aliases'
	// refs by action: the last turn that mentions it so.
	refs map[string]*agentmem.EntityRef
	// byModel: its references are the model's, not read from sentences.
	byModel bool
}

// indexEntities records the entities that a page of messages of a thread
// mentions, and the thread's references to them (seed 004's both-way
// index). The entities are the user's entities whose name or alias a
// turn says (compared as agentmem.EntityKey does, so "my task workflow"
// refers to "Task Management" by its alias "task workflow"), and those the
// turns name: with a model (ix.Chat), the model's (ModelEntityExtractor,
// with their types, aliases and actions); without one, or when it fails,
// the proper nouns of the turns (Entities; speakers are persons). New
// ones are created. The action of a reference the model did not give is
// what the sentence that mentions the entity says was done with it
// (EntityAction), at the last turn that says so. Without a model,
// indexing the same messages again adds nothing.
func (ix *Indexer) indexEntities(ctx context.Context, th *agentmem.Thread, msgs []*agentmem.Message) error {
	store := ix.entityStore()
	if store == nil {
		return nil
	}
	var turns []*agentmem.Message
	for _, m := range msgs {
		if isTurn(m) {
			turns = append(turns, m)
		}
	}
	if len(turns) == 0 {
		return nil
	}
	mentions, byModel, err := ix.entityMentions(ctx, th, turns)
	if err != nil {
		return err
	}
	if !byModel {
		speakers := map[string]bool{}
		for _, m := range turns {
			speakers[m.Name] = true
		}
		for _, name := range Entities(turns, maxPageEntities) {
			e := &agentmem.Entity{UserID: th.UserID, Name: name}
			if speakers[name] {
				e.Type = "person"
			}
			if e.Validate() == nil {
				mentions = append(mentions, EntityMention{Entity: e})
			}
		}
	}
	cands, err := entityCandidates(ctx, store, th.UserID, turns, mentions)
	if err != nil {
		return err
	}
	at := map[int64]*agentmem.Message{}
	for _, m := range turns {
		at[m.Seq] = m
	}
	for _, mn := range mentions {
		if c := mn.candidate; c != nil && byModel && at[mn.Seq] != nil {
			c.byModel = true
			c.mention(th.ID, mn.Action, at[mn.Seq])
		}
	}
	// The other references, sentence by sentence.
	for _, m := range turns {
		for _, s := range sentences(m.Content) {
			said := map[string]bool{}
			for _, k := range agentmem.MentionKeys(s) {
				said[k] = true
			}
			action := EntityAction(s)
			for _, c := range cands {
				if c.byModel {
					continue
				}
				for _, k := range c.keys {
					if said[k] {
						c.mention(th.ID, action, m)
						break
					}
				}
			}
		}
		if speaker := agentmem.EntityKey(m.Name); speaker != "" {
			for _, c := range cands {
				if !c.byModel && slices.Contains(c.keys, speaker) {
					c.mention(th.ID, agentmem.EntityDiscussed, m)
				}
			}
		}
	}
	var news []*agentmem.Entity
	for _, c := range cands {
		if c.e.ID == "" && len(c.refs) > 0 {
			news = append(news, c.e)
		}
	}
	if len(news) > 0 {
		if err := store.PutEntities(ctx, th.UserID, news); err != nil {
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
	if err := store.PutEntityRefs(ctx, th.UserID, refs); err != nil {
		return fmt.Errorf("put entity refs: %w", err)
	}
	return nil
}

// mention records that turn m of a thread mentions c with action.
func (c *entityCandidate) mention(threadID, action string, m *agentmem.Message) {
	if c.refs == nil {
		c.refs = map[string]*agentmem.EntityRef{}
	}
	if r := c.refs[action]; r == nil || r.Seq < m.Seq {
		c.refs[action] = &agentmem.EntityRef{ThreadID: threadID, Action: action, Seq: m.Seq, At: m.CreatedAt}
	}
}

// entityCandidates returns the user's entities that turns may mention
// (whose name or alias is a run of their words, a speaker's name, or a
// name or alias of a mention), then the new entities of the mentions
// that are none of them. It sets each mention's candidate.
func entityCandidates(ctx context.Context, store agentmem.EntityStore, userID string, turns []*agentmem.Message, mentions []EntityMention) ([]*entityCandidate, error) {
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
	for _, m := range turns {
		add(agentmem.MentionKeys(m.Content)...)
		add(agentmem.EntityKey(m.Name))
	}
	for _, mn := range mentions {
		_, aliases := mn.Entity.Keys()
		add(agentmem.QueryKeys(mn.Entity.Name)...)
		add(aliases...)
	}
	var cands []*entityCandidate
	known := map[string]*entityCandidate{} // by each key of the user's entities found, names first
	for start := 0; start < len(keys); start += agentmem.MaxEntityKeys {
		f := agentmem.EntityFilter{Keys: keys[start:min(start+agentmem.MaxEntityKeys, len(keys))], Limit: agentmem.MaxPageSize}
		for {
			es, next, err := store.FindEntities(ctx, userID, f)
			if err != nil {
				return nil, fmt.Errorf("find entities: %w", err)
			}
			for _, e := range es {
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
		var k *entityCandidate
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

func newCandidate(e *agentmem.Entity) *entityCandidate {
	name, aliases := e.Keys()
	return &entityCandidate{e: e, keys: append([]string{name}, aliases...)}
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

// Verbs of EntityAction, as the words of agentmem.EntityKey.
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

// EntityAction returns what a sentence says was done with the entities it
// mentions: agentmem.EntityCreated when it has a verb of creation
// ("created", "built", "set up"…), agentmem.EntityModified when it has one
// of change ("updated", "renamed", "added"…), agentmem.EntityDiscussed
// otherwise.
func EntityAction(sentence string) string {
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

// maxContextAliases bounds the aliases an entity's context line shows.
const maxContextAliases = 3

// EntityContext returns the context builder's source of entities
// (window.Init.Entities): the user's entities that the input names by
// name or alias (agentmem.FindMentionedEntities), at most limit (5 when
// 0), those named by name first, one line each with its type, the aliases
// it was given (not the generated ones) and its newest reference:
//
//	Task Management (workflow; also "TM"): created Mar 01, 2026 in thread t1
//
// Each entity costs one more lookup, for its reference.
func EntityContext(store agentmem.EntityStore, limit int) func(ctx context.Context, userID, input string) ([]string, error) {
	if limit <= 0 {
		limit = 5
	}
	return func(ctx context.Context, userID, input string) ([]string, error) {
		es, err := agentmem.FindMentionedEntities(ctx, store, userID, input, limit)
		if err != nil {
			return nil, err
		}
		lines := make([]string, 0, len(es))
		for _, e := range es {
			refs, _, err := store.FindEntityRefs(ctx, userID, agentmem.EntityRefFilter{EntityID: e.ID, Limit: 1})
			if err != nil && agentmem.ErrorCode(err) != agentmem.ENOTFOUND { // deleted meanwhile: no reference
				return nil, err
			}
			lines = append(lines, EntityLine(e, refs))
		}
		return lines, nil
	}
}

// EntityLine describes an entity in one line (see EntityContext), with
// the first of refs, when there is one.
func EntityLine(e *agentmem.Entity, refs []*agentmem.EntityRef) string {
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
