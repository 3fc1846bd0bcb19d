// Package index runs the index job, which makes new messages searchable
// and learns from them: each turn's window and its vector, the memories
// the turns hold (extracted and consolidated by package extract), the
// thread's chunks with their descriptions (summary, topics, entities) and
// vectors, and the entities the turns mention (package entity). It also
// embeds what is written outside the job: memories and summaries.
package index

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/entity"
	"github.com/agentmem/agentmem/extract"
)

// JobKind is the kind of the jobs that index new messages: embed them for
// search, and extract and consolidate the memories they hold.
const JobKind = "index"

// indexPayload is an index job's payload: a thread's messages from
// SeqFrom on, through SeqTo, or through the thread's last message when
// the job runs if SeqTo is 0.
type indexPayload struct {
	ThreadID string `json:"thread_id"`
	SeqFrom  int64  `json:"seq_from"`
	SeqTo    int64  `json:"seq_to,omitempty"`
}

// Indexer makes new messages searchable and learns from them.
type Indexer struct {
	Store interface {
		agentmem.ThreadStore
		agentmem.MessageStore
		agentmem.ChunkStore
		extract.Store
	}
	Jobs agentmem.JobStore // where Enqueue puts index jobs
	// Emb embeds memories and summaries (and, without Bulk, the turns'
	// windows and chunks too) in the vector space Space.
	Emb   agentmem.Embedder
	Space string
	// Bulk, when set, embeds the turns' windows and chunks, the bulk of a
	// user's items, instead of Emb: the built-in embedder's static form,
	// thousands of texts a second, where its full model runs tens.
	Bulk *agentmem.Embedding
	Log  *slog.Logger
	// Extractor proposes the memories of new turns (nil:
	// extract.HeuristicExtractor).
	Extractor extract.Extractor
	// Chat, when set, decides how each proposed memory consolidates with
	// the user's similar memories (see extract.Consolidator), and names
	// the entities of the turns (entity.ModelExtractor); Model names its
	// model.
	Chat  agentmem.Chat
	Model string
	// ChunkTurns is the turns per chunk (agentmem.DefaultChunkTurns when
	// 0).
	ChunkTurns int
	// Summarize, when set, writes the summary of a chunk's turns (a model,
	// or an extractive summary); chunks have no summary without it.
	Summarize func(ctx context.Context, turns []*agentmem.Message) (string, error)
	// MemoriesChanged, when set, is called when indexing an ended thread
	// changed the user's memories (the profile is then out of date:
	// reflection.Reflector.EnqueueProfile).
	MemoriesChanged func(ctx context.Context, userID string) error
	// Describer writes a chunk's summary, topics and entities
	// (HeuristicDescriber{Summarize} when nil; a ModelChunkDescriber with a
	// model).
	Describer ChunkDescriber
	// ShedBacklog is the backlog of index jobs (every user's, queued or
	// running) past which indexing sheds its optional work so that what
	// search and memory need (windows, vectors, memories) keeps up: chunks
	// are described without the model (HeuristicDescriber) and the turns'
	// entities are not extracted, until the backlog is back under it
	// (DefaultShedBacklog when 0; negative: never). It logs when it starts
	// and stops, and Shedding tells (/metrics: agentmem_index_shedding).
	ShedBacklog int

	clock stageClock // the cost of each stage (StageCosts)

	// kept holds the consolidators of the users indexed last (at most
	// keptConsolidators, for at most keptFor), each with the user's
	// memories read (see extract.Consolidator): a user's jobs one after
	// the other read them once.
	kept struct {
		sync.Mutex
		byID map[string]keptConsolidator
	}

	shed struct {
		sync.Mutex
		checked  time.Time
		shedding bool
	}
}

// bulk returns the embedder and space of the turns' windows and chunks
// (a nil embedder: none).
func (ix *Indexer) bulk() (agentmem.Embedder, string) {
	if ix.Bulk != nil {
		return ix.Bulk.Embedder, ix.Bulk.Space
	}
	return ix.Emb, ix.Space
}

// DefaultShedBacklog is Indexer.ShedBacklog when 0: a thousand index jobs
// waiting (each covers a batch of appends, or all of a thread's waiting
// turns).
const DefaultShedBacklog = 1000

// shedCheck is how often the indexer reads the backlog.
const shedCheck = 2 * time.Second

// ExtractionFallbacks returns how many batches of turns the Extractor
// extracted without its model since it was made, because the model
// failed and because it answered malformed (see extract.ModelExtractor);
// zeros for an extractor without a model.
func (ix *Indexer) ExtractionFallbacks() (failed, malformed int64) {
	if ix == nil {
		return 0, 0
	}
	if x, ok := ix.Extractor.(interface{ Fallbacks() (int64, int64) }); ok {
		return x.Fallbacks()
	}
	return 0, 0
}

// Shedding reports whether indexing sheds its optional work now (see
// ShedBacklog), as of its last look at the backlog.
func (ix *Indexer) Shedding() bool {
	if ix == nil {
		return false
	}
	ix.shed.Lock()
	defer ix.shed.Unlock()
	return ix.shed.shedding
}

// shedding looks at the backlog of index jobs, at most every shedCheck,
// and reports whether to shed optional work.
func (ix *Indexer) shedding(ctx context.Context) bool {
	bound := cmp.Or(ix.ShedBacklog, DefaultShedBacklog)
	if ix.Jobs == nil || bound < 0 {
		return false
	}
	ix.shed.Lock()
	defer ix.shed.Unlock()
	if time.Since(ix.shed.checked) < shedCheck {
		return ix.shed.shedding
	}
	ix.shed.checked = time.Now()
	backlog, err := ix.Jobs.FindJobBacklog(ctx)
	if err != nil {
		return ix.shed.shedding // as it was; the next look may tell
	}
	var jobs int64
	for _, b := range backlog {
		if b.Kind == JobKind {
			jobs = b.Jobs
		}
	}
	was := ix.shed.shedding
	ix.shed.shedding = jobs > int64(bound)
	if log := ix.Log; log != nil && was != ix.shed.shedding {
		if ix.shed.shedding {
			log.WarnContext(ctx, "indexing behind: chunks described without the model, entities not extracted, until it catches up", "index_jobs", jobs, "bound", bound)
		} else {
			log.InfoContext(ctx, "indexing caught up: chunk descriptions and entities again", "index_jobs", jobs, "bound", bound)
		}
	}
	return ix.shed.shedding
}

// Enqueue asks for the messages from seqFrom on of a thread to be indexed
// by a job (call it after an append, with the first and last seq of the
// batch). Appends to a busy thread share jobs: a thread has two open job
// keys, and a job indexes through the thread's last message when it runs,
// so a queued job covers every batch appended before it starts. Only
// when both of a thread's shared jobs are already running does a batch
// get a job of its own. Indexing a message twice changes nothing
// (vectors are replaced, consolidation finds the memories stored).
//
// Enqueue runs after the append's transaction, so a crash in between
// leaves the batch without a job, and each call is one or two more
// writes: appends should ask for the job in their own transaction
// instead (see AppendJobs).
func (ix *Indexer) Enqueue(ctx context.Context, userID, threadID string, seqFrom, seqTo int64) error {
	if ix == nil || ix.Jobs == nil {
		return nil
	}
	// A queued job starts after this batch was stored, so it covers it; a
	// running one may have read the thread before: try the next key.
	_, err := agentmem.EnqueuePicked(ctx, ix.Jobs, indexJobs(userID, threadID, seqFrom, seqTo))
	return err
}

// EndJobs returns the index job of a thread that ends (its last turns, as
// Enqueue would queue them), for the store to enqueue in the end's own
// transaction (agentmem.ThreadUpdate.EndJobs); none from a nil ix, or one
// without Jobs.
func (ix *Indexer) EndJobs(t *agentmem.Thread) []*agentmem.Job {
	if ix == nil || ix.Jobs == nil || t.LastSeq == 0 {
		return nil
	}
	return indexJobs("", t.ID, t.LastSeq, t.LastSeq)
}

// AppendJobs returns opt asking AppendMessages to enqueue the index job of
// the batch in the append's own transaction (agentmem.AppendOptions.Jobs):
// the batch and a job covering it are stored together, even if the
// process dies right after, and the batches of a busy thread share jobs
// as with Enqueue. A batch that a queued job covers costs one lookup and
// no write. The job goes to the store that appends (in serve, ix.Jobs
// too; worker.Notifying wakes the workers when it is stored); a nil ix,
// or one without Jobs, enqueues nothing and returns opt as it is.
func (ix *Indexer) AppendJobs(opt agentmem.AppendOptions) agentmem.AppendOptions {
	if ix == nil || ix.Jobs == nil {
		return opt
	}
	opt.Jobs = func(stored []*agentmem.Message) []*agentmem.Job {
		if n := len(stored); n > 0 {
			return indexJobs("", stored[0].ThreadID, stored[0].Seq, stored[n-1].Seq)
		}
		return nil
	}
	return opt
}

// indexJobs returns the alternatives (see agentmem.PickJob) of the index
// job of the messages seqFrom..seqTo of a thread: the thread's two shared
// jobs, which index through its last message when they run, then a job
// of the batch's own.
//
// The index jobs of a user run one at a time (their Serial is JobKind):
// two of them reading the same turns at once, or the same statement in
// two threads, would each find no memory of it and both add it. Jobs of
// other users still run side by side.
func indexJobs(userID, threadID string, seqFrom, seqTo int64) []*agentmem.Job {
	shared, _ := json.Marshal(indexPayload{ThreadID: threadID, SeqFrom: seqFrom})
	own, _ := json.Marshal(indexPayload{ThreadID: threadID, SeqFrom: seqFrom, SeqTo: seqTo})
	return []*agentmem.Job{
		{UserID: userID, Kind: JobKind, Key: threadID + "#a", Serial: JobKind, Payload: shared},
		{UserID: userID, Kind: JobKind, Key: threadID + "#b", Serial: JobKind, Payload: shared},
		{UserID: userID, Kind: JobKind, Key: fmt.Sprintf("%s:%d-%d", threadID, seqFrom, seqTo), Serial: JobKind, Payload: own},
	}
}

// Lag returns how many of the thread's messages its queued and running
// index jobs have yet to index (from the first seq any of them starts at
// through the thread's last), and when the oldest of those jobs was
// enqueued: 0 and the zero time when indexing has caught up, or when ix
// enqueues no jobs. A running job may have indexed part of its turns
// already: the count is at most one job's worth too high.
func (ix *Indexer) Lag(ctx context.Context, th *agentmem.Thread) (messages int64, since time.Time, err error) {
	if ix == nil || ix.Jobs == nil {
		return 0, time.Time{}, nil
	}
	jobs, err := ix.Jobs.FindActiveJobs(ctx, th.UserID, JobKind, th.ID)
	if err != nil {
		return 0, time.Time{}, err
	}
	var from int64
	for _, j := range jobs {
		var p indexPayload
		if json.Unmarshal(j.Payload, &p) != nil || p.ThreadID != th.ID { // another thread's ID starts with th's
			continue
		}
		if from == 0 || p.SeqFrom < from {
			from = max(p.SeqFrom, 1)
		}
		if since.IsZero() || j.CreatedAt.Before(since) {
			since = j.CreatedAt
		}
	}
	if from == 0 {
		return 0, time.Time{}, nil
	}
	return max(0, th.LastSeq-from+1), since, nil
}

// ImportJobs returns the index jobs of the threads an import stored
// (windows, vectors, chunks, memories), for the import to store in its own
// transaction (agentmem.ImportOptions.Jobs): each indexes its thread
// through its last message. A nil ix, or one without Jobs, returns none.
func (ix *Indexer) ImportJobs(res *agentmem.ImportResult) [][]*agentmem.Job {
	if ix == nil || ix.Jobs == nil {
		return nil
	}
	var jobs [][]*agentmem.Job
	for _, id := range res.ThreadIDs {
		jobs = append(jobs, indexJobs("", id, 1, 0))
	}
	return jobs
}

// Run is the index job's handler (a worker.Handler).
func (ix *Indexer) Run(ctx context.Context, j *agentmem.Job) error {
	var p indexPayload
	if err := json.Unmarshal(j.Payload, &p); err != nil || p.ThreadID == "" || p.SeqFrom < 1 || p.SeqTo != 0 && p.SeqTo < p.SeqFrom {
		return agentmem.Errorf(agentmem.EINVALID, "index job %s has a malformed payload.", j.ID)
	}
	to := p.SeqTo
	if to == 0 {
		th, err := ix.Store.FindThreadByID(ctx, j.UserID, p.ThreadID)
		if agentmem.ErrorCode(err) == agentmem.ENOTFOUND {
			return nil // the thread is gone: nothing to index
		} else if err != nil {
			return err
		}
		to = th.LastSeq
	}
	err := ix.IndexRange(ctx, j.UserID, p.ThreadID, p.SeqFrom, to)
	if agentmem.ErrorCode(err) == agentmem.ENOTFOUND {
		return nil // the thread is gone: nothing to index
	}
	return err
}

// IndexRange indexes the messages seqFrom..seqTo of a thread: their
// windows and vectors and the thread's chunks that they complete, and,
// meanwhile (they depend on none of it), the memories and entities they
// hold: the model's passes for memories use every core, the rest one.
func (ix *Indexer) IndexRange(ctx context.Context, userID, threadID string, seqFrom, seqTo int64) error {
	th, err := ix.Store.FindThreadByID(ctx, userID, threadID)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	searchable := make(chan error, 1)
	go func() {
		err := ix.indexSearchable(ctx, th, seqFrom, seqTo)
		if err != nil {
			cancel()
		}
		searchable <- err
	}()
	err = ix.indexKnowledge(ctx, th, seqFrom, seqTo)
	if err != nil {
		cancel()
	}
	// The first error is the cause; the other may be its cancellation.
	if serr := <-searchable; serr != nil && (err == nil || errors.Is(err, context.Canceled)) {
		return serr
	}
	return err
}

// indexSearchable writes the windows of the messages seqFrom..seqTo and
// their vectors, then the thread's chunks that they complete.
func (ix *Indexer) indexSearchable(ctx context.Context, th *agentmem.Thread, seqFrom, seqTo int64) error {
	start := time.Now()
	if err := ix.indexWindows(ctx, th, seqFrom, seqTo); err != nil {
		return err
	}
	ix.clock.since(stWindows, start)
	start = time.Now()
	if err := ix.indexChunks(ctx, th); err != nil {
		return err
	}
	ix.clock.since(stChunks, start)
	return nil
}

// indexKnowledge extracts and consolidates the memories that the messages
// seqFrom..seqTo hold and records the entities they mention, a page at a
// time.
func (ix *Indexer) indexKnowledge(ctx context.Context, th *agentmem.Thread, seqFrom, seqTo int64) error {
	userID, threadID := th.UserID, th.ID
	// One consolidator for the range, kept for the user's next: it reads
	// the user's memories once, not once a page or a job.
	c := ix.consolidator(userID)
	defer ix.keepConsolidator(userID, c)
	var before *agentmem.Message // the turn before the page (see extractMemories)
	if seqFrom > 1 {
		ms, _, err := ix.Store.FindMessages(ctx, userID, threadID, agentmem.MessageFilter{AfterSeq: seqFrom - 2, BeforeSeq: seqFrom, Limit: 1})
		if err != nil {
			return err
		}
		if len(ms) == 1 {
			before = ms[0]
		}
	}
	for after := seqFrom - 1; after < seqTo; {
		page, _, err := ix.Store.FindMessages(ctx, userID, threadID, agentmem.MessageFilter{AfterSeq: after, BeforeSeq: seqTo + 1, Limit: 256})
		if err != nil {
			return err
		}
		if len(page) == 0 {
			return nil
		}
		if err := ix.extractMemories(ctx, c, th, before, page); err != nil {
			return err
		}
		before = page[len(page)-1]
		if !ix.shedding(ctx) {
			start := time.Now()
			if err := ix.indexEntities(ctx, th, page); err != nil {
				return err
			}
			ix.clock.since(stEntities, start)
		}
		ix.clock.messages.Add(int64(len(page)))
		after = page[len(page)-1].Seq
	}
	return nil
}

// keptConsolidators is how many users' consolidators an Indexer keeps,
// and keptFor how long: each holds a user's memories and their vectors.
const (
	keptConsolidators = 2
	keptFor           = time.Minute
)

// keptConsolidator is a consolidator kept, and when.
type keptConsolidator struct {
	c  *extract.Consolidator
	at time.Time
}

// consolidator returns the consolidator kept for the user, taken from
// the kept ones (a job of theirs running beside gets another), or a new
// one; it forgets those kept longer than keptFor.
func (ix *Indexer) consolidator(userID string) *extract.Consolidator {
	ix.kept.Lock()
	defer ix.kept.Unlock()
	for u, k := range ix.kept.byID {
		if time.Since(k.at) > keptFor {
			delete(ix.kept.byID, u)
		}
	}
	if k, ok := ix.kept.byID[userID]; ok {
		delete(ix.kept.byID, userID)
		k.c.Stale() // others may have written since its last job
		return k.c
	}
	return &extract.Consolidator{Store: ix.Store, Emb: ix.Emb, Space: ix.Space, Chat: ix.Chat, Model: ix.Model, Log: ix.Log}
}

// keepConsolidator keeps c for the user's next job, forgetting the one
// kept longest ago past keptConsolidators.
func (ix *Indexer) keepConsolidator(userID string, c *extract.Consolidator) {
	ix.kept.Lock()
	defer ix.kept.Unlock()
	if ix.kept.byID == nil {
		ix.kept.byID = map[string]keptConsolidator{}
	}
	ix.kept.byID[userID] = keptConsolidator{c: c, at: time.Now()}
	for len(ix.kept.byID) > keptConsolidators {
		oldest := ""
		for u, k := range ix.kept.byID {
			if oldest == "" || k.at.Before(ix.kept.byID[oldest].at) {
				oldest = u
			}
		}
		delete(ix.kept.byID, oldest)
	}
}

// IndexUser indexes every message of every thread of a user (after a bulk
// import, or for an evaluation).
func (ix *Indexer) IndexUser(ctx context.Context, userID string) error {
	f := agentmem.ThreadFilter{Limit: agentmem.MaxPageSize}
	for {
		threads, next, err := ix.Store.FindThreads(ctx, userID, f)
		if err != nil {
			return err
		}
		// Oldest first, so that later statements supersede earlier ones.
		for i := len(threads) - 1; i >= 0; i-- {
			if err := ix.IndexRange(ctx, userID, threads[i].ID, 1, threads[i].LastSeq); err != nil {
				return err
			}
		}
		if f.Cursor = next; next == "" {
			return nil
		}
	}
}

// EmbedText is the text of a message that is embedded: its content,
// after its author's name when it has one.
func EmbedText(m *agentmem.Message) string { return agentmem.TurnText(m.Name, m.Content) }

// extractMemories consolidates the memories a page of messages holds
// with c. before, the turn before the page (nil at a thread's start), is
// the extractor's context when it is the user's and the page starts with
// the assistant's reply to it: the reply's "Hi Rufus!" answers "Rufus
// says hi.", and is no name of the user's. No memory is drawn from it
// (it was indexed with the page before).
func (ix *Indexer) extractMemories(ctx context.Context, c *extract.Consolidator, th *agentmem.Thread, before *agentmem.Message, msgs []*agentmem.Message) error {
	read := msgs
	if before != nil && before.Role == agentmem.RoleUser && msgs[0].Role != agentmem.RoleUser {
		read = append([]*agentmem.Message{before}, msgs...)
	}
	start := time.Now()
	cands, extractErr := ix.candidates(ctx, th, read)
	if extractErr != nil {
		return extractErr
	}
	ix.clock.since(stExtract, start)
	if len(read) > len(msgs) {
		cands = slices.DeleteFunc(cands, func(cd extract.Candidate) bool { return cd.SeqTo < msgs[0].Seq })
	}
	said := map[int64]time.Time{}
	for _, m := range msgs {
		said[m.Seq] = m.CreatedAt
	}
	for i := range cands {
		if cands[i].At.IsZero() {
			cands[i].At = said[cands[i].SeqTo]
		}
	}
	if len(cands) == 0 || ix.Emb == nil {
		return nil
	}
	start = time.Now()
	ds, err := c.Apply(ctx, th.UserID, th.AgentID, th.ID, cands)
	ix.clock.since(stConsolidate, start)
	if err != nil || ix.MemoriesChanged == nil {
		return err
	}
	for _, d := range ds {
		if d.Op != extract.OpNoop {
			// The thread may have ended while this job ran: read it again.
			now, err := ix.Store.FindThreadByID(ctx, th.UserID, th.ID)
			if err != nil || now.Status != agentmem.ThreadEnded {
				return nil
			}
			return ix.MemoriesChanged(ctx, th.UserID)
		}
	}
	return nil
}

// candidates proposes the memories of a page of messages with the
// Indexer's Extractor (extract.HeuristicExtractor when nil). Without an
// embedder nothing is consolidated, so nothing is asked of a model
// either.
func (ix *Indexer) candidates(ctx context.Context, th *agentmem.Thread, msgs []*agentmem.Message) ([]extract.Candidate, error) {
	if ix.Emb == nil {
		return nil, nil
	}
	ex := ix.Extractor
	if ex == nil {
		ex = extract.HeuristicExtractor{}
	}
	cands, err := ex.Extract(ctx, th, msgs)
	if err != nil {
		return nil, fmt.Errorf("extract memories: %w", err)
	}
	return cands, nil
}

// indexEntities records the entities that a page of messages of a thread
// mentions, and the thread's references to them (see entity.Indexer),
// when ix.Store is an agentmem.EntityStore (every agentmem.Store is).
func (ix *Indexer) indexEntities(ctx context.Context, th *agentmem.Thread, msgs []*agentmem.Message) error {
	store, ok := ix.Store.(agentmem.EntityStore)
	if !ok {
		return nil
	}
	x := &entity.Indexer{Store: store, Chat: ix.Chat, Model: ix.Model, Log: ix.Log}
	return x.Index(ctx, th, msgs)
}

// EmbedMemory stores the vector of a memory written or edited through
// the API, so that search finds it.
func (ix *Indexer) EmbedMemory(ctx context.Context, m *agentmem.Memory) error {
	if ix == nil || ix.Emb == nil {
		return nil
	}
	vecs, err := ix.Emb.Embed(ctx, []string{m.Text})
	if err != nil {
		return fmt.Errorf("embed memory: %w", err)
	}
	// Only while the memory is there: stored in a transaction before this
	// one, it may have been erased with its user since.
	rctx := agentmem.WithRequired(ctx, agentmem.Required{UserID: m.UserID, MemoryID: m.ID})
	return ix.Store.PutVectors(rctx, m.UserID, []agentmem.Vector{{Scope: agentmem.ScopeMemories, ID: m.ID, Space: ix.Space, Vec: vecs[0]}})
}
