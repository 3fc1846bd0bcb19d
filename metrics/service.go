package metrics

import (
	"context"
	"io"
	"time"

	"github.com/agentmem/agentmem"
	"go.opentelemetry.io/otel/trace"
)

// Service returns svc with every use case traced in a span service.OP,
// op being the method's name in snake case (append_messages), under the
// span of its caller's context if any (the HTTP request's): the store's
// and the models' calls it makes are its children. The span of a call
// that fails is marked so with the error's agentmem code. A nil tp
// returns svc unchanged.
//
// The decorator wraps each method of agentmem.Service by name (it does
// not embed the interface, so a method added to agentmem.Service fails to
// compile here until it is traced).
func Service(svc agentmem.Service, tp trace.TracerProvider) agentmem.Service {
	if tp == nil {
		return svc
	}
	return &service{next: svc, tracer: tracer(tp)}
}

var _ agentmem.Service = (*service)(nil)

// service is the decorator of Service.
type service struct {
	next   agentmem.Service
	tracer trace.Tracer
}

func (d *service) start(ctx context.Context, op string) (context.Context, trace.Span) {
	return d.tracer.Start(ctx, "service."+op)
}

// end ends the span of a call; it is deferred, so it reads the call's
// error through a pointer to the named result.
func (d *service) end(span trace.Span, err *error) { endSpan(span, *err) }

// The methods of agentmem.Service, in alphabetical order.

func (d *service) AppendMessages(ctx context.Context, userID, threadID string, msgs []*agentmem.Message, idempotencyKey string) (_ []*agentmem.Message, err error) {
	ctx, span := d.start(ctx, "append_messages")
	defer d.end(span, &err)
	return d.next.AppendMessages(ctx, userID, threadID, msgs, idempotencyKey)
}

func (d *service) BeginTurn(ctx context.Context, userID string, req agentmem.TurnRequest) (_ *agentmem.Turn, err error) {
	ctx, span := d.start(ctx, "begin_turn")
	defer d.end(span, &err)
	return d.next.BeginTurn(ctx, userID, req)
}

func (d *service) Ready(ctx context.Context) (err error) {
	ctx, span := d.start(ctx, "ready")
	defer d.end(span, &err)
	return d.next.Ready(ctx)
}

func (d *service) BuildContext(ctx context.Context, userID, threadID string, req agentmem.ContextRequest) (_ *agentmem.Context, err error) {
	ctx, span := d.start(ctx, "build_context")
	defer d.end(span, &err)
	return d.next.BuildContext(ctx, userID, threadID, req)
}

func (d *service) Cleanup(ctx context.Context, cutoff time.Time, dryRun bool) (_ *agentmem.CleanupResult, err error) {
	ctx, span := d.start(ctx, "cleanup")
	defer d.end(span, &err)
	return d.next.Cleanup(ctx, cutoff, dryRun)
}

func (d *service) CreateElement(ctx context.Context, userID, threadID string, e *agentmem.Element) (err error) {
	ctx, span := d.start(ctx, "create_element")
	defer d.end(span, &err)
	return d.next.CreateElement(ctx, userID, threadID, e)
}

func (d *service) CreateKey(ctx context.Context, in agentmem.KeyInput) (_ *agentmem.NewKey, err error) {
	ctx, span := d.start(ctx, "create_key")
	defer d.end(span, &err)
	return d.next.CreateKey(ctx, in)
}

func (d *service) CreateMemory(ctx context.Context, userID string, in agentmem.MemoryInput) (_ *agentmem.Memory, err error) {
	ctx, span := d.start(ctx, "create_memory")
	defer d.end(span, &err)
	return d.next.CreateMemory(ctx, userID, in)
}

func (d *service) CreateThread(ctx context.Context, userID string, t *agentmem.Thread) (err error) {
	ctx, span := d.start(ctx, "create_thread")
	defer d.end(span, &err)
	return d.next.CreateThread(ctx, userID, t)
}

func (d *service) DeleteEntity(ctx context.Context, userID, id string) (err error) {
	ctx, span := d.start(ctx, "delete_entity")
	defer d.end(span, &err)
	return d.next.DeleteEntity(ctx, userID, id)
}

func (d *service) DeleteMemory(ctx context.Context, userID, id string) (err error) {
	ctx, span := d.start(ctx, "delete_memory")
	defer d.end(span, &err)
	return d.next.DeleteMemory(ctx, userID, id)
}

func (d *service) DeleteThread(ctx context.Context, userID, threadID string, permanent bool) (err error) {
	ctx, span := d.start(ctx, "delete_thread")
	defer d.end(span, &err)
	return d.next.DeleteThread(ctx, userID, threadID, permanent)
}

func (d *service) EditNotes(ctx context.Context, userID, agentID string, op agentmem.NotesOp) (_ *agentmem.Notes, err error) {
	ctx, span := d.start(ctx, "edit_notes")
	defer d.end(span, &err)
	return d.next.EditNotes(ctx, userID, agentID, op)
}

func (d *service) EndThread(ctx context.Context, userID, threadID string) (_ *agentmem.Thread, err error) {
	ctx, span := d.start(ctx, "end_thread")
	defer d.end(span, &err)
	return d.next.EndThread(ctx, userID, threadID)
}

func (d *service) EraseUser(ctx context.Context, userID string) (_ agentmem.Counts, err error) {
	ctx, span := d.start(ctx, "erase_user")
	defer d.end(span, &err)
	return d.next.EraseUser(ctx, userID)
}

func (d *service) ExportThread(ctx context.Context, userID, threadID string) (_ *agentmem.ThreadExport, err error) {
	ctx, span := d.start(ctx, "export_thread")
	defer d.end(span, &err)
	return d.next.ExportThread(ctx, userID, threadID)
}

func (d *service) ExportUser(ctx context.Context, userID string, opt agentmem.ExportOptions, w io.Writer) (err error) {
	ctx, span := d.start(ctx, "export_user")
	defer d.end(span, &err)
	return d.next.ExportUser(ctx, userID, opt, w)
}

func (d *service) Facts(ctx context.Context, userID string, req agentmem.SearchRequest) (_ *agentmem.FactsResponse, err error) {
	ctx, span := d.start(ctx, "facts")
	defer d.end(span, &err)
	return d.next.Facts(ctx, userID, req)
}

func (d *service) FindAuditEvents(ctx context.Context, f agentmem.AuditFilter) (_ []*agentmem.AuditEvent, _ string, err error) {
	ctx, span := d.start(ctx, "find_audit_events")
	defer d.end(span, &err)
	return d.next.FindAuditEvents(ctx, f)
}

func (d *service) FindElements(ctx context.Context, userID, threadID string, f agentmem.ElementFilter) (_ []*agentmem.Element, _ string, err error) {
	ctx, span := d.start(ctx, "find_elements")
	defer d.end(span, &err)
	return d.next.FindElements(ctx, userID, threadID, f)
}

func (d *service) FindEntities(ctx context.Context, userID string, f agentmem.EntityFilter) (_ []*agentmem.Entity, _ string, err error) {
	ctx, span := d.start(ctx, "find_entities")
	defer d.end(span, &err)
	return d.next.FindEntities(ctx, userID, f)
}

func (d *service) FindEntityByID(ctx context.Context, userID, id string) (_ *agentmem.Entity, err error) {
	ctx, span := d.start(ctx, "find_entity_by_id")
	defer d.end(span, &err)
	return d.next.FindEntityByID(ctx, userID, id)
}

func (d *service) FindEntityRefs(ctx context.Context, userID string, f agentmem.EntityRefFilter) (_ []*agentmem.EntityRef, _ string, err error) {
	ctx, span := d.start(ctx, "find_entity_refs")
	defer d.end(span, &err)
	return d.next.FindEntityRefs(ctx, userID, f)
}

func (d *service) FindJobs(ctx context.Context, f agentmem.JobFilter) (_ []*agentmem.Job, _ string, err error) {
	ctx, span := d.start(ctx, "find_jobs")
	defer d.end(span, &err)
	return d.next.FindJobs(ctx, f)
}

func (d *service) FindKeys(ctx context.Context, f agentmem.KeyFilter) (_ []*agentmem.APIKey, _ string, err error) {
	ctx, span := d.start(ctx, "find_keys")
	defer d.end(span, &err)
	return d.next.FindKeys(ctx, f)
}

func (d *service) FindMemories(ctx context.Context, userID string, f agentmem.MemoryFilter) (_ []*agentmem.Memory, _ string, err error) {
	ctx, span := d.start(ctx, "find_memories")
	defer d.end(span, &err)
	return d.next.FindMemories(ctx, userID, f)
}

func (d *service) FindMemoryByID(ctx context.Context, userID, id string) (_ *agentmem.Memory, err error) {
	ctx, span := d.start(ctx, "find_memory_by_id")
	defer d.end(span, &err)
	return d.next.FindMemoryByID(ctx, userID, id)
}

func (d *service) FindMemoryHistory(ctx context.Context, userID, id string) (_ []*agentmem.MemoryChange, err error) {
	ctx, span := d.start(ctx, "find_memory_history")
	defer d.end(span, &err)
	return d.next.FindMemoryHistory(ctx, userID, id)
}

func (d *service) FindMessages(ctx context.Context, userID, threadID string, f agentmem.MessageFilter) (_ []*agentmem.Message, _ string, err error) {
	ctx, span := d.start(ctx, "find_messages")
	defer d.end(span, &err)
	return d.next.FindMessages(ctx, userID, threadID, f)
}

func (d *service) FindNotes(ctx context.Context, userID, agentID string) (_ *agentmem.Notes, err error) {
	ctx, span := d.start(ctx, "find_notes")
	defer d.end(span, &err)
	return d.next.FindNotes(ctx, userID, agentID)
}

func (d *service) FindNotesHistory(ctx context.Context, userID, agentID string, f agentmem.NotesFilter) (_ []*agentmem.Notes, _ string, err error) {
	ctx, span := d.start(ctx, "find_notes_history")
	defer d.end(span, &err)
	return d.next.FindNotesHistory(ctx, userID, agentID, f)
}

func (d *service) FindProfile(ctx context.Context, userID string) (_ *agentmem.Profile, err error) {
	ctx, span := d.start(ctx, "find_profile")
	defer d.end(span, &err)
	return d.next.FindProfile(ctx, userID)
}

func (d *service) FindProfiles(ctx context.Context, userID string, limit int, cursor string) (_ []*agentmem.Profile, _ string, err error) {
	ctx, span := d.start(ctx, "find_profiles")
	defer d.end(span, &err)
	return d.next.FindProfiles(ctx, userID, limit, cursor)
}

func (d *service) FindReflection(ctx context.Context, userID, threadID string) (_ *agentmem.Reflection, err error) {
	ctx, span := d.start(ctx, "find_reflection")
	defer d.end(span, &err)
	return d.next.FindReflection(ctx, userID, threadID)
}

func (d *service) FindSession(ctx context.Context, userID, agentID string) (_ *agentmem.Session, err error) {
	ctx, span := d.start(ctx, "find_session")
	defer d.end(span, &err)
	return d.next.FindSession(ctx, userID, agentID)
}

func (d *service) FindThreadByID(ctx context.Context, userID, threadID string) (_ *agentmem.Thread, err error) {
	ctx, span := d.start(ctx, "find_thread_by_id")
	defer d.end(span, &err)
	return d.next.FindThreadByID(ctx, userID, threadID)
}

func (d *service) FindThreads(ctx context.Context, userID string, f agentmem.ThreadFilter) (_ []*agentmem.Thread, _ string, err error) {
	ctx, span := d.start(ctx, "find_threads")
	defer d.end(span, &err)
	return d.next.FindThreads(ctx, userID, f)
}

func (d *service) FindUserJobs(ctx context.Context, userID string, f agentmem.JobFilter) (_ []*agentmem.Job, _ string, err error) {
	ctx, span := d.start(ctx, "find_user_jobs")
	defer d.end(span, &err)
	return d.next.FindUserJobs(ctx, userID, f)
}

func (d *service) FindUsers(ctx context.Context, f agentmem.UserFilter) (_ []*agentmem.UserSummary, _ string, err error) {
	ctx, span := d.start(ctx, "find_users")
	defer d.end(span, &err)
	return d.next.FindUsers(ctx, f)
}

func (d *service) ImportThread(ctx context.Context, userID string, x *agentmem.ThreadExport) (_ *agentmem.Thread, err error) {
	ctx, span := d.start(ctx, "import_thread")
	defer d.end(span, &err)
	return d.next.ImportThread(ctx, userID, x)
}

func (d *service) ImportUser(ctx context.Context, userID string, x *agentmem.UserExport, opt agentmem.ImportOptions) (_ *agentmem.ImportResult, err error) {
	ctx, span := d.start(ctx, "import_user")
	defer d.end(span, &err)
	return d.next.ImportUser(ctx, userID, x, opt)
}

func (d *service) InvalidateMemory(ctx context.Context, userID, id string, inv agentmem.MemoryInvalidation) (_ *agentmem.Memory, err error) {
	ctx, span := d.start(ctx, "invalidate_memory")
	defer d.end(span, &err)
	return d.next.InvalidateMemory(ctx, userID, id, inv)
}

func (d *service) OpenSession(ctx context.Context, userID, agentID string) (_ *agentmem.Session, _ bool, err error) {
	ctx, span := d.start(ctx, "open_session")
	defer d.end(span, &err)
	return d.next.OpenSession(ctx, userID, agentID)
}

func (d *service) PutEntity(ctx context.Context, userID string, in agentmem.EntityInput) (_ *agentmem.Entity, err error) {
	ctx, span := d.start(ctx, "put_entity")
	defer d.end(span, &err)
	return d.next.PutEntity(ctx, userID, in)
}

func (d *service) RefreshProfile(ctx context.Context, userID string) (_ *agentmem.Profile, err error) {
	ctx, span := d.start(ctx, "refresh_profile")
	defer d.end(span, &err)
	return d.next.RefreshProfile(ctx, userID)
}

func (d *service) RestoreThread(ctx context.Context, userID, threadID string) (_ *agentmem.Thread, err error) {
	ctx, span := d.start(ctx, "restore_thread")
	defer d.end(span, &err)
	return d.next.RestoreThread(ctx, userID, threadID)
}

func (d *service) RetryJob(ctx context.Context, userID, id string) (_ *agentmem.Job, err error) {
	ctx, span := d.start(ctx, "retry_job")
	defer d.end(span, &err)
	return d.next.RetryJob(ctx, userID, id)
}

func (d *service) RetryReflection(ctx context.Context, userID, threadID string) (_ *agentmem.Reflection, err error) {
	ctx, span := d.start(ctx, "retry_reflection")
	defer d.end(span, &err)
	return d.next.RetryReflection(ctx, userID, threadID)
}

func (d *service) RevokeKey(ctx context.Context, id string) (_ *agentmem.APIKey, err error) {
	ctx, span := d.start(ctx, "revoke_key")
	defer d.end(span, &err)
	return d.next.RevokeKey(ctx, id)
}

func (d *service) Search(ctx context.Context, userID string, req agentmem.SearchRequest) (_ *agentmem.SearchResponse, err error) {
	ctx, span := d.start(ctx, "search")
	defer d.end(span, &err)
	return d.next.Search(ctx, userID, req)
}

func (d *service) SetSession(ctx context.Context, userID, agentID string, threadID string) (_ *agentmem.Session, err error) {
	ctx, span := d.start(ctx, "set_session")
	defer d.end(span, &err)
	return d.next.SetSession(ctx, userID, agentID, threadID)
}

func (d *service) Stats(ctx context.Context) (_ *agentmem.Stats, err error) {
	ctx, span := d.start(ctx, "stats")
	defer d.end(span, &err)
	return d.next.Stats(ctx)
}

func (d *service) UpdateEntity(ctx context.Context, userID, id string, upd agentmem.EntityUpdate) (_ *agentmem.Entity, err error) {
	ctx, span := d.start(ctx, "update_entity")
	defer d.end(span, &err)
	return d.next.UpdateEntity(ctx, userID, id, upd)
}

func (d *service) UpdateMemory(ctx context.Context, userID, id string, upd agentmem.MemoryUpdate) (_ *agentmem.Memory, err error) {
	ctx, span := d.start(ctx, "update_memory")
	defer d.end(span, &err)
	return d.next.UpdateMemory(ctx, userID, id, upd)
}

func (d *service) UpdateThread(ctx context.Context, userID, threadID string, upd agentmem.ThreadUpdate) (_ *agentmem.Thread, err error) {
	ctx, span := d.start(ctx, "update_thread")
	defer d.end(span, &err)
	return d.next.UpdateThread(ctx, userID, threadID, upd)
}

func (d *service) WhoAmI(ctx context.Context) (_ *agentmem.Caller, err error) {
	ctx, span := d.start(ctx, "who_am_i")
	defer d.end(span, &err)
	return d.next.WhoAmI(ctx)
}
