"""A Chainlit data layer on agentmem: AgentmemDataLayer.

    import chainlit as cl
    import agentmem
    from agentmem.chainlit import AgentmemDataLayer

    @cl.data_layer
    def data_layer():
        return AgentmemDataLayer(agentmem.AsyncClient("http://127.0.0.1:8080", api_key=...))

Chainlit then keeps every conversation in agentmem: its threads are
agentmem threads of the user (of agent ``agent_id``, "chainlit" by default),
the user's and the assistant's messages are the thread's messages, which
agentmem indexes, summarises and learns memories from, so that the same user
meets them again through the proxy, MCP or the REST API; elements
(citations, files, images) are agentmem elements. Needs Chainlit 2
(``pip install 'agentmem[chainlit]'``); ``import agentmem`` alone never
imports it.

agentmem keeps messages and elements append-only, while Chainlit edits and
deletes steps, elements and feedback. So an edit is stored as a new record
beside the first, and the newest wins when the thread is read: a message
step's later output, any other step (tool, run, llm…: kept whole as an
element of type "chainlit.step"), an element sent again, a feedback (an
element "chainlit.feedback"), a deletion (an element "chainlit.delete").
A deleted or edited message leaves Chainlit's view, but agentmem still
holds the text as first sent, and may have learned from it.

agentmem names the user in every path, and Chainlit names only the thread
in several calls (opening a shared thread, deleting one, feedback), so the
layer keeps a directory under one more agentmem user, ``directory_user``:
a thread ``thread:ID`` per Chainlit thread, naming its owner, and a thread
``user:ID`` per Chainlit user, holding the user's metadata. Its key must
therefore reach every user: the admin key (or no authentication).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import copy
import json
import logging
import re
import urllib.parse
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, AsyncIterator, Dict, List, Mapping, Optional, Set, Tuple, TypeVar, cast
from typing import OrderedDict as TypingOrderedDict

try:
    from chainlit.context import ChainlitContextException, context
    from chainlit.data.base import BaseDataLayer
    from chainlit.data.utils import queue_until_user_message
    from chainlit.element import ElementDict
    from chainlit.step import StepDict
    from chainlit.types import Feedback, FeedbackDict, PageInfo, PaginatedResponse, Pagination, ThreadDict, ThreadFilter
    from chainlit.user import PersistedUser, User
except ImportError as e:  # pragma: no cover: depends on the environment
    raise ImportError("agentmem.chainlit needs Chainlit 2: pip install 'agentmem[chainlit]'") from e

from ._async_client import AsyncClient
from ._errors import ConflictError, NotFoundError
from ._types import Element, Message, Thread

__all__ = ["AgentmemDataLayer", "identifier_of", "user_id_of"]

log = logging.getLogger("agentmem.chainlit")

K = TypeVar("K")
V = TypeVar("V")

# Chainlit's message step types, and the roles of the messages that hold them.
STEP_ROLES = {"user_message": "user", "assistant_message": "assistant", "system_message": "system"}
ROLE_STEPS = {v: k for k, v in STEP_ROLES.items()}

# The types of the elements the layer writes for itself; any other type is
# one of Chainlit's elements (text, image, file, pdf…).
STEP = "chainlit.step"  # a step's newer version (content: the StepDict as JSON)
ELEMENT = "chainlit.element"  # an element sent again (content: its ElementDict as JSON)
FEEDBACK = "chainlit.feedback"  # a feedback given, changed or deleted
DELETE = "chainlit.delete"  # a step or element deleted

# Tags the layer keeps on a thread so that agentmem filters on them; they
# are not shown to Chainlit.
TAG_PREFIX = "chainlit."
FEEDBACK_TAG = "chainlit.feedback:"  # + "0" or "1": a step of the thread has that feedback
FAVORITE_TAG = "chainlit.favorite"  # a step of the thread is a favorite

# agentmem's limits (see the Go package): IDs, titles, metadata, an
# element's content and URL, a message.
MAX_ID_BYTES = 200
MAX_TITLE_RUNES = 500
MAX_METADATA_BYTES = 60 << 10  # of 64 KiB, with room for the layer's own keys
MAX_ELEMENT_BYTES = (1 << 20) - (4 << 10)
PAGE = 100  # items a page, reading a thread's messages and elements

_ID_UNSAFE = re.compile(r"[%/\\\s\x00-\x1f\x7f-\x9f]")


def user_id_of(identifier: str) -> str:
    """Returns the agentmem user ID of a Chainlit user identifier: the
    identifier itself when agentmem takes it as an ID, else with the
    characters it refuses (slashes, spaces, control characters, a leading
    "_") and "%" percent-encoded, so that identifier_of turns it back.
    Raises ValueError for an identifier of more than 200 bytes so
    encoded."""
    if not identifier:
        raise ValueError("a Chainlit user identifier is empty")
    uid = _ID_UNSAFE.sub(lambda m: "".join(f"%{b:02X}" for b in m.group().encode("utf-8")), identifier)
    if uid.startswith("_"):
        uid = "%5F" + uid[1:]
    if uid in (".", ".."):
        uid = uid.replace(".", "%2E")
    if len(uid.encode("utf-8")) > MAX_ID_BYTES:
        raise ValueError(f"Chainlit user identifier {identifier!r} is longer than agentmem's {MAX_ID_BYTES} bytes")
    return uid


def identifier_of(user_id: str) -> str:
    """Returns the Chainlit user identifier of an agentmem user ID made by
    user_id_of."""
    return urllib.parse.unquote(user_id)


class AgentmemDataLayer(BaseDataLayer):  # type: ignore[misc,unused-ignore]  # Any where Chainlit is not installed
    """Chainlit's data layer (``chainlit.data.base.BaseDataLayer``) on
    agentmem.

    ``client`` is an agentmem.AsyncClient whose key reaches every user (the
    admin key, or none with ``--auth none``); the layer closes it when
    Chainlit closes the layer. ``agent_id`` is the agent of the threads it
    makes and lists ("chainlit"; None lists every thread of the user).
    ``directory_user`` is the agentmem user that holds the layer's
    directory of threads and users. ``default_user`` owns the threads of an
    app without authentication (Chainlit names no user then).
    ``storage_client`` (one of Chainlit's, e.g. S3StorageClient) takes the
    files of elements; without one, a file of up to about 750 KB is kept
    in the element itself, and a larger one is not kept (as Chainlit's own
    layers do without storage). ``delete_permanently`` makes deleting a
    thread permanent rather than soft (agentmem can restore a soft-deleted
    one; the memories learned from it stay either way). ``debug_url`` is
    what Chainlit links its steps to in debug mode, "[thread_id]" and
    "[step_id]" replaced (e.g. agentmem's web UI,
    "http://127.0.0.1:8080/?user=alice&thread=[thread_id]").
    """

    def __init__(
        self,
        client: AsyncClient,
        *,
        agent_id: Optional[str] = "chainlit",
        directory_user: str = "chainlit-directory",
        default_user: str = "local-user",
        storage_client: Any = None,
        delete_permanently: bool = False,
        debug_url: str = "",
    ) -> None:
        self.client = client
        self.agent_id = agent_id
        self.directory_user = directory_user
        self.default_user = default_user
        self.storage_client = storage_client
        self.delete_permanently = delete_permanently
        self.debug_url = debug_url
        self._locks = _Locks()
        # Thread ID → its owner's user ID, as the directory says (an owner
        # never changes), and owners seen by list_threads, which the
        # directory lacks for threads made elsewhere (agent_id None).
        self._owners: _LRU[str, str] = _LRU(100_000)
        self._listed: _LRU[str, str] = _LRU(10_000)
        # Step ID → what this process stored of it, to skip writing a step
        # again unchanged and to find the thread of a step deleted by ID.
        self._steps: _LRU[str, _Stored] = _LRU(10_000)

    # Users.

    async def get_user(self, identifier: str) -> Optional[PersistedUser]:
        uid = user_id_of(identifier)
        try:
            record = await self.client.threads.get("user:" + uid, self.directory_user)
        except NotFoundError:
            return None
        return _persisted_user(uid, identifier, record)

    async def create_user(self, user: User) -> Optional[PersistedUser]:
        """Stores the user (or, known already, their new metadata and
        display name, as Chainlit's own layers do at each login)."""
        uid = user_id_of(user.identifier)
        if uid == self.directory_user:
            raise ValueError(f"Chainlit user {user.identifier!r} is the layer's directory_user")
        meta = _clean({"identifier": user.identifier, "display_name": user.display_name, "metadata": user.metadata})
        try:
            record = await self.client.threads.create(
                self.directory_user, id="user:" + uid, title=_title("user " + user.identifier), metadata=meta
            )
        except ConflictError:
            record = await self.client.threads.update("user:" + uid, self.directory_user, metadata=meta)
        return _persisted_user(uid, user.identifier, record)

    # Threads.

    async def get_thread_author(self, thread_id: str) -> str:
        uid = await self._owner_of(thread_id)
        return identifier_of(uid) if uid else ""

    async def list_threads(self, pagination: Pagination, filters: ThreadFilter) -> PaginatedResponse[ThreadDict]:
        """The user's threads (``filters.userId``, which Chainlit sets to
        the signed-in user), newest updated first, whose name contains
        ``filters.search`` (in any case) and with a step of feedback
        ``filters.feedback``. The cursor is agentmem's."""
        uid = filters.userId or _context_user() or self.default_user
        tags = [FEEDBACK_TAG + str(filters.feedback)] if filters.feedback is not None else None
        page = await self.client.threads.list(
            uid,
            agent_id=self.agent_id,
            q=filters.search or None,
            tags=tags,
            limit=pagination.first or None,
            cursor=pagination.cursor or None,
        )
        data: List[Any] = []  # ThreadDicts
        for th in page.data:
            self._listed[th.id] = uid
            d = _thread_dict(th)
            # The sidebar groups threads by this date: the last activity,
            # as in Chainlit's own data layer.
            d["createdAt"] = th.updated_at
            data.append(d)
        return PaginatedResponse(
            pageInfo=PageInfo(
                hasNextPage=bool(page.next_cursor),
                startCursor=data[0]["id"] if data else None,
                endCursor=page.next_cursor or None,
            ),
            data=data,
        )

    async def get_thread(self, thread_id: str) -> Optional[ThreadDict]:
        """The thread with its steps (oldest first) and elements, or None."""
        uid = await self._owner_of(thread_id)
        if uid is None:
            return None
        return await self._read_thread(uid, thread_id)

    async def update_thread(
        self,
        thread_id: str,
        name: Optional[str] = None,
        user_id: Optional[str] = None,
        metadata: Optional[Dict[str, Any]] = None,
        tags: Optional[List[str]] = None,
    ) -> None:
        """Makes the thread when it is new, of ``user_id`` (else of the
        session's user, else of default_user), and sets what is given:
        metadata is merged into the thread's (a key set to None is
        removed)."""
        async with self._locks.hold(thread_id):
            uid = await self._claim(thread_id, user_id)
            if name is None and metadata is None and tags is None:
                return
            thread = await self.client.threads.get(thread_id, uid)
            new_meta = None
            if metadata is not None:
                removed = {k for k, v in metadata.items() if v is None}
                new_meta = {k: v for k, v in thread.metadata.items() if k not in removed}
                new_meta.update({k: v for k, v in metadata.items() if v is not None})
                new_meta = _fit_metadata(_clean(new_meta))
            new_tags = None
            if tags is not None:
                new_tags = [_text(t)[:100] for t in tags if not t.startswith(TAG_PREFIX)]
                new_tags += [t for t in thread.tags if t.startswith(TAG_PREFIX)]
            await self.client.threads.update(
                thread_id, uid, title=_title(name) if name is not None else None, metadata=new_meta, tags=new_tags
            )

    async def delete_thread(self, thread_id: str) -> None:
        """Deletes the thread: soft, so that agentmem can restore it,
        unless delete_permanently (then its directory entry goes too)."""
        uid = await self._owner_of(thread_id)
        if uid is None:
            return
        async with self._locks.hold(thread_id):
            with contextlib.suppress(NotFoundError):
                await self.client.threads.delete(thread_id, uid, permanent=self.delete_permanently)
            if self.delete_permanently:
                with contextlib.suppress(NotFoundError):
                    await self.client.threads.delete("thread:" + thread_id, self.directory_user, permanent=True)
                self._owners.pop(thread_id, None)

    # Steps.

    @queue_until_user_message()  # type: ignore[untyped-decorator,no-untyped-call,unused-ignore]
    async def create_step(self, step_dict: Dict[str, Any]) -> None:
        await self._write_step(step_dict)

    @queue_until_user_message()  # type: ignore[untyped-decorator,no-untyped-call,unused-ignore]
    async def update_step(self, step_dict: Dict[str, Any]) -> None:
        await self._write_step(step_dict)

    @queue_until_user_message()  # type: ignore[untyped-decorator,no-untyped-call,unused-ignore]
    async def delete_step(self, step_id: str) -> None:
        """Hides the step, its elements and its feedback from the thread.
        A message step's text stays in agentmem (messages are
        append-only)."""
        stored = self._steps.get(step_id)
        thread_id = stored.thread_id if stored else _context_thread()
        if not thread_id:
            raise ValueError(f"delete_step: the thread of step {step_id!r} is not known here")
        async with self._locks.hold(thread_id):
            uid = await self._claim(thread_id, None)
            await self._record(uid, thread_id, DELETE, {"step": step_id}, name=step_id)
            self._steps.pop(step_id, None)

    async def get_favorite_steps(self, user_id: str) -> List[StepDict]:
        """The user's steps marked favorite, newest first."""
        favorites: List[Any] = []  # StepDicts
        async for th in self.client.threads.iter(user_id, agent_id=self.agent_id, tags=[FAVORITE_TAG], limit=PAGE):
            thread = await self._read_thread(user_id, th.id)
            if thread:
                favorites += [s for s in thread["steps"] if (s.get("metadata") or {}).get("favorite")]
        favorites.sort(key=lambda s: _time_key(s.get("createdAt")), reverse=True)
        return favorites

    # Elements.

    @queue_until_user_message()  # type: ignore[untyped-decorator,no-untyped-call,unused-ignore]
    async def create_element(self, element: Any) -> None:
        """Stores a Chainlit element (cl.Text, cl.Image, cl.File…) as an
        agentmem element of the thread, attached to its message when its
        step is one. Its file or content goes to storage_client when there
        is one, else into the element (up to about 750 KB)."""
        thread_id = element.thread_id or _context_thread()
        if not thread_id:
            return
        async with self._locks.hold(thread_id):
            uid = await self._claim(thread_id, None)
            d = {k: v for k, v in element.to_dict().items() if v is not None}
            d["threadId"] = thread_id
            content, encoding = await self._element_content(element, d)
            chainlit = _clean(
                {k: v for k, v in d.items() if k not in ("id", "threadId", "type", "name", "url", "mime")}
            )
            if encoding:
                chainlit["encoding"] = encoding
            try:
                await self._create_element(
                    uid,
                    thread_id,
                    d.get("forId"),
                    id=element.id,
                    type=element.type,
                    name=_text(element.name or ""),
                    content=content,
                    url=element.url or None,
                    mime_type=element.mime or None,
                    display=element.display or None,
                    metadata={"chainlit": chainlit},
                )
            except ConflictError:
                # Sent again (a custom element's new props): a newer version.
                d.pop("path", None)
                d.pop("content", None)
                await self._record(uid, thread_id, ELEMENT, {"element": element.id}, body=d, for_id=d.get("forId"))

    async def get_element(self, thread_id: str, element_id: str) -> Optional[ElementDict]:
        thread = await self.get_thread(thread_id)
        for e in (thread["elements"] or []) if thread else []:
            if e["id"] == element_id:
                return e
        return None

    @queue_until_user_message()  # type: ignore[untyped-decorator,no-untyped-call,unused-ignore]
    async def delete_element(self, element_id: str, thread_id: Optional[str] = None) -> None:
        thread_id = thread_id or _context_thread()
        if not thread_id:
            raise ValueError(f"delete_element: the thread of element {element_id!r} is not known here")
        if self.storage_client is not None:
            element = await self.get_element(thread_id, element_id)
            if element and element.get("objectKey"):
                await self.storage_client.delete_file(object_key=element["objectKey"])
        async with self._locks.hold(thread_id):
            uid = await self._claim(thread_id, None)
            await self._record(uid, thread_id, DELETE, {"element": element_id}, name=element_id)

    # Feedback.

    async def upsert_feedback(self, feedback: Feedback) -> str:
        """Stores the step's feedback (one per step, the newest counts) and
        returns its ID, "THREAD/STEP": delete_feedback is given nothing
        else."""
        thread_id = feedback.threadId or _thread_of_step(self._steps, feedback.forId) or _context_thread()
        if not thread_id:
            raise ValueError(f"upsert_feedback: the thread of step {feedback.forId!r} is not known")
        uid = await self._owner_of(thread_id)
        if uid is None:
            raise ValueError(f"upsert_feedback: no thread {thread_id!r}")
        feedback_id = f"{thread_id}/{feedback.forId}"
        async with self._locks.hold(thread_id):
            body = {"id": feedback_id, "forId": feedback.forId, "value": feedback.value, "comment": feedback.comment}
            await self._record(uid, thread_id, FEEDBACK, {"feedback": feedback_id}, body=body, for_id=feedback.forId)
            await self._retag(uid, thread_id)
        return feedback_id

    async def delete_feedback(self, feedback_id: str) -> bool:
        thread_id, sep, step_id = feedback_id.partition("/")  # agentmem IDs hold no "/"
        if not sep:
            return False
        uid = await self._owner_of(thread_id)
        if uid is None:
            return False
        async with self._locks.hold(thread_id):
            body = {"id": feedback_id, "forId": step_id, "deleted": True}
            await self._record(uid, thread_id, FEEDBACK, {"feedback": feedback_id}, body=body, for_id=step_id)
            await self._retag(uid, thread_id)
        return True

    async def session_thread(self, message: Any = None, timeout: float = 10) -> Tuple[str, str]:
        """Returns the agentmem user and thread of the current Chainlit
        session (made when new), which an app asks agentmem's context of
        for its model call. Given the user's ``message`` (the cl.Message of
        on_message, which Chainlit stores in a task of its own), it first
        waits, up to ``timeout`` seconds, until the message is stored, so
        that ``client.threads.context(thread, user, query=message.content,
        format="responses")`` gives seed 000's ``instructions`` (the
        earlier turns, and what agentmem knows of the user) and ``input``
        (the message) within a token budget."""
        thread_id = _context_thread()
        if not thread_id:
            raise RuntimeError("session_thread is called outside of a Chainlit session")
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            async with self._locks.hold(thread_id):
                uid = await self._claim(thread_id, None)
                if message is None or message.id in self._steps:
                    return uid, thread_id
            if asyncio.get_running_loop().time() > deadline:
                raise TimeoutError(f"message {message.id} was not stored within {timeout} s")
            await asyncio.sleep(0.01)

    # The rest of the interface.

    async def build_debug_url(self) -> str:
        return self.debug_url

    async def close(self) -> None:
        if self.storage_client is not None:
            await self.storage_client.close()
        await self.client.close()

    # Owners: the directory.

    async def _owner_of(self, thread_id: str) -> Optional[str]:
        """The user ID of the thread's owner, or None for a thread the
        directory does not know."""
        if not thread_id:
            return None
        uid = self._owners.get(thread_id)
        if uid is not None:
            return uid
        try:
            entry = await self.client.threads.get("thread:" + thread_id, self.directory_user)
        except NotFoundError:
            listed = self._listed.get(thread_id)
            if listed is None:
                return None
            # A thread made elsewhere that list_threads showed its owner.
            return await self._register(thread_id, listed)
        uid = str(entry.metadata.get("user") or "")
        if uid:
            self._owners[thread_id] = uid
        return uid or None

    async def _claim(self, thread_id: str, user_id: Optional[str]) -> str:
        """Returns the owner of the thread, making the thread (of user_id,
        else of the session's user, else of default_user) and its
        directory entry when it is new. Raises PermissionError when
        user_id, or the session's user, is not the owner."""
        claimant = user_id or _context_user()
        uid = await self._owner_of(thread_id)
        if uid is None:
            uid = claimant or self.default_user
            with contextlib.suppress(ConflictError):
                await self.client.threads.create(uid, id=thread_id, agent_id=self.agent_id)
            uid = await self._register(thread_id, uid)
        if claimant and claimant != uid:
            raise PermissionError(f"Thread {thread_id!r} is another user's.")
        return uid

    async def _register(self, thread_id: str, uid: str) -> str:
        """Writes the directory entry of the thread, unless one exists
        (made meanwhile elsewhere), and returns the owner it names."""
        try:
            await self.client.threads.create(
                self.directory_user, id="thread:" + thread_id, title=_title("thread of " + uid), metadata={"user": uid}
            )
        except ConflictError:
            entry = await self.client.threads.get("thread:" + thread_id, self.directory_user)
            uid = str(entry.metadata.get("user") or uid)
        self._owners[thread_id] = uid
        return uid

    # Writing.

    async def _write_step(self, step_dict: Mapping[str, Any]) -> None:
        """Stores a step as Chainlit creates or updates it: a message step
        with its output as a message of the thread (the step's other fields
        in its metadata, "chainlit"); any other step, a message step still
        empty, and each later version of a step, as a "chainlit.step"
        element. A version unchanged since this process stored the step is
        not written again."""
        d = _clean({k: v for k, v in step_dict.items() if k != "feedback" and v is not None})
        step_id = str(d.get("id") or "")
        thread_id = str(d.get("threadId") or _context_thread() or "")
        if not step_id or not thread_id:
            raise ValueError("a Chainlit step without its id or threadId")
        d["threadId"] = thread_id
        async with self._locks.hold(thread_id):
            uid = await self._claim(thread_id, None)
            stored = self._steps.get(step_id)
            if stored is not None and stored.dict == d:
                return
            as_message = stored.as_message if stored else False
            role = STEP_ROLES.get(str(d.get("type")))
            output = d.get("output") or ""
            if role and isinstance(output, str) and output and not as_message:
                rest = _fit_metadata({k: v for k, v in d.items() if k != "output"})
                # Its created_at is the server's: the records of the step are
                # then read back in the order they were stored (the step's
                # own time is its createdAt).
                message = {"id": step_id, "role": role, "content": output, "metadata": {"chainlit": rest}}
                try:
                    [got] = await self.client.messages.append(thread_id, [message], uid)
                except ConflictError:
                    as_message = True  # stored before with another output: a newer version follows
                else:
                    self._steps[step_id] = _Stored(thread_id, True, d)
                    if got.metadata.get("chainlit") == rest:
                        await self._favorites_changed(uid, thread_id, stored, d)
                        return
                    as_message = True  # stored before, as it was then: a newer version follows
            for_id = step_id if as_message else None
            await self._record(
                uid, thread_id, STEP, {"step": step_id}, body=d, name=str(d.get("name") or ""), for_id=for_id
            )
            self._steps[step_id] = _Stored(thread_id, as_message, d)
            await self._favorites_changed(uid, thread_id, stored, d)

    async def _favorites_changed(
        self, uid: str, thread_id: str, before: Optional[_Stored], d: Mapping[str, Any]
    ) -> None:
        """Sets the thread's favorite tag again when the step's favorite
        mark changed (or may have: a step this process did not store)."""
        meta = d.get("metadata") or {}
        if before is None:
            changed = "favorite" in meta
        else:
            changed = bool((before.dict.get("metadata") or {}).get("favorite")) != bool(meta.get("favorite"))
        if changed:
            await self._retag(uid, thread_id)

    async def _record(
        self,
        uid: str,
        thread_id: str,
        kind: str,
        key: Dict[str, Any],
        *,
        body: Optional[Mapping[str, Any]] = None,
        name: str = "",
        for_id: Optional[str] = None,
    ) -> None:
        """Appends one of the layer's own records to the thread: an element
        of type kind, whose metadata "chainlit" holds key and whose content
        holds body as JSON."""
        content = _fit_json(body) if body is not None else None
        await self._create_element(
            uid, thread_id, for_id, type=kind, name=_text(name)[:200], content=content, metadata={"chainlit": key}
        )

    async def _create_element(self, uid: str, thread_id: str, for_id: Optional[str], **fields: Any) -> Element:
        """Creates the element, attached to the message for_id when the
        thread has one of that ID, else to the thread."""
        if for_id:
            with contextlib.suppress(NotFoundError):
                return await self.client.elements.create(thread_id, uid, message_id=for_id, **fields)
            # No such message (a step that is no message, or not yet one).
        return await self.client.elements.create(thread_id, uid, **fields)

    async def _element_content(self, element: Any, d: Dict[str, Any]) -> Tuple[Optional[str], str]:
        """Returns what to store as the element's content and its
        encoding ("text", "base64" or ""), after uploading it to
        storage_client when there is one (d gets its objectKey)."""
        if element.url:
            return None, ""
        data: Any = element.content
        if data is None and element.path:
            data = await asyncio.to_thread(Path(element.path).read_bytes)
        if data is None:
            return None, ""
        if self.storage_client is not None:
            key = f"threads/{element.thread_id}/files/{element.id}"
            await self.storage_client.upload_file(
                object_key=key, data=data, mime=element.mime or "application/octet-stream", overwrite=True
            )
            d["objectKey"] = key
            return None, ""
        if isinstance(data, str) and "\x00" not in data and len(data.encode("utf-8")) <= MAX_ELEMENT_BYTES:
            return data, "text"
        raw = data.encode("utf-8") if isinstance(data, str) else bytes(data)
        encoded = base64.b64encode(raw).decode("ascii")
        if len(encoded) > MAX_ELEMENT_BYTES:
            log.warning(
                "agentmem data layer: element %s is %d bytes, too large to keep without a storage client: "
                "its content is not kept",
                element.id,
                len(raw),
            )
            return None, ""
        return encoded, "base64"

    async def _retag(self, uid: str, thread_id: str) -> None:
        """Sets the thread's own tags (feedback given, favorites) from
        what it holds now."""
        thread = await self._read_thread(uid, thread_id)
        if thread is None:
            return
        own: List[str] = []
        values = {fb["value"] for fb in (s.get("feedback") for s in thread["steps"]) if fb}
        own += [FEEDBACK_TAG + str(v) for v in sorted(values)]
        if any((s.get("metadata") or {}).get("favorite") for s in thread["steps"]):
            own.append(FAVORITE_TAG)
        th = await self.client.threads.get(thread_id, uid)
        kept = [t for t in th.tags if not t.startswith(TAG_PREFIX)]
        if sorted(kept + own) != sorted(th.tags):
            await self.client.threads.update(thread_id, uid, tags=kept + own)

    # Reading.

    async def _read_thread(self, uid: str, thread_id: str) -> Optional[ThreadDict]:
        # All three are awaited to the end (return_exceptions), so that none
        # is left running to fail later, unawaited, when the thread is gone.
        results = await asyncio.gather(
            self.client.threads.get(thread_id, uid),
            _collect(self.client.messages.iter(thread_id, uid, limit=PAGE)),
            _collect(self.client.elements.iter(thread_id, uid, limit=PAGE)),
            return_exceptions=True,
        )
        for r in results:
            if isinstance(r, NotFoundError):
                return None
        for r in results:
            if isinstance(r, BaseException):
                raise r
        thread, messages, elements = cast("Tuple[Thread, List[Message], List[Element]]", results)
        d = _thread_dict(thread)
        d["steps"], d["elements"] = await self._assemble(uid, thread_id, messages, elements)
        return cast("ThreadDict", d)

    async def _assemble(
        self, uid: str, thread_id: str, messages: List[Message], elements: List[Element]
    ) -> Tuple[List[Dict[str, Any]], List[Dict[str, Any]]]:
        """Returns the thread's steps, oldest first, and elements, as
        Chainlit last wrote them: the messages and the layer's records
        taken in the order the server stored them, each newer version over
        the older. Messages written by others (the proxy, an SDK) are
        steps too."""
        steps: Dict[str, Dict[str, Any]] = {}
        els: Dict[str, Dict[str, Any]] = {}
        feedback: Dict[str, Dict[str, Any]] = {}
        deleted: Set[str] = set()
        records: List[Tuple[float, int, Any]] = [(_time_key(m.created_at), i, m) for i, m in enumerate(messages)]
        records += [(_time_key(e.created_at), len(messages) + i, e) for i, e in enumerate(elements)]
        for _, _, r in sorted(records, key=lambda r: (r[0], r[1])):
            if isinstance(r, Message):
                step = self._message_step(uid, thread_id, r)
                if step is not None and r.id not in deleted:
                    steps[r.id] = _merge_step(steps.get(r.id), step)
                continue
            e: Element = r
            raw = e.metadata.get("chainlit")
            key: Dict[str, Any] = raw if isinstance(raw, dict) else {}
            if e.type == STEP:
                new = _json(e.content)
                sid = str(new.get("id") or key.get("step") or "")
                if sid and sid not in deleted:
                    steps[sid] = _merge_step(steps.get(sid), new)
            elif e.type == DELETE:
                for k in ("step", "element"):
                    if key.get(k):
                        deleted.add(str(key[k]))
                        steps.pop(str(key[k]), None)
                        els.pop(str(key[k]), None)
            elif e.type == FEEDBACK:
                fb = _json(e.content)
                if fb.get("deleted"):
                    feedback.pop(str(fb.get("forId")), None)
                elif fb.get("forId"):
                    feedback[str(fb["forId"])] = {
                        "forId": fb["forId"],
                        "id": fb.get("id"),
                        "value": fb.get("value"),
                        "comment": fb.get("comment"),
                    }
            elif e.type == ELEMENT:
                new = _json(e.content)
                eid = str(new.get("id") or key.get("element") or "")
                if eid and eid not in deleted:
                    els[eid] = {**els.get(eid, {}), **new}
            elif e.id not in deleted:
                els[e.id] = await self._element_dict(thread_id, e, key)
        for sid, fb in feedback.items():
            if sid in steps:
                steps[sid]["feedback"] = FeedbackDict(forId=sid, id=fb["id"], value=fb["value"], comment=fb["comment"])
        order = {sid: i for i, sid in enumerate(steps)}
        out = sorted(steps.values(), key=lambda s: (_time_key(s.get("createdAt")), order[s["id"]]))
        elements_out = [e for e in els.values() if not e.get("forId") or e["forId"] not in deleted]
        return out, elements_out

    @staticmethod
    def _message_step(uid: str, thread_id: str, m: Message) -> Optional[Dict[str, Any]]:
        """The step of a message: as the layer stored it, or, for a message
        written by others, a message step of its role (None for one that
        Chainlit would not show: empty, or a tool's)."""
        mine = m.metadata.get("chainlit")
        if isinstance(mine, dict) and mine.get("id") == m.id:
            step = copy.deepcopy(mine)
            step["output"] = m.content
            step.setdefault("createdAt", m.created_at)
        elif m.content and m.role in ROLE_STEPS:
            name = identifier_of(uid) if m.role == "user" else (m.name or "Assistant")
            step = {"id": m.id, "type": ROLE_STEPS[m.role], "name": name, "output": m.content, "input": ""}
            step.update(createdAt=m.created_at, start=m.created_at, end=m.created_at, metadata={})
        else:
            return None
        step["threadId"] = thread_id
        return step

    async def _element_dict(self, thread_id: str, e: Element, chainlit: Mapping[str, Any]) -> Dict[str, Any]:
        d: Dict[str, Any] = {k: v for k, v in chainlit.items() if k != "encoding"}
        d.update(id=e.id, threadId=thread_id, type=e.type, name=e.name)
        d.setdefault("display", e.display or "inline")
        d.setdefault("forId", e.message_id or None)
        d["mime"] = e.mime_type or d.get("mime")
        if e.url:
            d["url"] = e.url
        elif d.get("objectKey") and self.storage_client is not None:
            d["url"] = await self.storage_client.get_read_url(object_key=d["objectKey"])
        elif e.content:
            # Kept in the element: the page reads it from a data URL.
            mime = e.mime_type or ("text/plain" if chainlit.get("encoding") == "text" else "application/octet-stream")
            if mime.startswith("text/") and "charset" not in mime:
                mime += ";charset=utf-8"
            data = e.content if chainlit.get("encoding") == "base64" else _b64(e.content)
            d["url"] = f"data:{mime};base64,{data}"
        return d


class _Stored:
    """What this process stored of a step: its thread, whether as a
    message, and the step as last written."""

    __slots__ = ("thread_id", "as_message", "dict")

    def __init__(self, thread_id: str, as_message: bool, d: Dict[str, Any]) -> None:
        self.thread_id = thread_id
        self.as_message = as_message
        self.dict = d


class _LRU(TypingOrderedDict[K, V]):
    """A dict that forgets its least recently set keys beyond size."""

    def __init__(self, size: int) -> None:
        super().__init__()
        self.size = size

    def __setitem__(self, key: K, value: V) -> None:
        super().__setitem__(key, value)
        self.move_to_end(key)
        while len(self) > self.size:
            self.popitem(last=False)


class _Locks:
    """One asyncio.Lock per thread, held while writing it, so that the
    writes Chainlit starts as separate tasks (a message created, then
    updated) reach agentmem in the order they were started; a thread's
    lock is dropped once nobody holds or awaits it."""

    def __init__(self) -> None:
        self._locks: Dict[str, Tuple[asyncio.Lock, int]] = {}

    @contextlib.asynccontextmanager
    async def hold(self, key: str) -> AsyncIterator[None]:
        lock, n = self._locks.get(key) or (asyncio.Lock(), 0)
        self._locks[key] = (lock, n + 1)
        try:
            async with lock:
                yield
        finally:
            lock, n = self._locks[key]
            if n == 1:
                del self._locks[key]
            else:
                self._locks[key] = (lock, n - 1)


def _context_user() -> Optional[str]:
    """The agentmem user ID of the Chainlit session's user, if any."""
    try:
        user = context.session.user
    except ChainlitContextException:
        return None
    return user_id_of(user.identifier) if user is not None else None


def _context_thread() -> Optional[str]:
    try:
        return str(context.session.thread_id)
    except ChainlitContextException:
        return None


def _thread_of_step(steps: Mapping[str, _Stored], step_id: str) -> Optional[str]:
    stored = steps.get(step_id)
    return stored.thread_id if stored else None


def _persisted_user(uid: str, identifier: str, record: Thread) -> PersistedUser:
    meta = record.metadata
    return PersistedUser(
        id=uid,
        identifier=str(meta.get("identifier") or identifier),
        display_name=meta.get("display_name"),
        metadata=meta.get("metadata") or {},
        createdAt=record.created_at,
    )


def _thread_dict(th: Thread) -> Dict[str, Any]:
    return {
        "id": th.id,
        "createdAt": th.created_at,
        "name": th.title or None,
        "userId": th.user_id,
        "userIdentifier": identifier_of(th.user_id),
        "tags": [t for t in th.tags if not t.startswith(TAG_PREFIX)],
        "metadata": th.metadata,
        "steps": [],
        "elements": [],
    }


def _merge_step(old: Optional[Dict[str, Any]], new: Mapping[str, Any]) -> Dict[str, Any]:
    """A step's newer version over the older, as Chainlit's own layer
    merges them: an empty input or output, or the type "run", leaves the
    older one's."""
    if old is None:
        return dict(new)
    out = dict(old)
    for k, v in new.items():
        if k in ("input", "output") and not v and old.get(k):
            continue
        if k == "type" and v == "run" and old.get(k):
            continue
        out[k] = v
    return out


async def _collect(it: AsyncIterator[Any]) -> List[Any]:
    return [x async for x in it]


def _json(s: str) -> Dict[str, Any]:
    try:
        v = json.loads(s or "{}")
    except ValueError:
        return {}
    return v if isinstance(v, dict) else {}


def _b64(s: str) -> str:
    return base64.b64encode(s.encode("utf-8")).decode("ascii")


def _text(s: str) -> str:
    """s without NUL characters, which agentmem refuses."""
    return s.replace("\x00", "\ufffd")


def _clean(v: Any) -> Any:
    """v with NUL characters replaced in every string, and as JSON has it
    (tuples as lists, keys as strings, values JSON cannot hold as their
    repr)."""
    if isinstance(v, str):
        return _text(v)
    if isinstance(v, Mapping):
        return {_text(str(k)): _clean(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_clean(x) for x in v]
    if v is None or isinstance(v, (bool, int, float)):
        return v
    return _text(repr(v))


def _title(name: str) -> str:
    """A thread title agentmem takes: whitespace folded, at most 500
    characters."""
    return " ".join(_text(name).split())[:MAX_TITLE_RUNES]


def _fit_metadata(d: Dict[str, Any]) -> Dict[str, Any]:
    """d within agentmem's metadata limit: a step's generation goes first,
    then the input is cut."""
    if len(json.dumps(d)) <= MAX_METADATA_BYTES:
        return d
    d = dict(d)
    d.pop("generation", None)
    for key in ("input", "output"):
        over = len(json.dumps(d)) - MAX_METADATA_BYTES
        if over > 0 and isinstance(d.get(key), str):
            d[key] = d[key][: max(0, len(d[key]) - over - 100)] + " …[cut by agentmem's data layer]"
    if len(json.dumps(d)) > MAX_METADATA_BYTES:
        raise ValueError("a Chainlit record is larger than agentmem's metadata limit of 64 KiB")
    return d


def _fit_json(d: Mapping[str, Any]) -> str:
    """d as JSON within agentmem's element limit: the output, then the
    input cut when it does not fit."""
    s = json.dumps(d, ensure_ascii=False)
    if len(s.encode("utf-8")) <= MAX_ELEMENT_BYTES:
        return s
    d = dict(d)
    d.pop("generation", None)
    for key in ("output", "input"):
        over = len(json.dumps(d, ensure_ascii=False).encode("utf-8")) - MAX_ELEMENT_BYTES
        if over > 0 and isinstance(d.get(key), str):
            d[key] = d[key][: max(0, len(d[key]) - over - 100)] + " …[cut by agentmem's data layer]"
    return json.dumps(d, ensure_ascii=False)


def _parse(s: Optional[str]) -> Optional[datetime]:
    if not s:
        return None
    try:
        t = datetime.fromisoformat(s[:-1] + "+00:00" if s.endswith("Z") else s)
    except ValueError:
        try:
            from ._base import parse_time

            t = parse_time(s)
        except ValueError:
            return None
    return t if t.tzinfo else t.replace(tzinfo=timezone.utc)


def _time_key(s: Optional[str]) -> float:
    t = _parse(s)
    return t.timestamp() if t else 0.0
