"""The API's records (dataclasses, as the server answers them) and the
shapes of request fields (TypedDicts, to pass as plain dicts).

Times are RFC 3339 strings as the API sends them ("2026-11-30T03:33:59.04Z",
nanoseconds kept), so that a record read here is written back unchanged;
agentmem.parse_time turns one into a datetime. Fields the server may leave
out are Optional (None) or empty.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Dict, Generic, Iterator, List, Optional, TypedDict, TypeVar, Union

from ._model import Model, omitempty, time_field

T = TypeVar("T")


@dataclass
class Page(Generic[T]):
    """One page of a list: its items, and the cursor of the next page
    ("" on the last). The list's ``iter`` method follows the cursors."""

    data: List[T] = field(default_factory=list)
    next_cursor: str = ""

    def __iter__(self) -> Iterator[T]:
        return iter(self.data)

    def __len__(self) -> int:
        return len(self.data)


# Threads, messages and what hangs off them.


@dataclass
class Thread(Model):
    """One conversation of a user, optionally of an agent."""

    id: str = ""
    user_id: str = ""
    agent_id: str = ""
    title: str = ""
    status: str = ""  # "active" or "ended"
    metadata: Dict[str, Any] = field(default_factory=dict)
    tags: List[str] = field(default_factory=list)
    created_at: str = time_field()
    updated_at: str = time_field()
    ended_at: Optional[str] = None
    deleted_at: Optional[str] = None
    message_count: int = 0
    last_seq: int = 0  # the seq of the newest message (0 when empty)


@dataclass
class FunctionCall(Model):
    """The function of a tool call and its JSON arguments."""

    name: str = ""
    arguments: str = ""


@dataclass
class ToolCall(Model):
    """A call an assistant message asks for (OpenAI's shape)."""

    id: str = ""
    type: str = "function"
    function: FunctionCall = field(default_factory=FunctionCall)


@dataclass
class Message(Model):
    """One entry of a thread; seq runs 1, 2, 3… per thread."""

    id: str = ""
    thread_id: str = ""
    seq: int = 0
    role: str = ""  # system, user, assistant or tool
    content: str = ""
    name: str = omitempty()
    tool_calls: List[ToolCall] = omitempty([])
    tool_call_id: str = omitempty()
    metadata: Dict[str, Any] = field(default_factory=dict)
    token_count: int = 0
    created_at: str = time_field()


@dataclass
class Element(Model):
    """A citation, file or other reference attached to a thread or to one of
    its messages."""

    id: str = ""
    thread_id: str = ""
    message_id: str = omitempty()  # "" when attached to the thread
    type: str = ""
    name: str = ""
    content: str = omitempty()
    url: str = omitempty()
    mime_type: str = omitempty()
    display: str = omitempty()
    metadata: Dict[str, Any] = field(default_factory=dict)
    created_at: str = time_field()


@dataclass
class Session(Model):
    """The active thread of a user and an agent."""

    user_id: str = ""
    agent_id: str = ""
    thread_id: str = ""
    updated_at: str = time_field()


@dataclass
class ChatMessage(Model):
    """A message of a built context, in the chat format."""

    role: str = ""
    content: str = ""
    name: str = omitempty()
    tool_calls: List[ToolCall] = omitempty([])
    tool_call_id: str = omitempty()


@dataclass
class SeqRange(Model):
    """An inclusive range of seqs."""

    from_: int = field(default=0, metadata={"json": "from"})
    to: int = 0


@dataclass
class Telemetry(Model):
    """What a context build put into the context, and why."""

    budget_tokens: int = 0
    used_tokens: int = 0
    fraction: float = 0.0
    sections: Dict[str, int] = field(default_factory=dict)  # tokens per section
    model: str = ""
    encoding: str = ""
    approximate: bool = False
    strategy: str = ""
    format: str = ""
    prompt: str = omitempty()
    memories: List[str] = omitempty([])  # IDs of the memories drawn on, in order
    included_messages: int = 0
    omitted_messages: int = 0
    omitted_seqs: List[SeqRange] = field(default_factory=list)
    summary_through_seq: int = 0
    summary_version: int = 0
    summary_lag: int = 0
    summary_behind: bool = False
    summary_job: str = omitempty()
    index_lag: int = 0
    index_lag_seconds: float = 0.0
    warnings: List[str] = field(default_factory=list)
    cache_hit: bool = False


@dataclass
class Context(Model):
    """A context for the next model call: ``messages`` (format "messages"),
    ``instructions`` and ``input`` ("responses") or ``text`` ("text"), and
    its telemetry."""

    messages: List[ChatMessage] = field(default_factory=list)
    instructions: str = ""
    input: str = ""
    text: str = ""
    telemetry: Telemetry = field(default_factory=Telemetry)


@dataclass
class Turn(Model):
    """What turns.begin did: the thread, the client's messages it stored,
    and the context to send the model."""

    thread: Optional[Thread] = None
    mode: str = ""  # the mode applied: full, augment or off ("auto" resolved)
    stored: List[Message] = field(default_factory=list)  # the client's messages stored by this call
    held: int = 0  # how many of the client's messages were stored already (the resent history)
    # The context, in the messages format (None with mode "off"): with
    # "augment" its last telemetry.included_messages messages are the
    # newest of the client's messages, kept.
    context: Optional[Context] = None


@dataclass
class Reflection(Model):
    """What reflection found in an ended thread."""

    user_id: str = ""
    thread_id: str = ""
    status: str = ""  # pending, processed, no-insight or failed
    through_seq: int = 0
    topics: List[str] = field(default_factory=list)
    insights: List[str] = field(default_factory=list)  # IDs of insight memories
    reason: str = ""
    updated_at: str = time_field()


@dataclass
class ThreadExport(Model):
    """A thread with its messages and elements, as threads.import_ takes it."""

    version: int = 0
    thread: Optional[Thread] = None
    messages: List[Message] = field(default_factory=list)
    elements: List[Element] = field(default_factory=list)


# Memories, search and facts.


@dataclass
class ThreadRange(Model):
    """Turns of a thread a memory came from (seqs, inclusive)."""

    thread_id: str = ""
    seq_from: int = omitempty(0)
    seq_to: int = omitempty(0)


@dataclass
class Memory(Model):
    """A long-term memory of a user: a fact they told, or an insight."""

    id: str = ""
    user_id: str = ""
    kind: str = ""  # "fact" or "insight"
    text: str = ""
    category: str = ""
    confidence: float = 0.0
    importance: float = 0.0
    agent_id: str = omitempty()
    thread_id: str = omitempty()
    seq_from: int = omitempty(0)
    seq_to: int = omitempty(0)
    source: str = ""  # "api" or "extracted"
    sources: List[ThreadRange] = omitempty([])
    metadata: Dict[str, Any] = field(default_factory=dict)
    version: int = 0
    valid_from: str = time_field()
    invalid_at: Optional[str] = None
    superseded_by: str = omitempty()
    created_at: str = time_field()
    updated_at: str = time_field()
    processed_at: Optional[str] = None


@dataclass
class MemoryChange(Model):
    """One entry of a memory's history."""

    memory_id: str = ""
    version: int = 0
    op: str = ""  # add, update or invalidate
    text: str = ""
    category: str = ""
    confidence: float = 0.0
    importance: float = 0.0
    thread_id: str = omitempty()
    seq_from: int = omitempty(0)
    seq_to: int = omitempty(0)
    reason: str = omitempty()
    at: str = time_field()


@dataclass
class SearchResult(Model):
    """One hit of a search: a memory, message, chunk or summary."""

    kind: str = ""
    id: str = ""
    text: str = ""
    score: float = 0.0  # the fused rank, 0 to 1: orders results, says nothing of relevance
    relevance: float = 0.0  # the chance, 0 to 1, that it bears on the query
    scores: Dict[str, float] = field(default_factory=dict)
    thread_id: str = omitempty()
    seq_from: int = omitempty(0)
    seq_to: int = omitempty(0)
    created_at: str = time_field()
    invalid_at: Optional[str] = None
    superseded_by: str = omitempty()
    superseded_text: str = omitempty()


@dataclass
class SearchResponse(Model):
    """The results of a search, best first."""

    results: List[SearchResult] = field(default_factory=list)
    signals: List[str] = field(default_factory=list)
    warnings: List[str] = field(default_factory=list)


@dataclass
class FactsResponse(Model):
    """The answer to a question about a user, and the facts it cites."""

    answer: str = ""
    facts: List[SearchResult] = field(default_factory=list)
    kinds: List[str] = omitempty([])
    model: str = omitempty()
    warnings: List[str] = field(default_factory=list)


# Profiles, notes, entities.


@dataclass
class Profile(Model):
    """One version of a user's profile."""

    user_id: str = ""
    version: int = 0
    text: str = ""
    method: str = ""  # "llm" or "assembled"
    model: str = omitempty()
    sources: List[str] = field(default_factory=list)  # IDs of the memories it was built from
    created_at: str = time_field()


@dataclass
class Notes(Model):
    """One version of an agent's Markdown notes about a user (version 0:
    never written)."""

    user_id: str = ""
    agent_id: str = ""
    content: str = ""
    version: int = 0
    operation: str = omitempty()
    updated_at: str = time_field()


@dataclass
class Entity(Model):
    """A thing a user talks about, with the aliases it goes by."""

    id: str = ""
    user_id: str = ""
    name: str = ""
    type: str = ""
    aliases: List[str] = field(default_factory=list)
    created_at: str = time_field()
    updated_at: str = time_field()


@dataclass
class EntityRef(Model):
    """A thread's reference to an entity: created, modified or discussed."""

    entity_id: str = ""
    thread_id: str = ""
    action: str = ""
    seq: int = omitempty(0)
    at: str = time_field()
    entity: Optional[Entity] = None


# Jobs, keys, audit, users.


@dataclass
class Job(Model):
    """A background job (indexing, summaries, reflection, the profile…)."""

    id: str = ""
    user_id: str = ""
    kind: str = ""
    key: str = ""
    serial: str = omitempty()
    payload: Any = None
    status: str = ""  # queued, running, done or dead
    attempts: int = 0
    max_attempts: int = 0
    run_at: str = time_field()
    lease_owner: str = omitempty()
    lease_until: Optional[str] = None
    last_error: str = omitempty()
    created_at: str = time_field()
    updated_at: str = time_field()


@dataclass
class Scope(Model):
    """What an API key reaches: kind "admin", "tenant" or "user"."""

    kind: str = ""
    tenant_id: str = omitempty()
    user_id: str = omitempty()


@dataclass
class APIKey(Model):
    """An API key (never its secret)."""

    id: str = ""
    scope: Scope = field(default_factory=Scope)
    name: str = omitempty()
    created_at: str = time_field()
    expires_at: Optional[str] = None
    revoked_at: Optional[str] = None
    created_by: str = omitempty()


@dataclass
class NewKey(Model):
    """A key just created and its token, shown this once."""

    key: APIKey = field(default_factory=APIKey)
    token: str = ""


@dataclass
class AuditEvent(Model):
    """An entry of the audit log."""

    id: str = ""
    at: str = time_field()
    actor: str = ""
    action: str = ""
    tenant_id: str = omitempty()
    user_id: str = omitempty()
    target: str = omitempty()
    detail: Any = None


@dataclass
class Caller(Model):
    """Who the server takes the caller for (GET /v1/me)."""

    kind: str = ""  # admin, tenant or user
    user_id: str = ""
    tenant_id: str = ""
    via: str = ""  # none, apikey or header
    key_id: str = omitempty()
    default_user: str = omitempty()  # with authentication off, the user of requests that name none


@dataclass
class UserSummary(Model):
    """A user and their counts (GET /v1/users)."""

    user_id: str = ""
    threads: int = 0
    messages: int = 0
    memories: int = 0
    last_active_at: Optional[str] = None


@dataclass
class Counts(Model):
    """What an erasure or a clean-up deleted."""

    users: int = omitempty(0)
    threads: int = 0
    messages: int = 0
    elements: int = 0
    sessions: int = 0


@dataclass
class CleanupResult(Model):
    """What a clean-up deleted, or would delete (dry_run)."""

    cutoff: str = time_field()
    dry_run: bool = False
    users: int = 0
    deleted: Counts = field(default_factory=Counts)


@dataclass
class TableSize(Model):
    """The bytes of one table of the store."""

    table: str = ""
    bytes: int = 0


@dataclass
class Stats(Model):
    """The store's counts and size."""

    users: int = 0
    threads: int = 0
    messages: int = 0
    store_bytes: int = 0
    tables: List[TableSize] = field(default_factory=list)


@dataclass
class Health(Model):
    """The answer of /healthz."""

    status: str = ""
    version: str = omitempty()


# Exports and imports.


@dataclass
class MemoryExport(Memory):
    """A memory with its history, as a user export holds it."""

    history: List[MemoryChange] = omitempty([])


@dataclass
class EntityExport(Entity):
    """An entity with the threads that refer to it, as a user export holds
    it."""

    references: List[EntityRef] = omitempty([])


@dataclass
class UserExport(Model):
    """Everything stored for a user, as users.import_ takes it."""

    version: int = 0
    user_id: str = ""
    exported_at: str = time_field()
    threads: List[ThreadExport] = field(default_factory=list)
    sessions: List[Session] = field(default_factory=list)
    notes: List[Notes] = field(default_factory=list)
    memories: List[MemoryExport] = field(default_factory=list)
    profiles: List[Profile] = field(default_factory=list)
    entities: List[EntityExport] = field(default_factory=list)
    reflections: List[Reflection] = field(default_factory=list)


@dataclass
class ImportCounts(Model):
    """Records of a user import, by kind."""

    threads: int = 0
    messages: int = 0
    sessions: int = 0
    notes: int = 0
    memories: int = 0
    profiles: int = 0
    entities: int = 0
    reflections: int = 0


@dataclass
class ImportResult(Model):
    """What a user import wrote, skipped, replaced, and found twice in the
    file."""

    imported: ImportCounts = field(default_factory=ImportCounts)
    skipped: ImportCounts = field(default_factory=ImportCounts)
    replaced: ImportCounts = field(default_factory=ImportCounts)
    duplicates: ImportCounts = field(default_factory=ImportCounts)
    thread_ids: List[str] = field(default_factory=list)
    memory_ids: List[str] = field(default_factory=list)


# Request fields: plain dicts of these shapes.


class FunctionCallParam(TypedDict):
    name: str
    arguments: str  # JSON


class ToolCallParam(TypedDict):
    id: str
    type: str  # "function"
    function: FunctionCallParam


class _MessageRole(TypedDict):
    role: str  # system, user, assistant or tool


class MessageParam(_MessageRole, total=False):
    """A message to append: ``{"role": "user", "content": "…"}`` and, as
    needed, the rest (an ``id`` of the client's makes a resend recognised;
    ``created_at`` dates history from elsewhere)."""

    content: str
    name: str
    tool_calls: List[ToolCallParam]
    tool_call_id: str
    metadata: Dict[str, Any]
    id: str
    created_at: Union[str, datetime]


class SummarizePolicy(TypedDict, total=False):
    """When a context asks for a newer summary, and what stays verbatim."""

    trigger_turns: int
    trigger_fraction: float
    keep_turns: int
    keep_fraction: float


class ContextInclude(TypedDict, total=False):
    """Sections of a context, each included unless False."""

    system: bool
    init: bool
    summary: bool
    memories: bool
    messages: bool


class ContextPolicy(TypedDict, total=False):
    """The policy of the context a turn builds (turns.begin): the fields of
    threads.context but those the turn sets itself (the input, the query,
    drawn from the newest user message, and the format, messages).
    ``system`` is the client's own system prompt."""

    budget_tokens: int
    model: str
    strategy: str  # trim, window or summarize
    window_messages: int
    window_turns: int
    summarize: SummarizePolicy
    include: ContextInclude
    system: str
    prompt: str


class SearchFilters(TypedDict, total=False):
    """Filters of a search or facts question."""

    agent_id: str
    thread_id: str
    category: str
    since: Union[str, datetime]
    until: Union[str, datetime]
    include_invalid: bool


class ToolFunctionSpec(TypedDict):
    name: str
    description: str
    parameters: Dict[str, Any]  # a JSON schema


class ToolSpec(TypedDict):
    """A tool as OpenAI's function calling declares it, to hand to a model
    as it is."""

    type: str  # "function"
    function: ToolFunctionSpec
