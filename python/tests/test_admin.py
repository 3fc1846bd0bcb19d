"""The server as a whole, users, jobs, keys, audit and tools, through both
clients (without authentication every caller is the admin)."""

from __future__ import annotations

import json
from typing import Any

import pytest

import agentmem

from support import wait_for


def test_server(client: Any) -> None:
    h = client.health()
    assert isinstance(h, agentmem.Health) and h.status == "ok"
    assert client.ready() is True
    me = client.me()
    assert isinstance(me, agentmem.Caller) and (me.kind, me.via, me.default_user) == ("admin", "none", "local-user")
    client.threads.create(id="t")
    st = client.stats()
    assert isinstance(st, agentmem.Stats) and st.threads >= 1 and st.store_bytes > 0
    assert all(isinstance(t, agentmem.TableSize) for t in st.tables)
    assert "agentmem_" in client.metrics()


def test_users(client: Any, user: str) -> None:
    client.threads.create(id="t")
    client.messages.append("t", [{"role": "user", "content": "Hi"}])
    page = client.users.list(user_id=user)
    assert [(u.user_id, u.threads, u.messages) for u in page] == [(user, 1, 1)]
    assert isinstance(page.data[0], agentmem.UserSummary)
    assert user in {u.user_id for u in client.users.iter(limit=1)}
    assert client.users.list(user_id=user + "-none").data == []


def test_user_export_import_erase(client: Any, user: str) -> None:
    client.threads.create(id="t", agent_id="planner")
    client.messages.append("t", [{"role": "user", "content": "I live in Porto."}])
    client.memories.create("User is vegetarian.")
    client.notes.put("planner", "# Notes\n")
    client.entities.put("Lisbon", type="place", thread_id="t")
    x = client.users.export()
    assert isinstance(x, agentmem.UserExport) and x.version >= 3 and x.user_id == user
    assert [t.thread.id for t in x.threads if t.thread] == ["t"]
    assert [m.text for m in x.memories if m.source == "api"] == ["User is vegetarian."]
    assert isinstance(x.memories[0], agentmem.MemoryExport) and x.memories[0].history
    assert [n.content for n in x.notes] == ["# Notes\n"]
    assert "I live in Porto." in client.users.export_markdown()

    copy = user + "-copy"
    res = client.users.import_(x, copy)
    assert isinstance(res, agentmem.ImportResult)
    assert (res.imported.threads, res.imported.messages, res.imported.notes) == (1, 1, 1)
    assert res.imported.memories == len(x.memories) and res.thread_ids == ["t"]
    with pytest.raises(agentmem.ConflictError):
        client.users.import_(x, copy)
    again = client.users.import_(json.loads(json.dumps(x.to_dict())), copy, on_conflict="skip")
    assert again.skipped.threads == 1 and again.imported.threads == 0

    # What the copy holds is what was exported, but for the user's name.
    y = client.users.export(copy)
    assert [m.text for m in y.memories] == [m.text for m in x.memories]
    assert [len(t.messages) for t in y.threads] == [1]

    deleted = client.users.erase(copy)
    assert isinstance(deleted, agentmem.Counts) and (deleted.threads, deleted.messages) == (1, 1)
    assert client.threads.list(user=copy).data == []


def test_jobs(client: Any, user: str) -> None:
    client.threads.create(id="t")
    client.messages.append("t", [{"role": "user", "content": "I live in Porto."}])
    jobs = wait_for("the index job", lambda: client.jobs.list(kind="index").data)
    assert isinstance(jobs[0], agentmem.Job) and jobs[0].user_id == user
    assert {j.id for j in client.jobs.iter(limit=1)} >= {jobs[0].id}
    assert jobs[0].id in {j.id for j in client.jobs.iter_all(user_id=user, limit=1)}
    assert client.jobs.list_all(status="dead", user_id=user).data == []
    done = wait_for("the job done", lambda: [j for j in client.jobs.list(kind="index") if j.status == "done"])
    with pytest.raises(agentmem.ConflictError):
        client.jobs.retry(done[0].id)  # only a dead job is retried
    with pytest.raises(agentmem.NotFoundError):
        client.jobs.retry("nope")
    with pytest.raises(agentmem.InvalidError):
        client.jobs.list(status="stuck")


def test_keys_and_audit(client: Any, user: str) -> None:
    k = client.keys.create(f"user:{user}", name="test", expires_in="90d")
    assert isinstance(k, agentmem.NewKey) and k.token.startswith("am_")
    assert (k.key.scope.kind, k.key.scope.user_id, k.key.name) == ("user", user, "test") and k.key.expires_at
    assert k.key.id in {x.id for x in client.keys.iter(limit=1)}
    assert any(x.id == k.key.id for x in client.keys.list())
    revoked = client.keys.revoke(k.key.id)
    assert revoked.id == k.key.id and revoked.revoked_at
    events = client.audit.list(action="key.create", user_id=user)
    assert [(e.action, e.target) for e in events] == [("key.create", k.key.id)]
    assert isinstance(events.data[0], agentmem.AuditEvent)
    assert {e.action for e in client.audit.iter(user_id=user, since="2020-01-01T00:00:00Z", limit=1)} == {
        "key.create",
        "key.revoke",
    }
    with pytest.raises(agentmem.InvalidError):
        client.keys.create("nobody")


def test_cleanup(client: Any) -> None:
    client.threads.create(id="t")
    res = client.cleanup(older_than="30d", dry_run=True)
    assert isinstance(res, agentmem.CleanupResult) and res.dry_run and res.cutoff
    assert client.cleanup(before="2000-01-01T00:00:00Z").deleted.threads == 0
    with pytest.raises(agentmem.InvalidError):
        client.cleanup()


def test_tools(client: Any) -> None:
    tools = client.tools.list()
    names = {t["function"]["name"] for t in tools}
    assert {"remember", "search_memory", "manage_notes", "forget"} <= names
    assert all(t["type"] == "function" and t["function"]["parameters"]["type"] == "object" for t in tools)

    out = client.tools.call("remember", {"text": "User is vegetarian.", "category": "preference"})
    assert isinstance(out, dict)
    assert [m.text for m in client.memories.list()] == ["User is vegetarian."]
    found = client.tools.call("search_memory", '{"query": "vegetarian"}')  # the model's JSON string as it is
    assert "User is vegetarian." in json.dumps(found)
    notes = client.tools.call(
        "manage_notes", {"operation": "append", "content": "## Diet\nVegetarian."}, agent="planner"
    )
    assert notes
    assert "Vegetarian." in client.notes.get("planner").content
    with pytest.raises(agentmem.NotFoundError):
        client.tools.call("nope")
    with pytest.raises(agentmem.InvalidError):
        client.tools.call("remember", {"texte": "x"})


def test_user_defaults(make_client: Any, user: str) -> None:
    anonymous = make_client(user=None)
    with pytest.raises(ValueError, match="no user"):
        anonymous.threads.list()
    anonymous.threads.create(id="t", user=user)  # named per call
    alice = anonymous.with_user(user)
    assert alice.user == user and [t.id for t in alice.threads.list()] == ["t"]
    with pytest.raises(ValueError):
        alice.threads.get("")  # would be another route's path
