"""AsyncClient: agentmem's REST API, every route, for asyncio.

This file is the source of both clients: scripts/unasync.py writes the
synchronous Client (_client.py) from it, and a test fails when that copy
is stale. Edit here, then run `python scripts/unasync.py`.

Methods on a user's data take ``user`` (the client's user when None) after
the IDs of the path and the one field a call cannot do without; every
other field is a keyword. ``list`` returns one Page; ``iter`` yields every
item, page after page.
"""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Any, AsyncIterator, Dict, List, Mapping, Optional, Sequence, Tuple, TypeVar, Union

import httpx

from . import _base as b
from ._errors import APIConnectionError, UnavailableError
from ._types import (
    APIKey,
    AuditEvent,
    Caller,
    CleanupResult,
    Context,
    ContextInclude,
    ContextPolicy,
    Counts,
    Element,
    Entity,
    EntityRef,
    FactsResponse,
    Health,
    ImportResult,
    Job,
    Memory,
    MemoryChange,
    Message,
    MessageParam,
    NewKey,
    Notes,
    Page,
    Profile,
    Reflection,
    SearchFilters,
    SearchResponse,
    Session,
    Stats,
    SummarizePolicy,
    Thread,
    ThreadExport,
    ToolSpec,
    Turn,
    UserExport,
    UserSummary,
)

T = TypeVar("T")
Time = Union[str, datetime]  # RFC 3339, or a datetime (naive: local time)


class AsyncClient:
    """A client of one agentmem server.

    ``base_url`` is the server's root (``http://127.0.0.1:8080``);
    ``api_key`` is sent as ``Authorization: Bearer`` (with ``--auth
    apikey``); ``user`` is the user of calls that name none. Calls that are
    safe to repeat (reads, PUTs, DELETEs, appends with their idempotency
    key, searches, contexts) are retried up to ``max_retries`` times when
    the server cannot be reached or answers 429, 502, 503 or 504, after
    what its Retry-After asks. Errors are raised as AgentmemError
    subclasses carrying the API's code. ``http_client`` replaces the
    client's own httpx client (proxies, transports); it is not closed by
    close().
    """

    def __init__(
        self,
        base_url: str,
        api_key: Optional[str] = None,
        user: Optional[str] = None,
        *,
        timeout: float = b.DEFAULT_TIMEOUT,
        max_retries: int = b.DEFAULT_MAX_RETRIES,
        headers: Optional[Mapping[str, str]] = None,
        http_client: Optional[httpx.AsyncClient] = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.user = user
        self.max_retries = max_retries
        self._headers = dict(headers or {})
        self._http = http_client if http_client is not None else httpx.AsyncClient(timeout=timeout)
        self._owns_http = http_client is None
        self.threads = AsyncThreads(self)
        self.messages = AsyncMessages(self)
        self.elements = AsyncElements(self)
        self.sessions = AsyncSessions(self)
        self.turns = AsyncTurns(self)
        self.memories = AsyncMemories(self)
        self.entities = AsyncEntities(self)
        self.profile = AsyncProfiles(self)
        self.notes = AsyncAgentNotes(self)
        self.tools = AsyncTools(self)
        self.jobs = AsyncJobs(self)
        self.users = AsyncUsers(self)
        self.keys = AsyncKeys(self)
        self.audit = AsyncAudit(self)

    def with_user(self, user: str) -> "AsyncClient":
        """Returns a client of the same server, key and connections whose
        calls are the user's."""
        return AsyncClient(
            self.base_url,
            self.api_key,
            user,
            max_retries=self.max_retries,
            headers=self._headers,
            http_client=self._http,
        )

    async def close(self) -> None:
        """Closes the client's connections (not those of an http_client
        given to it)."""
        if self._owns_http:
            await self._http.aclose()

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def _user(self, user: Optional[str]) -> str:
        return b.default_user(user, self.user)

    async def _send(self, call: b.Call[T]) -> T:
        """Sends call, retrying it as the class says, and returns what its
        answer holds."""
        retries = self.max_retries if call.retryable else 0
        headers = b.headers(call, self.api_key, self._headers)
        url = self.base_url + call.path
        attempt = 0
        while True:
            try:
                response = await self._http.request(
                    call.method, url, params=tuple(call.query) or None, content=call.body, headers=headers
                )
            except httpx.TransportError as e:
                delay = b.retry_delay(None, attempt) if attempt < retries else None
                if delay is None:
                    raise APIConnectionError(
                        f"The agentmem server did not answer {call.method} {call.path}: {e}"
                    ) from e
            else:
                delay = b.retry_delay(response, attempt) if attempt < retries else None
                if delay is None:
                    return b.result(call, response)
            attempt += 1
            await asyncio.sleep(delay)

    async def _iterate(self, call: b.Call[Page[T]]) -> AsyncIterator[T]:
        """Yields the items of a list from call's cursor on, following each
        page's next cursor."""
        cursor = dict(call.query).get("cursor", "")
        while True:
            page = await self._send(call)
            for item in page.data:
                yield item
            if not page.next_cursor:
                return
            if page.next_cursor == cursor:
                raise b.same_cursor_error()
            cursor = page.next_cursor
            call = call.with_cursor(cursor)

    # The server as a whole.

    async def health(self) -> Health:
        """GET /healthz: answers while the server runs (liveness)."""
        return await self._send(b.Call("GET", "/healthz", b.model(Health)))

    async def ready(self) -> bool:
        """GET /readyz: whether the server and its database answer. Not
        retried: a probe wants the answer of now."""
        try:
            await self._send(b.Call("GET", "/readyz", b.nothing, idempotent=False))
        except UnavailableError:
            return False
        return True

    async def openapi(self) -> Dict[str, Any]:
        """GET /openapi.json: the OpenAPI 3.1 document of the REST API, as
        the server runs it (public)."""
        return await self._send(b.Call("GET", "/openapi.json", b.json_of))

    async def metrics(self) -> str:
        """GET /metrics: the Prometheus metrics, in the text format (admin)."""
        return await self._send(b.Call("GET", "/metrics", b.text, accept="text/plain"))

    async def stats(self) -> Stats:
        """GET /v1/stats: the store's counts and size (admin)."""
        return await self._send(b.Call("GET", "/v1/stats", b.model(Stats)))

    async def me(self) -> Caller:
        """GET /v1/me: who the server takes this client for."""
        return await self._send(b.Call("GET", "/v1/me", b.model(Caller)))

    async def cleanup(
        self, *, older_than: Optional[str] = None, before: Optional[Time] = None, dry_run: bool = False
    ) -> CleanupResult:
        """POST /v1/cleanup: deletes every user's threads not updated for
        ``older_than`` ("30d") or since ``before``, or with ``dry_run``
        counts them (admin)."""
        return await self._send(
            b.Call(
                "POST",
                "/v1/cleanup",
                b.model(CleanupResult),
                body=b.body(older_than=older_than, before=before, dry_run=dry_run),
            )
        )

    # Search and facts.

    async def search(
        self,
        query: str,
        user: Optional[str] = None,
        *,
        scopes: Optional[Sequence[str]] = None,
        kinds: Optional[Sequence[str]] = None,
        top_k: Optional[int] = None,
        min_score: Optional[float] = None,
        filters: Optional[SearchFilters] = None,
        recency_half_life: Optional[str] = None,
        importance_weight: Optional[float] = None,
        signals: Optional[Sequence[str]] = None,
    ) -> SearchResponse:
        """POST /v1/users/{user}/search: hybrid search of what agentmem
        knows about the user. ``scopes``: memories, messages, chunks,
        summaries (memories and messages by default); or ``kinds``, seed
        001's stores (memories, insights, messages, chunks, summaries)."""
        body = b.body(
            query=query,
            scopes=scopes,
            kinds=kinds,
            top_k=top_k,
            min_score=min_score,
            filters=filters,
            recency_half_life=recency_half_life,
            importance_weight=importance_weight,
            signals=signals,
        )
        call = b.Call(
            "POST",
            b.path("v1", "users", self._user(user), "search"),
            b.model(SearchResponse),
            body=body,
            idempotent=True,
        )
        return await self._send(call)

    async def facts(
        self,
        query: str,
        user: Optional[str] = None,
        *,
        scopes: Optional[Sequence[str]] = None,
        kinds: Optional[Sequence[str]] = None,
        top_k: Optional[int] = None,
        min_score: Optional[float] = None,
        filters: Optional[SearchFilters] = None,
        recency_half_life: Optional[str] = None,
        importance_weight: Optional[float] = None,
        signals: Optional[Sequence[str]] = None,
    ) -> FactsResponse:
        """POST /v1/users/{user}/facts: answers a question about the user
        from what search finds, citing it. Not retried: with a model, each
        attempt is a paid model call."""
        body = b.body(
            query=query,
            scopes=scopes,
            kinds=kinds,
            top_k=top_k,
            min_score=min_score,
            filters=filters,
            recency_half_life=recency_half_life,
            importance_weight=importance_weight,
            signals=signals,
        )
        return await self._send(
            b.Call("POST", b.path("v1", "users", self._user(user), "facts"), b.model(FactsResponse), body=body)
        )


class _AsyncResource:
    def __init__(self, client: AsyncClient) -> None:
        self._client = client

    def _path(self, user: Optional[str], *rest: str) -> str:
        return b.path("v1", "users", self._client._user(user), *rest)


class AsyncThreads(_AsyncResource):
    """A user's threads: /v1/users/{user}/threads."""

    def _list(
        self,
        user: Optional[str],
        agent_id: Optional[str],
        status: Optional[str],
        deleted: Optional[bool],
        tags: Optional[Sequence[str]],
        q: Optional[str],
        since: Optional[Time],
        until: Optional[Time],
        limit: Optional[int],
        cursor: Optional[str],
    ) -> b.Call[Page[Thread]]:
        query = b.query(
            agent_id=agent_id,
            status=status,
            deleted=deleted,
            tag=list(tags) if tags is not None else None,
            q=q,
            since=since,
            until=until,
            limit=limit,
            cursor=cursor,
        )
        return b.Call("GET", self._path(user, "threads"), b.page(Thread), query=query)

    async def list(
        self,
        user: Optional[str] = None,
        *,
        agent_id: Optional[str] = None,
        status: Optional[str] = None,
        deleted: Optional[bool] = None,
        tags: Optional[Sequence[str]] = None,
        q: Optional[str] = None,
        since: Optional[Time] = None,
        until: Optional[Time] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> Page[Thread]:
        """One page of the user's threads, newest updated first: of an
        agent ("" for threads of none), by status ("active", "ended"), the
        soft-deleted ones alone (``deleted=True``), with every tag of
        ``tags``, whose title contains ``q``, updated since (inclusive) and
        until (exclusive)."""
        return await self._client._send(
            self._list(user, agent_id, status, deleted, tags, q, since, until, limit, cursor)
        )

    def iter(
        self,
        user: Optional[str] = None,
        *,
        agent_id: Optional[str] = None,
        status: Optional[str] = None,
        deleted: Optional[bool] = None,
        tags: Optional[Sequence[str]] = None,
        q: Optional[str] = None,
        since: Optional[Time] = None,
        until: Optional[Time] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> AsyncIterator[Thread]:
        """Every thread that list selects, fetching page after page
        (``limit`` a page)."""
        return self._client._iterate(self._list(user, agent_id, status, deleted, tags, q, since, until, limit, cursor))

    async def create(
        self,
        user: Optional[str] = None,
        *,
        id: Optional[str] = None,
        agent_id: Optional[str] = None,
        title: Optional[str] = None,
        metadata: Optional[Dict[str, Any]] = None,
        tags: Optional[Sequence[str]] = None,
    ) -> Thread:
        """POST …/threads: a new thread (its ID chosen by the server unless
        given; ConflictError if the user has one of that ID)."""
        body = b.body(id=id, agent_id=agent_id, title=title, metadata=metadata, tags=tags)
        return await self._client._send(b.Call("POST", self._path(user, "threads"), b.model(Thread), body=body))

    async def get(self, thread_id: str, user: Optional[str] = None) -> Thread:
        """GET …/threads/{thread}."""
        return await self._client._send(b.Call("GET", self._path(user, "threads", thread_id), b.model(Thread)))

    async def update(
        self,
        thread_id: str,
        user: Optional[str] = None,
        *,
        title: Optional[str] = None,
        metadata: Optional[Dict[str, Any]] = None,
        tags: Optional[Sequence[str]] = None,
        agent_id: Optional[str] = None,
        status: Optional[str] = None,
    ) -> Thread:
        """PATCH …/threads/{thread}: the fields given change; the others
        stay."""
        body = b.body(title=title, metadata=metadata, tags=tags, agent_id=agent_id, status=status)
        return await self._client._send(
            b.Call("PATCH", self._path(user, "threads", thread_id), b.model(Thread), body=body)
        )

    async def delete(self, thread_id: str, user: Optional[str] = None, *, permanent: bool = False) -> None:
        """DELETE …/threads/{thread}: soft (restore brings it back) unless
        permanent."""
        query = b.query(permanent=True if permanent else None)
        await self._client._send(b.Call("DELETE", self._path(user, "threads", thread_id), b.nothing, query=query))

    async def restore(self, thread_id: str, user: Optional[str] = None) -> Thread:
        """POST …/threads/{thread}/restore: brings back a soft-deleted
        thread."""
        call = b.Call("POST", self._path(user, "threads", thread_id, "restore"), b.model(Thread), idempotent=True)
        return await self._client._send(call)

    async def end(self, thread_id: str, user: Optional[str] = None) -> Thread:
        """POST …/threads/{thread}/end: ends the thread, which is then
        summarised and reflected on in the background."""
        call = b.Call("POST", self._path(user, "threads", thread_id, "end"), b.model(Thread), idempotent=True)
        return await self._client._send(call)

    async def context(
        self,
        thread_id: str,
        user: Optional[str] = None,
        *,
        input: Optional[str] = None,
        query: Optional[str] = None,
        budget_tokens: Optional[int] = None,
        model: Optional[str] = None,
        strategy: Optional[str] = None,
        window_messages: Optional[int] = None,
        window_turns: Optional[int] = None,
        summarize: Optional[SummarizePolicy] = None,
        format: Optional[str] = None,
        include: Optional[ContextInclude] = None,
        system: Optional[str] = None,
        prompt: Optional[str] = None,
    ) -> Context:
        """POST …/threads/{thread}/context: the context of the next model
        call within budget_tokens: ``strategy`` trim, window or summarize;
        ``format`` messages, responses or text; the server's defaults for
        what is not given."""
        body = b.body(
            input=input,
            query=query,
            budget_tokens=budget_tokens,
            model=model,
            strategy=strategy,
            window_messages=window_messages,
            window_turns=window_turns,
            summarize=summarize,
            format=format,
            include=include,
            system=system,
            prompt=prompt,
        )
        call = b.Call(
            "POST", self._path(user, "threads", thread_id, "context"), b.model(Context), body=body, idempotent=True
        )
        return await self._client._send(call)

    async def export(self, thread_id: str, user: Optional[str] = None) -> ThreadExport:
        """GET …/threads/{thread}/export: the thread, its messages and
        elements, as import_ takes them."""
        return await self._client._send(
            b.Call("GET", self._path(user, "threads", thread_id, "export"), b.model(ThreadExport))
        )

    async def export_markdown(self, thread_id: str, user: Optional[str] = None) -> str:
        """GET …/threads/{thread}/export?format=markdown: the thread to read."""
        call = b.Call(
            "GET",
            self._path(user, "threads", thread_id, "export"),
            b.text,
            query=b.query(format="markdown"),
            accept="text/markdown",
        )
        return await self._client._send(call)

    async def import_(self, export: Union[ThreadExport, Mapping[str, Any]], user: Optional[str] = None) -> Thread:
        """POST …/threads/import: stores a thread export (of any user) as a
        new thread of the user."""
        return await self._client._send(
            b.Call("POST", self._path(user, "threads", "import"), b.model(Thread), body=b.encode(export))
        )

    async def reflection(self, thread_id: str, user: Optional[str] = None) -> Reflection:
        """GET …/threads/{thread}/reflection: what reflection found once the
        thread ended (status "pending" until it ran)."""
        return await self._client._send(
            b.Call("GET", self._path(user, "threads", thread_id, "reflection"), b.model(Reflection))
        )

    async def retry_reflection(self, thread_id: str, user: Optional[str] = None) -> Reflection:
        """POST …/threads/{thread}/reflection/retry: queues a failed
        reflection again (ConflictError when it is pending or done)."""
        call = b.Call("POST", self._path(user, "threads", thread_id, "reflection", "retry"), b.model(Reflection))
        return await self._client._send(call)


class AsyncMessages(_AsyncResource):
    """A thread's messages: /v1/users/{user}/threads/{thread}/messages."""

    def _list(
        self,
        thread_id: str,
        user: Optional[str],
        after_seq: Optional[int],
        before_seq: Optional[int],
        order: Optional[str],
        limit: Optional[int],
        cursor: Optional[str],
    ) -> b.Call[Page[Message]]:
        query = b.query(after_seq=after_seq, before_seq=before_seq, order=order, limit=limit, cursor=cursor)
        return b.Call("GET", self._path(user, "threads", thread_id, "messages"), b.page(Message), query=query)

    async def list(
        self,
        thread_id: str,
        user: Optional[str] = None,
        *,
        after_seq: Optional[int] = None,
        before_seq: Optional[int] = None,
        order: Optional[str] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> Page[Message]:
        """One page of the thread's messages in seq order ("asc", or the
        newest first with ``order="desc"``), with seqs after and before
        the bounds given."""
        return await self._client._send(self._list(thread_id, user, after_seq, before_seq, order, limit, cursor))

    def iter(
        self,
        thread_id: str,
        user: Optional[str] = None,
        *,
        after_seq: Optional[int] = None,
        before_seq: Optional[int] = None,
        order: Optional[str] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> AsyncIterator[Message]:
        """Every message that list selects, page after page."""
        return self._client._iterate(self._list(thread_id, user, after_seq, before_seq, order, limit, cursor))

    async def append(
        self,
        thread_id: str,
        messages: Sequence[Union[MessageParam, Message, Mapping[str, Any]]],
        user: Optional[str] = None,
        *,
        idempotency_key: Optional[str] = None,
    ) -> List[Message]:
        """POST …/messages: appends a batch atomically and returns the
        messages as stored (IDs, seqs, token counts, times).

        The batch is sent with an Idempotency-Key, ``idempotency_key`` or a
        new random one, so that a retry after a lost answer stores nothing
        twice: the client retries it itself, and a caller that retries
        should pass the same key again."""
        key = b.idempotency_key(idempotency_key)
        call = b.Call(
            "POST",
            self._path(user, "threads", thread_id, "messages"),
            b.models_in("messages", Message),
            body=b.encode({"messages": [_message(m) for m in messages]}),
            headers={"Idempotency-Key": key},
            idempotent=True,
        )
        return await self._client._send(call)


def _message(m: Union[MessageParam, Message, Mapping[str, Any]]) -> Mapping[str, Any]:
    """Returns a message to append as the API takes it: a Message read
    elsewhere keeps only what the client may set."""
    if isinstance(m, Message):
        d = m.to_dict()
        for server_set in ("thread_id", "seq", "token_count"):
            d.pop(server_set, None)
        return {k: v for k, v in d.items() if v != "" or k == "content"}
    return m


class AsyncElements(_AsyncResource):
    """A thread's elements: /v1/users/{user}/threads/{thread}/elements."""

    def _list(
        self,
        thread_id: str,
        user: Optional[str],
        message_id: Optional[str],
        limit: Optional[int],
        cursor: Optional[str],
    ) -> b.Call[Page[Element]]:
        query = b.query(message_id=message_id, limit=limit, cursor=cursor)
        return b.Call("GET", self._path(user, "threads", thread_id, "elements"), b.page(Element), query=query)

    async def list(
        self,
        thread_id: str,
        user: Optional[str] = None,
        *,
        message_id: Optional[str] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> Page[Element]:
        """One page of the thread's elements, oldest first (of one message
        with ``message_id``)."""
        return await self._client._send(self._list(thread_id, user, message_id, limit, cursor))

    def iter(
        self,
        thread_id: str,
        user: Optional[str] = None,
        *,
        message_id: Optional[str] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> AsyncIterator[Element]:
        """Every element that list selects, page after page."""
        return self._client._iterate(self._list(thread_id, user, message_id, limit, cursor))

    async def create(
        self,
        thread_id: str,
        user: Optional[str] = None,
        *,
        type: str,
        name: str,
        content: Optional[str] = None,
        url: Optional[str] = None,
        mime_type: Optional[str] = None,
        display: Optional[str] = None,
        message_id: Optional[str] = None,
        metadata: Optional[Dict[str, Any]] = None,
        id: Optional[str] = None,
    ) -> Element:
        """POST …/elements: attaches a citation, file or other reference to
        the thread, or to one of its messages."""
        body = b.body(
            id=id,
            type=type,
            name=name,
            content=content,
            url=url,
            mime_type=mime_type,
            display=display,
            message_id=message_id,
            metadata=metadata,
        )
        return await self._client._send(
            b.Call("POST", self._path(user, "threads", thread_id, "elements"), b.model(Element), body=body)
        )


class AsyncSessions(_AsyncResource):
    """The active thread of a user and agent: /v1/users/{user}/agents/{agent}/session."""

    async def get(self, agent_id: str, user: Optional[str] = None) -> Session:
        """GET …/session (NotFoundError when there is none)."""
        return await self._client._send(
            b.Call("GET", self._path(user, "agents", agent_id, "session"), b.model(Session))
        )

    async def open(self, agent_id: str, user: Optional[str] = None) -> Tuple[Session, bool]:
        """GET …/session?create=true: the active session, made (a new
        thread of the agent) when there is none; and whether it was made.
        Concurrent calls make one thread."""
        call = b.Call(
            "GET",
            self._path(user, "agents", agent_id, "session"),
            lambda r: (Session.from_dict(b.json_of(r)), r.status_code == 201),
            query=b.query(create=True),
        )
        return await self._client._send(call)

    async def set(self, agent_id: str, thread_id: str, user: Optional[str] = None) -> Session:
        """PUT …/session: makes thread_id the active thread."""
        call = b.Call(
            "PUT", self._path(user, "agents", agent_id, "session"), b.model(Session), body=b.body(thread_id=thread_id)
        )
        return await self._client._send(call)


class AsyncTurns(_AsyncResource):
    """Model calls an app makes itself, given memory: /v1/users/{user}/turns."""

    async def begin(
        self,
        messages: Sequence[Union[MessageParam, Message, Mapping[str, Any]]],
        user: Optional[str] = None,
        *,
        thread_id: Optional[str] = None,
        continue_: bool = False,
        agent_id: Optional[str] = None,
        mode: Optional[str] = None,
        context: Optional[ContextPolicy] = None,
    ) -> Turn:
        """POST …/turns: what agentmem's OpenAI proxy does before it calls
        the model, for an app that calls its model itself. Finds the
        thread: ``thread_id``, begun when it does not exist (NotFoundError
        instead with ``continue_``), or without one the active session of
        ``agent_id`` ("default" when None), opened when there is none.
        Stores the client's ``messages`` (without its system prompt, oldest
        first) that the thread does not hold yet: a resent history stores
        only what follows the thread's newest messages. Builds the context
        of ``mode``: "full" (from the stored thread), "augment" (the
        client's messages, memory added), "off" (none), or "auto" (the
        default: augment when the messages hold an assistant message, else
        full). Append the model's reply to the thread afterwards
        (``messages.append(turn.thread.id, …)``).

        Not retried: its messages may have been stored before an answer
        was lost (calling again with the same history stores nothing
        twice)."""
        body = b.body(
            thread_id=thread_id,
            agent_id=agent_id,
            messages=[_message(m) for m in messages],
            mode=mode,
            context=context,
            **{"continue": True if continue_ else None},
        )
        return await self._client._send(b.Call("POST", self._path(user, "turns"), b.model(Turn), body=body))


class AsyncMemories(_AsyncResource):
    """A user's long-term memories: /v1/users/{user}/memories."""

    def _list(
        self,
        user: Optional[str],
        kind: Optional[str],
        category: Optional[str],
        agent_id: Optional[str],
        thread_id: Optional[str],
        include_invalid: Optional[bool],
        processed: Optional[bool],
        limit: Optional[int],
        cursor: Optional[str],
    ) -> b.Call[Page[Memory]]:
        query = b.query(
            kind=kind,
            category=category,
            agent_id=agent_id,
            thread_id=thread_id,
            include_invalid=include_invalid,
            processed=processed,
            limit=limit,
            cursor=cursor,
        )
        return b.Call("GET", self._path(user, "memories"), b.page(Memory), query=query)

    async def list(
        self,
        user: Optional[str] = None,
        *,
        kind: Optional[str] = None,
        category: Optional[str] = None,
        agent_id: Optional[str] = None,
        thread_id: Optional[str] = None,
        include_invalid: Optional[bool] = None,
        processed: Optional[bool] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> Page[Memory]:
        """One page of the user's memories, newest updated first: by kind
        ("fact", "insight"), category, agent, the thread they came from,
        invalidated ones too, and processed into the profile or not."""
        return await self._client._send(
            self._list(user, kind, category, agent_id, thread_id, include_invalid, processed, limit, cursor)
        )

    def iter(
        self,
        user: Optional[str] = None,
        *,
        kind: Optional[str] = None,
        category: Optional[str] = None,
        agent_id: Optional[str] = None,
        thread_id: Optional[str] = None,
        include_invalid: Optional[bool] = None,
        processed: Optional[bool] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> AsyncIterator[Memory]:
        """Every memory that list selects, page after page."""
        return self._client._iterate(
            self._list(user, kind, category, agent_id, thread_id, include_invalid, processed, limit, cursor)
        )

    async def create(
        self,
        text: str,
        user: Optional[str] = None,
        *,
        id: Optional[str] = None,
        kind: Optional[str] = None,
        category: Optional[str] = None,
        confidence: Optional[float] = None,
        importance: Optional[float] = None,
        agent_id: Optional[str] = None,
        thread_id: Optional[str] = None,
        seq_from: Optional[int] = None,
        seq_to: Optional[int] = None,
        valid_from: Optional[Time] = None,
        metadata: Optional[Dict[str, Any]] = None,
    ) -> Memory:
        """POST …/memories: stores a memory ("User is vegetarian."),
        embedded so that search finds it."""
        body = b.body(
            id=id,
            kind=kind,
            text=text,
            category=category,
            confidence=confidence,
            importance=importance,
            agent_id=agent_id,
            thread_id=thread_id,
            seq_from=seq_from,
            seq_to=seq_to,
            valid_from=valid_from,
            metadata=metadata,
        )
        return await self._client._send(b.Call("POST", self._path(user, "memories"), b.model(Memory), body=body))

    async def get(self, memory_id: str, user: Optional[str] = None) -> Memory:
        """GET …/memories/{memory}."""
        return await self._client._send(b.Call("GET", self._path(user, "memories", memory_id), b.model(Memory)))

    async def update(
        self,
        memory_id: str,
        user: Optional[str] = None,
        *,
        text: Optional[str] = None,
        category: Optional[str] = None,
        confidence: Optional[float] = None,
        importance: Optional[float] = None,
        metadata: Optional[Dict[str, Any]] = None,
        reason: Optional[str] = None,
    ) -> Memory:
        """PATCH …/memories/{memory}: a new version with the fields given."""
        body = b.body(
            text=text, category=category, confidence=confidence, importance=importance, metadata=metadata, reason=reason
        )
        return await self._client._send(
            b.Call("PATCH", self._path(user, "memories", memory_id), b.model(Memory), body=body)
        )

    async def delete(self, memory_id: str, user: Optional[str] = None) -> None:
        """DELETE …/memories/{memory}: the memory and its history."""
        await self._client._send(b.Call("DELETE", self._path(user, "memories", memory_id), b.nothing))

    async def history(self, memory_id: str, user: Optional[str] = None) -> List[MemoryChange]:
        """GET …/memories/{memory}/history: every change, oldest first."""
        call = b.Call("GET", self._path(user, "memories", memory_id, "history"), b.models_in("data", MemoryChange))
        return await self._client._send(call)

    async def invalidate(
        self,
        memory_id: str,
        user: Optional[str] = None,
        *,
        superseded_by: Optional[str] = None,
        reason: Optional[str] = None,
    ) -> Memory:
        """POST …/memories/{memory}/invalidate: the memory no longer holds;
        it is kept, with its history, and left out of lists and search.
        Twice changes nothing."""
        call = b.Call(
            "POST",
            self._path(user, "memories", memory_id, "invalidate"),
            b.model(Memory),
            body=b.body(superseded_by=superseded_by, reason=reason),
            idempotent=True,
        )
        return await self._client._send(call)


class AsyncEntities(_AsyncResource):
    """The things a user talks about: /v1/users/{user}/entities, and the
    threads that refer to them."""

    def _list(
        self, user: Optional[str], q: Optional[str], type: Optional[str], limit: Optional[int], cursor: Optional[str]
    ) -> b.Call[Page[Entity]]:
        query = b.query(q=q, type=type, limit=limit, cursor=cursor)
        return b.Call("GET", self._path(user, "entities"), b.page(Entity), query=query)

    async def list(
        self,
        user: Optional[str] = None,
        *,
        q: Optional[str] = None,
        type: Optional[str] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> Page[Entity]:
        """One page of the user's entities: ``q`` resolves a name or an
        alias (the entity of that name first); ``type`` selects a type."""
        return await self._client._send(self._list(user, q, type, limit, cursor))

    def iter(
        self,
        user: Optional[str] = None,
        *,
        q: Optional[str] = None,
        type: Optional[str] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> AsyncIterator[Entity]:
        """Every entity that list selects, page after page."""
        return self._client._iterate(self._list(user, q, type, limit, cursor))

    async def put(
        self,
        name: str,
        user: Optional[str] = None,
        *,
        id: Optional[str] = None,
        type: Optional[str] = None,
        aliases: Optional[Sequence[str]] = None,
        thread_id: Optional[str] = None,
        action: Optional[str] = None,
        seq: Optional[int] = None,
        at: Optional[Time] = None,
    ) -> Entity:
        """POST …/entities: creates the entity, or merges into the user's
        entity of that name (a type replaces its type, aliases are added);
        with ``thread_id``, records the thread's reference (``action``
        created, modified or discussed)."""
        body = b.body(id=id, name=name, type=type, aliases=aliases, thread_id=thread_id, action=action, seq=seq, at=at)
        return await self._client._send(b.Call("POST", self._path(user, "entities"), b.model(Entity), body=body))

    async def get(self, entity_id: str, user: Optional[str] = None) -> Entity:
        """GET …/entities/{entity}."""
        return await self._client._send(b.Call("GET", self._path(user, "entities", entity_id), b.model(Entity)))

    async def update(
        self,
        entity_id: str,
        user: Optional[str] = None,
        *,
        name: Optional[str] = None,
        type: Optional[str] = None,
        aliases: Optional[Sequence[str]] = None,
    ) -> Entity:
        """PATCH …/entities/{entity}: a rename keeps the old name as an
        alias."""
        body = b.body(name=name, type=type, aliases=aliases)
        return await self._client._send(
            b.Call("PATCH", self._path(user, "entities", entity_id), b.model(Entity), body=body)
        )

    async def delete(self, entity_id: str, user: Optional[str] = None) -> None:
        """DELETE …/entities/{entity}: the entity and its references."""
        await self._client._send(b.Call("DELETE", self._path(user, "entities", entity_id), b.nothing))

    def _refs(
        self, path: str, action: Optional[str], limit: Optional[int], cursor: Optional[str]
    ) -> b.Call[Page[EntityRef]]:
        return b.Call("GET", path, b.page(EntityRef), query=b.query(action=action, limit=limit, cursor=cursor))

    async def refs(
        self,
        entity_id: str,
        user: Optional[str] = None,
        *,
        action: Optional[str] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> Page[EntityRef]:
        """GET …/entities/{entity}/threads: one page of the threads that
        refer to the entity, newest first."""
        return await self._client._send(
            self._refs(self._path(user, "entities", entity_id, "threads"), action, limit, cursor)
        )

    def iter_refs(
        self,
        entity_id: str,
        user: Optional[str] = None,
        *,
        action: Optional[str] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> AsyncIterator[EntityRef]:
        """Every reference that refs selects, page after page."""
        return self._client._iterate(
            self._refs(self._path(user, "entities", entity_id, "threads"), action, limit, cursor)
        )

    async def thread_refs(
        self,
        thread_id: str,
        user: Optional[str] = None,
        *,
        action: Optional[str] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> Page[EntityRef]:
        """GET …/threads/{thread}/entities: one page of the thread's
        references, each with its entity, newest first."""
        return await self._client._send(
            self._refs(self._path(user, "threads", thread_id, "entities"), action, limit, cursor)
        )

    def iter_thread_refs(
        self,
        thread_id: str,
        user: Optional[str] = None,
        *,
        action: Optional[str] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> AsyncIterator[EntityRef]:
        """Every reference that thread_refs selects, page after page."""
        return self._client._iterate(
            self._refs(self._path(user, "threads", thread_id, "entities"), action, limit, cursor)
        )


class AsyncProfiles(_AsyncResource):
    """A user's profile, what reflection learnt: /v1/users/{user}/profile."""

    async def get(self, user: Optional[str] = None) -> Profile:
        """GET …/profile: the newest version (NotFoundError before the
        first)."""
        return await self._client._send(b.Call("GET", self._path(user, "profile"), b.model(Profile)))

    async def refresh(self, user: Optional[str] = None) -> Profile:
        """POST …/profile/refresh: synthesises the profile now."""
        return await self._client._send(b.Call("POST", self._path(user, "profile", "refresh"), b.model(Profile)))

    def _versions(self, user: Optional[str], limit: Optional[int], cursor: Optional[str]) -> b.Call[Page[Profile]]:
        return b.Call(
            "GET", self._path(user, "profile", "versions"), b.page(Profile), query=b.query(limit=limit, cursor=cursor)
        )

    async def versions(
        self, user: Optional[str] = None, *, limit: Optional[int] = None, cursor: Optional[str] = None
    ) -> Page[Profile]:
        """GET …/profile/versions: one page of every version, newest first."""
        return await self._client._send(self._versions(user, limit, cursor))

    def iter_versions(
        self, user: Optional[str] = None, *, limit: Optional[int] = None, cursor: Optional[str] = None
    ) -> AsyncIterator[Profile]:
        """Every version, page after page."""
        return self._client._iterate(self._versions(user, limit, cursor))


class AsyncAgentNotes(_AsyncResource):
    """An agent's Markdown notes about a user: /v1/users/{user}/agents/{agent}/notes."""

    async def get(self, agent_id: str, user: Optional[str] = None) -> Notes:
        """GET …/notes: the current notes (version 0, empty, before the
        first write)."""
        return await self._client._send(b.Call("GET", self._path(user, "agents", agent_id, "notes"), b.model(Notes)))

    async def put(
        self, agent_id: str, content: str, user: Optional[str] = None, *, expected_version: Optional[int] = None
    ) -> Notes:
        """PUT …/notes: overwrites the notes as their next version, if
        ``expected_version`` is None or the current one (ConflictError
        otherwise)."""
        body = b.body(content=content, expected_version=expected_version)
        return await self._client._send(
            b.Call("PUT", self._path(user, "agents", agent_id, "notes"), b.model(Notes), body=body)
        )

    async def edit(
        self,
        agent_id: str,
        operation: str,
        user: Optional[str] = None,
        *,
        content: Optional[str] = None,
        section_header: Optional[str] = None,
        expected_version: Optional[int] = None,
    ) -> Notes:
        """POST …/notes/ops: one of seed 003's operations: read, overwrite,
        append, prepend, delete_section_by_header,
        replace_section_by_header, delete_all_notes. A read is retried;
        writes are not."""
        call = b.Call(
            "POST",
            self._path(user, "agents", agent_id, "notes", "ops"),
            b.model(Notes),
            body=b.body(
                operation=operation, content=content, section_header=section_header, expected_version=expected_version
            ),
            idempotent=operation in ("", "read"),
        )
        return await self._client._send(call)

    def _history(
        self, agent_id: str, user: Optional[str], limit: Optional[int], cursor: Optional[str]
    ) -> b.Call[Page[Notes]]:
        path = self._path(user, "agents", agent_id, "notes", "history")
        return b.Call("GET", path, b.page(Notes), query=b.query(limit=limit, cursor=cursor))

    async def history(
        self, agent_id: str, user: Optional[str] = None, *, limit: Optional[int] = None, cursor: Optional[str] = None
    ) -> Page[Notes]:
        """GET …/notes/history: one page of every version, newest first."""
        return await self._client._send(self._history(agent_id, user, limit, cursor))

    def iter_history(
        self, agent_id: str, user: Optional[str] = None, *, limit: Optional[int] = None, cursor: Optional[str] = None
    ) -> AsyncIterator[Notes]:
        """Every version, page after page."""
        return self._client._iterate(self._history(agent_id, user, limit, cursor))


class AsyncTools(_AsyncResource):
    """The MCP server's tools as OpenAI function calls: /v1/tools."""

    async def list(self) -> List[ToolSpec]:
        """GET /v1/tools: the tools, to hand to a model as they are."""
        return await self._client._send(b.Call("GET", "/v1/tools", lambda r: list(b.json_of(r)["tools"])))

    async def call(
        self,
        name: str,
        arguments: Union[Mapping[str, Any], str, None] = None,
        user: Optional[str] = None,
        *,
        agent: Optional[str] = None,
    ) -> Any:
        """POST /v1/users/{user}/tools/{name}: runs a model's tool call with
        its arguments (a dict, or the JSON string the model gave) and
        returns the tool's result. ``agent`` is the agent of notes and
        sessions ("default" when None). Not retried: a tool may write."""
        body = (
            arguments.encode("utf-8")
            if isinstance(arguments, str)
            else b.encode(arguments if arguments is not None else {})
        )
        call = b.Call(
            "POST",
            self._path(user, "tools", name),
            lambda r: b.json_of(r)["result"],
            body=body,
            query=b.query(agent=agent),
        )
        return await self._client._send(call)


class AsyncJobs(_AsyncResource):
    """Background jobs: a user's (/v1/users/{user}/jobs), and every user's
    for operators (/v1/jobs)."""

    def _list(
        self,
        user: Optional[str],
        status: Optional[str],
        kind: Optional[str],
        limit: Optional[int],
        cursor: Optional[str],
    ) -> b.Call[Page[Job]]:
        query = b.query(status=status, kind=kind, limit=limit, cursor=cursor)
        return b.Call("GET", self._path(user, "jobs"), b.page(Job), query=query)

    async def list(
        self,
        user: Optional[str] = None,
        *,
        status: Optional[str] = None,
        kind: Optional[str] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> Page[Job]:
        """GET /v1/users/{user}/jobs: one page of the user's jobs, newest
        updated first (dead letters with ``status="dead"``)."""
        return await self._client._send(self._list(user, status, kind, limit, cursor))

    def iter(
        self,
        user: Optional[str] = None,
        *,
        status: Optional[str] = None,
        kind: Optional[str] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> AsyncIterator[Job]:
        """Every job that list selects, page after page."""
        return self._client._iterate(self._list(user, status, kind, limit, cursor))

    async def retry(self, job_id: str, user: Optional[str] = None) -> Job:
        """POST /v1/users/{user}/jobs/{job}/retry: queues a dead job again
        (ConflictError for a job that is not dead)."""
        return await self._client._send(b.Call("POST", self._path(user, "jobs", job_id, "retry"), b.model(Job)))

    def _list_all(
        self,
        status: Optional[str],
        kind: Optional[str],
        user_id: Optional[str],
        limit: Optional[int],
        cursor: Optional[str],
    ) -> b.Call[Page[Job]]:
        query = b.query(status=status, kind=kind, user_id=user_id, limit=limit, cursor=cursor)
        return b.Call("GET", "/v1/jobs", b.page(Job), query=query)

    async def list_all(
        self,
        *,
        status: Optional[str] = None,
        kind: Optional[str] = None,
        user_id: Optional[str] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> Page[Job]:
        """GET /v1/jobs: one page of every user's jobs (admin)."""
        return await self._client._send(self._list_all(status, kind, user_id, limit, cursor))

    def iter_all(
        self,
        *,
        status: Optional[str] = None,
        kind: Optional[str] = None,
        user_id: Optional[str] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> AsyncIterator[Job]:
        """Every job that list_all selects, page after page (admin)."""
        return self._client._iterate(self._list_all(status, kind, user_id, limit, cursor))


class AsyncUsers(_AsyncResource):
    """Users as a whole: the operators' list, exports, imports, erasure."""

    def _list(self, user_id: Optional[str], limit: Optional[int], cursor: Optional[str]) -> b.Call[Page[UserSummary]]:
        return b.Call(
            "GET", "/v1/users", b.page(UserSummary), query=b.query(user_id=user_id, limit=limit, cursor=cursor)
        )

    async def list(
        self, *, user_id: Optional[str] = None, limit: Optional[int] = None, cursor: Optional[str] = None
    ) -> Page[UserSummary]:
        """GET /v1/users: one page of every user with their counts, in ID
        order (``user_id``: that user alone) (admin)."""
        return await self._client._send(self._list(user_id, limit, cursor))

    def iter(
        self, *, user_id: Optional[str] = None, limit: Optional[int] = None, cursor: Optional[str] = None
    ) -> AsyncIterator[UserSummary]:
        """Every user, page after page (admin)."""
        return self._client._iterate(self._list(user_id, limit, cursor))

    async def export(self, user: Optional[str] = None, *, include_deleted: bool = False) -> UserExport:
        """GET /v1/users/{user}/export: everything stored for the user, as
        import_ takes it (soft-deleted threads with include_deleted)."""
        query = b.query(include_deleted=True if include_deleted else None)
        return await self._client._send(b.Call("GET", self._path(user, "export"), b.model(UserExport), query=query))

    async def export_markdown(self, user: Optional[str] = None, *, include_deleted: bool = False) -> str:
        """GET /v1/users/{user}/export?format=markdown: the user's data to
        read."""
        query = b.query(format="markdown", include_deleted=True if include_deleted else None)
        return await self._client._send(
            b.Call("GET", self._path(user, "export"), b.text, query=query, accept="text/markdown")
        )

    async def import_(
        self,
        export: Union[UserExport, Mapping[str, Any]],
        user: Optional[str] = None,
        *,
        on_conflict: Optional[str] = None,
    ) -> ImportResult:
        """POST /v1/users/{user}/import: restores a user export, all of it
        or nothing. ``on_conflict``: "fail" (the default: ConflictError
        naming the clash), "skip" or "replace"."""
        call = b.Call(
            "POST",
            self._path(user, "import"),
            b.model(ImportResult),
            body=b.encode(export),
            query=b.query(on_conflict=on_conflict),
        )
        return await self._client._send(call)

    async def erase(self, user: str) -> Counts:
        """DELETE /v1/users/{user}: erases everything of the user (an admin
        or tenant key). The user is never the client's default: name it."""
        return await self._client._send(b.Call("DELETE", b.path("v1", "users", user), b.model_in("deleted", Counts)))


class AsyncKeys(_AsyncResource):
    """API keys: /v1/keys (admin)."""

    async def create(self, scope: str, *, name: Optional[str] = None, expires_in: Optional[str] = None) -> NewKey:
        """POST /v1/keys: a key of ``scope`` ("admin", "user:alice",
        "tenant:acme", "tenant:acme/user:alice") lasting ``expires_in``
        ("90d"; never by default). The token is in the answer, once."""
        body = b.body(scope=scope, name=name, expires_in=expires_in)
        return await self._client._send(b.Call("POST", "/v1/keys", b.model(NewKey), body=body))

    def _list(self, tenant_id: Optional[str], limit: Optional[int], cursor: Optional[str]) -> b.Call[Page[APIKey]]:
        return b.Call("GET", "/v1/keys", b.page(APIKey), query=b.query(tenant_id=tenant_id, limit=limit, cursor=cursor))

    async def list(
        self, *, tenant_id: Optional[str] = None, limit: Optional[int] = None, cursor: Optional[str] = None
    ) -> Page[APIKey]:
        """GET /v1/keys: one page of the keys (never their secrets)."""
        return await self._client._send(self._list(tenant_id, limit, cursor))

    def iter(
        self, *, tenant_id: Optional[str] = None, limit: Optional[int] = None, cursor: Optional[str] = None
    ) -> AsyncIterator[APIKey]:
        """Every key, page after page."""
        return self._client._iterate(self._list(tenant_id, limit, cursor))

    async def revoke(self, key_id: str) -> APIKey:
        """DELETE /v1/keys/{key}: revokes the key at once."""
        return await self._client._send(b.Call("DELETE", b.path("v1", "keys", key_id), b.model(APIKey)))


class AsyncAudit(_AsyncResource):
    """The audit log: /v1/audit (admin)."""

    def _list(
        self,
        action: Optional[str],
        tenant_id: Optional[str],
        user_id: Optional[str],
        since: Optional[Time],
        limit: Optional[int],
        cursor: Optional[str],
    ) -> b.Call[Page[AuditEvent]]:
        query = b.query(action=action, tenant_id=tenant_id, user_id=user_id, since=since, limit=limit, cursor=cursor)
        return b.Call("GET", "/v1/audit", b.page(AuditEvent), query=query)

    async def list(
        self,
        *,
        action: Optional[str] = None,
        tenant_id: Optional[str] = None,
        user_id: Optional[str] = None,
        since: Optional[Time] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> Page[AuditEvent]:
        """GET /v1/audit: one page of the audit log, newest first."""
        return await self._client._send(self._list(action, tenant_id, user_id, since, limit, cursor))

    def iter(
        self,
        *,
        action: Optional[str] = None,
        tenant_id: Optional[str] = None,
        user_id: Optional[str] = None,
        since: Optional[Time] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> AsyncIterator[AuditEvent]:
        """Every event that list selects, page after page."""
        return self._client._iterate(self._list(action, tenant_id, user_id, since, limit, cursor))
