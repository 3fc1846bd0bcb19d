package httpapi

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"github.com/agentmem/agentmem"
)

// The OpenAPI 3.1 document of the REST API (GET /openapi.json) is built
// from the code it describes, so that it cannot drift from it:
//
//   - the paths, methods and access of routes.go's table;
//   - for each route, what its handler declares next to its decode and
//     encode (an endpoint): the query parameters checkQuery lets through,
//     the request body's Go type, the status and Go type of each answer;
//   - the JSON Schemas of those types, by reflection (schemaGen);
//   - the errors writeError writes, and the statuses StatusOf gives them;
//   - from the table operations below, what reflection cannot know: each
//     route's operationId, tag, summary, and the error statuses of its own.
//
// TestOpenAPI_Routes fails on a route without an entry in operations (and
// on an entry without a route); the HTTP tests check every answer of the
// real handler against the document (see validate_test.go).

// endpoint is a route's handler with what it exchanges, as the OpenAPI
// document describes it: the query parameters it takes, the request
// headers it reads, the body it decodes and the answers it encodes.
// Handlers declare these next to the code that reads and writes them
// (handle and handleQuery return an endpoint).
type endpoint struct {
	http.Handler
	params    []string // as handleQuery takes them: a name ending in "*" may repeat
	headers   []string // request headers it reads
	body      *bodySpec
	responses []responseSpec
}

// bodySpec is the request body of an endpoint.
type bodySpec struct {
	typ      reflect.Type
	optional bool     // an empty body is allowed and takes the defaults
	required []string // the fields a body must have, of a handler's own type
}

// responseSpec is one answer of an endpoint.
type responseSpec struct {
	status    int
	typ       reflect.Type // of a JSON body; nil for none (or a schema)
	mediaType string       // application/json when empty
	schema    *jsonSchema  // a body that no Go type describes
}

// describe returns h as an endpoint, for a handler that handle did not
// make.
func describe(h http.Handler) *endpoint { return &endpoint{Handler: h} }

// reads declares the body the endpoint decodes, a JSON object of type t
// that must have the fields required (of a handler's own type: other
// types' come from fieldRules).
func (e *endpoint) reads(t reflect.Type, required ...string) *endpoint {
	e.body = &bodySpec{typ: t, required: required}
	return e
}

// readsOptional is reads for a body that may be left out.
func (e *endpoint) readsOptional(t reflect.Type) *endpoint {
	e.body = &bodySpec{typ: t, optional: true}
	return e
}

// readsHeader declares a request header the endpoint reads.
func (e *endpoint) readsHeader(name string) *endpoint {
	e.headers = append(e.headers, name)
	return e
}

// writes declares an answer with status and a JSON body of type t (none
// when t is nil).
func (e *endpoint) writes(status int, t reflect.Type) *endpoint {
	e.responses = append(e.responses, responseSpec{status: status, typ: t})
	return e
}

// writesMedia declares an answer with status and a body of mediaType.
func (e *endpoint) writesMedia(status int, mediaType string, s *jsonSchema) *endpoint {
	e.responses = append(e.responses, responseSpec{status: status, mediaType: mediaType, schema: s})
	return e
}

// pageOf is the type of a page of a list of T (see encodeList).
func pageOf[T any]() reflect.Type { return reflect.TypeFor[page[T]]() }

// operation is what the document says of a route that its code cannot:
// a stable operationId for client generators (unique, lowerCamelCase), a
// tag grouping it, a summary and a description, and the error statuses
// it answers beyond those of every route (see errorStatuses).
type operation struct {
	id, tag, summary, description string
	errors                        []int
	query                         map[string]queryParam // its own query parameters' descriptions, over queryParams
}

// operations has an entry for every route of routes.go with an endpoint.
var operations = map[string]operation{
	"GET /healthz":      {id: "getHealth", tag: "service", summary: "Liveness: answers while the process serves (no database call)."},
	"GET /readyz":       {id: "getReadiness", tag: "service", summary: "Readiness: 200 when the database answers, 503 otherwise."},
	"GET /openapi.json": {id: "getOpenAPI", tag: "service", summary: "This OpenAPI document."},
	"GET /metrics":      {id: "getMetrics", tag: "admin", summary: "Prometheus metrics (admin)."},
	"GET /v1/stats":     {id: "getStats", tag: "admin", summary: "Counts of users, threads and messages, and the store's size by table (admin)."},
	"GET /v1/audit":     {id: "listAuditEvents", tag: "admin", summary: "The audit log, newest first (admin): key changes, erasures, clean-ups, imports, exports."},
	"GET /v1/jobs": {id: "listJobs", tag: "admin", summary: "Every user's background jobs, newest updated first (admin); dead letters with status=dead.",
		query: map[string]queryParam{"user_id": {"Only the jobs of this stored user ID.", stringParam}}},
	"GET /v1/keys":          {id: "listKeys", tag: "keys", summary: "The API keys, never their secrets (admin)."},
	"POST /v1/keys":         {id: "createKey", tag: "keys", summary: "Create an API key (admin); its token is in this answer only.", errors: []int{409}},
	"DELETE /v1/keys/{key}": {id: "revokeKey", tag: "keys", summary: "Revoke an API key at once (admin), answering with it."},
	"POST /v1/cleanup": {id: "cleanupThreads", tag: "admin", summary: "Delete every user's threads not updated for a while (admin).",
		description: "Give older_than (an age such as \"30d\") or before (an RFC 3339 time), not both; dry_run counts without deleting."},
	"GET /v1/tools": {id: "listTools", tag: "tools", summary: "The memory tools as OpenAI function-calling declarations, for an agent loop that is not on MCP."},
	"GET /v1/me":    {id: "getMe", tag: "users", summary: "Who the caller is: its kind, user, tenant, and how it was identified."},
	"GET /v1/users": {id: "listUsers", tag: "users", summary: "Every user with their counts, in the order of their stored IDs (admin).",
		query: map[string]queryParam{"user_id": {"That user alone (a page of one, or none).", stringParam}}},

	"GET /v1/users/{user}/threads": {id: "listThreads", tag: "threads", summary: "The user's threads, newest updated first.",
		query: map[string]queryParam{
			"status":   {"Only threads with this status.", enumParam(threadStatus)},
			"agent_id": {"Only threads of this agent (present but empty: threads without an agent).", stringParam},
			"q":        {"Only threads whose title contains it, in any case (% and _ are literal).", stringParam},
			"since":    {"Only threads updated at or after this time (RFC 3339).", timeParam},
			"until":    {"Only threads updated before this time (RFC 3339).", timeParam},
		}},
	"POST /v1/users/{user}/threads": {id: "createThread", tag: "threads", summary: "Create a thread; its ID is generated unless given.", errors: []int{409}},
	"POST /v1/users/{user}/threads/import": {id: "importThread", tag: "threads", summary: "Store a thread's JSON export as a new thread of the user.",
		description: "The body is what GET …/threads/{thread}/export answers.", errors: []int{409}},
	"GET /v1/users/{user}/threads/{thread}":   {id: "getThread", tag: "threads", summary: "One thread."},
	"PATCH /v1/users/{user}/threads/{thread}": {id: "updateThread", tag: "threads", summary: "Change a thread's title, metadata, tags, agent or status; absent or null fields stay as they are."},
	"DELETE /v1/users/{user}/threads/{thread}": {id: "deleteThread", tag: "threads",
		summary: "Delete a thread: softly (restore brings it back), or for good with permanent=true."},
	"POST /v1/users/{user}/threads/{thread}/restore": {id: "restoreThread", tag: "threads", summary: "Bring back a soft-deleted thread; a thread not deleted is answered as it is.", errors: []int{409}},
	"POST /v1/users/{user}/threads/{thread}/end":     {id: "endThread", tag: "threads", summary: "End a thread (idempotent): its reflection follows in the background."},
	"GET /v1/users/{user}/threads/{thread}/messages": {id: "listMessages", tag: "messages", summary: "A thread's messages in seq order (oldest first, or newest first with order=desc)."},
	"POST /v1/users/{user}/threads/{thread}/messages": {id: "appendMessages", tag: "messages", summary: "Append a batch of messages atomically.",
		description: "Answers 201 with the stored messages (IDs, seqs, token counts, times). With an Idempotency-Key, or with client message IDs, " +
			"a retry is answered 201 with the original answer; a reused key or ID with other messages is 409.", errors: []int{409}},
	"GET /v1/users/{user}/threads/{thread}/elements":  {id: "listElements", tag: "messages", summary: "A thread's elements (files, images, citations…), oldest first."},
	"POST /v1/users/{user}/threads/{thread}/elements": {id: "createElement", tag: "messages", summary: "Attach an element to a thread or one of its messages.", errors: []int{409}},
	"GET /v1/users/{user}/threads/{thread}/export":    {id: "exportThread", tag: "export", summary: "A thread with its messages and elements: JSON (what import takes) or Markdown."},
	"POST /v1/users/{user}/threads/{thread}/context": {id: "buildContext", tag: "context", summary: "What a model should see of a thread within a token budget.",
		description: "Recent messages, a summary of older ones, the profile, notes and relevant memories, in the format asked for, " +
			"with telemetry. An empty body takes the server's defaults.", errors: []int{422}},
	"POST /v1/users/{user}/turns": {id: "beginTurn", tag: "context", summary: "Record the user's side of a model call and get the context to send the model.",
		description: "What the OpenAI-compatible proxy does before it calls the model, for an app that calls its model itself: the thread " +
			"(thread_id, begun when it does not exist unless continue; the active session of the agent when none), the client's messages " +
			"not stored yet (a resent history stores only what follows the thread's newest messages), and the context of the mode. " +
			"Append the model's reply to the thread afterwards.", errors: []int{404, 422}},

	"POST /v1/users/{user}/search": {id: "search", tag: "search", summary: "Hybrid search (full text and vectors) over the user's memories, messages, chunks and summaries."},
	"POST /v1/users/{user}/facts": {id: "getFacts", tag: "search", summary: "Answer a question about the user from what search finds.",
		description: "With a model the answer is synthesised and cites the facts as [n]; without one it lists them."},
	"GET /v1/users/{user}/memories": {id: "listMemories", tag: "memories", summary: "The user's memories, newest updated first.",
		query: map[string]queryParam{"kind": {"Only memories of this kind.", enumParam(memoryKinds)}}},
	"POST /v1/users/{user}/memories":                 {id: "createMemory", tag: "memories", summary: "Store a memory (and embed it for vector search).", errors: []int{409}},
	"GET /v1/users/{user}/memories/{memory}":         {id: "getMemory", tag: "memories", summary: "One memory."},
	"PATCH /v1/users/{user}/memories/{memory}":       {id: "updateMemory", tag: "memories", summary: "Change a memory: a new version, recorded in its history."},
	"DELETE /v1/users/{user}/memories/{memory}":      {id: "deleteMemory", tag: "memories", summary: "Delete a memory and its history."},
	"GET /v1/users/{user}/memories/{memory}/history": {id: "getMemoryHistory", tag: "memories", summary: "A memory's changes, oldest first."},
	"POST /v1/users/{user}/memories/{memory}/invalidate": {id: "invalidateMemory", tag: "memories",
		summary: "Mark a memory as no longer holding (kept with its history, left out of lists and search); the body is optional."},
	"GET /v1/users/{user}/entities": {id: "listEntities", tag: "entities", summary: "The user's entities; q resolves a name or an alias.",
		query: map[string]queryParam{"q": {"A name or an alias: the entity of that name first, then those with that alias.", stringParam}}},
	"POST /v1/users/{user}/entities": {id: "putEntity", tag: "entities",
		summary: "Create an entity, or merge it into the user's entity of that name; thread_id records a thread's reference to it."},
	"GET /v1/users/{user}/entities/{entity}":           {id: "getEntity", tag: "entities", summary: "One entity."},
	"PATCH /v1/users/{user}/entities/{entity}":         {id: "updateEntity", tag: "entities", summary: "Rename an entity (the old name stays an alias), or change its type or aliases.", errors: []int{409}},
	"DELETE /v1/users/{user}/entities/{entity}":        {id: "deleteEntity", tag: "entities", summary: "Delete an entity and its references."},
	"GET /v1/users/{user}/entities/{entity}/threads":   {id: "listEntityThreads", tag: "entities", summary: "The threads that refer to an entity, newest first."},
	"GET /v1/users/{user}/threads/{thread}/entities":   {id: "listThreadEntities", tag: "entities", summary: "The entities a thread refers to, newest first, each with the entity."},
	"GET /v1/users/{user}/profile":                     {id: "getProfile", tag: "profile", summary: "The user's newest profile; 404 before the first."},
	"POST /v1/users/{user}/profile/refresh":            {id: "refreshProfile", tag: "profile", summary: "Synthesise the profile now."},
	"GET /v1/users/{user}/profile/versions":            {id: "listProfileVersions", tag: "profile", summary: "The profile's versions, newest first."},
	"GET /v1/users/{user}/threads/{thread}/reflection": {id: "getReflection", tag: "profile", summary: "What reflection found in an ended thread."},
	"POST /v1/users/{user}/threads/{thread}/reflection/retry": {id: "retryReflection", tag: "profile",
		summary: "Queue a failed reflection again (202); 409 when it is pending or done, or the thread is active.", errors: []int{409}},

	"GET /v1/users/{user}/agents/{agent}/session": {id: "getSession", tag: "sessions",
		summary: "The active session (thread) of the user and agent; 404 when none, unless create=true makes one (201)."},
	"PUT /v1/users/{user}/agents/{agent}/session": {id: "setSession", tag: "sessions", summary: "Make a thread the active one of the user and agent."},
	"GET /v1/users/{user}/agents/{agent}/notes": {id: "getNotes", tag: "notes",
		summary: "The agent's notes about the user (version 0, no content, when none were written)."},
	"PUT /v1/users/{user}/agents/{agent}/notes": {id: "putNotes", tag: "notes", summary: "Overwrite the notes; expected_version makes it fail with 409 when they moved on.", errors: []int{409}},
	"POST /v1/users/{user}/agents/{agent}/notes/ops": {id: "editNotes", tag: "notes",
		summary: "Apply one operation to the notes (read, overwrite, append, prepend, a section's replacement or deletion, delete all).", errors: []int{409, 422}},
	"GET /v1/users/{user}/agents/{agent}/notes/history": {id: "listNotesHistory", tag: "notes", summary: "Every version of the notes, newest first."},

	"POST /v1/users/{user}/tools/{name}": {id: "callTool", tag: "tools",
		summary: "Run one memory tool with a model's JSON arguments (the body), as GET /v1/tools declares them."},

	"GET /v1/users/{user}/jobs": {id: "listUserJobs", tag: "jobs", summary: "The user's background jobs, newest updated first; dead letters with status=dead."},
	"POST /v1/users/{user}/jobs/{job}/retry": {id: "retryJob", tag: "jobs",
		summary: "Queue a dead job again; 409 for a job that is not dead, or whose work is queued or running again.", errors: []int{409}},

	"GET /v1/users/{user}/export": {id: "exportUser", tag: "export", summary: "Everything stored for the user, streamed: JSON (what import takes) or Markdown."},
	"POST /v1/users/{user}/import": {id: "importUser", tag: "export", summary: "Restore a user's export, all of it or nothing.",
		description: "on_conflict says what becomes of records the user has already: fail (409 naming them), skip or replace.", errors: []int{409}},
	"DELETE /v1/users/{user}": {id: "deleteUser", tag: "users", summary: "Erase everything of a user (admin or tenant key), answering what was deleted."},
}

// tags describes the operations' tags, in the document's order.
var tags = []struct{ name, description string }{
	{"threads", "Conversations of a user, optionally of an agent."},
	{"messages", "A thread's messages and elements."},
	{"context", "Context windows built for a model."},
	{"search", "Search and question answering over what is remembered."},
	{"memories", "Long-term memories: facts and insights, versioned."},
	{"entities", "Named things a user's threads refer to."},
	{"profile", "The user's profile, synthesised from memories, and reflection on ended threads."},
	{"sessions", "The active thread of a user and an agent."},
	{"notes", "An agent's free-form notes about a user, versioned."},
	{"tools", "The memory tools, for agents that are not on MCP."},
	{"jobs", "Background work (indexing, summaries, extraction, reflection)."},
	{"export", "Exports and imports of threads and users."},
	{"users", "Identities and users."},
	{"keys", "API keys (admin)."},
	{"admin", "Operators' routes (admin)."},
	{"service", "Health and this document."},
}

// queryParam describes a query parameter.
type queryParam struct {
	description string
	schema      *jsonSchema
}

var (
	stringParam = &jsonSchema{Type: "string"}
	boolParam   = &jsonSchema{Type: "boolean"}
	timeParam   = &jsonSchema{Type: "string", Format: "date-time"}
)

func enumParam(values []string) *jsonSchema {
	s := &jsonSchema{Type: "string"}
	for _, v := range values {
		s.Enum = append(s.Enum, v)
	}
	return s
}

// queryParams describes the query parameters of the API by name; an
// operation's own entry for a name takes precedence. A parameter that a
// handler takes and neither describes is an error of the document.
var queryParams = map[string]queryParam{
	"limit":      {"The page size (50 when 0 or absent).", &jsonSchema{Type: "integer", Minimum: ptr[int64](0), Maximum: ptr[int64](agentmem.MaxPageSize)}},
	"cursor":     {"The next_cursor of the previous page; it continues only the list that gave it.", stringParam},
	"agent_id":   {"Only those of this agent.", stringParam},
	"thread_id":  {"Only those drawn from this thread.", stringParam},
	"tenant_id":  {"Only those of this tenant.", stringParam},
	"user_id":    {"Only those of this user.", stringParam},
	"message_id": {"Only those attached to this message.", stringParam},
	"deleted":    {"true: the soft-deleted threads only; false (the default): the others.", boolParam},
	"tag":        {"Only threads with every tag given (repeat the parameter for several).", &jsonSchema{Type: "array", Items: stringParam}},

	"since":           {"Only those at or after this time (RFC 3339).", timeParam},
	"permanent":       {"Delete for good, rather than softly.", boolParam},
	"after_seq":       {"Only messages with a greater seq.", &jsonSchema{Type: "integer", Format: "int64", Minimum: ptr[int64](0)}},
	"before_seq":      {"Only messages with a smaller seq.", &jsonSchema{Type: "integer", Format: "int64", Minimum: ptr[int64](0)}},
	"order":           {"asc (the default): oldest first; desc: newest first.", enumParam([]string{"asc", "desc"})},
	"format":          {"json (the default) or markdown.", enumParam([]string{"json", "markdown"})},
	"category":        {"Only memories of this category.", stringParam},
	"include_invalid": {"Also invalidated memories.", boolParam},
	"processed":       {"Only insights built into the profile (true), or only those not yet (false).", boolParam},
	"type":            {"Only entities of this type.", stringParam},
	"action":          {"Only those of this action.", stringParam},
	"status":          {"Only jobs with this status.", enumParam(jobStatus)},
	"kind":            {"Only jobs of this kind.", stringParam},
	"create":          {"Make the session (a new thread of the agent) when there is none: 201.", boolParam},
	"agent":           {"The agent of notes and sessions (default \"default\").", stringParam},
	"include_deleted": {"Also soft-deleted threads.", boolParam},
	"on_conflict":     {"What becomes of records the user has already: fail (the default), skip or replace.", enumParam([]string{agentmem.OnConflictFail, agentmem.OnConflictSkip, agentmem.OnConflictReplace})},
}

// pathParams describes the wildcards of the routes' patterns: id says
// that readPath checks it with agentmem.ValidateID.
var pathParams = map[string]struct {
	description string
	id          bool
}{
	"user": {"The user's ID, as the caller names them (an admin names a tenant's user tenant:TENANT/user:USER, the slash escaped). " +
		"A user the caller may not reach is 404, as one who does not exist.", false},
	"thread": {"The thread's ID.", true},
	"agent":  {"The agent's ID.", true},
	"memory": {"The memory's ID.", false},
	"entity": {"The entity's ID.", false},
	"key":    {"The API key's ID.", false},
	"job":    {"The job's ID.", false},
	"name":   {"The tool's name (GET /v1/tools lists them).", false},
}

// headerParams describes the request headers endpoints read.
var headerParams = map[string]string{
	"Idempotency-Key": "Makes a retry safe: the same key with the same batch is answered with the original answer.",
}

// errorResponses are the document's responses of errors, by status: the
// JSON error body writeError writes, named for the document's components.
var errorResponses = map[int]struct {
	name, description string
	headers           []string
}{
	400: {"BadRequest", "The request is malformed (code invalid): a body, parameter or path that is not as documented.", nil},
	401: {"Unauthorized", "No valid credentials (code unauthorized): no API key, or a malformed, unknown, revoked or expired one.", []string{"WWW-Authenticate"}},
	403: {"Forbidden", "Refused (code forbidden): this route needs another kind of key, or the request's Origin or Host is not served.", nil},
	404: {"NotFound", "No such thing for this user (code not_found); a user the caller may not reach is not found either.", nil},
	409: {"Conflict", "It exists already, or a version moved on (code conflict).", nil},
	413: {"TooLarge", "A size limit was exceeded (code too_large); the message names it.", nil},
	414: {"URITooLong", "The query string is longer than the server's limit (code too_large).", nil},
	415: {"UnsupportedMediaType", "A request body must be sent as Content-Type: application/json (code invalid).", nil},
	422: {"Unprocessable", "Well-formed but cannot be done as asked (code unprocessable).", nil},
	429: {"RateLimited", "Too many requests for this key (code rate_limited).", []string{"Retry-After"}},
	500: {"InternalError", "A bug or an infrastructure failure (code internal); details are in the server's log only.", nil},
	503: {"Unavailable", "The database or the model is down or busy (code unavailable): nothing was done, so the request may be sent again.", []string{"Retry-After"}},
}

// errorStatuses returns the error statuses of a route: those every route
// may answer (a malformed request, an Origin or Host refused, a query too
// long, a rate limit, a failure), 401 where an identity is needed, 404
// where the path names something, 413 and 415 where a body is read, and
// the operation's own.
func errorStatuses(path string, a access, e *endpoint, op operation) []int {
	out := []int{400, 403, 414, 429, 500, 503}
	if a != accessPublic {
		out = append(out, 401)
	}
	if strings.Contains(path, "{") {
		out = append(out, 404)
	}
	if e.body != nil {
		out = append(out, 413, 415)
	}
	out = append(out, op.errors...)
	slices.Sort(out)
	return slices.Compact(out)
}

// The document's objects, in the order they print.
type (
	openAPI struct {
		OpenAPI    string                                  `json:"openapi"`
		Info       openAPIInfo                             `json:"info"`
		Tags       []openAPITag                            `json:"tags"`
		Security   []map[string][]string                   `json:"security,omitempty"`
		Paths      map[string]map[string]*openAPIOperation `json:"paths"`
		Components openAPIComponents                       `json:"components"`
	}
	openAPIInfo struct {
		Title       string `json:"title"`
		Version     string `json:"version"`
		Description string `json:"description"`
	}
	openAPITag struct {
		Name        string `json:"name"`
		Description string `json:"description"`
	}
	openAPIOperation struct {
		OperationID string                      `json:"operationId"`
		Tags        []string                    `json:"tags"`
		Summary     string                      `json:"summary"`
		Description string                      `json:"description,omitempty"`
		Security    *[]map[string][]string      `json:"security,omitempty"` // [] for a public route
		Parameters  []*openAPIParameter         `json:"parameters,omitempty"`
		RequestBody *openAPIRequestBody         `json:"requestBody,omitempty"`
		Responses   map[string]*openAPIResponse `json:"responses"`
		Access      string                      `json:"x-agentmem-access"` // who may call it (see access)
	}
	openAPIParameter struct {
		Name        string      `json:"name"`
		In          string      `json:"in"`
		Description string      `json:"description"`
		Required    bool        `json:"required,omitempty"`
		Schema      *jsonSchema `json:"schema"`
	}
	openAPIRequestBody struct {
		Required bool                     `json:"required"`
		Content  map[string]*openAPIMedia `json:"content"`
	}
	openAPIMedia struct {
		Schema *jsonSchema `json:"schema"`
	}
	openAPIResponse struct {
		Ref         string                    `json:"$ref,omitempty"`
		Description string                    `json:"description,omitempty"`
		Headers     map[string]*openAPIHeader `json:"headers,omitempty"`
		Content     map[string]*openAPIMedia  `json:"content,omitempty"`
	}
	openAPIHeader struct {
		Description string      `json:"description"`
		Schema      *jsonSchema `json:"schema"`
	}
	openAPIComponents struct {
		Schemas         map[string]*jsonSchema            `json:"schemas"`
		Responses       map[string]*openAPIResponse       `json:"responses"`
		SecuritySchemes map[string]*openAPISecurityScheme `json:"securitySchemes"`
	}
	openAPISecurityScheme struct {
		Type        string `json:"type"`
		Scheme      string `json:"scheme,omitempty"`
		In          string `json:"in,omitempty"`
		Name        string `json:"name,omitempty"`
		Description string `json:"description"`
	}
)

// responseHeaders describes the headers of error responses.
var responseHeaders = map[string]*openAPIHeader{
	"Retry-After":      {"Seconds to wait before sending the request again.", &jsonSchema{Type: "integer", Minimum: ptr[int64](1)}},
	"WWW-Authenticate": {`Bearer realm="agentmem"`, stringParam},
}

// docDescription is the document's introduction (Markdown).
const docDescription = "agentmem remembers conversations for LLM agents: threads and their messages, context windows built " +
	"within a token budget, long-term memories, entities, a profile and agents' notes, with hybrid search over them.\n\n" +
	"Every record belongs to a user, named in the path; no call reads across users. " +
	"Request bodies are JSON objects sent with `Content-Type: application/json` (any other type is 415); " +
	"unknown fields are refused (400), as are query parameters a route does not take. " +
	"Errors are `{\"error\":{\"code\":\"…\",\"message\":\"…\"}}` with the status of their code. " +
	"A 503 says `Retry-After` and did nothing: the request may be sent again (an append with its `Idempotency-Key`). " +
	"Lists are `{\"data\":[…],\"next_cursor\":\"…\"}`: pass `cursor` for the next page (empty on the last). " +
	"Each response carries an `X-Request-ID` (the request's, when it sends a well-formed one)."

// openAPIDocument returns the OpenAPI document of the API that
// NewHandler serves with opt: its routes (GET /metrics with Options.Metrics),
// and the authentication of opt.Auth (none: no security requirement).
func openAPIDocument(opt Options) ([]byte, error) {
	g := newSchemaGen()
	errSchema := g.schemaOf(reflect.TypeFor[errorBody](), toClient, "")
	doc := openAPI{
		OpenAPI: "3.1.0",
		Info:    openAPIInfo{Title: "agentmem", Version: "v1", Description: docDescription},
		Paths:   map[string]map[string]*openAPIOperation{},
	}
	for _, t := range tags {
		doc.Tags = append(doc.Tags, openAPITag{t.name, t.description})
	}
	var errs []error
	ids := map[string]string{}
	for _, rt := range routes(nil, nil, opt) {
		e, ok := rt.handler.(*endpoint)
		if !ok {
			continue // another protocol: the proxy, MCP, the web UI
		}
		op, ok := operations[rt.pattern]
		if !ok {
			errs = append(errs, fmt.Errorf("route %s has no entry in operations", rt.pattern))
			continue
		}
		if other, dup := ids[op.id]; dup || !isLowerCamel(op.id) {
			errs = append(errs, fmt.Errorf("operationId %q of %s is not unique (%s) or not lowerCamelCase", op.id, rt.pattern, other))
		}
		ids[op.id] = rt.pattern
		method, path, _ := strings.Cut(rt.pattern, " ")
		o, err := g.operation(op, rt.access, path, e, errSchema)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", rt.pattern, err))
			continue
		}
		if doc.Paths[path] == nil {
			doc.Paths[path] = map[string]*openAPIOperation{}
		}
		doc.Paths[path][strings.ToLower(method)] = o
	}
	schemas := g.components()
	errs = append(errs, g.errs...)
	doc.Components = openAPIComponents{
		Schemas:   schemas,
		Responses: map[string]*openAPIResponse{},
		SecuritySchemes: map[string]*openAPISecurityScheme{
			"bearerAuth": {Type: "http", Scheme: "bearer", Description: "An API key (am_…) in Authorization: Bearer KEY. " +
				"Its scope decides what it reaches: admin (every route), tenant:ID (that tenant's users), user:ID or tenant:ID/user:ID (that user's routes)."},
			"apiKeyAuth": {Type: "apiKey", In: "header", Name: "X-API-Key", Description: "The same API key, in X-API-Key instead."},
		},
	}
	for _, r := range errorResponses {
		resp := &openAPIResponse{Description: r.description, Content: map[string]*openAPIMedia{"application/json": {errSchema}}}
		for _, h := range r.headers {
			if resp.Headers == nil {
				resp.Headers = map[string]*openAPIHeader{}
			}
			resp.Headers[h] = responseHeaders[h]
		}
		doc.Components.Responses[r.name] = resp
	}
	switch opt.Auth.Mode {
	case AuthAPIKey:
		doc.Security = []map[string][]string{{"bearerAuth": {}}, {"apiKeyAuth": {}}}
	case AuthHeader:
		header := http.CanonicalHeaderKey(cmp.Or(opt.Auth.UserHeader, DefaultUserHeader))
		doc.Components.SecuritySchemes["userHeader"] = &openAPISecurityScheme{Type: "apiKey", In: "header", Name: header,
			Description: "The user's ID, set by the authenticating proxy in front of agentmem (believed from its addresses only)."}
		doc.Security = []map[string][]string{{"bearerAuth": {}}, {"apiKeyAuth": {}}, {"userHeader": {}}}
	default:
		doc.Info.Description += "\n\nThis server runs without authentication (--auth none): every caller is the local admin, and API keys are not read."
	}
	if err := errorsJoin(errs); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("openapi: %w", err)
	}
	return buf.Bytes(), nil
}

// operation returns the document's operation of a route.
func (g *schemaGen) operation(op operation, a access, path string, e *endpoint, errSchema *jsonSchema) (*openAPIOperation, error) {
	o := &openAPIOperation{OperationID: op.id, Tags: []string{op.tag}, Summary: op.summary, Description: op.description,
		Responses: map[string]*openAPIResponse{}, Access: a.String()}
	if a == accessPublic {
		o.Security = &[]map[string][]string{}
	}
	if !slices.ContainsFunc(tags, func(t struct{ name, description string }) bool { return t.name == op.tag }) {
		return nil, fmt.Errorf("tag %q is not in tags", op.tag)
	}
	for _, seg := range strings.Split(path, "/") {
		if name, ok := strings.CutPrefix(seg, "{"); ok {
			name = strings.TrimSuffix(name, "}")
			pp, ok := pathParams[name]
			if !ok {
				return nil, fmt.Errorf("path parameter %q is not in pathParams", name)
			}
			desc, s := pp.description, &jsonSchema{Type: "string", MinLength: ptr(1)}
			if pp.id {
				desc += " At most 200 bytes, without slashes, backslashes, spaces or control characters, and not . or .."
				s.MaxLength, s.Pattern = ptr(agentmem.MaxIDBytes), `^[^/\\\s]+$`
			}
			o.Parameters = append(o.Parameters, &openAPIParameter{Name: name, In: "path", Description: desc, Required: true, Schema: s})
		}
	}
	for name := range op.query {
		if !slices.Contains(e.params, name) && !slices.Contains(e.params, name+"*") {
			return nil, fmt.Errorf("operations describes query parameter %q, which its handler does not take", name)
		}
	}
	for _, p := range e.params {
		name := strings.TrimSuffix(p, "*")
		q, ok := op.query[name]
		if !ok {
			q, ok = queryParams[name]
		}
		if !ok {
			return nil, fmt.Errorf("query parameter %q is not in queryParams", name)
		}
		if (q.schema.Type == "array") != strings.HasSuffix(p, "*") {
			return nil, fmt.Errorf("query parameter %q: an array if and only if it may repeat", name)
		}
		o.Parameters = append(o.Parameters, &openAPIParameter{Name: name, In: "query", Description: q.description, Schema: q.schema})
	}
	for _, h := range e.headers {
		desc, ok := headerParams[h]
		if !ok {
			return nil, fmt.Errorf("header %q is not in headerParams", h)
		}
		o.Parameters = append(o.Parameters, &openAPIParameter{Name: h, In: "header", Description: desc, Schema: &jsonSchema{Type: "string"}})
	}
	name := string(unicode.ToUpper(rune(op.id[0]))) + op.id[1:]
	if e.body != nil {
		s := g.schemaOf(e.body.typ, fromClient, name+"Request")
		if len(e.body.required) > 0 {
			n := g.named[namedKey{derefType(e.body.typ), fromClient}]
			if n == nil {
				return nil, fmt.Errorf("required fields of %v, which is not a named struct", e.body.typ)
			}
			for _, f := range e.body.required {
				if n.schema.Properties[f] == nil {
					return nil, fmt.Errorf("required field %q is not a field of %v", f, e.body.typ)
				}
				if !slices.Contains(n.schema.Required, f) {
					n.schema.Required = append(n.schema.Required, f)
				}
			}
		}
		o.RequestBody = &openAPIRequestBody{Required: !e.body.optional, Content: map[string]*openAPIMedia{"application/json": {s}}}
	}
	if len(e.responses) == 0 {
		return nil, fmt.Errorf("its handler declares no answer")
	}
	for _, r := range e.responses {
		key := strconv.Itoa(r.status)
		resp := o.Responses[key]
		if resp == nil {
			resp = &openAPIResponse{Description: http.StatusText(r.status)}
			o.Responses[key] = resp
		}
		var s *jsonSchema
		switch {
		case r.schema != nil:
			s = r.schema
		case r.typ != nil:
			s = g.schemaOf(r.typ, toClient, name+"Response")
		default:
			continue // no body
		}
		if resp.Content == nil {
			resp.Content = map[string]*openAPIMedia{}
		}
		resp.Content[cmp.Or(r.mediaType, "application/json")] = &openAPIMedia{s}
	}
	for _, status := range errorStatuses(path, a, e, op) {
		key := strconv.Itoa(status)
		if o.Responses[key] != nil {
			return nil, fmt.Errorf("status %d is both an answer and an error", status)
		}
		o.Responses[key] = &openAPIResponse{Ref: "#/components/responses/" + errorResponses[status].name}
	}
	o.Responses["default"] = &openAPIResponse{Description: "Any other error.", Content: map[string]*openAPIMedia{"application/json": {errSchema}}}
	return o, nil
}

func derefType(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// isLowerCamel reports whether id is lowerCamelCase: a lower-case letter,
// then letters and digits.
func isLowerCamel(id string) bool {
	for i, r := range id {
		if !(unicode.IsLetter(r) && r < unicode.MaxASCII || i > 0 && unicode.IsDigit(r)) || i == 0 && !unicode.IsLower(r) {
			return false
		}
	}
	return id != ""
}

// handleOpenAPI serves the OpenAPI document of the API as this handler
// serves it (see openAPIDocument), built when first asked for.
func handleOpenAPI(log *slog.Logger, opt Options) http.Handler {
	doc := sync.OnceValues(func() ([]byte, error) { return openAPIDocument(opt) })
	return handle(log, func(w http.ResponseWriter, r *http.Request) error {
		b, err := doc()
		if err != nil {
			return err // a bug of the document, caught by its tests
		}
		writeJSON(w, http.StatusOK, b)
		return nil
	}).writesMedia(http.StatusOK, "application/json", &jsonSchema{Type: "object", Description: "An OpenAPI 3.1 document: this one."})
}
