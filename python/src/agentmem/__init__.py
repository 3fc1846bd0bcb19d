"""agentmem: the Python client of agentmem, the memory service for LLM
agents.

    import agentmem

    client = agentmem.Client("http://127.0.0.1:8080", user="alice")
    client.threads.create(id="trip")
    client.messages.append("trip", [{"role": "user", "content": "I am vegetarian."}])
    for thread in client.threads.iter():
        print(thread.id, thread.title)

AsyncClient has the same methods, to await (``iter`` yields with ``async
for``). Every REST route of the server has a method; errors are raised as
AgentmemError subclasses (NotFoundError, ConflictError…) carrying the
API's ``code``, ``status`` and ``message``.
"""

from ._async_client import AsyncClient
from ._base import __version__, parse_time
from ._client import Client
from ._errors import (
    AgentmemError,
    APIConnectionError,
    ConflictError,
    ForbiddenError,
    InternalError,
    InvalidError,
    NotFoundError,
    RateLimitedError,
    TooLargeError,
    UnauthorizedError,
    UnavailableError,
    UnprocessableError,
)
from ._model import Model
from ._types import (
    APIKey,
    AuditEvent,
    Caller,
    ChatMessage,
    CleanupResult,
    Context,
    ContextInclude,
    Counts,
    Element,
    Entity,
    EntityExport,
    EntityRef,
    FactsResponse,
    FunctionCall,
    FunctionCallParam,
    Health,
    ImportCounts,
    ImportResult,
    Job,
    Memory,
    MemoryChange,
    MemoryExport,
    Message,
    MessageParam,
    NewKey,
    Notes,
    Page,
    Profile,
    Reflection,
    Scope,
    SearchFilters,
    SearchResponse,
    SearchResult,
    SeqRange,
    Session,
    Stats,
    SummarizePolicy,
    TableSize,
    Telemetry,
    Thread,
    ThreadExport,
    ThreadRange,
    ToolCall,
    ToolCallParam,
    ToolFunctionSpec,
    ToolSpec,
    UserExport,
    UserSummary,
)

__all__ = [
    "AsyncClient",
    "Client",
    "__version__",
    "parse_time",
    # errors
    "AgentmemError",
    "APIConnectionError",
    "ConflictError",
    "ForbiddenError",
    "InternalError",
    "InvalidError",
    "NotFoundError",
    "RateLimitedError",
    "TooLargeError",
    "UnauthorizedError",
    "UnavailableError",
    "UnprocessableError",
    # records
    "Model",
    "Page",
    "APIKey",
    "AuditEvent",
    "Caller",
    "ChatMessage",
    "CleanupResult",
    "Context",
    "Counts",
    "Element",
    "Entity",
    "EntityExport",
    "EntityRef",
    "FactsResponse",
    "FunctionCall",
    "Health",
    "ImportCounts",
    "ImportResult",
    "Job",
    "Memory",
    "MemoryChange",
    "MemoryExport",
    "Message",
    "NewKey",
    "Notes",
    "Profile",
    "Reflection",
    "Scope",
    "SearchResponse",
    "SearchResult",
    "SeqRange",
    "Session",
    "Stats",
    "TableSize",
    "Telemetry",
    "Thread",
    "ThreadExport",
    "ThreadRange",
    "ToolCall",
    "UserExport",
    "UserSummary",
    # request fields
    "ContextInclude",
    "FunctionCallParam",
    "MessageParam",
    "SearchFilters",
    "SummarizePolicy",
    "ToolCallParam",
    "ToolFunctionSpec",
    "ToolSpec",
]
