package agentmem

import (
	"context"
	"encoding/json"
	"io"
	"time"
)

// Service is every use case of agentmem, once: what a user asks for, start
// to finish (append and queue indexing, end a thread and reflect on it,
// create a memory and embed it, export, erase…). The core package
// implements it in process; the client package implements it over the
// REST API; the faces (REST, MCP, the OpenAI-compatible proxy, the web UI,
// the command line, the Go library) decode, call one method, encode.
//
// Whose data it is comes from two places: the user ID argument, as the
// caller names the user, and the identity in ctx (NewContextWithIdentity),
// which says whom the caller may reach. An admin reaches every user, and a
// tenant's user as "tenant:TENANT/user:USER"; a tenant reaches its own
// users, by their names within the tenant; a user's identity reaches that
// user only. Any other user answers ENOTFOUND, exactly as a user who does
// not exist, so that IDs cannot be probed. A ctx without identity is the
// in-process owner of the store (the Go library, the command line) and
// reaches everything, as an admin does. User IDs in results and errors
// are given as the caller names them.
type Service interface {
	ThreadService
	MemoryService
	KnowledgeService
	UserService
	AdminService
}

// UserService is the use cases of a user's data as a whole: export and
// import, the user's background jobs; and who the caller is. Erasure is
// an operator's (AdminService.EraseUser).
type UserService interface {
	// WhoAmI describes the identity of ctx: its kind, its user and
	// tenant, how it was established, and the user of a request that
	// names none (see Caller). Every caller may ask; a ctx without
	// identity (in process) is the owner, an admin.
	WhoAmI(ctx context.Context) (*Caller, error)

	// ExportUser writes everything of the user to w (agentmem.UserExport
	// as JSON, or Markdown to read), streamed thread by thread.
	ExportUser(ctx context.Context, userID string, opt ExportOptions, w io.Writer) error
	// ImportUser restores an export as the user's, all of it or nothing
	// (see ImportStore.ImportUser), then queues the indexing of what it
	// imported.
	ImportUser(ctx context.Context, userID string, x *UserExport, opt ImportOptions) (*ImportResult, error)

	// FindUserJobs lists the user's background jobs, newest updated
	// first (as AdminService.FindJobs, f.UserID being the user's,
	// whatever f says). Returns EINVALID for a bad filter.
	FindUserJobs(ctx context.Context, userID string, f JobFilter) ([]*Job, string, error)
	// RetryJob queues a dead job of the user again (see
	// JobStore.RetryJob) and returns it. Returns ENOTFOUND, and ECONFLICT
	// for a job that is not dead or whose kind and key have another job
	// queued or running.
	RetryJob(ctx context.Context, userID, id string) (*Job, error)
}

// ThreadService is the use cases of conversations: threads, their
// messages and elements, the active session of a user and agent, the
// context of the next model call, and export and import.
type ThreadService interface {
	// CreateThread creates a thread of the user from t's ID (optional),
	// AgentID, Title, Metadata and Tags, and fills in the rest of t.
	CreateThread(ctx context.Context, userID string, t *Thread) error
	// FindThreadByID returns a thread. Returns ENOTFOUND.
	FindThreadByID(ctx context.Context, userID, threadID string) (*Thread, error)
	// FindThreads lists the user's threads, newest updated first.
	FindThreads(ctx context.Context, userID string, f ThreadFilter) ([]*Thread, string, error)
	// UpdateThread applies upd. Ending a thread through it (Status
	// "ended") is EndThread's use case.
	UpdateThread(ctx context.Context, userID, threadID string, upd ThreadUpdate) (*Thread, error)
	// DeleteThread soft-deletes a thread, or erases it with permanent
	// (recorded in the audit log). A soft-deleted thread is listed by
	// FindThreads with ThreadFilter.Deleted, holds its ID, and comes back
	// with RestoreThread.
	DeleteThread(ctx context.Context, userID, threadID string, permanent bool) error
	// RestoreThread brings back a soft-deleted thread (see
	// ThreadStore.RestoreThread); a thread that is not deleted is returned
	// as it is. Returns ENOTFOUND.
	RestoreThread(ctx context.Context, userID, threadID string) (*Thread, error)
	// EndThread ends a thread and queues its last index flush and its
	// reflection. Idempotent: ending an ended thread with no new turns
	// since it ended queues nothing.
	EndThread(ctx context.Context, userID, threadID string) (*Thread, error)

	// AppendMessages appends a batch atomically, with its index job in the
	// same transaction; idempotencyKey ("" for none) makes a retry safe.
	AppendMessages(ctx context.Context, userID, threadID string, msgs []*Message, idempotencyKey string) ([]*Message, error)
	// FindMessages lists a thread's messages in seq order.
	FindMessages(ctx context.Context, userID, threadID string, f MessageFilter) ([]*Message, string, error)
	// CreateElement attaches e to the thread (or one of its messages).
	CreateElement(ctx context.Context, userID, threadID string, e *Element) error
	// FindElements lists a thread's elements.
	FindElements(ctx context.Context, userID, threadID string, f ElementFilter) ([]*Element, string, error)

	// FindSession returns the active session of the user and agent.
	// Returns ENOTFOUND when there is none.
	FindSession(ctx context.Context, userID, agentID string) (*Session, error)
	// OpenSession returns the active session of the user and agent, and
	// creates it (a new thread of the agent) when there is none; created
	// says which. Concurrent calls make one thread.
	OpenSession(ctx context.Context, userID, agentID string) (s *Session, created bool, err error)
	// SetSession makes threadID the active thread of the user and agent.
	SetSession(ctx context.Context, userID, agentID, threadID string) (*Session, error)

	// BuildContext builds what a model should see of a thread for req.
	BuildContext(ctx context.Context, userID, threadID string, req ContextRequest) (*Context, error)
	// BeginTurn is the first half of a model call made through agentmem
	// (what the OpenAI-compatible proxy does): it finds the thread
	// (req.ThreadID, created when it does not exist unless req.Continue,
	// or the active session of the user and agent), stores the client's
	// messages that are not stored yet (a client that resends its whole
	// history stores only what follows the thread's newest messages), and
	// builds the context of req.Mode. The second half is AppendMessages
	// with the model's reply.
	BeginTurn(ctx context.Context, userID string, req TurnRequest) (*Turn, error)
	// FindReflection returns what reflection found in a thread, or where
	// it stands: pending, or failed once its job is a dead letter.
	FindReflection(ctx context.Context, userID, threadID string) (*Reflection, error)
	// RetryReflection queues again the reflection of an ended thread that
	// failed (or never was), and returns it, pending. Returns ENOTFOUND,
	// and ECONFLICT for an active thread or a reflection pending or done.
	RetryReflection(ctx context.Context, userID, threadID string) (*Reflection, error)

	// ExportThread reads a whole thread, its messages and elements.
	ExportThread(ctx context.Context, userID, threadID string) (*ThreadExport, error)
	// ImportThread stores x as a new thread of the user and queues its
	// indexing.
	ImportThread(ctx context.Context, userID string, x *ThreadExport) (*Thread, error)
}

// MemoryService is the use cases of long-term memory: memories, search
// and the facts a question asks for.
type MemoryService interface {
	// CreateMemory stores a memory given by a client, and its vector.
	CreateMemory(ctx context.Context, userID string, in MemoryInput) (*Memory, error)
	FindMemoryByID(ctx context.Context, userID, id string) (*Memory, error)
	FindMemories(ctx context.Context, userID string, f MemoryFilter) ([]*Memory, string, error)
	// UpdateMemory applies upd (a new version) and embeds a new text.
	UpdateMemory(ctx context.Context, userID, id string, upd MemoryUpdate) (*Memory, error)
	DeleteMemory(ctx context.Context, userID, id string) error
	// InvalidateMemory marks a memory as no longer holding, superseded by
	// inv.SupersededBy ("" for none) for inv.Reason (see
	// MemoryStore.InvalidateMemory); an invalidated memory is returned as
	// it is. Returns EINVALID for bad fields and ENOTFOUND.
	InvalidateMemory(ctx context.Context, userID, id string, inv MemoryInvalidation) (*Memory, error)
	FindMemoryHistory(ctx context.Context, userID, id string) ([]*MemoryChange, error)

	// Search runs a hybrid search over the user's data.
	Search(ctx context.Context, userID string, req SearchRequest) (*SearchResponse, error)
	// Facts answers req.Query from what search finds: with a model, an
	// answer citing the facts (and, when req names neither kinds nor
	// scopes, the model chooses where to search); without one, the facts.
	Facts(ctx context.Context, userID string, req SearchRequest) (*FactsResponse, error)
}

// KnowledgeService is the use cases of what agentmem distils about a
// user: the profile, the agents' notes, entities.
type KnowledgeService interface {
	// FindProfile returns the user's newest profile. Returns ENOTFOUND
	// when none was synthesised yet.
	FindProfile(ctx context.Context, userID string) (*Profile, error)
	FindProfiles(ctx context.Context, userID string, limit int, cursor string) ([]*Profile, string, error)
	// RefreshProfile synthesises the profile now.
	RefreshProfile(ctx context.Context, userID string) (*Profile, error)

	// FindNotes returns the agent's notes about the user (version 0 when
	// none were written).
	FindNotes(ctx context.Context, userID, agentID string) (*Notes, error)
	// EditNotes applies op (seed 003's operations; read returns the
	// notes as they are).
	EditNotes(ctx context.Context, userID, agentID string, op NotesOp) (*Notes, error)
	FindNotesHistory(ctx context.Context, userID, agentID string, f NotesFilter) ([]*Notes, string, error)

	// PutEntity creates an entity or merges it into the user's entity of
	// the same name, and records the reference in.ThreadID gives.
	PutEntity(ctx context.Context, userID string, in EntityInput) (*Entity, error)
	FindEntityByID(ctx context.Context, userID, id string) (*Entity, error)
	FindEntities(ctx context.Context, userID string, f EntityFilter) ([]*Entity, string, error)
	UpdateEntity(ctx context.Context, userID, id string, upd EntityUpdate) (*Entity, error)
	DeleteEntity(ctx context.Context, userID, id string) error
	FindEntityRefs(ctx context.Context, userID string, f EntityRefFilter) ([]*EntityRef, string, error)
}

// AdminService is the operators' use cases: erasing users, retention,
// keys, the audit log, jobs and counts. All but EraseUser need an admin
// identity (EFORBIDDEN otherwise); EraseUser needs an admin or the user's
// tenant.
type AdminService interface {
	// Ready returns nil when the service and its store answer (any
	// caller may ask: it tells nothing of anyone's data).
	Ready(ctx context.Context) error
	// EraseUser deletes everything of a user (recorded in the audit log).
	EraseUser(ctx context.Context, userID string) (Counts, error)
	// Cleanup deletes every user's threads not updated since cutoff (seed
	// 002's retention), or with dryRun counts what it would delete.
	Cleanup(ctx context.Context, cutoff time.Time, dryRun bool) (*CleanupResult, error)

	// CreateKey creates an API key; the token is in the answer, once.
	CreateKey(ctx context.Context, in KeyInput) (*NewKey, error)
	FindKeys(ctx context.Context, f KeyFilter) ([]*APIKey, string, error)
	RevokeKey(ctx context.Context, id string) (*APIKey, error)
	FindAuditEvents(ctx context.Context, f AuditFilter) ([]*AuditEvent, string, error)
	FindJobs(ctx context.Context, f JobFilter) ([]*Job, string, error)
	Stats(ctx context.Context) (*Stats, error)
	// FindUsers lists the users with their counts (see
	// UserStore.FindUsers), in the order of their stored IDs (a tenant's
	// users together); a tenant's user is named "tenant:TENANT/user:USER",
	// as an admin addresses them.
	FindUsers(ctx context.Context, f UserFilter) ([]*UserSummary, string, error)
}

// MemoryInput is a memory as a client creates it. Confidence defaults to
// 1 and Importance to 0.5; Source is "api".
type MemoryInput struct {
	ID         string          `json:"id,omitempty"`
	Kind       string          `json:"kind,omitempty"`
	Text       string          `json:"text"`
	Category   string          `json:"category,omitempty"`
	Confidence *float64        `json:"confidence,omitempty"`
	Importance *float64        `json:"importance,omitempty"`
	AgentID    string          `json:"agent_id,omitempty"`
	ThreadID   string          `json:"thread_id,omitempty"`
	SeqFrom    int64           `json:"seq_from,omitempty"`
	SeqTo      int64           `json:"seq_to,omitempty"`
	ValidFrom  time.Time       `json:"valid_from,omitzero"`
	Metadata   json.RawMessage `json:"metadata,omitempty"`
}

// Memory returns the memory in describes, of userID.
func (in MemoryInput) Memory(userID string) *Memory {
	m := &Memory{UserID: userID, ID: in.ID, Kind: in.Kind, Text: in.Text, Category: in.Category, Confidence: 1, Importance: 0.5,
		AgentID: in.AgentID, ThreadID: in.ThreadID, SeqFrom: in.SeqFrom, SeqTo: in.SeqTo, Source: SourceAPI,
		ValidFrom: in.ValidFrom, Metadata: in.Metadata}
	if in.Confidence != nil {
		m.Confidence = *in.Confidence
	}
	if in.Importance != nil {
		m.Importance = *in.Importance
	}
	return m
}

// EntityInput is an entity as a client puts it, with optionally the
// reference of a thread to it (ThreadID, and what was done: Action, at
// Seq, At).
type EntityInput struct {
	ID       string    `json:"id,omitempty"`
	Name     string    `json:"name"`
	Type     string    `json:"type,omitempty"`
	Aliases  []string  `json:"aliases,omitempty"`
	ThreadID string    `json:"thread_id,omitempty"`
	Action   string    `json:"action,omitempty"`
	Seq      int64     `json:"seq,omitempty"`
	At       time.Time `json:"at,omitzero"`
}

// KeyInput asks for an API key: its scope ("admin", "tenant:ID",
// "user:ID", "tenant:ID/user:ID"), a name, and how long it lasts ("90d";
// "never" or "" never expires; see ParseKeyLifetime).
type KeyInput struct {
	Scope     string `json:"scope"`
	Name      string `json:"name,omitempty"`
	ExpiresIn string `json:"expires_in,omitempty"`
}

// NewKey is a key just created, with its token (shown this once).
type NewKey struct {
	Key   *APIKey `json:"key"`
	Token string  `json:"token"`
}

// CleanupResult is what a clean-up deleted (or would delete).
type CleanupResult struct {
	Cutoff  time.Time `json:"cutoff"`
	DryRun  bool      `json:"dry_run"`
	Users   int       `json:"users"` // users who had threads to delete
	Deleted Counts    `json:"deleted"`
}

// ThreadOrSession returns threadID when it is not "", else the thread of
// the active session of the user and agentID, opened when there is none
// (ThreadService.OpenSession): the thread of a call that may name none
// (the tools, the MCP server's session start, the langchaingo adapter).
func ThreadOrSession(ctx context.Context, svc ThreadService, userID, agentID, threadID string) (string, error) {
	if threadID != "" {
		return threadID, nil
	}
	sess, _, err := svc.OpenSession(ctx, userID, agentID)
	if err != nil {
		return "", err
	}
	return sess.ThreadID, nil
}

// AppendBeginning appends msgs to the user's thread threadID as
// ThreadService.AppendMessages does, and first begins the thread (of
// agentID) when the user has none of that ID (see BeginThread): for
// clients that name a conversation before it exists (the tools, the
// langchaingo adapter, library mode's After). A soft-deleted thread keeps
// its ID: appending to it stays ENOTFOUND.
func AppendBeginning(ctx context.Context, svc ThreadService, userID, agentID, threadID string, msgs []*Message) ([]*Message, error) {
	stored, err := svc.AppendMessages(ctx, userID, threadID, msgs, "")
	if ErrorCode(err) != ENOTFOUND {
		return stored, err
	}
	if _, err := BeginThread(ctx, svc, userID, agentID, threadID); err != nil {
		return nil, err
	}
	return svc.AppendMessages(ctx, userID, threadID, msgs, "")
}

// BeginThread returns the user's thread threadID, created (of agentID)
// when the user has none of that ID; a concurrent call's creation is
// found, not an error. A soft-deleted thread keeps its ID: ENOTFOUND.
func BeginThread(ctx context.Context, svc ThreadService, userID, agentID, threadID string) (*Thread, error) {
	th, err := svc.FindThreadByID(ctx, userID, threadID)
	if ErrorCode(err) != ENOTFOUND {
		return th, err
	}
	th = &Thread{ID: threadID, AgentID: agentID}
	err = svc.CreateThread(ctx, userID, th)
	if ErrorCode(err) == ECONFLICT { // created meanwhile (or soft-deleted: ENOTFOUND again)
		return svc.FindThreadByID(ctx, userID, threadID)
	}
	return th, err
}
