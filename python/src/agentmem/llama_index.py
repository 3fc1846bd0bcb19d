"""agentmem for LlamaIndex: a chat store whose keys are agentmem threads,
a memory whose get() is agentmem's context of the thread within a token
budget, and a memory block that brings agentmem's long-term memories
into LlamaIndex's Memory.

    import agentmem
    from agentmem.llama_index import AgentmemChatStore, AgentmemMemory, AgentmemMemoryBlock

    client = agentmem.Client("http://127.0.0.1:8080")
    # Seed 002's ChatMemoryBuffer, its history kept by agentmem:
    memory = ChatMemoryBuffer.from_defaults(
        token_limit=3000, chat_store=AgentmemChatStore(client=client, user="alice"), chat_store_key=session_id
    )
    # Or agentmem's own context (profile, summary, relevant memories, the
    # newest turns within the budget):
    memory = AgentmemMemory.from_defaults(client=client, user="alice", chat_store_key=session_id, token_limit=3000)
    engine = SimpleChatEngine.from_defaults(llm=llm, memory=memory)

It needs llama-index-core (``pip install 'agentmem[llama-index]'``);
``import agentmem`` alone never imports it. Each class takes a ``client``
(agentmem.Client) for LlamaIndex's synchronous calls and an
``async_client`` (agentmem.AsyncClient) for its async ones; with only
``client``, the async calls run it in a thread, as LlamaIndex does by
default.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, Dict, List, Optional, Sequence, Union

try:
    from llama_index.core.base.llms.types import ChatMessage, MessageRole, TextBlock, ToolCallBlock
    from llama_index.core.bridge.pydantic import ConfigDict, Field, PrivateAttr, model_validator
    from llama_index.core.llms import LLM
    from llama_index.core.memory import BaseMemoryBlock
    from llama_index.core.memory.types import DEFAULT_CHAT_STORE_KEY, BaseChatStoreMemory
    from llama_index.core.storage.chat_store import BaseChatStore
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError("agentmem.llama_index needs llama-index-core: pip install 'agentmem[llama-index]'") from e

from ._async_client import AsyncClient
from ._client import Client
from ._errors import ConflictError, NotFoundError
from ._types import ChatMessage as ContextMessage
from ._types import Context, Message, Telemetry, Thread, ToolCall

__all__ = [
    "AgentmemChatStore",
    "AgentmemMemory",
    "AgentmemMemoryBlock",
    "from_agentmem_message",
    "to_agentmem_message",
]

# The key of a message's metadata under which what LlamaIndex knows of it,
# and agentmem's fields do not hold, is kept (additional_kwargs, blocks
# other than text and tool calls, a role agentmem has not), so that a
# message reads back as it was added.
METADATA_KEY = "llama_index"

_PAGE = 1000  # the server's largest page

_ROLES = {
    MessageRole.SYSTEM: "system",
    MessageRole.DEVELOPER: "system",
    MessageRole.USER: "user",
    MessageRole.ASSISTANT: "assistant",
    MessageRole.CHATBOT: "assistant",
    MessageRole.MODEL: "assistant",
    MessageRole.TOOL: "tool",
    MessageRole.FUNCTION: "tool",
}


# Messages.


def to_agentmem_message(message: ChatMessage) -> Dict[str, Any]:
    """Returns the LlamaIndex message as agentmem appends it: its text
    blocks as the content, its tool calls (ToolCallBlocks, or OpenAI's
    ``additional_kwargs["tool_calls"]``) as agentmem's, a tool message's
    ``additional_kwargs`` tool_call_id and name as agentmem's fields;
    system and developer → system, assistant, chatbot and model →
    assistant, tool and function → tool. What agentmem's fields do not
    hold is kept in the message's metadata (``"llama_index"``), so that
    from_agentmem_message gives the message back."""
    role = MessageRole(message.role)
    kwargs = _plain(message.additional_kwargs)
    text = "\n".join(b.text for b in message.blocks if isinstance(b, TextBlock))
    out: Dict[str, Any] = {"role": _ROLES[role], "content": text}
    calls = [_call_of_block(b) for b in message.blocks if isinstance(b, ToolCallBlock)]
    if not calls and isinstance(kwargs.get("tool_calls"), list):
        calls = [_call_of_openai(c) for c in kwargs["tool_calls"]]
    if calls:
        out["tool_calls"] = calls
    if isinstance(kwargs.get("name"), str) and kwargs["name"]:
        out["name"] = kwargs["name"]
    if out["role"] == "tool":
        # agentmem's tool messages answer a call by its ID.
        out["tool_call_id"] = str(kwargs.get("tool_call_id") or kwargs.get("name") or role.value)

    extra: Dict[str, Any] = {}
    if kwargs:
        extra["additional_kwargs"] = kwargs
    if role.value != out["role"]:
        extra["role"] = role.value
    if _blocks_of(text, out.get("tool_calls", [])) != message.blocks:
        extra["blocks"] = [b.model_dump(mode="json") for b in message.blocks]
    if extra:
        out["metadata"] = {METADATA_KEY: extra}
    return out


def from_agentmem_message(message: Union[Message, ContextMessage]) -> ChatMessage:
    """Returns the agentmem message (stored, or of a built context) as
    LlamaIndex's: its content a TextBlock, its tool calls ToolCallBlocks, a
    tool message's tool_call_id and name in additional_kwargs; a message
    added through this module comes back as it was added."""
    metadata = getattr(message, "metadata", None)
    extra = metadata.get(METADATA_KEY) if isinstance(metadata, dict) else None
    if not isinstance(extra, dict):
        extra = {}
    kwargs = extra.get("additional_kwargs")
    if not isinstance(kwargs, dict):
        kwargs = {}
        if message.role == "tool":
            kwargs["tool_call_id"] = message.tool_call_id
        if message.name:
            kwargs["name"] = message.name
    calls = [_dict_of_call(c) for c in message.tool_calls]
    blocks: Any = extra["blocks"] if "blocks" in extra else _blocks_of(message.content, calls)
    return ChatMessage(role=extra.get("role", message.role), blocks=blocks, additional_kwargs=kwargs)


def _blocks_of(text: str, calls: Sequence[Dict[str, Any]]) -> List[Any]:
    """The blocks of a message of text and tool calls (agentmem's shape):
    a text block unless the text is empty beside tool calls, then a tool
    call block per call."""
    blocks: List[Any] = [TextBlock(text=text)] if text or not calls else []
    for c in calls:
        arguments = c["function"]["arguments"]
        try:
            parsed = json.loads(arguments) if arguments else {}
        except ValueError:
            parsed = arguments
        blocks.append(
            ToolCallBlock(
                tool_call_id=c["id"] or None,
                tool_name=c["function"]["name"],
                tool_kwargs=parsed if isinstance(parsed, dict) else arguments,
            )
        )
    return blocks


def _call_of_block(b: ToolCallBlock) -> Dict[str, Any]:
    arguments = b.tool_kwargs if isinstance(b.tool_kwargs, str) else json.dumps(b.tool_kwargs, ensure_ascii=False)
    return {"id": b.tool_call_id or "", "type": "function", "function": {"name": b.tool_name, "arguments": arguments}}


def _call_of_openai(c: Any) -> Dict[str, Any]:
    """A tool call as OpenAI's SDK gives it (a dict or its object)."""
    d = c if isinstance(c, dict) else _plain(c)
    fn = d.get("function") or {}
    return {
        "id": d.get("id") or "",
        "type": "function",
        "function": {"name": fn.get("name") or "", "arguments": fn.get("arguments") or ""},
    }


def _dict_of_call(c: ToolCall) -> Dict[str, Any]:
    return {
        "id": c.id,
        "type": c.type or "function",
        "function": {"name": c.function.name, "arguments": c.function.arguments},
    }


def _plain(value: Any) -> Any:
    """value as JSON can hold it (Pydantic models dumped, bytes in
    base64, as LlamaIndex serialises additional_kwargs; anything else
    unknown as its string)."""
    dumped = ChatMessage(additional_kwargs={"v": value}).model_dump(mode="json")["additional_kwargs"]["v"]
    return json.loads(json.dumps(dumped, default=str))


def _param_of(m: Message) -> Dict[str, Any]:
    """A stored message as append takes it again (a thread rewritten):
    its own time and metadata kept."""
    p: Dict[str, Any] = {"role": m.role, "content": m.content, "metadata": m.metadata}
    if m.name:
        p["name"] = m.name
    if m.tool_calls:
        p["tool_calls"] = [_dict_of_call(c) for c in m.tool_calls]
    if m.tool_call_id:
        p["tool_call_id"] = m.tool_call_id
    if m.created_at:
        p["created_at"] = m.created_at
    return p


# The chat store.


class AgentmemChatStore(BaseChatStore):
    """A LlamaIndex chat store whose keys are the threads of ``user`` (the
    client's user when None): ``ChatMemoryBuffer(chat_store=…,
    chat_store_key=session_id)`` keeps its history in agentmem, which
    summarises it, learns the user's memories from it and searches it.

    A key's thread is begun (of ``agent_id``) by its first message.
    agentmem never deletes a message alone: ``set_messages`` appends when
    the thread holds a prefix of the new messages, and otherwise, like
    ``delete_message`` and ``delete_last_message``, rewrites the thread
    (deleted permanently and appended again, each message with its own
    time); ``delete_messages`` deletes the thread permanently. The
    memories agentmem learned stay with the user. ``get_keys`` lists the
    user's threads (of ``agent_id`` when given), newest updated first.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    client: Optional[Client] = Field(default=None, exclude=True)
    async_client: Optional[AsyncClient] = Field(default=None, exclude=True)
    user: Optional[str] = None
    agent_id: Optional[str] = None

    @model_validator(mode="after")
    def _has_client(self) -> "AgentmemChatStore":
        if self.client is None and self.async_client is None:
            raise ValueError("AgentmemChatStore needs client= (agentmem.Client) or async_client=")
        return self

    @classmethod
    def class_name(cls) -> str:
        return "AgentmemChatStore"

    def _sync(self) -> Client:
        if self.client is None:
            raise RuntimeError(
                "AgentmemChatStore was made with an async_client alone: use its async methods, or pass client= too"
            )
        return self.client

    # Synchronous.

    def _stored(self, key: str) -> Optional[List[Message]]:
        """The thread's messages, or None when it has not begun."""
        out: List[Message] = []
        try:
            for m in self._sync().messages.iter(key, self.user, limit=_PAGE):
                out.append(m)
        except NotFoundError:
            if out:
                raise
            return None
        return out

    def _append(self, key: str, params: List[Dict[str, Any]]) -> None:
        if not params:
            return
        client = self._sync()
        try:
            client.messages.append(key, params, self.user)
        except NotFoundError:
            try:
                client.threads.create(self.user, id=key, agent_id=self.agent_id)
            except ConflictError as conflict:  # begun meanwhile, or deleted and holding its ID
                try:
                    client.messages.append(key, params, self.user)
                except NotFoundError:
                    raise conflict from None
                return
            client.messages.append(key, params, self.user)

    def _rewrite(self, key: str, params: List[Dict[str, Any]]) -> None:
        client = self._sync()
        try:
            thread: Optional[Thread] = client.threads.get(key, self.user)
        except NotFoundError:
            thread = None
        self._delete(key)
        client.threads.create(self.user, **_thread_fields(key, thread, self.agent_id))
        self._append(key, params)

    def _delete(self, key: str) -> None:
        try:
            self._sync().threads.delete(key, self.user, permanent=True)
        except NotFoundError:
            pass

    def set_messages(self, key: str, messages: List[ChatMessage]) -> None:
        stored = self._stored(key)
        if stored is not None and _is_prefix(stored, messages):
            self._append(key, [to_agentmem_message(m) for m in messages[len(stored) :]])
            return
        self._rewrite(key, [to_agentmem_message(m) for m in messages])

    def get_messages(self, key: str) -> List[ChatMessage]:
        return [from_agentmem_message(m) for m in self._stored(key) or []]

    def add_message(self, key: str, message: ChatMessage, idx: Optional[int] = None) -> None:
        """Appends the message, or (``idx``) inserts it by rewriting the
        thread."""
        if idx is None:
            self._append(key, [to_agentmem_message(message)])
            return
        stored = self._stored(key) or []
        params = [_param_of(m) for m in stored]
        params.insert(idx, to_agentmem_message(message))
        self._rewrite(key, params)

    def add_messages(self, key: str, messages: Sequence[ChatMessage]) -> None:
        """Appends the messages as one batch (atomic)."""
        self._append(key, [to_agentmem_message(m) for m in messages])

    def delete_messages(self, key: str) -> Optional[List[ChatMessage]]:
        stored = self._stored(key)
        if stored is None:
            return None
        self._delete(key)
        return [from_agentmem_message(m) for m in stored]

    def delete_message(self, key: str, idx: int) -> Optional[ChatMessage]:
        stored = self._stored(key)
        if stored is None or not -len(stored) <= idx < len(stored):
            return None
        removed = stored.pop(idx)
        self._rewrite(key, [_param_of(m) for m in stored])
        return from_agentmem_message(removed)

    def delete_last_message(self, key: str) -> Optional[ChatMessage]:
        return self.delete_message(key, -1)

    def get_keys(self) -> List[str]:
        return [t.id for t in self._sync().threads.iter(self.user, agent_id=self.agent_id, limit=_PAGE)]

    # Asynchronous: the same, with the async client.

    async def _astored(self, key: str) -> Optional[List[Message]]:
        assert self.async_client is not None
        out: List[Message] = []
        try:
            async for m in self.async_client.messages.iter(key, self.user, limit=_PAGE):
                out.append(m)
        except NotFoundError:
            if out:
                raise
            return None
        return out

    async def _aappend(self, key: str, params: List[Dict[str, Any]]) -> None:
        assert self.async_client is not None
        if not params:
            return
        client = self.async_client
        try:
            await client.messages.append(key, params, self.user)
        except NotFoundError:
            try:
                await client.threads.create(self.user, id=key, agent_id=self.agent_id)
            except ConflictError as conflict:
                try:
                    await client.messages.append(key, params, self.user)
                except NotFoundError:
                    raise conflict from None
                return
            await client.messages.append(key, params, self.user)

    async def _arewrite(self, key: str, params: List[Dict[str, Any]]) -> None:
        assert self.async_client is not None
        client = self.async_client
        try:
            thread: Optional[Thread] = await client.threads.get(key, self.user)
        except NotFoundError:
            thread = None
        await self._adelete(key)
        await client.threads.create(self.user, **_thread_fields(key, thread, self.agent_id))
        await self._aappend(key, params)

    async def _adelete(self, key: str) -> None:
        assert self.async_client is not None
        try:
            await self.async_client.threads.delete(key, self.user, permanent=True)
        except NotFoundError:
            pass

    async def aset_messages(self, key: str, messages: List[ChatMessage]) -> None:
        if self.async_client is None:
            return await super().aset_messages(key, messages)
        stored = await self._astored(key)
        if stored is not None and _is_prefix(stored, messages):
            await self._aappend(key, [to_agentmem_message(m) for m in messages[len(stored) :]])
            return
        await self._arewrite(key, [to_agentmem_message(m) for m in messages])

    async def aget_messages(self, key: str) -> List[ChatMessage]:
        if self.async_client is None:
            return await super().aget_messages(key)
        return [from_agentmem_message(m) for m in await self._astored(key) or []]

    async def async_add_message(self, key: str, message: ChatMessage, idx: Optional[int] = None) -> None:
        if self.async_client is None:
            return await asyncio.to_thread(self.add_message, key, message, idx)
        if idx is None:
            await self._aappend(key, [to_agentmem_message(message)])
            return
        params = [_param_of(m) for m in await self._astored(key) or []]
        params.insert(idx, to_agentmem_message(message))
        await self._arewrite(key, params)

    async def aadd_messages(self, key: str, messages: Sequence[ChatMessage]) -> None:
        """Appends the messages as one batch (atomic)."""
        if self.async_client is None:
            return await asyncio.to_thread(self.add_messages, key, messages)
        await self._aappend(key, [to_agentmem_message(m) for m in messages])

    async def adelete_messages(self, key: str) -> Optional[List[ChatMessage]]:
        if self.async_client is None:
            return await super().adelete_messages(key)
        stored = await self._astored(key)
        if stored is None:
            return None
        await self._adelete(key)
        return [from_agentmem_message(m) for m in stored]

    async def adelete_message(self, key: str, idx: int) -> Optional[ChatMessage]:
        if self.async_client is None:
            return await super().adelete_message(key, idx)
        stored = await self._astored(key)
        if stored is None or not -len(stored) <= idx < len(stored):
            return None
        removed = stored.pop(idx)
        await self._arewrite(key, [_param_of(m) for m in stored])
        return from_agentmem_message(removed)

    async def adelete_last_message(self, key: str) -> Optional[ChatMessage]:
        if self.async_client is None:
            return await super().adelete_last_message(key)
        return await self.adelete_message(key, -1)

    async def aget_keys(self) -> List[str]:
        if self.async_client is None:
            return await super().aget_keys()
        return [t.id async for t in self.async_client.threads.iter(self.user, agent_id=self.agent_id, limit=_PAGE)]


def _is_prefix(stored: List[Message], messages: Sequence[ChatMessage]) -> bool:
    return len(stored) <= len(messages) and all(from_agentmem_message(s) == m for s, m in zip(stored, messages))


def _thread_fields(key: str, thread: Optional[Thread], agent_id: Optional[str]) -> Dict[str, Any]:
    """The fields of a thread made again under its key: those it had."""
    if thread is None:
        return {"id": key, "agent_id": agent_id}
    return {
        "id": key,
        "agent_id": thread.agent_id or agent_id,
        "title": thread.title or None,
        "metadata": thread.metadata or None,
        "tags": thread.tags or None,
    }


# The memory.


class AgentmemMemory(BaseChatStoreMemory):
    """A LlamaIndex memory whose history is an agentmem thread (the chat
    store's key, ``chat_store_key``) and whose ``get()`` is agentmem's
    context of it within ``token_limit`` tokens (the server's budget when
    None), counted by ``model``'s tokenizer (the LLM's, given to
    from_defaults, or the server's): the user's profile and notes, the
    summary of older turns, the long-term memories relevant to the input
    (or, without one, to the user's newest message; learned in any of the
    user's threads) as system messages, then the newest turns that fit,
    as they were put. ``strategy`` (trim, window, summarize), ``system``
    (a system prompt) and ``include`` ({"memories": False}…) are the
    context's. ``put``, ``put_messages``, ``set``, ``reset`` and
    ``get_all`` go through the chat store (an AgentmemChatStore).

    Works wherever LlamaIndex takes a BaseMemory: chat engines
    (SimpleChatEngine, CondensePlusContextChatEngine), agents
    (FunctionAgent, AgentWorkflow: ``agent.run(msg, memory=memory)``).
    ``telemetry`` is the last context's (tokens per section, warnings,
    index_lag).
    """

    chat_store: AgentmemChatStore
    token_limit: Optional[int] = None
    model: Optional[str] = None
    strategy: Optional[str] = None
    system: Optional[str] = None
    include: Optional[Dict[str, bool]] = None

    _last_query: Optional[str] = PrivateAttr(default=None)
    _telemetry: Optional[Telemetry] = PrivateAttr(default=None)

    @classmethod
    def class_name(cls) -> str:
        return "AgentmemMemory"

    @classmethod
    def from_defaults(  # type: ignore[override]
        cls,
        chat_history: Optional[List[ChatMessage]] = None,
        llm: Optional[LLM] = None,
        *,
        client: Optional[Client] = None,
        async_client: Optional[AsyncClient] = None,
        user: Optional[str] = None,
        agent_id: Optional[str] = None,
        chat_store_key: str = DEFAULT_CHAT_STORE_KEY,
        token_limit: Optional[int] = None,
        model: Optional[str] = None,
        strategy: Optional[str] = None,
        system: Optional[str] = None,
        include: Optional[Dict[str, bool]] = None,
    ) -> "AgentmemMemory":
        """An AgentmemMemory of the thread chat_store_key of user, set to
        chat_history when given. ``llm``'s model names the tokenizer when
        ``model`` does not."""
        if model is None and llm is not None and llm.metadata.model_name not in ("", "unknown"):
            model = llm.metadata.model_name
        memory = cls(
            chat_store=AgentmemChatStore(client=client, async_client=async_client, user=user, agent_id=agent_id),
            chat_store_key=chat_store_key,
            token_limit=token_limit,
            model=model,
            strategy=strategy,
            system=system,
            include=include,
        )
        if chat_history is not None:
            memory.set(chat_history)
        return memory

    @property
    def telemetry(self) -> Optional[Telemetry]:
        """What the last get() drew into the context, and why (None before
        the first)."""
        return self._telemetry

    def _budget(self, initial_token_count: int) -> Optional[int]:
        if self.token_limit is None:
            return None
        if initial_token_count >= self.token_limit:
            raise ValueError("Initial token count exceeds token limit")
        return self.token_limit - initial_token_count

    def _context_args(self, query: Optional[str], budget: Optional[int]) -> Dict[str, Any]:
        return {
            "query": query or None,
            "budget_tokens": budget,
            "model": self.model,
            "strategy": self.strategy,
            "system": self.system,
            "include": self.include,
            "format": "messages",
        }

    def get(self, input: Optional[str] = None, initial_token_count: int = 0, **kwargs: Any) -> List[ChatMessage]:
        """agentmem's context of the thread within token_limit less
        initial_token_count (what the caller adds, as ChatMemoryBuffer
        takes it), its memories drawn for input (the new user message,
        already put: it is not added again) or the newest user message."""
        client = self.chat_store._sync()
        key = self.chat_store_key
        budget = self._budget(initial_token_count)
        query = input or self._last_query
        try:
            if not query:
                query = _newest_user_text(client.messages.list(key, self.chat_store.user, order="desc", limit=20))
            ctx = client.threads.context(key, self.chat_store.user, **self._context_args(query, budget))
        except NotFoundError:  # the thread has not begun
            return []
        self._telemetry = ctx.telemetry
        verbatim = ctx.telemetry.included_messages
        stored: List[Message] = []
        if verbatim:
            stored = list(client.messages.list(key, self.chat_store.user, order="desc", limit=min(verbatim, _PAGE)))
        return _context_messages(ctx, stored)

    async def aget(self, input: Optional[str] = None, initial_token_count: int = 0, **kwargs: Any) -> List[ChatMessage]:
        client = self.chat_store.async_client
        if client is None:
            return await asyncio.to_thread(self.get, input, initial_token_count, **kwargs)
        key = self.chat_store_key
        budget = self._budget(initial_token_count)
        query = input or self._last_query
        try:
            if not query:
                page = await client.messages.list(key, self.chat_store.user, order="desc", limit=20)
                query = _newest_user_text(page)
            ctx = await client.threads.context(key, self.chat_store.user, **self._context_args(query, budget))
        except NotFoundError:  # the thread has not begun
            return []
        self._telemetry = ctx.telemetry
        verbatim = ctx.telemetry.included_messages
        stored: List[Message] = []
        if verbatim:
            page = await client.messages.list(key, self.chat_store.user, order="desc", limit=min(verbatim, _PAGE))
            stored = list(page)
        return _context_messages(ctx, stored)

    def _noted(self, messages: Sequence[ChatMessage]) -> None:
        for m in messages:
            if m.role == MessageRole.USER and m.content:
                self._last_query = m.content

    def put(self, message: ChatMessage) -> None:
        self.chat_store.add_message(self.chat_store_key, message)
        self._noted([message])

    async def aput(self, message: ChatMessage) -> None:
        await self.chat_store.async_add_message(self.chat_store_key, message)
        self._noted([message])

    def put_messages(self, messages: List[ChatMessage]) -> None:
        """Appends the messages as one batch (atomic)."""
        self.chat_store.add_messages(self.chat_store_key, messages)
        self._noted(messages)

    async def aput_messages(self, messages: List[ChatMessage]) -> None:
        await self.chat_store.aadd_messages(self.chat_store_key, messages)
        self._noted(messages)

    def set(self, messages: List[ChatMessage]) -> None:
        super().set(messages)
        self._last_query = None
        self._noted(messages)

    async def aset(self, messages: List[ChatMessage]) -> None:
        await super().aset(messages)
        self._last_query = None
        self._noted(messages)

    def reset(self) -> None:
        super().reset()
        self._last_query = None

    async def areset(self) -> None:
        await super().areset()
        self._last_query = None


def _newest_user_text(newest_first: Any) -> Optional[str]:
    for m in newest_first:
        if m.role == "user" and m.content:
            return str(m.content)
    return None


def _context_messages(ctx: Context, newest_stored: List[Message]) -> List[ChatMessage]:
    """The context's messages as LlamaIndex's. Its last
    telemetry.included_messages are the thread's newest messages,
    verbatim: those are given as they were put (newest_stored, newest
    first: their blocks and additional_kwargs too) when they match;
    what comes before them (profile, summary, memories) is the context's
    own."""
    n = ctx.telemetry.included_messages
    head = ctx.messages[: len(ctx.messages) - n] if n else ctx.messages
    tail = ctx.messages[len(ctx.messages) - n :] if n else []
    stored = list(reversed(newest_stored))
    if len(stored) == len(tail) and all(_matches(s, c) for s, c in zip(stored, tail)):
        tail_out = [from_agentmem_message(s) for s in stored]
    else:
        tail_out = [from_agentmem_message(c) for c in tail]
    return [from_agentmem_message(c) for c in head] + tail_out


def _matches(stored: Message, built: ContextMessage) -> bool:
    return (stored.role, stored.content, stored.tool_call_id, [c.id for c in stored.tool_calls]) == (
        built.role,
        built.content,
        built.tool_call_id,
        [c.id for c in built.tool_calls],
    )


# The memory block.


class AgentmemMemoryBlock(BaseMemoryBlock[str]):
    """A block of LlamaIndex's Memory holding what agentmem knows about
    ``user`` (the client's user when None) that bears on the
    conversation: the long-term memories agentmem learned in any of the
    user's threads (``kinds``: memories and insights), searched with the
    newest user message, at most ``top_k``, of relevance ``min_score`` or
    more; and the user's profile with ``profile=True``.

    Messages the Memory flushes from its short-term queue (when
    ``accept_short_term_memory``) are appended to an agentmem thread, the
    Memory's session_id (or ``thread_id``), so that agentmem learns from
    them too, as LlamaIndex's FactExtractionMemoryBlock does; with
    AgentmemMemory, or an AgentmemChatStore, agentmem has every turn at
    once.
    """

    name: str = "agentmem"
    description: Optional[str] = "What agentmem knows about the user: long-term memories relevant to the conversation."
    client: Optional[Client] = Field(default=None, exclude=True)
    async_client: Optional[AsyncClient] = Field(default=None, exclude=True)
    user: Optional[str] = None
    kinds: List[str] = Field(default_factory=lambda: ["memories", "insights"])
    top_k: int = 5
    min_score: Optional[float] = 0.15
    profile: bool = False
    thread_id: Optional[str] = None

    @model_validator(mode="after")
    def _has_client(self) -> "AgentmemMemoryBlock":
        if self.client is None and self.async_client is None:
            raise ValueError("AgentmemMemoryBlock needs client= (agentmem.Client) or async_client=")
        return self

    async def _aget(self, messages: Optional[List[ChatMessage]] = None, **block_kwargs: Any) -> str:
        query = next((m.content for m in reversed(messages or []) if m.role == MessageRole.USER and m.content), None)
        if self.async_client is not None:
            return await self._alook(query)
        return await asyncio.to_thread(self._look, query)

    def _look(self, query: Optional[str]) -> str:
        assert self.client is not None
        lines: List[str] = []
        if self.profile:
            try:
                lines.append(self.client.profile.get(self.user).text)
            except NotFoundError:
                pass
        if query:
            found = self.client.search(query, self.user, kinds=self.kinds, top_k=self.top_k, min_score=self.min_score)
            lines += [f"- {r.text}" for r in found.results]
        return "\n".join(line for line in lines if line)

    async def _alook(self, query: Optional[str]) -> str:
        client = self.async_client
        assert client is not None
        lines: List[str] = []
        if self.profile:
            try:
                lines.append((await client.profile.get(self.user)).text)
            except NotFoundError:
                pass
        if query:
            found = await client.search(query, self.user, kinds=self.kinds, top_k=self.top_k, min_score=self.min_score)
            lines += [f"- {r.text}" for r in found.results]
        return "\n".join(line for line in lines if line)

    async def _aput(self, messages: List[ChatMessage]) -> None:
        by_thread: Dict[str, List[ChatMessage]] = {}
        for m in messages:
            thread = self.thread_id or m.additional_kwargs.get("session_id")
            if thread:
                by_thread.setdefault(str(thread), []).append(m)
        store = AgentmemChatStore(client=self.client, async_client=self.async_client, user=self.user)
        for thread, batch in by_thread.items():
            await store.aadd_messages(thread, batch)
