"""Memories, search, facts, entities, profiles and notes, through both
clients."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

import agentmem

from support import wait_for


def test_memories(client: Any) -> None:
    m = client.memories.create(
        "User is vegetarian.", category="preference", agent_id="planner", importance=0.9, metadata={"from": "test"}
    )
    assert isinstance(m, agentmem.Memory)
    assert (m.text, m.kind, m.category, m.agent_id, m.importance, m.source, m.version) == (
        "User is vegetarian.",
        "fact",
        "preference",
        "planner",
        0.9,
        "api",
        1,
    )
    assert client.memories.get(m.id) == m

    porto = client.memories.create("User lives in Porto.", category="place")
    assert {x.id for x in client.memories.list()} == {m.id, porto.id}
    assert [x.id for x in client.memories.list(category="preference")] == [m.id]
    assert [x.id for x in client.memories.iter(agent_id="planner", limit=1)] == [m.id]

    m2 = client.memories.update(m.id, text="User is vegan.", reason="corrected")
    assert (m2.text, m2.version) == ("User is vegan.", 2)
    history = client.memories.history(m.id)
    assert [(c.version, c.op, c.text) for c in history] == [
        (1, "add", "User is vegetarian."),
        (2, "update", "User is vegan."),
    ]
    assert all(isinstance(c, agentmem.MemoryChange) for c in history)

    lisbon = client.memories.create("User lives in Lisbon.", category="place")
    inv = client.memories.invalidate(porto.id, superseded_by=lisbon.id, reason="moved")
    assert inv.invalid_at and inv.superseded_by == lisbon.id
    assert client.memories.invalidate(porto.id).invalid_at == inv.invalid_at  # twice changes nothing
    assert porto.id not in {x.id for x in client.memories.list()}
    assert porto.id in {x.id for x in client.memories.list(include_invalid=True)}

    client.memories.delete(m.id)
    with pytest.raises(agentmem.NotFoundError):
        client.memories.get(m.id)
    with pytest.raises(agentmem.InvalidError):
        client.memories.list(kind="opinion")


def test_search_and_facts(client: Any) -> None:
    m = client.memories.create("User is vegetarian.", category="preference", agent_id="planner")
    client.threads.create(id="t", agent_id="planner")
    client.messages.append("t", [{"role": "user", "content": "Any good vegetarian dishes in Lisbon?"}])

    res = client.search(
        "vegetarian dishes in Lisbon", top_k=5, scopes=["memories", "messages"], filters={"agent_id": "planner"}
    )
    assert isinstance(res, agentmem.SearchResponse)
    assert {r.kind for r in res.results} == {"memory", "message"}
    hit = next(r for r in res.results if r.kind == "memory")
    assert (hit.id, hit.text) == (m.id, "User is vegetarian.")
    assert 0 < hit.score <= 1 and 0 <= hit.relevance <= 1 and "fulltext" in hit.scores
    assert res.signals

    since = datetime.now(timezone.utc) + timedelta(days=1)
    assert client.search("vegetarian", filters={"since": since}).results == []
    assert [r.kind for r in client.search("vegetarian", kinds=["memories"]).results] == ["memory"]

    facts = client.facts("Is the user vegetarian?", kinds=["memories"])
    assert isinstance(facts, agentmem.FactsResponse)
    assert "User is vegetarian." in facts.answer and facts.facts[0].id == m.id

    with pytest.raises(agentmem.InvalidError) as e:
        client.search("x", kinds=["facts"])
    assert "kinds" in e.value.message


def test_entities(client: Any) -> None:
    client.threads.create(id="trip")
    e = client.entities.put("Task Management", type="workflow", thread_id="trip", action="created")
    assert isinstance(e, agentmem.Entity)
    assert (e.name, e.type) == ("Task Management", "workflow") and "my task" in e.aliases

    assert [x.id for x in client.entities.list(q="my task workflow")] == [e.id]
    assert [x.id for x in client.entities.iter(type="workflow")] == [e.id]
    assert client.entities.get(e.id) == e

    refs = client.entities.refs(e.id)
    assert [(r.thread_id, r.action) for r in refs] == [("trip", "created")]
    thread_refs = list(client.entities.iter_thread_refs("trip"))
    assert [(r.entity_id, r.entity.name if r.entity else None) for r in thread_refs] == [(e.id, "Task Management")]
    assert [r.thread_id for r in client.entities.iter_refs(e.id, action="created")] == ["trip"]
    assert client.entities.thread_refs("trip", action="modified").data == []

    renamed = client.entities.update(e.id, name="Tasks")
    assert renamed.name == "Tasks" and "Task Management" in renamed.aliases
    client.entities.delete(e.id)
    with pytest.raises(agentmem.NotFoundError):
        client.entities.get(e.id)


def test_profile(client: Any) -> None:
    with pytest.raises(agentmem.NotFoundError):
        client.profile.get()
    client.threads.create(id="t")
    client.messages.append(
        "t",
        [{"role": "user", "content": "I live in Porto and I love hiking."}, {"role": "assistant", "content": "Noted!"}],
    )
    client.threads.end("t")
    p = wait_for("the profile", lambda: _profile_with(client, "Porto"))
    assert isinstance(p, agentmem.Profile) and p.method == "assembled" and p.version >= 1 and p.sources
    client.memories.create("User is vegetarian.", category="preference")
    fresh = client.profile.refresh()  # now, rather than when the next thread ends
    assert fresh.version > p.version and "vegetarian" in fresh.text
    versions = client.profile.versions(limit=1)
    assert versions.data[0].version == fresh.version and versions.next_cursor
    assert [v.version for v in client.profile.iter_versions(limit=1)] == list(range(fresh.version, 0, -1))


def _profile_with(client: Any, text: str) -> Any:
    try:
        p = client.profile.get()
    except agentmem.NotFoundError:
        return None
    return p if text in p.text else None


def test_notes(client: Any) -> None:
    empty = client.notes.get("planner")
    assert isinstance(empty, agentmem.Notes) and (empty.version, empty.content) == (0, "")
    n = client.notes.put("planner", "# Alice\n\n## Goals\n- Run a marathon\n", expected_version=0)
    assert (n.version, n.operation) == (1, "overwrite")
    n = client.notes.edit(
        "planner", "replace_section_by_header", section_header="## Goals", content="- Swim a mile", expected_version=1
    )
    assert (n.version, n.content) == (2, "# Alice\n\n## Goals\n- Swim a mile\n")
    client.notes.edit("planner", "append", content="## Travel\nLisbon in May.")
    assert client.notes.edit("planner", "read").version == 3
    assert client.notes.get("planner").content.endswith("Lisbon in May.")

    with pytest.raises(agentmem.ConflictError) as e:
        client.notes.put("planner", "stale", expected_version=1)
    assert "version" in e.value.message
    with pytest.raises(agentmem.UnprocessableError):
        client.notes.edit("planner", "delete_section_by_header", section_header="## Nope")

    assert [v.version for v in client.notes.history("planner")] == [3, 2, 1]
    assert [v.version for v in client.notes.iter_history("planner", limit=2)] == [3, 2, 1]
