package agentmem

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
)

// ImportExisting is what a user already has of an import's records, as a
// backend finds it in the import's transaction (see PlanImport): of the
// IDs in ImportKeys.
type ImportExisting struct {
	Threads     map[string]bool   // thread IDs
	LastSeqs    map[string]int64  // thread ID → its last seq
	Messages    map[string]string // message ID → the thread that has it
	Elements    map[string]string // element ID → the thread that has it
	Sessions    map[string]bool   // agent IDs
	NotesAgents map[string]bool   // agents with notes
	Profiles    bool              // any profile version
	Memories    map[string]bool   // memory IDs
	Entities    map[string]bool   // entity IDs
	EntityNames map[string]string // name key → entity ID
	Reflections map[string]bool   // thread IDs
}

// NewImportExisting returns an ImportExisting with empty maps, for a
// backend to fill in.
func NewImportExisting() ImportExisting {
	return ImportExisting{Threads: map[string]bool{}, LastSeqs: map[string]int64{}, Messages: map[string]string{},
		Elements: map[string]string{}, Sessions: map[string]bool{}, NotesAgents: map[string]bool{}, Memories: map[string]bool{},
		Entities: map[string]bool{}, EntityNames: map[string]string{}, Reflections: map[string]bool{}}
}

// ImportPlan is what an import writes, in order: the deletions (with
// OnConflictReplace), then the records.
type ImportPlan struct {
	DeleteThreads  []string
	DeleteMemories []string
	DeleteEntities []string
	DeleteNotes    []string // agents whose notes go
	DeleteProfiles bool

	Threads     []*ThreadExport
	Sessions    []*Session
	Notes       []*Notes
	Profiles    []*Profile
	Memories    []*MemoryExport
	Entities    []*EntityExport
	Reflections []*Reflection // upserted
	Result      *ImportResult
}

// PlanImport decides what an import of x (prepared by PrepareUserImport)
// writes, given what the user has: with OnConflictFail any clash is a
// ClashError; with OnConflictSkip a clashing record is left out (a thread
// with its messages, elements, reflection and session); with
// OnConflictReplace the user's clashing record is deleted first. A
// record that x holds twice is imported once (PrepareUserImport made sure
// that the repeats are the same) and its repeats are counted in
// ImportResult.Duplicates.
//
// Before any clash, it returns EINVALID for a record that would point at
// nothing once imported: a session, reflection or entity reference of a
// thread, or a memory drawn from a thread, that neither x nor the user
// has (or that the import replaces by deleting it); a memory superseded
// by a memory that neither has; a reflection past the end of its thread.
// A memory's history, a profile's sources and a reflection's insights
// are records of the past and may name what is gone. Seqs that the API
// does not check against the thread either (a memory's, a reference's)
// are not checked here.
func PlanImport(x *UserExport, have ImportExisting, opt ImportOptions) (*ImportPlan, error) {
	pl := &planner{x: x, have: have, onConflict: cmp.Or(opt.OnConflict, OnConflictFail),
		p:       &ImportPlan{Result: &ImportResult{ThreadIDs: []string{}, MemoryIDs: []string{}}},
		deleted: map[string]bool{}, skippedThreads: map[string]bool{}, fileThreads: map[string]*Thread{}, fileMemories: map[string]bool{}}
	pl.threads() // first: the others leave out what belongs to a skipped thread
	if err := pl.references(); err != nil {
		return nil, err
	}
	pl.sessions()
	pl.notes()
	pl.profiles()
	pl.memories()
	pl.entities()
	pl.reflections()
	if len(pl.clashes) > 0 {
		return nil, ClashError(pl.clashes)
	}
	return pl.p, nil
}

// planner holds the state of PlanImport.
type planner struct {
	x              *UserExport
	have           ImportExisting
	onConflict     string
	p              *ImportPlan
	clashes        []Clash
	deleted        map[string]bool // threads deleted by the plan
	skippedThreads map[string]bool
	fileThreads    map[string]*Thread // the threads of x, by ID
	fileMemories   map[string]bool
}

// What becomes of a record of an import.
type verdict int

const (
	importNew     verdict = iota // the user does not have it: imported
	importReplace                // the user's is deleted, the export's imported
	importSkip                   // the user's is kept, the export's left out
	importClash                  // a clash: the import fails
)

// decide says what becomes of a record, recording a clash.
func (pl *planner) decide(clash bool, kind, id string) verdict {
	switch {
	case !clash:
		return importNew
	case pl.onConflict == OnConflictReplace:
		return importReplace
	case pl.onConflict == OnConflictSkip:
		return importSkip
	}
	pl.clashes = append(pl.clashes, Clash{kind, id})
	return importClash
}

func (pl *planner) threads() {
	r := pl.p.Result
	for _, t := range pl.x.Threads {
		id := t.Thread.ID
		if pl.fileThreads[id] != nil { // a duplicate
			r.Duplicates.Threads++
			r.Duplicates.Messages += len(t.Messages)
			continue
		}
		pl.fileThreads[id] = t.Thread
		// A thread clashes by its ID or by a message or element ID that
		// the user has, in this thread or in another (owners).
		clash := pl.have.Threads[id]
		var owners []string
		for _, owner := range pl.owners(t) {
			clash = true
			if owner != id {
				owners = append(owners, owner)
			}
		}
		switch pl.decide(clash, "thread", id) {
		case importReplace:
			for _, d := range append([]string{id}, owners...) {
				if (d != id || pl.have.Threads[id]) && !pl.deleted[d] {
					pl.deleted[d] = true
					pl.p.DeleteThreads = append(pl.p.DeleteThreads, d)
				}
			}
			r.Replaced.Threads++
		case importSkip:
			pl.skippedThreads[id] = true
			r.Skipped.Threads++
			r.Skipped.Messages += len(t.Messages)
			continue
		case importClash:
			continue
		}
		pl.p.Threads = append(pl.p.Threads, t)
		r.Imported.Threads++
		r.Imported.Messages += len(t.Messages)
		r.ThreadIDs = append(r.ThreadIDs, id)
	}
}

// owners returns the threads of the user that have a message or an
// element of t (t's own among them).
func (pl *planner) owners(t *ThreadExport) []string {
	var out []string
	for _, m := range t.Messages {
		if owner, ok := pl.have.Messages[m.ID]; ok {
			out = append(out, owner)
		}
	}
	for _, e := range t.Elements {
		if owner, ok := pl.have.Elements[e.ID]; ok {
			out = append(out, owner)
		}
	}
	return out
}

// thread reports whether the thread id exists once the import is done,
// and its last seq then: the export's, or the user's if the user's is
// kept (skipped, or not in the export and not deleted by the plan).
func (pl *planner) thread(id string) (lastSeq int64, ok bool) {
	if t := pl.fileThreads[id]; t != nil && !pl.skippedThreads[id] {
		return t.LastSeq, true
	}
	if pl.have.Threads[id] && !pl.deleted[id] {
		return pl.have.LastSeqs[id], true
	}
	return 0, false
}

// references checks that the records of x point at something (see
// PlanImport), after threads.
func (pl *planner) references() error {
	x := pl.x
	for _, m := range x.Memories {
		pl.fileMemories[m.ID] = true
	}
	noThread := func(field, id string) error {
		return Errorf(EINVALID, "%s %q names no thread of the export or of the user.", field, id)
	}
	pastEnd := func(field string, seq int64, thread string, last int64) error {
		return Errorf(EINVALID, "%s %d is past the end of thread %q, whose last seq is %d.", field, seq, thread, last)
	}
	for i, s := range x.Sessions {
		if _, ok := pl.thread(s.ThreadID); !ok && !pl.skippedThreads[s.ThreadID] {
			return noThread(fmt.Sprintf("sessions[%d].thread_id", i), s.ThreadID)
		}
	}
	for i, m := range x.Memories {
		if m.ThreadID != "" {
			if _, ok := pl.thread(m.ThreadID); !ok && pl.fileThreads[m.ThreadID] == nil {
				return noThread(fmt.Sprintf("memories[%d].thread_id", i), m.ThreadID)
			}
		}
		for j, r := range m.Sources {
			if _, ok := pl.thread(r.ThreadID); !ok && pl.fileThreads[r.ThreadID] == nil {
				return noThread(fmt.Sprintf("memories[%d].sources[%d].thread_id", i, j), r.ThreadID)
			}
		}
		if m.SupersededBy != "" && !pl.fileMemories[m.SupersededBy] && !pl.have.Memories[m.SupersededBy] {
			return Errorf(EINVALID, "memories[%d].superseded_by %q names no memory of the export or of the user.", i, m.SupersededBy)
		}
	}
	for i, e := range x.Entities {
		for j, ref := range e.References {
			if pl.skippedThreads[ref.ThreadID] {
				continue // left out with the thread
			}
			if _, ok := pl.thread(ref.ThreadID); !ok {
				return noThread(fmt.Sprintf("entities[%d].references[%d].thread_id", i, j), ref.ThreadID)
			}
		}
	}
	for i, rf := range x.Reflections {
		if pl.skippedThreads[rf.ThreadID] {
			continue // left out with the thread
		}
		last, ok := pl.thread(rf.ThreadID)
		switch {
		case !ok:
			return noThread(fmt.Sprintf("reflections[%d].thread_id", i), rf.ThreadID)
		case rf.ThroughSeq > last:
			return pastEnd(fmt.Sprintf("reflections[%d].through_seq", i), rf.ThroughSeq, rf.ThreadID, last)
		}
	}
	return nil
}

func (pl *planner) sessions() {
	r := pl.p.Result
	seen := map[string]bool{}
	for _, s := range pl.x.Sessions {
		if seen[s.AgentID] {
			r.Duplicates.Sessions++
			continue
		}
		seen[s.AgentID] = true
		if pl.skippedThreads[s.ThreadID] {
			r.Skipped.Sessions++
			continue
		}
		switch pl.decide(pl.have.Sessions[s.AgentID], "session", s.AgentID) {
		case importReplace:
			r.Replaced.Sessions++ // the session is set again
		case importSkip:
			r.Skipped.Sessions++
			continue
		case importClash:
			continue
		}
		pl.p.Sessions = append(pl.p.Sessions, s)
		r.Imported.Sessions++
	}
}

// notes decides by agent: an agent's versions are all imported or none.
func (pl *planner) notes() {
	r := pl.p.Result
	imported := map[string]bool{} // agent → imported
	seen := map[string]bool{}     // agent and version
	for _, n := range pl.x.Notes {
		key := n.AgentID + " " + strconv.FormatInt(n.Version, 10)
		if seen[key] {
			r.Duplicates.Notes++
			continue
		}
		seen[key] = true
		take, decided := imported[n.AgentID]
		if !decided {
			switch pl.decide(pl.have.NotesAgents[n.AgentID], "notes", n.AgentID) {
			case importNew:
				take = true
			case importReplace:
				pl.p.DeleteNotes = append(pl.p.DeleteNotes, n.AgentID)
				take = true
			}
			imported[n.AgentID] = take
		}
		if !take {
			r.Skipped.Notes++
			continue
		}
		if pl.have.NotesAgents[n.AgentID] {
			r.Replaced.Notes++
		}
		pl.p.Notes = append(pl.p.Notes, n)
		r.Imported.Notes++
	}
}

// profiles decides for every version at once.
func (pl *planner) profiles() {
	r := pl.p.Result
	var versions []*Profile
	seen := map[int]bool{}
	for _, p := range pl.x.Profiles {
		if seen[p.Version] {
			r.Duplicates.Profiles++
			continue
		}
		seen[p.Version] = true
		versions = append(versions, p)
	}
	if len(versions) == 0 {
		return
	}
	switch pl.decide(pl.have.Profiles, "profiles", "versions") {
	case importNew:
		pl.p.Profiles = versions
	case importReplace:
		pl.p.DeleteProfiles, pl.p.Profiles = true, versions
		r.Replaced.Profiles = len(versions)
	case importSkip:
		r.Skipped.Profiles = len(versions)
	}
	r.Imported.Profiles = len(pl.p.Profiles)
}

func (pl *planner) memories() {
	r := pl.p.Result
	seen := map[string]bool{}
	for _, m := range pl.x.Memories {
		if seen[m.ID] {
			r.Duplicates.Memories++
			continue
		}
		seen[m.ID] = true
		switch pl.decide(pl.have.Memories[m.ID], "memory", m.ID) {
		case importReplace:
			pl.p.DeleteMemories = append(pl.p.DeleteMemories, m.ID)
			r.Replaced.Memories++
		case importSkip:
			r.Skipped.Memories++
			continue
		case importClash:
			continue
		}
		pl.p.Memories = append(pl.p.Memories, m)
		r.Imported.Memories++
		r.MemoryIDs = append(r.MemoryIDs, m.ID)
	}
}

// entities clash by ID or by name (an entity of the user with the same
// name key); references to skipped threads are left out.
func (pl *planner) entities() {
	r := pl.p.Result
	seen := map[string]bool{}
	for _, e := range pl.x.Entities {
		if seen[e.ID] {
			r.Duplicates.Entities++
			continue
		}
		seen[e.ID] = true
		key, _ := e.Keys()
		other, named := pl.have.EntityNames[key]
		switch pl.decide(pl.have.Entities[e.ID] || named, "entity", e.ID) {
		case importReplace:
			if pl.have.Entities[e.ID] {
				pl.p.DeleteEntities = append(pl.p.DeleteEntities, e.ID)
			}
			if named && other != e.ID {
				pl.p.DeleteEntities = append(pl.p.DeleteEntities, other)
			}
			r.Replaced.Entities++
		case importSkip:
			r.Skipped.Entities++
			continue
		case importClash:
			continue
		}
		var refs []*EntityRef
		for _, ref := range e.References {
			if !pl.skippedThreads[ref.ThreadID] {
				refs = append(refs, ref)
			}
		}
		e.References = refs
		pl.p.Entities = append(pl.p.Entities, e)
		r.Imported.Entities++
	}
}

func (pl *planner) reflections() {
	r := pl.p.Result
	seen := map[string]bool{}
	for _, rf := range pl.x.Reflections {
		if seen[rf.ThreadID] {
			r.Duplicates.Reflections++
			continue
		}
		seen[rf.ThreadID] = true
		if pl.skippedThreads[rf.ThreadID] {
			r.Skipped.Reflections++
			continue
		}
		switch pl.decide(pl.have.Reflections[rf.ThreadID], "reflection", rf.ThreadID) {
		case importReplace:
			r.Replaced.Reflections++
		case importSkip:
			r.Skipped.Reflections++
			continue
		case importClash:
			continue
		}
		pl.p.Reflections = append(pl.p.Reflections, rf)
		r.Imported.Reflections++
	}
}

// ImportKeys are the IDs that a backend looks up for ImportExisting: the
// threads of an import and those its records refer to, its messages and
// elements, its memories and those they refer to, its entities and their
// name keys.
type ImportKeys struct {
	Threads, Messages, Elements, Memories, Entities, NameKeys []string
}

// ImportKeys returns the IDs an import of x (prepared) asks about.
func (x *UserExport) ImportKeys() ImportKeys {
	var k ImportKeys
	for _, t := range x.Threads {
		k.Threads = append(k.Threads, t.Thread.ID)
		for _, m := range t.Messages {
			k.Messages = append(k.Messages, m.ID)
		}
		for _, e := range t.Elements {
			k.Elements = append(k.Elements, e.ID)
		}
	}
	for _, s := range x.Sessions {
		k.Threads = append(k.Threads, s.ThreadID)
	}
	for _, m := range x.Memories {
		k.Memories = append(k.Memories, m.ID)
		if m.SupersededBy != "" {
			k.Memories = append(k.Memories, m.SupersededBy)
		}
		if m.ThreadID != "" {
			k.Threads = append(k.Threads, m.ThreadID)
		}
		for _, r := range m.Sources {
			k.Threads = append(k.Threads, r.ThreadID)
		}
	}
	for _, e := range x.Entities {
		k.Entities = append(k.Entities, e.ID)
		key, _ := e.Keys()
		k.NameKeys = append(k.NameKeys, key)
		for _, r := range e.References {
			k.Threads = append(k.Threads, r.ThreadID)
		}
	}
	for _, r := range x.Reflections {
		k.Threads = append(k.Threads, r.ThreadID)
	}
	for _, l := range []*[]string{&k.Threads, &k.Messages, &k.Elements, &k.Memories, &k.Entities, &k.NameKeys} {
		slices.Sort(*l)
		*l = slices.Compact(*l)
	}
	return k
}
