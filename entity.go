package agentmem

import (
	"context"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Actions of an entity reference: what a thread did with the entity.
const (
	EntityCreated   = "created"
	EntityModified  = "modified"
	EntityDiscussed = "discussed" // the default
)

// Limits of entities.
const (
	MaxEntityNameBytes = 200 // a name or an alias
	MaxEntityType      = 50  // characters of a type
	MaxEntityAliases   = 50  // aliases given by a client or a model; generated ones come on top
	// MaxEntityWords is the longest name or alias, in words, that
	// MentionKeys finds in a text. Longer ones are found by name (?q=) only.
	MaxEntityWords = 6
	// MaxEntityKeys bounds EntityFilter.Keys.
	MaxEntityKeys = 10000
)

// Entity is a thing the user talks about (a workflow, an account, a
// person…), with the aliases by which it is also known (seed 004). A user
// has one entity per name key (see EntityKey): putting an entity of a
// name the user has merges into it. Entities are the user's, not a
// thread's: the threads that mention one are its references (EntityRef).
type Entity struct {
	ID     string `json:"id"`
	UserID string `json:"user_id"`
	Name   string `json:"name"`
	// Type is a lower-case kind such as workflow, project or person (""
	// when unknown).
	Type string `json:"type"`
	// Aliases are the other names it goes by, one per key: those given,
	// and those generated from its name and type (see EntityAliases).
	Aliases   []string  `json:"aliases"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"` // the last change of its name, type or aliases
}

// Validate checks an entity about to be put and normalises it: the name
// trimmed, the type in lower case, the aliases trimmed and completed with
// the generated ones (see EntityAliases), one per key.
func (e *Entity) Validate() error {
	if err := ValidateUserID(e.UserID); err != nil {
		return err
	}
	if e.ID != "" {
		if err := ValidateID("id", e.ID); err != nil {
			return err
		}
	}
	var err error
	if e.Name, err = normalizeEntityName("name", e.Name); err != nil {
		return err
	}
	if e.Type, err = normalizeEntityType(e.Type); err != nil {
		return err
	}
	if len(e.Aliases) > MaxEntityAliases {
		return Errorf(EINVALID, "aliases has %d names; the limit is %d.", len(e.Aliases), MaxEntityAliases)
	}
	for i, a := range e.Aliases {
		if e.Aliases[i], err = normalizeEntityName("aliases", a); err != nil {
			return err
		}
	}
	e.Aliases = mergeAliases(e.Name, e.Aliases, EntityAliases(e.Name, e.Type))
	return nil
}

func normalizeEntityName(field, s string) (string, error) {
	if err := ValidateText(field, s); err != nil {
		return "", err
	}
	s = strings.Join(strings.Fields(s), " ")
	switch {
	case s == "" && field == "name":
		return "", Errorf(EINVALID, "name is required.")
	case EntityKey(s) == "":
		return "", Errorf(EINVALID, "%s must contain a letter or a digit, not %q.", field, s)
	case len(s) > MaxEntityNameBytes:
		return "", Errorf(EINVALID, "%s is longer than %d bytes.", field, MaxEntityNameBytes)
	}
	return s, nil
}

func normalizeEntityType(s string) (string, error) {
	if err := ValidateText("type", s); err != nil {
		return "", err
	}
	s = strings.ToLower(strings.Join(strings.Fields(s), " "))
	if utf8.RuneCountInString(s) > MaxEntityType {
		return "", Errorf(EINVALID, "type is longer than %d characters.", MaxEntityType)
	}
	return s, nil
}

// mergeAliases returns the aliases of lists in order, the first of each
// key (see EntityKey) and never the name itself. One alias may have the
// name's key: its lower-case form, as EntityAliases gives it (seed 004
// lists it), unless a client gave another spelling first.
func mergeAliases(name string, lists ...[]string) []string {
	seen := map[string]bool{}
	out := []string{}
	nameKey := EntityKey(name)
	for _, l := range lists {
		for _, a := range l {
			k := EntityKey(a)
			if seen[k] || k == nameKey && a == name {
				continue
			}
			seen[k] = true
			out = append(out, a)
		}
	}
	return out
}

// Prepare checks an entity about to be created (see Validate) and fills
// in what PutEntities sets, for every backend: the ID when empty, and
// CreatedAt and UpdatedAt now.
func (e *Entity) Prepare(now time.Time) error {
	if err := e.Validate(); err != nil {
		return err
	}
	if e.ID == "" {
		e.ID = NewID()
	}
	e.CreatedAt, e.UpdatedAt = now, now
	return nil
}

// Merge merges in, an entity of the same name key put again (validated),
// into e: a type given replaces e's, and in's aliases are added. It
// reports whether e changed, and then sets UpdatedAt to now.
func (e *Entity) Merge(in *Entity, now time.Time) bool {
	changed := false
	if in.Type != "" && in.Type != e.Type {
		e.Type, changed = in.Type, true
	}
	aliases := mergeAliases(e.Name, e.Aliases, in.Aliases, EntityAliases(e.Name, e.Type))
	if len(aliases) != len(e.Aliases) {
		e.Aliases, changed = aliases, true
	}
	if changed {
		e.UpdatedAt = now
	}
	return changed
}

// Keys returns the key of e's name and the keys of its aliases other
// than the name's: what finds it by name or alias (see EntityFilter.Keys).
func (e *Entity) Keys() (name string, aliases []string) {
	name = EntityKey(e.Name)
	seen := map[string]bool{name: true}
	for _, a := range e.Aliases {
		if k := EntityKey(a); !seen[k] {
			seen[k] = true
			aliases = append(aliases, k)
		}
	}
	return name, aliases
}

// EntityUpdate holds the fields of an entity that an update may change;
// nil fields stay as they are.
type EntityUpdate struct {
	Name *string `json:"name"`
	Type *string `json:"type"`
	// Aliases replaces the aliases given before; the generated ones are
	// added again.
	Aliases *[]string `json:"aliases"`
}

// Validate checks and normalises the fields that are set.
func (u *EntityUpdate) Validate() error {
	if u.Name != nil {
		n, err := normalizeEntityName("name", *u.Name)
		if err != nil {
			return err
		}
		u.Name = &n
	}
	if u.Type != nil {
		t, err := normalizeEntityType(*u.Type)
		if err != nil {
			return err
		}
		u.Type = &t
	}
	if u.Aliases != nil {
		if len(*u.Aliases) > MaxEntityAliases {
			return Errorf(EINVALID, "aliases has %d names; the limit is %d.", len(*u.Aliases), MaxEntityAliases)
		}
		as := make([]string, len(*u.Aliases))
		for i, a := range *u.Aliases {
			var err error
			if as[i], err = normalizeEntityName("aliases", a); err != nil {
				return err
			}
		}
		u.Aliases = &as
	}
	return nil
}

// ApplyUpdate applies upd, validated, to e at now. A renamed entity keeps
// its old name as an alias, so that what called it so still finds it.
func (e *Entity) ApplyUpdate(upd EntityUpdate, now time.Time) {
	aliases := e.Aliases
	if upd.Aliases != nil {
		aliases = *upd.Aliases
	}
	if upd.Name != nil && *upd.Name != e.Name {
		aliases = append([]string{e.Name}, aliases...)
		e.Name = *upd.Name
	}
	if upd.Type != nil {
		e.Type = *upd.Type
	}
	e.Aliases = mergeAliases(e.Name, aliases, EntityAliases(e.Name, e.Type))
	e.UpdatedAt = now
}

// EntityRef is a reference between a thread and an entity: what the
// thread did with it (EntityCreated, EntityModified or EntityDiscussed),
// at which message and when. A thread has at most one reference of each
// action to an entity; recording it again moves it to the later message.
type EntityRef struct {
	EntityID string    `json:"entity_id"`
	ThreadID string    `json:"thread_id"`
	Action   string    `json:"action"`
	Seq      int64     `json:"seq,omitempty"` // the thread's last message that made it (0 when none is known)
	At       time.Time `json:"at"`            // that message's time
	// Entity is the entity referred to, in the references of a thread
	// (see EntityRefFilter.ThreadID).
	Entity *Entity `json:"entity,omitempty"`
}

// Validate checks a reference about to be put and fills in the default
// action (EntityDiscussed) and time (now).
func (r *EntityRef) Validate(now time.Time) error {
	if err := ValidateID("entity_id", r.EntityID); err != nil {
		return err
	}
	if err := ValidateID("thread_id", r.ThreadID); err != nil {
		return err
	}
	if r.Action == "" {
		r.Action = EntityDiscussed
	}
	if err := ValidateEntityAction(r.Action); err != nil {
		return err
	}
	if r.Seq < 0 {
		return Errorf(EINVALID, "seq must not be negative.")
	}
	if err := ValidateTime("at", r.At); err != nil {
		return err
	}
	if r.At.IsZero() {
		r.At = now
	}
	r.At = Timestamp(r.At)
	return nil
}

// ValidateEntityAction checks an action of a reference.
func ValidateEntityAction(action string) error {
	switch action {
	case EntityCreated, EntityModified, EntityDiscussed:
		return nil
	}
	return Errorf(EINVALID, "action must be %q, %q or %q, not %q.", EntityCreated, EntityModified, EntityDiscussed, action)
}

// EntityFilter selects one user's entities for FindEntities: newest
// updated first (ties by ID, descending), or, with Keys, those named so
// first.
type EntityFilter struct {
	// Keys, when not nil, selects the entities with any of these names
	// or aliases, in their EntityKey form: those whose name has one of the keys first,
	// then those with an alias of them. See QueryKeys and MentionKeys.
	Keys   []string
	Type   *string // only entities of this type (compared in lower case)
	Limit  int     // page size; 0 means DefaultPageSize, capped at MaxPageSize
	Cursor string  // opaque, from a previous page's next cursor
}

// Validate checks the keys and normalises the type.
func (f *EntityFilter) Validate() error {
	if len(f.Keys) > MaxEntityKeys {
		return Errorf(EINVALID, "An entity lookup takes at most %d names, not %d.", MaxEntityKeys, len(f.Keys))
	}
	for _, k := range f.Keys {
		if err := ValidateText("q", k); err != nil {
			return err
		}
	}
	if f.Type != nil {
		t, err := normalizeEntityType(*f.Type)
		if err != nil {
			return err
		}
		f.Type = &t
	}
	return nil
}

// EntityList is the list FindEntities pages through with f: the user's
// entities, in the order that f.Keys sets.
func EntityList(userID string, f EntityFilter) CursorList {
	return ListOf(ListEntities, append([]string{userID}, f.Keys...)...)
}

// EntityCursor is the keyset position of FindEntities: the last entity's
// rank (1 if found by its name, 0 otherwise), updated_at in Unix
// microseconds and ID.
type EntityCursor struct {
	Rank      int    `json:"r,omitempty"`
	UpdatedAt int64  `json:"u"`
	ID        string `json:"i"`
}

// EntityRefFilter selects the references of one entity (EntityID: the
// threads that mention it) or of one thread (ThreadID: the entities it
// mentions, each ref with its Entity), newest first (ties by the other
// side's ID and the action, descending).
type EntityRefFilter struct {
	EntityID string
	ThreadID string
	Action   *string // only references of this action
	// IncludeDeleted also returns an entity's references of soft-deleted
	// threads (for exports).
	IncludeDeleted bool
	Limit          int    // page size; 0 means DefaultPageSize, capped at MaxPageSize
	Cursor         string // opaque, from a previous page's next cursor
}

// Validate checks that the filter names exactly one entity or thread.
func (f *EntityRefFilter) Validate() error {
	switch {
	case (f.EntityID == "") == (f.ThreadID == ""):
		return Errorf(EINVALID, "References are listed by entity_id or by thread_id, one of them.")
	case f.EntityID != "":
		if err := ValidateID("entity_id", f.EntityID); err != nil {
			return err
		}
	default:
		if err := ValidateID("thread_id", f.ThreadID); err != nil {
			return err
		}
	}
	if f.Action != nil {
		return ValidateEntityAction(*f.Action)
	}
	return nil
}

// EntityRefList is the list FindEntityRefs pages through with f: the
// references of the entity, or of the thread.
func EntityRefList(userID string, f EntityRefFilter) CursorList {
	if f.EntityID != "" {
		return ListOf(ListEntityRefs, userID, "entity", f.EntityID)
	}
	return ListOf(ListEntityRefs, userID, "thread", f.ThreadID)
}

// EntityRefCursor is the keyset position of FindEntityRefs: the last
// reference's time in Unix microseconds, the ID of its other side (the
// thread of an entity's references, the entity of a thread's) and its
// action.
type EntityRefCursor struct {
	At     int64  `json:"t"`
	ID     string `json:"i"`
	Action string `json:"a"`
}

// EntityStore stores entities and the references between them and
// threads. Entities are the user's knowledge: deleting a thread
// permanently deletes its references but leaves the entities; DeleteUser
// erases them.
type EntityStore interface {
	// PutEntities stores entities of a user, each created or, when the
	// user has an entity of the same name key (see EntityKey), merged into
	// it (see Entity.Merge), and fills each in as stored (ID, name, type,
	// aliases, times). It records the user (see UserStore.FindUserIDs).
	// Returns EINVALID as Entity.Validate, and ECONFLICT if an entity's ID
	// is given and the user's entity of that name, or of that ID, is
	// another.
	PutEntities(ctx context.Context, userID string, es []*Entity) error

	// FindEntityByID returns an entity of the user. Returns ENOTFOUND if
	// there is none.
	FindEntityByID(ctx context.Context, userID, id string) (*Entity, error)

	// FindEntities returns a page of the user's entities (see
	// EntityFilter) and the next cursor.
	FindEntities(ctx context.Context, userID string, f EntityFilter) ([]*Entity, string, error)

	// UpdateEntity applies upd (see Entity.ApplyUpdate). Returns EINVALID
	// for bad fields, ENOTFOUND if there is no such entity and ECONFLICT if
	// the new name is another entity's.
	UpdateEntity(ctx context.Context, userID, id string, upd EntityUpdate) (*Entity, error)

	// DeleteEntity deletes an entity with its references. Returns
	// ENOTFOUND if there is none.
	DeleteEntity(ctx context.Context, userID, id string) error

	// PutEntityRefs records references between the user's threads and
	// entities (see EntityRef.Validate), each replacing the reference of
	// the same entity, thread and action when it is later. Returns
	// ENOTFOUND if a thread (or a soft-deleted one) or an entity does not
	// exist.
	PutEntityRefs(ctx context.Context, userID string, refs []*EntityRef) error

	// FindEntityRefs returns a page of the references of an entity or of
	// a thread (see EntityRefFilter), newest first, and the next cursor.
	// An entity's references leave out soft-deleted threads. Returns
	// ENOTFOUND if the entity or the thread (or a soft-deleted one) does
	// not exist.
	FindEntityRefs(ctx context.Context, userID string, f EntityRefFilter) ([]*EntityRef, string, error)
}

// EntityKey returns the form in which entity names and aliases are
// compared: lower case, each run of characters other than letters and
// digits made one space, trimmed. "Task-Management!" and
// "task  management" both have the key "task management".
func EntityKey(s string) string {
	return strings.Join(entityWords(s), " ")
}

func entityWords(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// determiners are the words that may open a reference to an entity
// without being part of its name: "my task workflow", "the CRM".
var determiners = map[string]bool{"my": true, "our": true, "the": true, "a": true, "an": true, "this": true, "that": true, "your": true}

// QueryKeys returns the keys that a query for an entity by name or alias
// looks up: the query's key and, when it opens with a determiner such as
// "my" or "the", its key without it. "my Task Workflow" looks up
// "my task workflow" and "task workflow". It returns nil for a query
// without letters or digits.
func QueryKeys(q string) []string {
	words := entityWords(q)
	if len(words) == 0 {
		return nil
	}
	keys := []string{strings.Join(words, " ")}
	if len(words) > 1 && determiners[words[0]] {
		keys = append(keys, strings.Join(words[1:], " "))
	}
	return keys
}

// MentionKeys returns the keys of every run of 1 to MaxEntityWords words
// of text, each once, in order of position: the keys of the entities the
// text may mention (see EntityFilter.Keys). Only the last words of a long
// text are read, so that there are at most MaxEntityKeys keys.
func MentionKeys(text string) []string {
	words := entityWords(text)
	if n := MaxEntityKeys / MaxEntityWords; len(words) > n {
		words = words[len(words)-n:]
	}
	// Every key is a substring of the words joined once (no string of its
	// own): word i starts at start[i] and ends at start[i]+len(words[i]).
	joined := strings.Join(words, " ")
	start := make([]int, len(words))
	for i := 1; i < len(words); i++ {
		start[i] = start[i-1] + len(words[i-1]) + 1
	}
	n := len(words) * MaxEntityWords
	seen := make(map[string]bool, n)
	keys := make([]string, 0, n)
	for i := range words {
		for j := i; j < min(i+MaxEntityWords, len(words)); j++ {
			k := joined[start[i] : start[j]+len(words[j])]
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	return keys
}

// FindMentionedEntities returns the user's entities whose name or an
// alias occurs in text (compared as EntityKey does: "update my task
// workflow" mentions the entity with the alias "Task Workflow"), those
// mentioned by name first, at most limit (DefaultPageSize when 0). A
// context builder calls it with the user's input.
func FindMentionedEntities(ctx context.Context, s EntityStore, userID, text string, limit int) ([]*Entity, error) {
	keys := MentionKeys(text)
	if len(keys) == 0 {
		return []*Entity{}, nil
	}
	es, _, err := s.FindEntities(ctx, userID, EntityFilter{Keys: keys, Limit: limit})
	return es, err
}

// ResolveEntity returns the user's entity that q names: the entity of
// that name (compared as EntityKey does), or else the newest updated one
// with that alias (see QueryKeys). Returns ENOTFOUND if none has.
func ResolveEntity(ctx context.Context, s EntityStore, userID, q string) (*Entity, error) {
	if keys := QueryKeys(q); len(keys) > 0 {
		es, _, err := s.FindEntities(ctx, userID, EntityFilter{Keys: keys, Limit: 1})
		if err != nil {
			return nil, err
		}
		if len(es) > 0 {
			return es[0], nil
		}
	}
	return nil, Errorf(ENOTFOUND, "No entity is named %q.", q)
}

// entitySuffixes are words that close the names of many things without
// being needed to name them: "Onboarding Workflow" is also "onboarding".
var entitySuffixes = map[string]bool{"workflow": true, "project": true, "app": true, "application": true, "system": true, "service": true,
	"process": true, "pipeline": true, "team": true, "account": true, "plan": true, "tool": true, "bot": true, "agent": true,
	"inc": true, "corp": true, "ltd": true, "llc": true, "company": true}

// honorifics open a person's name without being their first name.
var honorifics = map[string]bool{"dr": true, "mr": true, "mrs": true, "ms": true, "mx": true, "prof": true, "sir": true, "dame": true,
	"aunt": true, "auntie": true, "uncle": true}

// personTypes are types whose entities are called by their first name;
// placeTypes are types that are not said after a name.
var (
	personTypes = map[string]bool{"person": true, "people": true, "contact": true, "customer": true, "user": true, "friend": true}
	placeTypes  = map[string]bool{"place": true, "city": true, "country": true, "location": true, "region": true, "date": true, "time": true, "event": true}
)

// EntityAliases returns the variants of an entity's name (with its type,
// "" when unknown) by which it may also be called, in lower case (seed
// 004's alias generation):
//
//   - the name in lower case: "Task Management" → "task management";
//   - without a suffix that its type or a common word makes redundant:
//     "Onboarding Workflow" → "onboarding", "Acme Corp" → "acme";
//   - of a thing's type (not a person's or a place's), with the type
//     after it, the first word and the type, and "my" and the first word:
//     "Task Management" (workflow) → "task management workflow",
//     "task workflow", "my task";
//   - of a person of several words, the first name: "Caroline Smith"
//     (person) → "caroline"; after an honorific, the name without it:
//     "Dr. Ana Okafor" → "ana okafor", "ana".
//
// A variant is given once; the name's own key is only in the first.
func EntityAliases(name, typ string) []string {
	words := strings.Fields(strings.ToLower(name))
	if len(words) == 0 {
		return nil
	}
	typ = strings.ToLower(strings.Join(strings.Fields(typ), " "))
	join := func(ws ...string) string { return strings.Join(ws, " ") }
	out := []string{join(words...)}
	if personTypes[typ] {
		if len(words) > 1 && honorifics[EntityKey(words[0])] {
			words = words[1:] // "Dr. Okafor" is Okafor, never "dr"
			out = append(out, join(words...))
		}
		if len(words) > 1 && EntityKey(words[0]) != "" {
			out = append(out, words[0])
		}
		return dedupeKeys(out)
	}
	base := words
	if last := EntityKey(words[len(words)-1]); len(words) > 1 && (entitySuffixes[last] || last == typ) {
		base = words[:len(words)-1]
		out = append(out, join(base...))
	}
	if typ != "" && !placeTypes[typ] {
		out = append(out, join(append(base[:len(base):len(base)], typ)...))
		if len(base) > 1 {
			out = append(out, join(base[0], typ), join("my", base[0]))
		}
	}
	return dedupeKeys(out)
}

// dedupeKeys keeps the first of the names of each key, and no name
// without a key.
func dedupeKeys(names []string) []string {
	seen := map[string]bool{}
	out := names[:0]
	for _, n := range names {
		if k := EntityKey(n); k != "" && !seen[k] {
			seen[k] = true
			out = append(out, n)
		}
	}
	return out
}
