"""Threads, messages, elements, sessions, contexts, turns, reflections and
thread exports, through both clients."""

from __future__ import annotations

from typing import Any, List, Tuple

import pytest

import agentmem

from support import wait_for


def test_threads(client: Any) -> None:
    t = client.threads.create(id="trip", agent_id="planner", tags=["travel"], metadata={"source": "test"})
    assert isinstance(t, agentmem.Thread)
    assert (t.id, t.user_id, t.agent_id, t.status, t.tags, t.metadata) == (
        "trip",
        client.user,
        "planner",
        "active",
        ["travel"],
        {"source": "test"},
    )
    assert t.created_at and t.message_count == 0

    with pytest.raises(agentmem.ConflictError) as e:
        client.threads.create(id="trip")
    assert (e.value.code, e.value.status) == ("conflict", 409)

    other = client.threads.create()  # the server names it
    assert other.id and other.id != "trip"

    t = client.threads.update("trip", title="Lisbon", tags=["travel", "2026"])
    assert (t.title, t.tags) == ("Lisbon", ["travel", "2026"])
    assert client.threads.get("trip").title == "Lisbon"

    assert [t.id for t in client.threads.list(tags=["travel", "2026"])] == ["trip"]
    assert [t.id for t in client.threads.list(agent_id="planner", q="lisb")] == ["trip"]
    assert [t.id for t in client.threads.list(agent_id="")] == [other.id]
    assert client.threads.list(since="2020-01-01T00:00:00Z").data

    ended = client.threads.end("trip")
    assert ended.status == "ended" and ended.ended_at
    assert [t.id for t in client.threads.list(status="ended")] == ["trip"]

    client.threads.delete(other.id)
    with pytest.raises(agentmem.NotFoundError):
        client.threads.get(other.id)
    assert [t.id for t in client.threads.list(deleted=True)] == [other.id]
    assert client.threads.restore(other.id).id == other.id
    client.threads.delete(other.id, permanent=True)
    with pytest.raises(agentmem.NotFoundError):
        client.threads.restore(other.id)


def test_thread_not_found(client: Any) -> None:
    with pytest.raises(agentmem.NotFoundError) as e:
        client.threads.get("nope")
    err = e.value
    assert isinstance(err, agentmem.AgentmemError)
    assert (err.code, err.status, err.message) == ("not_found", 404, 'Thread "nope" not found.')
    assert err.request_id
    assert str(err) == 'Thread "nope" not found. (not_found, HTTP 404)'


def test_messages(client: Any) -> None:
    client.threads.create(id="t")
    stored = client.messages.append(
        "t",
        [
            {"role": "user", "content": "Plan three days in Lisbon."},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "weather", "arguments": '{"city":"Lisbon"}'}}
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "sunny, 24°C"},
            agentmem.Message(role="assistant", content="Day 1: Alfama.", metadata={"model": "m"}),
        ],
    )
    assert [(m.seq, m.role) for m in stored] == [(1, "user"), (2, "assistant"), (3, "tool"), (4, "assistant")]
    assert all(isinstance(m, agentmem.Message) and m.id and m.created_at for m in stored)
    assert stored[1].tool_calls[0].function.name == "weather"
    assert stored[2].tool_call_id == "c1"
    assert stored[3].metadata == {"model": "m"}

    page = client.messages.list("t", after_seq=2, limit=10)
    assert [m.content for m in page] == ["sunny, 24°C", "Day 1: Alfama."]
    assert page.next_cursor == ""
    assert [m.seq for m in client.messages.list("t", order="desc", limit=2)] == [4, 3]
    assert client.threads.get("t").title == "Plan three days in Lisbon."

    with pytest.raises(agentmem.InvalidError) as e:
        client.messages.append("t", [{"role": "robot", "content": "x"}])
    assert e.value.status == 400 and "robot" in e.value.message
    with pytest.raises(agentmem.NotFoundError):
        client.messages.append("nope", [{"role": "user", "content": "x"}])


def test_append_idempotency(client: Any) -> None:
    client.threads.create(id="t")
    batch = [{"role": "user", "content": "I live in Porto."}]
    first = client.messages.append("t", batch, idempotency_key="turn-1")
    again = client.messages.append("t", batch, idempotency_key="turn-1")
    assert [m.id for m in again] == [m.id for m in first]
    assert client.threads.get("t").message_count == 1
    with pytest.raises(agentmem.ConflictError):
        client.messages.append("t", [{"role": "user", "content": "Something else."}], idempotency_key="turn-1")
    # Without a key of the caller's, each call is a new append.
    client.messages.append("t", batch)
    client.messages.append("t", batch)
    assert client.threads.get("t").message_count == 3


def test_iteration_follows_cursors(make_client: Any, user: str) -> None:
    sent: List[Tuple[str, str]] = []
    client = make_client(record=sent)
    for i in range(5):
        client.threads.create(id=f"t{i}")
    client.messages.append("t0", [{"role": "user", "content": f"m{i}"} for i in range(7)])

    sent.clear()
    page = client.threads.list(limit=2)
    assert len(page) == 2 and page.next_cursor
    assert sorted(t.id for t in client.threads.iter(limit=2)) == [f"t{i}" for i in range(5)]
    assert [m for m, p in sent if p.startswith(f"/v1/users/{user}/threads?")] == ["GET"] * 4  # the list, then 3 pages

    assert [m.content for m in client.messages.iter("t0", limit=3)] == [f"m{i}" for i in range(7)]
    assert [m.seq for m in client.messages.iter("t0", order="desc", limit=3)] == [7, 6, 5, 4, 3, 2, 1]
    # From a cursor: what follows the first page.
    rest = list(client.threads.iter(limit=2, cursor=page.next_cursor))
    assert len(rest) == 3 and not {t.id for t in rest} & {t.id for t in page}

    # Iterating is lazy: breaking off fetches no more pages.
    sent.clear()
    for _ in client.threads.iter(limit=2):
        break
    assert len(sent) == 1


def test_elements(client: Any) -> None:
    client.threads.create(id="t")
    (m,) = client.messages.append("t", [{"role": "assistant", "content": "See the map."}])
    e = client.elements.create(
        "t",
        type="file",
        name="map.pdf",
        url="https://example.com/map.pdf",
        mime_type="application/pdf",
        message_id=m.id,
    )
    assert isinstance(e, agentmem.Element) and (e.message_id, e.type) == (m.id, "file")
    client.elements.create("t", type="text", name="Ref #1", content="A note on the thread.")
    assert [x.name for x in client.elements.list("t")] == ["map.pdf", "Ref #1"]
    assert [x.name for x in client.elements.iter("t", message_id=m.id, limit=1)] == ["map.pdf"]


def test_sessions(client: Any) -> None:
    with pytest.raises(agentmem.NotFoundError):
        client.sessions.get("planner")
    s, created = client.sessions.open("planner")
    assert created and isinstance(s, agentmem.Session) and s.thread_id and s.agent_id == "planner"
    again, created = client.sessions.open("planner")
    assert not created and again.thread_id == s.thread_id
    client.threads.create(id="other")
    assert client.sessions.set("planner", "other").thread_id == "other"
    assert client.sessions.get("planner").thread_id == "other"


def test_context(client: Any) -> None:
    client.threads.create(id="t")
    client.messages.append(
        "t",
        [{"role": "user", "content": "Plan three days in Lisbon."}, {"role": "assistant", "content": "Day 1: Alfama."}],
    )
    ctx = client.threads.context(
        "t",
        input="And on day 2?",
        budget_tokens=8000,
        model="gpt-4o",
        strategy="summarize",
        summarize={"trigger_fraction": 0.7, "keep_fraction": 0.4},
        system="You are a travel planner.",
        include={"memories": False},
    )
    assert isinstance(ctx, agentmem.Context)
    assert [(m.role, m.content) for m in ctx.messages] == [
        ("system", "You are a travel planner."),
        ("user", "Plan three days in Lisbon."),
        ("assistant", "Day 1: Alfama."),
        ("user", "And on day 2?"),
    ]
    tel = ctx.telemetry
    assert (tel.budget_tokens, tel.model, tel.encoding, tel.format, tel.included_messages) == (
        8000,
        "gpt-4o",
        "o200k_base",
        "messages",
        2,
    )
    assert 0 < tel.used_tokens == sum(tel.sections.values())

    text = client.threads.context("t", input="And on day 2?", format="text")
    assert "user: And on day 2?" in text.text and not text.messages
    responses = client.threads.context("t", input="And on day 2?", format="responses", strategy="trim")
    assert responses.input == "And on day 2?" and "Day 1: Alfama." in responses.instructions

    with pytest.raises(agentmem.UnprocessableError) as e:
        client.threads.context("t", input="x", budget_tokens=5, system="A long system prompt that does not fit.")
    assert e.value.status == 422


def test_turn(client: Any) -> None:
    ask = {"role": "user", "content": "Plan three days in Lisbon."}
    turn = client.turns.begin([ask], thread_id="trip")
    assert isinstance(turn, agentmem.Turn) and isinstance(turn.thread, agentmem.Thread)
    assert isinstance(turn.context, agentmem.Context) and isinstance(turn.stored[0], agentmem.Message)
    # The thread is begun, the message stored as seq 1, a full context built.
    assert (turn.thread.id, turn.mode, [(m.seq, m.content) for m in turn.stored], turn.held) == (
        "trip",
        "full",
        [(1, "Plan three days in Lisbon.")],
        0,
    )
    assert turn.context.telemetry.format == "messages" and turn.context.messages
    assert turn.context.messages[-1].content == "Plan three days in Lisbon."

    reply = {"role": "assistant", "content": "Day 1: Alfama."}
    client.messages.append("trip", [reply])
    # The client resends its history with the new turn: only the new turn
    # is stored, and its own messages are kept (augment).
    turn = client.turns.begin(
        [ask, reply, {"role": "user", "content": "And on day 2?"}],
        thread_id="trip",
        continue_=True,
        context={"system": "You plan trips.", "budget_tokens": 8000},
    )
    assert turn.context is not None
    assert (turn.mode, turn.held, [(m.seq, m.content) for m in turn.stored]) == (
        "augment",
        2,
        [(3, "And on day 2?")],
    )
    assert turn.context.messages[0].role == "system" and "You plan trips." in turn.context.messages[0].content
    assert turn.context.messages[-1].content == "And on day 2?"
    assert turn.context.telemetry.budget_tokens == 8000
    assert [m.seq for m in client.messages.list("trip")] == [1, 2, 3]

    # Without a thread: the agent's active session, opened; mode off
    # stores the turn and builds no context.
    turn = client.turns.begin([{"role": "user", "content": "Hi"}], agent_id="planner", mode="off")
    assert turn.thread is not None and turn.context is None and turn.mode == "off"
    assert client.sessions.get("planner").thread_id == turn.thread.id
    assert [m.content for m in client.messages.list(turn.thread.id)] == ["Hi"]

    with pytest.raises(agentmem.NotFoundError) as e:
        client.turns.begin([{"role": "user", "content": "And on day 2?"}], thread_id="nope", continue_=True)
    assert (e.value.code, e.value.status) == ("not_found", 404)
    with pytest.raises(agentmem.InvalidError) as e:
        client.turns.begin([{"role": "user", "content": "And on day 2?"}], mode="sometimes")
    assert (e.value.code, e.value.status) == ("invalid", 400)
    assert [m.seq for m in client.messages.list("trip")] == [1, 2, 3]


def test_thread_export_and_import(client: Any, user: str) -> None:
    client.threads.create(id="t", title="Trip")
    (m,) = client.messages.append("t", [{"role": "user", "content": "Hello"}])
    client.elements.create("t", type="text", name="Ref", content="x", message_id=m.id)
    x = client.threads.export("t")
    assert isinstance(x, agentmem.ThreadExport) and x.thread is not None
    assert (x.thread.id, [m.content for m in x.messages], [e.name for e in x.elements]) == ("t", ["Hello"], ["Ref"])
    assert "Hello" in client.threads.export_markdown("t")

    other = user + "-copy"
    t = client.threads.import_(x, user=other)
    assert (t.id, t.user_id, t.title, t.message_count) == ("t", other, "Trip", 1)
    assert [m.content for m in client.messages.list("t", user=other)] == ["Hello"]
    with pytest.raises(agentmem.ConflictError):
        client.threads.import_(x.to_dict(), user=other)  # a plain dict does as well


def test_reflection(client: Any) -> None:
    client.threads.create(id="t")
    client.messages.append(
        "t",
        [{"role": "user", "content": "I live in Porto and I love hiking."}, {"role": "assistant", "content": "Noted!"}],
    )
    with pytest.raises(agentmem.NotFoundError):
        client.threads.reflection("t")  # not ended
    client.threads.end("t")
    ref = wait_for("the reflection", lambda: (r := client.threads.reflection("t")).status != "pending" and r)
    assert isinstance(ref, agentmem.Reflection)
    assert (ref.status, ref.thread_id, ref.through_seq) == ("no-insight", "t", 2)
    assert "model" in ref.reason
    with pytest.raises(agentmem.ConflictError):
        client.threads.retry_reflection("t")
