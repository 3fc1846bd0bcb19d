"""agentmem for LangChain: a chat message history stored as an agentmem
thread, a retriever over agentmem's search, and agentmem's memory tools as
LangChain tools.

    import agentmem
    from agentmem.langchain import AgentmemChatMessageHistory, AgentmemRetriever, tools

    client = agentmem.Client("http://127.0.0.1:8080")
    chain = RunnableWithMessageHistory(
        prompt | model,
        lambda session_id: AgentmemChatMessageHistory(session_id, client=client, user="alice"),
        input_messages_key="question",
        history_messages_key="history",
    )
    retriever = AgentmemRetriever(client=client, user="alice", top_k=5)
    agent_tools = tools(client, "alice")

It needs langchain-core (``pip install 'agentmem[langchain]'``); ``import
agentmem`` alone never imports it. Each class takes a ``client``
(agentmem.Client) for LangChain's synchronous calls and an
``async_client`` (agentmem.AsyncClient) for its async ones (``ainvoke``,
``aget_messages``…); with only ``client``, the async calls run it in a
thread, as LangChain does by default.
"""

from __future__ import annotations

import json
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Union, cast

try:
    from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun
    from langchain_core.chat_history import BaseChatMessageHistory
    from langchain_core.documents import Document
    from langchain_core.messages import (
        AIMessage,
        BaseMessage,
        ChatMessage,
        FunctionMessage,
        HumanMessage,
        InvalidToolCall,
        SystemMessage,
        ToolCall,
        ToolMessage,
    )
    from langchain_core.messages.tool import invalid_tool_call, tool_call
    from langchain_core.retrievers import BaseRetriever
    from langchain_core.tools import BaseTool, StructuredTool, ToolException
    from pydantic import model_validator
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError("agentmem.langchain needs langchain-core: pip install 'agentmem[langchain]'") from e

from ._async_client import AsyncClient
from ._client import Client
from ._errors import AgentmemError, ConflictError, InvalidError, NotFoundError, UnprocessableError
from ._types import ChatMessage as ContextMessage
from ._types import Context, Message, SearchFilters, SearchResult, Telemetry, ToolSpec

__all__ = [
    "AgentmemChatMessageHistory",
    "AgentmemRetriever",
    "atools",
    "from_agentmem_message",
    "to_agentmem_message",
    "tools",
]

# The key of a message's metadata under which what LangChain knows of it,
# and agentmem's fields do not hold, is kept (its id, additional_kwargs,
# response_metadata, usage, a tool result's status and artifact, content
# blocks), so that a message reads back as it was added.
METADATA_KEY = "langchain"

# The agent of threads and sessions when none is given: the server's own
# default agent, as the REST API and MCP tools use it.
DEFAULT_AGENT = "default"

_PAGE = 1000  # the server's largest page
_NEWEST = 20  # the newest messages read for a context: its query, and mostly its verbatim turns


# Messages.


def to_agentmem_message(message: BaseMessage) -> Dict[str, Any]:
    """Returns the LangChain message as agentmem appends it: human → user,
    ai → assistant with its tool calls (OpenAI's shape, arguments as JSON),
    system → system, tool → tool with its tool_call_id; a function message
    is a tool message named for its function, and a chat message of
    another role is a user's. What agentmem's fields do not hold is kept in
    the message's metadata (``"langchain"``), so that
    from_agentmem_message gives the message back."""
    extra: Dict[str, Any] = {}
    content = message.content
    if isinstance(content, str):
        text = content
    else:
        text = _text_of(content)
        extra["content"] = content
    out: Dict[str, Any] = {"content": text}
    if message.name:
        out["name"] = message.name
    if message.id:
        extra["id"] = message.id
    if message.additional_kwargs:
        extra["additional_kwargs"] = message.additional_kwargs
    if message.response_metadata:
        extra["response_metadata"] = message.response_metadata

    if isinstance(message, HumanMessage):
        out["role"] = "user"
    elif isinstance(message, AIMessage):
        out["role"] = "assistant"
        calls = [
            _tool_call_out(c["id"], c["name"], json.dumps(c["args"], ensure_ascii=False)) for c in message.tool_calls
        ]
        calls += [_tool_call_out(c["id"], c["name"], c["args"]) for c in message.invalid_tool_calls]
        if calls:
            out["tool_calls"] = calls
        if message.usage_metadata:
            extra["usage_metadata"] = message.usage_metadata
    elif isinstance(message, SystemMessage):
        out["role"] = "system"
    elif isinstance(message, ToolMessage):
        out["role"] = "tool"
        out["tool_call_id"] = message.tool_call_id
        if message.status != "success":
            extra["status"] = message.status
        if message.artifact is not None:
            extra["artifact"] = message.artifact
    elif isinstance(message, FunctionMessage):
        # agentmem's tool messages answer a call by its ID; a function
        # message (OpenAI's legacy function calling) has its name alone.
        out["role"] = "tool"
        out["tool_call_id"] = message.name
        extra["type"] = "function"
    elif isinstance(message, ChatMessage):
        out["role"] = _CHAT_ROLES.get(message.role, "user")
        extra["type"] = "chat"
        extra["role"] = message.role
    else:
        raise ValueError(f"agentmem.langchain: a {message.type!r} message is not one agentmem stores")
    if extra:
        out["metadata"] = {METADATA_KEY: _jsonable(extra)}
    return out


_CHAT_ROLES = {"user": "user", "human": "user", "assistant": "assistant", "ai": "assistant", "system": "system"}


def from_agentmem_message(message: Message) -> BaseMessage:
    """Returns the agentmem message as LangChain's: user → HumanMessage,
    assistant → AIMessage (tool calls whose arguments are not a JSON
    object are its invalid_tool_calls), system → SystemMessage, tool →
    ToolMessage; a message added through this module comes back as it was
    added. Its id is LangChain's id if it had one, else agentmem's."""
    extra = message.metadata.get(METADATA_KEY) if isinstance(message.metadata, dict) else None
    if not isinstance(extra, dict):
        extra = {}
    content: Union[str, List[Union[str, Dict[str, Any]]]] = extra.get("content", message.content)
    common: Dict[str, Any] = {
        "content": content,
        "id": extra.get("id") or message.id or None,
        "additional_kwargs": extra.get("additional_kwargs") or {},
        "response_metadata": extra.get("response_metadata") or {},
    }
    if message.name:
        common["name"] = message.name
    kind = extra.get("type")

    if kind == "chat":
        return ChatMessage(role=str(extra.get("role", message.role)), **common)
    if message.role == "assistant":
        calls: List[ToolCall] = []
        invalid: List[InvalidToolCall] = []
        for c in message.tool_calls:
            call_id = c.id or None
            try:
                args = json.loads(c.function.arguments) if c.function.arguments else {}
            except ValueError:
                args = None
            if isinstance(args, dict):
                calls.append(tool_call(name=c.function.name, args=args, id=call_id))
            else:
                invalid.append(invalid_tool_call(name=c.function.name, args=c.function.arguments, id=call_id))
        return AIMessage(
            tool_calls=calls, invalid_tool_calls=invalid, usage_metadata=extra.get("usage_metadata"), **common
        )
    if message.role == "system":
        return SystemMessage(**common)
    if message.role == "tool":
        if kind == "function":
            common["name"] = message.name or message.tool_call_id
            return FunctionMessage(**common)
        return ToolMessage(
            tool_call_id=message.tool_call_id,
            status=extra.get("status", "success"),
            artifact=extra.get("artifact"),
            **common,
        )
    return HumanMessage(**common)


def _tool_call_out(call_id: Optional[str], name: Optional[str], arguments: Optional[str]) -> Dict[str, Any]:
    return {"id": call_id or "", "type": "function", "function": {"name": name or "", "arguments": arguments or ""}}


def _text_of(blocks: Iterable[Union[str, Dict[str, Any]]]) -> str:
    """The text of content blocks: what agentmem searches, counts and
    learns from."""
    parts = []
    for b in blocks:
        if isinstance(b, str):
            parts.append(b)
        elif isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str):
            parts.append(b["text"])
    return "\n".join(parts)


def _jsonable(value: Any) -> Any:
    """value as JSON can hold it: Pydantic models as their dumps, anything
    else unknown as its string."""

    def default(o: Any) -> Any:
        dump = getattr(o, "model_dump", None)
        return dump(mode="json") if callable(dump) else str(o)

    return json.loads(json.dumps(value, default=default))


# The chat message history.


class AgentmemChatMessageHistory(BaseChatMessageHistory):
    """A LangChain chat message history stored as an agentmem thread of
    ``user`` (the client's user when None), so that agentmem summarises it,
    learns the user's memories from it and searches it.

    ``session_id`` is the thread's ID: the thread is begun (of
    ``agent_id``) by the first message added. With ``session_id=None`` the
    history is the active session of the user and agent (seed 003's
    ``user_agent_active_sessions``): the agent's current thread, opened
    when it has none, which the server keeps across processes and devices.

    ``messages`` is the whole thread, oldest first. With
    ``context_tokens``, it is agentmem's context of the thread within that
    many tokens instead (counted by ``model``'s tokenizer, the server's by
    default): the user's profile and notes, the summary of older turns and
    the long-term memories relevant to the newest user message (learned in
    any of the user's threads) as system messages, then the newest turns
    that fit, as they were added; ``telemetry`` then says what it drew on.

    ``clear()`` permanently deletes the thread, whose ID then begins afresh
    with the next message; in a session, it ends the thread instead (it is
    summarised and reflected on) and the session goes on in a new thread.
    Either way, the memories agentmem learned stay with the user.
    """

    def __init__(
        self,
        session_id: Optional[str] = None,
        *,
        client: Optional[Client] = None,
        async_client: Optional[AsyncClient] = None,
        user: Optional[str] = None,
        agent_id: Optional[str] = None,
        context_tokens: Optional[int] = None,
        model: Optional[str] = None,
    ) -> None:
        super().__init__()
        if client is None and async_client is None:
            raise ValueError("AgentmemChatMessageHistory needs client= (agentmem.Client) or async_client=")
        self.client = client
        self.async_client = async_client
        self.user = user
        self.agent_id = agent_id
        self.context_tokens = context_tokens
        self.model = model
        self.session_id = session_id  # the thread; in a session, None until known
        self.telemetry: Optional[Telemetry] = None  # of the last context read
        self._in_session = session_id is None

    def _agent(self) -> str:
        return self.agent_id or DEFAULT_AGENT

    def _sync(self) -> Client:
        if self.client is None:
            raise RuntimeError(
                "AgentmemChatMessageHistory was made with an async_client alone: use its async methods "
                "(aget_messages, aadd_messages, aclear), or pass client= too"
            )
        return self.client

    def _thread(self, client: Client) -> str:
        if self.session_id is None:
            session, _ = client.sessions.open(self._agent(), self.user)
            self.session_id = session.thread_id
        return self.session_id

    async def _athread(self, client: AsyncClient) -> str:
        if self.session_id is None:
            session, _ = await client.sessions.open(self._agent(), self.user)
            self.session_id = session.thread_id
        return self.session_id

    @property
    def messages(self) -> List[BaseMessage]:  # type: ignore[override]
        """The thread's messages, oldest first (none before the first is
        added)."""
        client = self._sync()
        thread = self._thread(client)
        if self.context_tokens is not None:
            try:
                newest = client.messages.list(thread, self.user, order="desc", limit=_NEWEST)
                ctx = client.threads.context(thread, self.user, **self._context_args(newest.data))
                n = ctx.telemetry.included_messages
                if n > len(newest.data):
                    newest = client.messages.list(thread, self.user, order="desc", limit=min(n, _PAGE))
            except NotFoundError:
                return []
            self.telemetry = ctx.telemetry
            return _context_messages(ctx, newest.data)
        out: List[BaseMessage] = []
        try:
            for m in client.messages.iter(thread, self.user, limit=_PAGE):
                out.append(from_agentmem_message(m))
        except NotFoundError:
            if out:
                raise
        return out

    def _context_args(self, newest_first: List[Message]) -> Dict[str, Any]:
        query = next((m.content for m in newest_first if m.role == "user" and m.content), None)
        return {"query": query, "budget_tokens": self.context_tokens, "model": self.model, "format": "messages"}

    async def aget_messages(self) -> List[BaseMessage]:
        if self.async_client is None:
            return await super().aget_messages()
        client = self.async_client
        thread = await self._athread(client)
        if self.context_tokens is not None:
            try:
                newest = await client.messages.list(thread, self.user, order="desc", limit=_NEWEST)
                ctx = await client.threads.context(thread, self.user, **self._context_args(newest.data))
                n = ctx.telemetry.included_messages
                if n > len(newest.data):
                    newest = await client.messages.list(thread, self.user, order="desc", limit=min(n, _PAGE))
            except NotFoundError:
                return []
            self.telemetry = ctx.telemetry
            return _context_messages(ctx, newest.data)
        out: List[BaseMessage] = []
        try:
            async for m in client.messages.iter(thread, self.user, limit=_PAGE):
                out.append(from_agentmem_message(m))
        except NotFoundError:
            if out:
                raise
        return out

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        """Appends the messages to the thread as one batch (atomic, and
        retried safely with its idempotency key), beginning the thread if
        it has not begun."""
        if not messages:
            return
        client = self._sync()
        thread = self._thread(client)
        batch = [to_agentmem_message(m) for m in messages]
        try:
            client.messages.append(thread, batch, self.user)
        except NotFoundError:
            try:
                client.threads.create(self.user, id=thread, agent_id=self.agent_id)
            except ConflictError as conflict:  # begun meanwhile, or deleted and holding its ID
                try:
                    client.messages.append(thread, batch, self.user)
                except NotFoundError:
                    raise conflict from None
                return
            client.messages.append(thread, batch, self.user)

    async def aadd_messages(self, messages: Sequence[BaseMessage]) -> None:
        if self.async_client is None:
            return await super().aadd_messages(messages)
        if not messages:
            return
        client = self.async_client
        thread = await self._athread(client)
        batch = [to_agentmem_message(m) for m in messages]
        try:
            await client.messages.append(thread, batch, self.user)
        except NotFoundError:
            try:
                await client.threads.create(self.user, id=thread, agent_id=self.agent_id)
            except ConflictError as conflict:
                try:
                    await client.messages.append(thread, batch, self.user)
                except NotFoundError:
                    raise conflict from None
                return
            await client.messages.append(thread, batch, self.user)

    def clear(self) -> None:
        client = self._sync()
        if not self._in_session:
            try:
                client.threads.delete(self._thread(client), self.user, permanent=True)
            except NotFoundError:
                pass
            return
        try:
            current: Optional[str] = client.sessions.get(self._agent(), self.user).thread_id
        except NotFoundError:
            current = None
        if current:
            try:
                client.threads.end(current, self.user)
            except NotFoundError:
                pass
        thread = client.threads.create(self.user, agent_id=self._agent())
        client.sessions.set(self._agent(), thread.id, self.user)
        self.session_id = thread.id

    async def aclear(self) -> None:
        if self.async_client is None:
            return await super().aclear()
        client = self.async_client
        if not self._in_session:
            try:
                await client.threads.delete(await self._athread(client), self.user, permanent=True)
            except NotFoundError:
                pass
            return
        try:
            current: Optional[str] = (await client.sessions.get(self._agent(), self.user)).thread_id
        except NotFoundError:
            current = None
        if current:
            try:
                await client.threads.end(current, self.user)
            except NotFoundError:
                pass
        thread = await client.threads.create(self.user, agent_id=self._agent())
        await client.sessions.set(self._agent(), thread.id, self.user)
        self.session_id = thread.id


def _context_messages(ctx: Context, newest_first: List[Message]) -> List[BaseMessage]:
    """The context's messages as LangChain's. Its last
    telemetry.included_messages are the thread's newest messages,
    verbatim: those are given as they were added (newest_first, the
    thread's newest stored messages) when they match; what comes before
    them (profile, summary, memories) is the context's own."""
    n = ctx.telemetry.included_messages
    head = ctx.messages[: len(ctx.messages) - n]
    tail = ctx.messages[len(ctx.messages) - n :] if n else []
    stored = list(reversed(newest_first[:n])) if n else []
    if len(stored) == len(tail) and all(_matches(s, c) for s, c in zip(stored, tail)):
        verbatim = [from_agentmem_message(s) for s in stored]
    else:
        verbatim = [from_agentmem_message(_of_context(c)) for c in tail]
    return [from_agentmem_message(_of_context(c)) for c in head] + verbatim


def _of_context(c: ContextMessage) -> Message:
    return Message(role=c.role, content=c.content, name=c.name, tool_calls=c.tool_calls, tool_call_id=c.tool_call_id)


def _matches(stored: Message, built: ContextMessage) -> bool:
    return (stored.role, stored.content, stored.tool_call_id, [c.id for c in stored.tool_calls]) == (
        built.role,
        built.content,
        built.tool_call_id,
        [c.id for c in built.tool_calls],
    )


# The retriever.

_SEARCH_FIELDS = ("scopes", "kinds", "top_k", "min_score", "filters", "recency_half_life", "importance_weight")


class AgentmemRetriever(BaseRetriever):
    """A LangChain retriever over agentmem's hybrid search of what it knows
    about ``user`` (the client's user when None): the memories it learned,
    the messages, chunks of turns and thread summaries.

    ``scopes`` (memories, messages, chunks, summaries; the server's default
    is memories and messages) or ``kinds`` (memories, insights, messages,
    chunks, summaries), ``top_k`` (the server's default, 5, when None),
    ``min_score`` (compared with each result's relevance), ``filters``
    (agent_id, thread_id, category, since, until, include_invalid),
    ``recency_half_life`` and ``importance_weight`` are the search's; each
    can also be given to ``invoke`` (``retriever.invoke(q, top_k=10)``).

    Each result is a Document whose page_content is its text and whose
    metadata holds ``kind`` (memory, message, chunk, summary), ``id`` (of
    the memory, message or chunk; a summary's is its thread's), ``score``
    (the fused rank, 0 to 1), ``relevance`` (the chance that it bears on
    the query), ``scores`` (per signal) and, where it has them,
    ``thread_id``, ``seq_from`` and ``seq_to`` (the turns it came from),
    ``created_at``, ``invalid_at``, ``superseded_by``, ``superseded_text``.
    """

    client: Optional[Client] = None
    async_client: Optional[AsyncClient] = None
    user: Optional[str] = None
    scopes: Optional[List[str]] = None
    kinds: Optional[List[str]] = None
    top_k: Optional[int] = None
    min_score: Optional[float] = None
    filters: Optional[Dict[str, Any]] = None
    recency_half_life: Optional[str] = None
    importance_weight: Optional[float] = None

    @model_validator(mode="after")
    def _has_client(self) -> "AgentmemRetriever":
        if self.client is None and self.async_client is None:
            raise ValueError("AgentmemRetriever needs client= (agentmem.Client) or async_client=")
        return self

    def _search_args(self, overrides: Mapping[str, Any]) -> Dict[str, Any]:
        unknown = set(overrides) - set(_SEARCH_FIELDS)
        if unknown:
            raise TypeError(f"AgentmemRetriever: unknown search arguments {sorted(unknown)}; it takes {_SEARCH_FIELDS}")
        args = {name: getattr(self, name) for name in _SEARCH_FIELDS}
        args.update(overrides)
        args["filters"] = cast(Optional[SearchFilters], args["filters"])
        return args

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, **kwargs: Any
    ) -> List[Document]:
        if self.client is None:
            raise RuntimeError("AgentmemRetriever was made with an async_client alone: use ainvoke, or pass client=")
        response = self.client.search(query, self.user, **self._search_args(kwargs))
        return [_document(r) for r in response.results]

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun, **kwargs: Any
    ) -> List[Document]:
        if self.async_client is None:
            return await super()._aget_relevant_documents(query, run_manager=run_manager, **kwargs)
        response = await self.async_client.search(query, self.user, **self._search_args(kwargs))
        return [_document(r) for r in response.results]


def _document(r: SearchResult) -> Document:
    metadata: Dict[str, Any] = {
        "kind": r.kind,
        "id": r.id,
        "score": r.score,
        "relevance": r.relevance,
        "scores": dict(r.scores),
    }
    for name in ("thread_id", "seq_from", "seq_to", "created_at", "invalid_at", "superseded_by", "superseded_text"):
        value = getattr(r, name)
        if value:
            metadata[name] = value
    return Document(page_content=r.text, metadata=metadata, id=r.id or None)


# The tools.

# Errors that answer the tool's arguments (a model's mistake, which it can
# mend): LangChain hands them back to the model as the tool's result.
_ARGUMENT_ERRORS = (InvalidError, NotFoundError, ConflictError, UnprocessableError)


def tools(
    client: Optional[Client] = None,
    user: Optional[str] = None,
    *,
    agent: Optional[str] = None,
    async_client: Optional[AsyncClient] = None,
    names: Optional[Sequence[str]] = None,
) -> List[BaseTool]:
    """agentmem's memory tools (GET /v1/tools: remember, search_memory,
    retrieve_user_facts, get_context, manage_notes, forget…) as LangChain
    StructuredTools acting for ``user`` (the client's user when None) and
    ``agent`` (of notes and sessions; the server's default agent when
    None); ``names`` picks some. Each call is POST
    /v1/users/{user}/tools/{name}, and its result the tool's JSON. An
    error the arguments caused (400, 404, 409, 422) is a ToolException,
    which LangChain hands back to the model as the tool's result.

    The tools' list is read with ``client``; with an ``async_client``
    alone, use atools."""
    if client is None:
        raise ValueError("tools needs client= (agentmem.Client); with an AsyncClient alone, await atools(...)")
    return _tools(client.tools.list(), client, async_client, user, agent, names)


async def atools(
    async_client: AsyncClient,
    user: Optional[str] = None,
    *,
    agent: Optional[str] = None,
    client: Optional[Client] = None,
    names: Optional[Sequence[str]] = None,
) -> List[BaseTool]:
    """tools, with the list read by ``async_client``: tools that run
    with ``ainvoke`` (and with ``invoke`` too when ``client`` is given)."""
    return _tools(await async_client.tools.list(), client, async_client, user, agent, names)


def _tools(
    specs: List[ToolSpec],
    client: Optional[Client],
    async_client: Optional[AsyncClient],
    user: Optional[str],
    agent: Optional[str],
    names: Optional[Sequence[str]],
) -> List[BaseTool]:
    known = [s["function"]["name"] for s in specs]
    if names is not None:
        missing = [n for n in names if n not in known]
        if missing:
            raise ValueError(f"agentmem has no tool {missing}; it has {known}")
    out: List[BaseTool] = []
    for spec in specs:
        fn = spec["function"]
        if names is not None and fn["name"] not in names:
            continue
        out.append(_tool(fn["name"], fn["description"], fn["parameters"], client, async_client, user, agent))
    return out


def _tool(
    name: str,
    description: str,
    parameters: Dict[str, Any],
    client: Optional[Client],
    async_client: Optional[AsyncClient],
    user: Optional[str],
    agent: Optional[str],
) -> StructuredTool:
    def run(**arguments: Any) -> str:
        assert client is not None
        try:
            return _result(client.tools.call(name, _arguments(arguments), user, agent=agent))
        except _ARGUMENT_ERRORS as e:
            raise ToolException(_error_text(e)) from e

    async def arun(**arguments: Any) -> str:
        assert async_client is not None
        try:
            return _result(await async_client.tools.call(name, _arguments(arguments), user, agent=agent))
        except _ARGUMENT_ERRORS as e:
            raise ToolException(_error_text(e)) from e

    return StructuredTool(
        name=name,
        description=description,
        args_schema=parameters,
        func=run if client is not None else None,
        coroutine=arun if async_client is not None else None,
        handle_tool_error=True,
    )


def _arguments(arguments: Mapping[str, Any]) -> Dict[str, Any]:
    # A model may send null for an argument it leaves out; the tools'
    # schemas take no nulls.
    return {k: v for k, v in arguments.items() if v is not None}


def _result(result: Any) -> str:
    return result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)


def _error_text(e: AgentmemError) -> str:
    return f"{e.code}: {e.message}"
