"""AgentmemDataLayer called as Chainlit calls it: its own objects
(cl.Message, cl.Step, cl.Text…) in a Chainlit context persisting
themselves through the layer, and the calls its server makes (list and
open threads, feedback, rename, delete), against a real agentmem."""

from __future__ import annotations

import base64
import logging
import uuid
from typing import Any, Dict, List, Optional

import chainlit as cl
import pytest
from chainlit.context import init_http_context
from chainlit.types import Feedback, Pagination, ThreadFilter
from chainlit.user import PersistedUser
from chainlit_support import settle

import agentmem
from agentmem.chainlit import AgentmemDataLayer, identifier_of, user_id_of


async def sign_in(layer: AgentmemDataLayer, identifier: str) -> PersistedUser:
    """What Chainlit does at a login: create_user, then get_user at each
    request."""
    await layer.create_user(cl.User(identifier=identifier, metadata={"provider": "test"}))
    user = await layer.get_user(identifier)
    assert user is not None
    return user


async def chat(layer: AgentmemDataLayer, user: PersistedUser, text: str, thread_id: Optional[str] = None) -> str:
    """A first user message of a new session, as Chainlit persists it:
    the session's thread given its user, the message, then the thread
    named after it. Returns the thread's ID."""
    ctx = init_http_context(user=user, thread_id=thread_id)
    await cl.Message(content=text, type="user_message", author=user.identifier).send()
    await layer.update_thread(ctx.session.thread_id, name=text, user_id=user.id)
    await settle()
    return str(ctx.session.thread_id)


def data_url(url: str) -> bytes:
    head, _, data = url.partition(",")
    assert head.startswith("data:") and head.endswith(";base64"), url
    return base64.b64decode(data)


async def test_conversation(layer: AgentmemDataLayer, user: str) -> None:
    """A turn of seed 000's app as Chainlit persists it comes back from
    get_thread as Chainlit wrote it (steps in order, nested, the streamed
    answer whole, the citation with its text), and agentmem holds the
    conversation as messages, the citation as an element of its message."""
    alice = await sign_in(layer, user)
    ctx = init_http_context(user=alice)
    thread_id = ctx.session.thread_id
    question = cl.Message(content="I live in Porto and I am vegetarian.", type="user_message", author=user)
    await question.send()
    await layer.update_thread(thread_id, name=question.content, user_id=alice.id)  # the first interaction
    async with cl.Step(name="on_message", type="run", parent_id=question.id) as run:
        run.input = question.content
        async with cl.Step(name="search", type="tool") as tool:
            tool.input = "restaurants in Porto"
            tool.output = "3 found"
        answer = cl.Message(content="")
        await answer.send()
        for token in ["Noted", ", ", "thank you!"]:
            await answer.stream_token(token)
        await answer.update()
        ref = cl.Text(name="Ref #1", content="### Ref #1 — Porto\n**Section:** food", display="side")
        cited = cl.Message(content="See Ref #1.", elements=[ref])
        await cited.send()
    await settle()

    thread = await layer.get_thread(thread_id)
    assert thread is not None
    assert thread["name"] == "I live in Porto and I am vegetarian."
    assert (thread["userId"], thread["userIdentifier"]) == (alice.id, user)
    got = [(s["type"], s["name"], s.get("output"), s.get("parentId")) for s in thread["steps"]]
    assert got == [
        ("user_message", user, "I live in Porto and I am vegetarian.", None),
        ("run", "on_message", "", question.id),
        ("tool", "search", "3 found", run.id),
        ("assistant_message", "Assistant", "Noted, thank you!", run.id),
        ("assistant_message", "Assistant", "See Ref #1.", run.id),
    ]
    assert thread["steps"][2]["input"] == "restaurants in Porto"
    [element] = thread["elements"] or []
    assert (element["id"], element["name"], element["type"]) == (ref.id, "Ref #1", "text")
    assert (element["forId"], element["display"], element["threadId"]) == (cited.id, "side", thread_id)
    assert data_url(element["url"]).decode() == "### Ref #1 — Porto\n**Section:** food"
    assert await layer.get_element(thread_id, ref.id) == element  # the side panel's fetch
    assert await layer.get_element(thread_id, "nope") is None

    # agentmem's side: the thread of the user, its turns as messages (what
    # it indexes and learns from), the citation as an element.
    th = await layer.client.threads.get(thread_id, alice.id)
    assert (th.agent_id, th.title) == ("chainlit", "I live in Porto and I am vegetarian.")
    msgs = (await layer.client.messages.list(thread_id, alice.id)).data
    assert [(m.role, m.content, m.id) for m in msgs] == [
        ("user", "I live in Porto and I am vegetarian.", question.id),
        ("assistant", "Noted, thank you!", answer.id),
        ("assistant", "See Ref #1.", cited.id),
    ]
    els = (await layer.client.elements.list(thread_id, alice.id, message_id=cited.id)).data
    assert [(e.type, e.name, e.content, e.display) for e in els] == [
        ("text", "Ref #1", "### Ref #1 — Porto\n**Section:** food", "side")
    ]


async def test_list_threads(layer: AgentmemDataLayer, user: str) -> None:
    """The sidebar's list: the user's threads alone, newest first, a page
    at a time through the cursor, found by name in any case."""
    alice = await sign_in(layer, user)
    bob = await sign_in(layer, user + "-bob")
    ids = [await chat(layer, alice, text) for text in ["Plan Lisbon", "Book a table", "Pack for LISBON trip"]]
    await chat(layer, bob, "Lisbon too")

    first = await layer.list_threads(Pagination(first=2), ThreadFilter(userId=alice.id))
    assert [t["id"] for t in first.data] == [ids[2], ids[1]]
    assert first.pageInfo.hasNextPage and first.pageInfo.endCursor
    second = await layer.list_threads(
        Pagination(first=2, cursor=first.pageInfo.endCursor), ThreadFilter(userId=alice.id)
    )
    assert [t["id"] for t in second.data] == [ids[0]]
    assert not second.pageInfo.hasNextPage
    t = second.data[0]
    assert (t["name"], t["userId"], t["userIdentifier"], t["steps"]) == ("Plan Lisbon", alice.id, user, [])

    found = await layer.list_threads(Pagination(first=20), ThreadFilter(userId=alice.id, search="lisbon"))
    assert [t["name"] for t in found.data] == ["Pack for LISBON trip", "Plan Lisbon"]
    # As Chainlit's server answers it.
    assert found.to_dict()["pageInfo"] == {"hasNextPage": False, "startCursor": ids[2], "endCursor": None}


async def test_feedback(layer: AgentmemDataLayer, user: str) -> None:
    """Feedback as the page sends it (upsert, change, delete) comes back
    on its step, and the list filters threads by it."""
    alice = await sign_in(layer, user)
    thread_id = await chat(layer, alice, "Hello")
    init_http_context(user=alice, thread_id=thread_id)
    answer = cl.Message(content="Hi!")
    await answer.send()
    other = await chat(layer, alice, "Another")
    await settle()

    async def feedback_of(step_id: str) -> Any:
        thread = await layer.get_thread(thread_id)
        assert thread is not None
        return next(s for s in thread["steps"] if s["id"] == step_id).get("feedback")

    async def listed(value: int) -> List[str]:
        page = await layer.list_threads(Pagination(first=20), ThreadFilter(userId=alice.id, feedback=value))
        return [t["id"] for t in page.data]

    fid = await layer.upsert_feedback(Feedback(forId=answer.id, threadId=thread_id, value=1, comment="useful"))
    assert await feedback_of(answer.id) == {"forId": answer.id, "id": fid, "value": 1, "comment": "useful"}
    assert (await listed(1), await listed(0)) == ([thread_id], [])

    assert await layer.upsert_feedback(Feedback(forId=answer.id, threadId=thread_id, id=fid, value=0)) == fid
    assert await feedback_of(answer.id) == {"forId": answer.id, "id": fid, "value": 0, "comment": None}
    assert (await listed(1), await listed(0)) == ([], [thread_id])

    assert await layer.delete_feedback(fid)
    assert await feedback_of(answer.id) is None
    assert (await listed(1), await listed(0)) == ([], [])
    assert other not in await listed(0)
    # The feedback stays in agentmem, an element of the message.
    els = (await layer.client.elements.list(thread_id, alice.id, message_id=answer.id)).data
    assert [e.type for e in els] == ["chainlit.feedback"] * 3


async def test_edit_and_delete_steps(layer: AgentmemDataLayer, user: str) -> None:
    """A message edited, a step and an element removed, a custom
    element's props changed: get_thread shows them as they are now;
    agentmem's messages keep what was said."""
    alice = await sign_in(layer, user)
    thread_id = await chat(layer, alice, "Hello")
    init_http_context(user=alice, thread_id=thread_id)
    answer = cl.Message(content="First answer")
    await answer.send()
    await settle()
    answer.content = "Edited answer"
    await answer.update()
    tool = cl.Step(name="lookup", type="tool")
    tool.output = "42"
    await tool.send()
    figure = cl.Image(name="chart", content=b"\x89PNG\r\n\x1a\nfake", mime="image/png", display="inline")
    await figure.send(for_id=tool.id)
    note = cl.Text(name="note", content="a note", display="side")
    await note.send(for_id=answer.id)
    custom = cl.CustomElement(name="Counter", props={"count": 1})
    await custom.send(for_id=answer.id)
    await settle()

    thread = await layer.get_thread(thread_id)
    assert thread is not None
    assert [(s["type"], s["output"]) for s in thread["steps"]] == [
        ("user_message", "Hello"),
        ("assistant_message", "Edited answer"),
        ("tool", "42"),
    ]
    els = {e["name"]: e for e in thread["elements"] or []}
    assert data_url(els["chart"]["url"]) == b"\x89PNG\r\n\x1a\nfake"
    assert els["chart"]["mime"] == "image/png" and els["chart"]["forId"] == tool.id
    assert els["Counter"]["props"] == {"count": 1}

    custom.props = {"count": 2}
    await custom.update()
    await tool.remove()
    await note.remove()
    await settle()
    thread = await layer.get_thread(thread_id)
    assert thread is not None
    assert [s["id"] for s in thread["steps"]] == [thread["steps"][0]["id"], answer.id]
    els = {e["name"]: e for e in thread["elements"] or []}
    assert list(els) == ["Counter"]  # the chart went with its step
    assert els["Counter"]["props"] == {"count": 2}
    msgs = (await layer.client.messages.list(thread_id, alice.id)).data
    assert [m.content for m in msgs] == ["Hello", "First answer"]


async def test_update_and_delete_thread(layer: AgentmemDataLayer, user: str) -> None:
    """Renaming, metadata merged (None removes a key), tags; deleting:
    soft in agentmem, gone for Chainlit."""
    alice = await sign_in(layer, user)
    thread_id = await chat(layer, alice, "Hello")
    await layer.update_thread(thread_id, metadata={"chat_profile": "fast", "env": {"A": "1"}}, tags=["fast"])
    await layer.update_thread(thread_id, name="Renamed", metadata={"env": None, "is_shared": True})
    thread = await layer.get_thread(thread_id)
    assert thread is not None
    assert (thread["name"], thread["metadata"], thread["tags"]) == (
        "Renamed",
        {"chat_profile": "fast", "is_shared": True},
        ["fast"],
    )
    assert await layer.get_thread_author(thread_id) == user

    await layer.delete_thread(thread_id)
    assert await layer.get_thread(thread_id) is None
    page = await layer.list_threads(Pagination(first=20), ThreadFilter(userId=alice.id))
    assert page.data == []
    deleted = (await layer.client.threads.list(alice.id, deleted=True)).data
    assert [t.id for t in deleted] == [thread_id]


async def test_delete_permanently(server: Any, user: str) -> None:
    layer = AgentmemDataLayer(agentmem.AsyncClient(server.url), delete_permanently=True, debug_url="d/[thread_id]")
    assert await layer.build_debug_url() == "d/[thread_id]"
    alice = await sign_in(layer, user)
    thread_id = await chat(layer, alice, "Hello")
    await layer.delete_thread(thread_id)
    assert await layer.get_thread_author(thread_id) == ""
    assert (await layer.client.threads.list(alice.id, deleted=True)).data == []
    await layer.close()


async def test_threads_are_their_owners(layer: AgentmemDataLayer, user: str) -> None:
    """A thread is its first user's: another's session cannot write into
    it; an unknown thread has no author and is None."""
    alice = await sign_in(layer, user)
    bob = await sign_in(layer, user + "-bob")
    thread_id = await chat(layer, alice, "Hello")
    init_http_context(user=bob, thread_id=thread_id)
    with pytest.raises(PermissionError):
        await layer.create_step({"id": str(uuid.uuid4()), "threadId": thread_id, "type": "user_message", "output": "x"})
    with pytest.raises(PermissionError):
        await layer.update_thread(thread_id, name="mine", user_id=bob.id)
    assert await layer.get_thread_author(thread_id) == user
    unknown = str(uuid.uuid4())
    assert (await layer.get_thread_author(unknown), await layer.get_thread(unknown)) == ("", None)


async def test_users(layer: AgentmemDataLayer, user: str) -> None:
    """A user is stored once, with the metadata of the newest login, under
    an agentmem user ID made of the identifier, turned back exactly."""
    for identifier in [user, f"{user} Doe/ops", f"_{user}%"]:
        assert await layer.get_user(identifier) is None
        first = await layer.create_user(cl.User(identifier=identifier, display_name="J", metadata={"v": 1}))
        again = await layer.create_user(cl.User(identifier=identifier, metadata={"v": 2}))
        got = await layer.get_user(identifier)
        assert first is not None and again is not None and got is not None
        assert (got.id, got.identifier, got.metadata, got.createdAt) == (
            user_id_of(identifier),
            identifier,
            {"v": 2},
            first.createdAt,
        )
        assert identifier_of(got.id) == identifier
        await chat(layer, got, "Hello")  # agentmem takes the ID
    with pytest.raises(ValueError):
        await layer.create_user(cl.User(identifier=layer.directory_user))


async def test_messages_written_elsewhere(layer: AgentmemDataLayer, user: str) -> None:
    """A thread of the app's agent written through agentmem's API (the
    proxy, an SDK) opens in Chainlit once listed: its turns are steps."""
    alice = await sign_in(layer, user)
    await layer.client.threads.create(alice.id, id="imported", agent_id="chainlit", title="Imported")
    await layer.client.messages.append(
        "imported",
        [
            {"role": "user", "content": "What is the weather?"},
            {"role": "assistant", "content": "", "tool_calls": [_call()]},
            {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
            {"role": "assistant", "content": "Sunny."},
        ],
        alice.id,
    )
    assert await layer.get_thread("imported") is None  # unknown until listed
    page = await layer.list_threads(Pagination(first=20), ThreadFilter(userId=alice.id))
    assert [t["id"] for t in page.data] == ["imported"]
    assert await layer.get_thread_author("imported") == user
    thread = await layer.get_thread("imported")
    assert thread is not None
    assert [(s["type"], s["name"], s["output"]) for s in thread["steps"]] == [
        ("user_message", user, "What is the weather?"),
        ("assistant_message", "Assistant", "Sunny."),
    ]


def _call() -> Dict[str, Any]:
    return {"id": "c1", "type": "function", "function": {"name": "weather", "arguments": "{}"}}


async def test_favorites(layer: AgentmemDataLayer, user: str) -> None:
    alice = await sign_in(layer, user)
    thread_id = await chat(layer, alice, "Hello")
    init_http_context(user=alice, thread_id=thread_id)
    answer = cl.Message(content="Keep this")
    await answer.send()
    await settle()
    assert await layer.get_favorite_steps(alice.id) == []
    await layer.set_step_favorite(answer.to_dict(), True)
    assert [(s["id"], s["output"]) for s in await layer.get_favorite_steps(alice.id)] == [(answer.id, "Keep this")]
    await layer.set_step_favorite(answer.to_dict(), False)
    assert await layer.get_favorite_steps(alice.id) == []


async def test_files(server: Any, user: str, tmp_path: Any, caplog: Any) -> None:
    """An uploaded file (a path) is kept in its element and read back from
    a data URL; one too large for an element is kept by a storage client,
    or, without one, left out with a warning."""
    storage = MemoryStorage()
    with_storage = AgentmemDataLayer(agentmem.AsyncClient(server.url), storage_client=storage)
    layer = AgentmemDataLayer(agentmem.AsyncClient(server.url))
    for dl in (layer, with_storage):
        alice = await sign_in(dl, f"{user}-{id(dl)}")
        thread_id = await chat(dl, alice, "Here is a file")
        init_http_context(user=alice, thread_id=thread_id)
        upload = tmp_path / "notes.md"
        upload.write_text("# Notes\nsome notes")
        small = cl.File(name="notes.md", path=str(upload), mime="text/markdown")
        big = cl.File(name="big.bin", content=b"\x01" * (1 << 20), mime="application/octet-stream")
        with caplog.at_level(logging.WARNING, logger="agentmem.chainlit"):
            await dl.create_element(small)
            await dl.create_element(big)
        thread = await dl.get_thread(thread_id)
        assert thread is not None
        els = {e["name"]: e for e in thread["elements"] or []}
        if dl is layer:
            assert data_url(els["notes.md"]["url"]) == b"# Notes\nsome notes"
            assert "url" not in els["big.bin"]
            assert "too large to keep without a storage client" in caplog.text
        else:
            assert els["big.bin"]["url"] == "memory://threads/%s/files/%s" % (thread_id, big.id)
            assert storage.files[els["big.bin"]["objectKey"]] == b"\x01" * (1 << 20)
            await dl.delete_element(big.id, thread_id)
            assert els["big.bin"]["objectKey"] not in storage.files
            thread = await dl.get_thread(thread_id)
            assert thread is not None and [e["name"] for e in thread["elements"] or []] == ["notes.md"]
        await dl.close()
    assert storage.closed


class MemoryStorage:
    """A Chainlit storage client (chainlit.data.storage_clients) in memory."""

    def __init__(self) -> None:
        self.files: Dict[str, bytes] = {}
        self.closed = False

    async def upload_file(self, object_key: str, data: Any, mime: str = "", overwrite: bool = True, **_: Any) -> Any:
        self.files[object_key] = data if isinstance(data, bytes) else data.encode()
        return {"object_key": object_key, "url": "memory://" + object_key}

    async def delete_file(self, object_key: str) -> bool:
        return self.files.pop(object_key, None) is not None

    async def get_read_url(self, object_key: str) -> str:
        return "memory://" + object_key

    async def close(self) -> None:
        self.closed = True
