package metrics

import (
	"context"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"
)

// Store returns s with every call of agentmem.Store timed into the
// histogram agentmem_store_operation_duration_seconds{op}, every failure
// counted in agentmem_store_operation_errors_total{op,code}, and, with a
// tp, every call made within a span traced as a child span
// store.OP: op is the method's name in snake case (append_messages) and
// code its agentmem.ErrorCode. A nil reg records no metrics, a nil tp no
// spans; with neither, s is returned unchanged.
//
// The decorator wraps each method of agentmem.Store by name (it does not
// embed the interface, so a method added to agentmem.Store fails to
// compile here until it is timed; TestStoreTimesEveryMethod checks the
// names). It keeps the optional methods that search reads vectors with
// (ScanVectors; CountVectors and ScanVectorsBySeq with it), timed too,
// when s has them.
func Store(s agentmem.Store, reg prometheus.Registerer, tp trace.TracerProvider) agentmem.Store {
	if reg == nil && tp == nil {
		return s
	}
	d := &store{next: s, tracer: tracer(tp)}
	if reg != nil {
		d.duration = Register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "agentmem_store_operation_duration_seconds",
			Help:    "Time of a store call, by operation.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"op"}))
		d.errors = Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentmem_store_operation_errors_total",
			Help: "Store calls that failed, by operation and agentmem error code.",
		}, []string{"op", "code"}))
	}
	return withVectorReads(d)
}

var _ agentmem.Store = (*store)(nil)

// store is the decorator of Store.
type store struct {
	next     agentmem.Store
	duration *prometheus.HistogramVec // nil: no metrics
	errors   *prometheus.CounterVec
	tracer   trace.Tracer // nil: no spans
}

// start begins the span of a call of op (see startChild).
func (d *store) start(ctx context.Context, op string) (context.Context, trace.Span) {
	if d.tracer == nil {
		return ctx, nil
	}
	return startChild(d.tracer, ctx, "store."+op, trace.WithSpanKind(trace.SpanKindClient))
}

// end records a call of op begun at start; it is deferred, so it reads
// the call's error through a pointer to the named result.
func (d *store) end(span trace.Span, op string, start time.Time, err *error) {
	if d.duration != nil {
		d.duration.WithLabelValues(op).Observe(time.Since(start).Seconds())
		if *err != nil {
			d.errors.WithLabelValues(op, agentmem.ErrorCode(*err)).Inc()
		}
	}
	endSpan(span, *err)
}

// The optional methods of the stores that search reads vectors with
// (retrieve's vectorScanner, vectorCounter and vectorHalves): both stores
// scan, SQLite counts and reads by write order too.
type (
	vectorScanner interface {
		ScanVectors(ctx context.Context, userID, space string, fn func(scope, id string, b []byte) error) error
	}
	vectorHalves interface {
		vectorScanner
		CountVectors(ctx context.Context, userID, space string) (int, error)
		ScanVectorsBySeq(ctx context.Context, userID, space string, maxSeq int64, desc bool, fn func(scope, id string, b []byte) error) error
	}
)

// withVectorReads returns d with the optional vector reads its store has.
func withVectorReads(d *store) agentmem.Store {
	switch next := d.next.(type) {
	case vectorHalves:
		return &halvesStore{scanStore{d, next}, next}
	case vectorScanner:
		return &scanStore{d, next}
	}
	return d
}

// scanStore is a store decorator with ScanVectors.
type scanStore struct {
	*store
	scanner vectorScanner
}

func (d *scanStore) ScanVectors(ctx context.Context, userID, space string, fn func(scope, id string, b []byte) error) (err error) {
	ctx, span := d.start(ctx, "scan_vectors")
	defer d.end(span, "scan_vectors", time.Now(), &err)
	return d.scanner.ScanVectors(ctx, userID, space, fn)
}

// halvesStore is a store decorator with ScanVectors, CountVectors and
// ScanVectorsBySeq.
type halvesStore struct {
	scanStore
	halves vectorHalves
}

func (d *halvesStore) CountVectors(ctx context.Context, userID, space string) (_ int, err error) {
	ctx, span := d.start(ctx, "count_vectors")
	defer d.end(span, "count_vectors", time.Now(), &err)
	return d.halves.CountVectors(ctx, userID, space)
}

func (d *halvesStore) ScanVectorsBySeq(ctx context.Context, userID, space string, maxSeq int64, desc bool, fn func(scope, id string, b []byte) error) (err error) {
	ctx, span := d.start(ctx, "scan_vectors_by_seq")
	defer d.end(span, "scan_vectors_by_seq", time.Now(), &err)
	return d.halves.ScanVectorsBySeq(ctx, userID, space, maxSeq, desc, fn)
}

// The methods of agentmem.Store, in alphabetical order.

func (d *store) AppendMessages(ctx context.Context, userID, threadID string, msgs []*agentmem.Message, opt agentmem.AppendOptions) (_ []*agentmem.Message, err error) {
	ctx, span := d.start(ctx, "append_messages")
	defer d.end(span, "append_messages", time.Now(), &err)
	return d.next.AppendMessages(ctx, userID, threadID, msgs, opt)
}

func (d *store) ClaimJobs(ctx context.Context, owner string, kinds []string, n int, lease time.Duration) (_ []*agentmem.Job, err error) {
	ctx, span := d.start(ctx, "claim_jobs")
	defer d.end(span, "claim_jobs", time.Now(), &err)
	return d.next.ClaimJobs(ctx, owner, kinds, n, lease)
}

func (d *store) Close() (err error) {
	defer d.end(nil, "close", time.Now(), &err)
	return d.next.Close()
}

func (d *store) CompleteJob(ctx context.Context, userID, id string, owner string) (err error) {
	ctx, span := d.start(ctx, "complete_job")
	defer d.end(span, "complete_job", time.Now(), &err)
	return d.next.CompleteJob(ctx, userID, id, owner)
}

func (d *store) CreateAuditEvent(ctx context.Context, e *agentmem.AuditEvent) (err error) {
	ctx, span := d.start(ctx, "create_audit_event")
	defer d.end(span, "create_audit_event", time.Now(), &err)
	return d.next.CreateAuditEvent(ctx, e)
}

func (d *store) CreateElement(ctx context.Context, userID, threadID string, e *agentmem.Element) (err error) {
	ctx, span := d.start(ctx, "create_element")
	defer d.end(span, "create_element", time.Now(), &err)
	return d.next.CreateElement(ctx, userID, threadID, e)
}

func (d *store) CreateKey(ctx context.Context, k *agentmem.APIKey) (err error) {
	ctx, span := d.start(ctx, "create_key")
	defer d.end(span, "create_key", time.Now(), &err)
	return d.next.CreateKey(ctx, k)
}

func (d *store) CreateMemory(ctx context.Context, m *agentmem.Memory) (err error) {
	ctx, span := d.start(ctx, "create_memory")
	defer d.end(span, "create_memory", time.Now(), &err)
	return d.next.CreateMemory(ctx, m)
}

func (d *store) CreateThread(ctx context.Context, t *agentmem.Thread) (err error) {
	ctx, span := d.start(ctx, "create_thread")
	defer d.end(span, "create_thread", time.Now(), &err)
	return d.next.CreateThread(ctx, t)
}

func (d *store) DeleteDoneJobs(ctx context.Context, before time.Time, limit int) (_ int64, err error) {
	ctx, span := d.start(ctx, "delete_done_jobs")
	defer d.end(span, "delete_done_jobs", time.Now(), &err)
	return d.next.DeleteDoneJobs(ctx, before, limit)
}

func (d *store) DeleteEntity(ctx context.Context, userID, id string) (err error) {
	ctx, span := d.start(ctx, "delete_entity")
	defer d.end(span, "delete_entity", time.Now(), &err)
	return d.next.DeleteEntity(ctx, userID, id)
}

func (d *store) DeleteMemory(ctx context.Context, userID, id string) (err error) {
	ctx, span := d.start(ctx, "delete_memory")
	defer d.end(span, "delete_memory", time.Now(), &err)
	return d.next.DeleteMemory(ctx, userID, id)
}

func (d *store) DeleteThread(ctx context.Context, userID, id string, permanent bool) (err error) {
	ctx, span := d.start(ctx, "delete_thread")
	defer d.end(span, "delete_thread", time.Now(), &err)
	return d.next.DeleteThread(ctx, userID, id, permanent)
}

func (d *store) DeleteThreadsBefore(ctx context.Context, userID string, cutoff time.Time, dryRun bool) (_ agentmem.Counts, err error) {
	ctx, span := d.start(ctx, "delete_threads_before")
	defer d.end(span, "delete_threads_before", time.Now(), &err)
	return d.next.DeleteThreadsBefore(ctx, userID, cutoff, dryRun)
}

func (d *store) DeleteUser(ctx context.Context, userID string) (_ agentmem.Counts, err error) {
	ctx, span := d.start(ctx, "delete_user")
	defer d.end(span, "delete_user", time.Now(), &err)
	return d.next.DeleteUser(ctx, userID)
}

func (d *store) DeleteVectorSpace(ctx context.Context, userID, space string) (err error) {
	ctx, span := d.start(ctx, "delete_vector_space")
	defer d.end(span, "delete_vector_space", time.Now(), &err)
	return d.next.DeleteVectorSpace(ctx, userID, space)
}

func (d *store) EndThread(ctx context.Context, userID, id string) (_ *agentmem.Thread, err error) {
	ctx, span := d.start(ctx, "end_thread")
	defer d.end(span, "end_thread", time.Now(), &err)
	return d.next.EndThread(ctx, userID, id)
}

func (d *store) EnqueueJob(ctx context.Context, j *agentmem.Job) (_ *agentmem.Job, err error) {
	ctx, span := d.start(ctx, "enqueue_job")
	defer d.end(span, "enqueue_job", time.Now(), &err)
	return d.next.EnqueueJob(ctx, j)
}

func (d *store) FailJob(ctx context.Context, userID, id string, owner string, errMsg string, retryAt time.Time) (err error) {
	ctx, span := d.start(ctx, "fail_job")
	defer d.end(span, "fail_job", time.Now(), &err)
	return d.next.FailJob(ctx, userID, id, owner, errMsg, retryAt)
}

func (d *store) FindActiveJobs(ctx context.Context, userID string, kind string, keyPrefix string) (_ []*agentmem.Job, err error) {
	ctx, span := d.start(ctx, "find_active_jobs")
	defer d.end(span, "find_active_jobs", time.Now(), &err)
	return d.next.FindActiveJobs(ctx, userID, kind, keyPrefix)
}

func (d *store) FindAgentIDs(ctx context.Context, userID string) (_ []string, err error) {
	ctx, span := d.start(ctx, "find_agent_ids")
	defer d.end(span, "find_agent_ids", time.Now(), &err)
	return d.next.FindAgentIDs(ctx, userID)
}

func (d *store) FindAuditEvents(ctx context.Context, filter agentmem.AuditFilter) (_ []*agentmem.AuditEvent, _ string, err error) {
	ctx, span := d.start(ctx, "find_audit_events")
	defer d.end(span, "find_audit_events", time.Now(), &err)
	return d.next.FindAuditEvents(ctx, filter)
}

func (d *store) FindChunks(ctx context.Context, userID, threadID string) (_ []*agentmem.Chunk, err error) {
	ctx, span := d.start(ctx, "find_chunks")
	defer d.end(span, "find_chunks", time.Now(), &err)
	return d.next.FindChunks(ctx, userID, threadID)
}

func (d *store) FindElements(ctx context.Context, userID, threadID string, filter agentmem.ElementFilter) (_ []*agentmem.Element, _ string, err error) {
	ctx, span := d.start(ctx, "find_elements")
	defer d.end(span, "find_elements", time.Now(), &err)
	return d.next.FindElements(ctx, userID, threadID, filter)
}

func (d *store) FindEntities(ctx context.Context, userID string, f agentmem.EntityFilter) (_ []*agentmem.Entity, _ string, err error) {
	ctx, span := d.start(ctx, "find_entities")
	defer d.end(span, "find_entities", time.Now(), &err)
	return d.next.FindEntities(ctx, userID, f)
}

func (d *store) FindEntityByID(ctx context.Context, userID, id string) (_ *agentmem.Entity, err error) {
	ctx, span := d.start(ctx, "find_entity_by_id")
	defer d.end(span, "find_entity_by_id", time.Now(), &err)
	return d.next.FindEntityByID(ctx, userID, id)
}

func (d *store) FindEntityRefs(ctx context.Context, userID string, f agentmem.EntityRefFilter) (_ []*agentmem.EntityRef, _ string, err error) {
	ctx, span := d.start(ctx, "find_entity_refs")
	defer d.end(span, "find_entity_refs", time.Now(), &err)
	return d.next.FindEntityRefs(ctx, userID, f)
}

func (d *store) FindIdleThreads(ctx context.Context, idleSince time.Time, limit int) (_ []*agentmem.Thread, err error) {
	ctx, span := d.start(ctx, "find_idle_threads")
	defer d.end(span, "find_idle_threads", time.Now(), &err)
	return d.next.FindIdleThreads(ctx, idleSince, limit)
}

func (d *store) FindItems(ctx context.Context, userID string, scope string, ids []string, f agentmem.SearchFilter) (_ []agentmem.TextHit, err error) {
	ctx, span := d.start(ctx, "find_items")
	defer d.end(span, "find_items", time.Now(), &err)
	return d.next.FindItems(ctx, userID, scope, ids, f)
}

func (d *store) FindJobBacklog(ctx context.Context) (_ []agentmem.JobBacklog, err error) {
	ctx, span := d.start(ctx, "find_job_backlog")
	defer d.end(span, "find_job_backlog", time.Now(), &err)
	return d.next.FindJobBacklog(ctx)
}

func (d *store) FindJobs(ctx context.Context, filter agentmem.JobFilter) (_ []*agentmem.Job, _ string, err error) {
	ctx, span := d.start(ctx, "find_jobs")
	defer d.end(span, "find_jobs", time.Now(), &err)
	return d.next.FindJobs(ctx, filter)
}

func (d *store) FindKeyByID(ctx context.Context, id string) (_ *agentmem.APIKey, err error) {
	ctx, span := d.start(ctx, "find_key_by_id")
	defer d.end(span, "find_key_by_id", time.Now(), &err)
	return d.next.FindKeyByID(ctx, id)
}

func (d *store) FindKeys(ctx context.Context, filter agentmem.KeyFilter) (_ []*agentmem.APIKey, _ string, err error) {
	ctx, span := d.start(ctx, "find_keys")
	defer d.end(span, "find_keys", time.Now(), &err)
	return d.next.FindKeys(ctx, filter)
}

func (d *store) FindMemories(ctx context.Context, userID string, f agentmem.MemoryFilter) (_ []*agentmem.Memory, _ string, err error) {
	ctx, span := d.start(ctx, "find_memories")
	defer d.end(span, "find_memories", time.Now(), &err)
	return d.next.FindMemories(ctx, userID, f)
}

func (d *store) FindMemoryByID(ctx context.Context, userID, id string) (_ *agentmem.Memory, err error) {
	ctx, span := d.start(ctx, "find_memory_by_id")
	defer d.end(span, "find_memory_by_id", time.Now(), &err)
	return d.next.FindMemoryByID(ctx, userID, id)
}

func (d *store) FindMemoryHistory(ctx context.Context, userID, id string) (_ []*agentmem.MemoryChange, err error) {
	ctx, span := d.start(ctx, "find_memory_history")
	defer d.end(span, "find_memory_history", time.Now(), &err)
	return d.next.FindMemoryHistory(ctx, userID, id)
}

func (d *store) FindMemorySources(ctx context.Context, userID string, ranges []agentmem.ThreadRange) (_ []agentmem.MemorySource, err error) {
	ctx, span := d.start(ctx, "find_memory_sources")
	defer d.end(span, "find_memory_sources", time.Now(), &err)
	return d.next.FindMemorySources(ctx, userID, ranges)
}

func (d *store) FindMessages(ctx context.Context, userID, threadID string, filter agentmem.MessageFilter) (_ []*agentmem.Message, _ string, err error) {
	ctx, span := d.start(ctx, "find_messages")
	defer d.end(span, "find_messages", time.Now(), &err)
	return d.next.FindMessages(ctx, userID, threadID, filter)
}

func (d *store) FindNotes(ctx context.Context, userID, agentID string) (_ *agentmem.Notes, err error) {
	ctx, span := d.start(ctx, "find_notes")
	defer d.end(span, "find_notes", time.Now(), &err)
	return d.next.FindNotes(ctx, userID, agentID)
}

func (d *store) FindNotesHistory(ctx context.Context, userID, agentID string, f agentmem.NotesFilter) (_ []*agentmem.Notes, _ string, err error) {
	ctx, span := d.start(ctx, "find_notes_history")
	defer d.end(span, "find_notes_history", time.Now(), &err)
	return d.next.FindNotesHistory(ctx, userID, agentID, f)
}

func (d *store) FindProfile(ctx context.Context, userID string) (_ *agentmem.Profile, err error) {
	ctx, span := d.start(ctx, "find_profile")
	defer d.end(span, "find_profile", time.Now(), &err)
	return d.next.FindProfile(ctx, userID)
}

func (d *store) FindProfiles(ctx context.Context, userID string, limit int, cursor string) (_ []*agentmem.Profile, _ string, err error) {
	ctx, span := d.start(ctx, "find_profiles")
	defer d.end(span, "find_profiles", time.Now(), &err)
	return d.next.FindProfiles(ctx, userID, limit, cursor)
}

func (d *store) FindReflection(ctx context.Context, userID, threadID string) (_ *agentmem.Reflection, err error) {
	ctx, span := d.start(ctx, "find_reflection")
	defer d.end(span, "find_reflection", time.Now(), &err)
	return d.next.FindReflection(ctx, userID, threadID)
}

func (d *store) FindReflections(ctx context.Context, userID string, status string, limit int) (_ []*agentmem.Reflection, err error) {
	ctx, span := d.start(ctx, "find_reflections")
	defer d.end(span, "find_reflections", time.Now(), &err)
	return d.next.FindReflections(ctx, userID, status, limit)
}

func (d *store) FindSession(ctx context.Context, userID, agentID string) (_ *agentmem.Session, err error) {
	ctx, span := d.start(ctx, "find_session")
	defer d.end(span, "find_session", time.Now(), &err)
	return d.next.FindSession(ctx, userID, agentID)
}

func (d *store) FindSummary(ctx context.Context, userID, threadID string) (_ *agentmem.Summary, err error) {
	ctx, span := d.start(ctx, "find_summary")
	defer d.end(span, "find_summary", time.Now(), &err)
	return d.next.FindSummary(ctx, userID, threadID)
}

func (d *store) FindThreadByID(ctx context.Context, userID, id string) (_ *agentmem.Thread, err error) {
	ctx, span := d.start(ctx, "find_thread_by_id")
	defer d.end(span, "find_thread_by_id", time.Now(), &err)
	return d.next.FindThreadByID(ctx, userID, id)
}

func (d *store) FindThreadReflections(ctx context.Context, userID string, threadIDs []string) (_ []*agentmem.Reflection, err error) {
	ctx, span := d.start(ctx, "find_thread_reflections")
	defer d.end(span, "find_thread_reflections", time.Now(), &err)
	return d.next.FindThreadReflections(ctx, userID, threadIDs)
}

func (d *store) FindThreads(ctx context.Context, userID string, filter agentmem.ThreadFilter) (_ []*agentmem.Thread, _ string, err error) {
	ctx, span := d.start(ctx, "find_threads")
	defer d.end(span, "find_threads", time.Now(), &err)
	return d.next.FindThreads(ctx, userID, filter)
}

func (d *store) FindUserIDs(ctx context.Context, after string, limit int) (_ []string, err error) {
	ctx, span := d.start(ctx, "find_user_ids")
	defer d.end(span, "find_user_ids", time.Now(), &err)
	return d.next.FindUserIDs(ctx, after, limit)
}

func (d *store) FindUsers(ctx context.Context, f agentmem.UserFilter) (_ []*agentmem.UserSummary, _ string, err error) {
	ctx, span := d.start(ctx, "find_users")
	defer d.end(span, "find_users", time.Now(), &err)
	return d.next.FindUsers(ctx, f)
}

func (d *store) FindVectors(ctx context.Context, userID, space string, scopes []string) (_ []agentmem.Vector, err error) {
	ctx, span := d.start(ctx, "find_vectors")
	defer d.end(span, "find_vectors", time.Now(), &err)
	return d.next.FindVectors(ctx, userID, space, scopes)
}

func (d *store) FindVectorsSince(ctx context.Context, userID, space string, seq int64) (_ []agentmem.Vector, err error) {
	ctx, span := d.start(ctx, "find_vectors_since")
	defer d.end(span, "find_vectors_since", time.Now(), &err)
	return d.next.FindVectorsSince(ctx, userID, space, seq)
}

func (d *store) ImportThread(ctx context.Context, userID string, x *agentmem.ThreadExport) (_ *agentmem.Thread, err error) {
	ctx, span := d.start(ctx, "import_thread")
	defer d.end(span, "import_thread", time.Now(), &err)
	return d.next.ImportThread(ctx, userID, x)
}

func (d *store) ImportUser(ctx context.Context, userID string, x *agentmem.UserExport, opt agentmem.ImportOptions) (_ *agentmem.ImportResult, err error) {
	ctx, span := d.start(ctx, "import_user")
	defer d.end(span, "import_user", time.Now(), &err)
	return d.next.ImportUser(ctx, userID, x, opt)
}

func (d *store) InvalidateMemory(ctx context.Context, userID, id string, supersededBy string, reason string) (_ *agentmem.Memory, err error) {
	ctx, span := d.start(ctx, "invalidate_memory")
	defer d.end(span, "invalidate_memory", time.Now(), &err)
	return d.next.InvalidateMemory(ctx, userID, id, supersededBy, reason)
}

func (d *store) LastChunkEnd(ctx context.Context, userID, threadID string) (_ int64, err error) {
	ctx, span := d.start(ctx, "last_chunk_end")
	defer d.end(span, "last_chunk_end", time.Now(), &err)
	return d.next.LastChunkEnd(ctx, userID, threadID)
}

func (d *store) OpenSession(ctx context.Context, userID, agentID string, t *agentmem.Thread) (_ *agentmem.Session, _ bool, err error) {
	ctx, span := d.start(ctx, "open_session")
	defer d.end(span, "open_session", time.Now(), &err)
	return d.next.OpenSession(ctx, userID, agentID, t)
}

func (d *store) Ping(ctx context.Context) (err error) {
	ctx, span := d.start(ctx, "ping")
	defer d.end(span, "ping", time.Now(), &err)
	return d.next.Ping(ctx)
}

func (d *store) PutChunks(ctx context.Context, userID string, cs []*agentmem.Chunk) (err error) {
	ctx, span := d.start(ctx, "put_chunks")
	defer d.end(span, "put_chunks", time.Now(), &err)
	return d.next.PutChunks(ctx, userID, cs)
}

func (d *store) PutEntities(ctx context.Context, userID string, es []*agentmem.Entity) (err error) {
	ctx, span := d.start(ctx, "put_entities")
	defer d.end(span, "put_entities", time.Now(), &err)
	return d.next.PutEntities(ctx, userID, es)
}

func (d *store) PutEntityRefs(ctx context.Context, userID string, refs []*agentmem.EntityRef) (err error) {
	ctx, span := d.start(ctx, "put_entity_refs")
	defer d.end(span, "put_entity_refs", time.Now(), &err)
	return d.next.PutEntityRefs(ctx, userID, refs)
}

func (d *store) PutMessageWindows(ctx context.Context, userID, threadID string, ws []agentmem.MessageWindow) (err error) {
	ctx, span := d.start(ctx, "put_message_windows")
	defer d.end(span, "put_message_windows", time.Now(), &err)
	return d.next.PutMessageWindows(ctx, userID, threadID, ws)
}

func (d *store) PutNotes(ctx context.Context, userID, agentID string, op agentmem.NotesOp) (_ *agentmem.Notes, err error) {
	ctx, span := d.start(ctx, "put_notes")
	defer d.end(span, "put_notes", time.Now(), &err)
	return d.next.PutNotes(ctx, userID, agentID, op)
}

func (d *store) PutProfile(ctx context.Context, p *agentmem.Profile, after int, processed []string) (err error) {
	ctx, span := d.start(ctx, "put_profile")
	defer d.end(span, "put_profile", time.Now(), &err)
	return d.next.PutProfile(ctx, p, after, processed)
}

func (d *store) PutReflections(ctx context.Context, userID string, rs []*agentmem.Reflection, insights []*agentmem.Memory) (err error) {
	ctx, span := d.start(ctx, "put_reflections")
	defer d.end(span, "put_reflections", time.Now(), &err)
	return d.next.PutReflections(ctx, userID, rs, insights)
}

func (d *store) PutSummary(ctx context.Context, s *agentmem.Summary) (_ *agentmem.Summary, err error) {
	ctx, span := d.start(ctx, "put_summary")
	defer d.end(span, "put_summary", time.Now(), &err)
	return d.next.PutSummary(ctx, s)
}

func (d *store) PutVectors(ctx context.Context, userID string, vs []agentmem.Vector) (err error) {
	ctx, span := d.start(ctx, "put_vectors")
	defer d.end(span, "put_vectors", time.Now(), &err)
	return d.next.PutVectors(ctx, userID, vs)
}

func (d *store) ReleaseJob(ctx context.Context, userID, id string, owner string) (err error) {
	ctx, span := d.start(ctx, "release_job")
	defer d.end(span, "release_job", time.Now(), &err)
	return d.next.ReleaseJob(ctx, userID, id, owner)
}

func (d *store) RestoreThread(ctx context.Context, userID, id string) (_ *agentmem.Thread, err error) {
	ctx, span := d.start(ctx, "restore_thread")
	defer d.end(span, "restore_thread", time.Now(), &err)
	return d.next.RestoreThread(ctx, userID, id)
}

func (d *store) RetryJob(ctx context.Context, userID, id string) (_ *agentmem.Job, err error) {
	ctx, span := d.start(ctx, "retry_job")
	defer d.end(span, "retry_job", time.Now(), &err)
	return d.next.RetryJob(ctx, userID, id)
}

func (d *store) RevokeKey(ctx context.Context, id string) (_ *agentmem.APIKey, err error) {
	ctx, span := d.start(ctx, "revoke_key")
	defer d.end(span, "revoke_key", time.Now(), &err)
	return d.next.RevokeKey(ctx, id)
}

func (d *store) SearchText(ctx context.Context, userID string, q agentmem.TextQuery) (_ []agentmem.TextHit, err error) {
	ctx, span := d.start(ctx, "search_text")
	defer d.end(span, "search_text", time.Now(), &err)
	return d.next.SearchText(ctx, userID, q)
}

func (d *store) SetSession(ctx context.Context, userID, agentID string, threadID string) (_ *agentmem.Session, err error) {
	ctx, span := d.start(ctx, "set_session")
	defer d.end(span, "set_session", time.Now(), &err)
	return d.next.SetSession(ctx, userID, agentID, threadID)
}

func (d *store) Stats(ctx context.Context) (_ *agentmem.Stats, err error) {
	ctx, span := d.start(ctx, "stats")
	defer d.end(span, "stats", time.Now(), &err)
	return d.next.Stats(ctx)
}

func (d *store) UpdateEntity(ctx context.Context, userID, id string, upd agentmem.EntityUpdate) (_ *agentmem.Entity, err error) {
	ctx, span := d.start(ctx, "update_entity")
	defer d.end(span, "update_entity", time.Now(), &err)
	return d.next.UpdateEntity(ctx, userID, id, upd)
}

func (d *store) UpdateMemory(ctx context.Context, userID, id string, upd agentmem.MemoryUpdate) (_ *agentmem.Memory, err error) {
	ctx, span := d.start(ctx, "update_memory")
	defer d.end(span, "update_memory", time.Now(), &err)
	return d.next.UpdateMemory(ctx, userID, id, upd)
}

func (d *store) UpdateThread(ctx context.Context, userID, id string, upd agentmem.ThreadUpdate) (_ *agentmem.Thread, err error) {
	ctx, span := d.start(ctx, "update_thread")
	defer d.end(span, "update_thread", time.Now(), &err)
	return d.next.UpdateThread(ctx, userID, id, upd)
}

func (d *store) VectorSpaces(ctx context.Context, userID string) (_ []string, err error) {
	ctx, span := d.start(ctx, "vector_spaces")
	defer d.end(span, "vector_spaces", time.Now(), &err)
	return d.next.VectorSpaces(ctx, userID)
}

func (d *store) VectorsState(ctx context.Context, userID, space string) (_ agentmem.VectorsState, err error) {
	ctx, span := d.start(ctx, "vectors_state")
	defer d.end(span, "vectors_state", time.Now(), &err)
	return d.next.VectorsState(ctx, userID, space)
}

func (d *store) VectorsVersion(ctx context.Context, userID, space string) (_ string, err error) {
	ctx, span := d.start(ctx, "vectors_version")
	defer d.end(span, "vectors_version", time.Now(), &err)
	return d.next.VectorsVersion(ctx, userID, space)
}

func (d *store) WriteMemories(ctx context.Context, userID string, ws []agentmem.MemoryWrite) (_ []*agentmem.Memory, err error) {
	ctx, span := d.start(ctx, "write_memories")
	defer d.end(span, "write_memories", time.Now(), &err)
	return d.next.WriteMemories(ctx, userID, ws)
}
