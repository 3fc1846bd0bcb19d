"""Every route of httpapi/routes.go has a method of the SDK, in both
clients: a table maps each route to a call, and the test checks that the
table holds exactly the routes of the route table, and that each call
reaches its route (the request's method and path match the route's
pattern, and the answer is the route's, not "No route for …")."""

from __future__ import annotations

import re
from typing import Any, Callable, Dict, List, Tuple

import agentmem

from support import REPO

Call = Callable[[Any, Dict[str, str]], Any]

# Each route and a call of it; ids has the IDs the setup made.
CALLS: Dict[str, Call] = {
    "GET /healthz": lambda c, ids: c.health(),
    "GET /readyz": lambda c, ids: c.ready(),
    "GET /openapi.json": lambda c, ids: c.openapi(),
    "GET /metrics": lambda c, ids: c.metrics(),
    "GET /v1/stats": lambda c, ids: c.stats(),
    "GET /v1/audit": lambda c, ids: c.audit.list(),
    "GET /v1/jobs": lambda c, ids: c.jobs.list_all(),
    "GET /v1/keys": lambda c, ids: c.keys.list(),
    "POST /v1/keys": lambda c, ids: c.keys.create("user:someone"),
    "DELETE /v1/keys/{key}": lambda c, ids: c.keys.revoke(ids["key"]),
    "POST /v1/cleanup": lambda c, ids: c.cleanup(older_than="3650d", dry_run=True),
    "GET /v1/tools": lambda c, ids: c.tools.list(),
    "GET /v1/me": lambda c, ids: c.me(),
    "GET /v1/users": lambda c, ids: c.users.list(),
    "GET /v1/users/{user}/threads": lambda c, ids: c.threads.list(),
    "POST /v1/users/{user}/threads": lambda c, ids: c.threads.create(),
    "POST /v1/users/{user}/threads/import": lambda c, ids: c.threads.import_(
        ids["export"], user=ids["user"] + "-import"
    ),
    "GET /v1/users/{user}/threads/{thread}": lambda c, ids: c.threads.get("t"),
    "PATCH /v1/users/{user}/threads/{thread}": lambda c, ids: c.threads.update("t", title="T"),
    "DELETE /v1/users/{user}/threads/{thread}": lambda c, ids: c.threads.delete("gone"),
    "POST /v1/users/{user}/threads/{thread}/restore": lambda c, ids: c.threads.restore("gone"),
    "POST /v1/users/{user}/threads/{thread}/end": lambda c, ids: c.threads.end("ended"),
    "GET /v1/users/{user}/threads/{thread}/messages": lambda c, ids: c.messages.list("t"),
    "POST /v1/users/{user}/threads/{thread}/messages": lambda c, ids: c.messages.append(
        "t", [{"role": "user", "content": "Hi"}]
    ),
    "GET /v1/users/{user}/threads/{thread}/elements": lambda c, ids: c.elements.list("t"),
    "POST /v1/users/{user}/threads/{thread}/elements": lambda c, ids: c.elements.create("t", type="text", name="n"),
    "GET /v1/users/{user}/threads/{thread}/export": lambda c, ids: c.threads.export("t"),
    "POST /v1/users/{user}/threads/{thread}/context": lambda c, ids: c.threads.context("t", input="x"),
    "POST /v1/users/{user}/turns": lambda c, ids: c.turns.begin([{"role": "user", "content": "x"}], thread_id="t"),
    "POST /v1/users/{user}/search": lambda c, ids: c.search("x"),
    "POST /v1/users/{user}/facts": lambda c, ids: c.facts("x"),
    "GET /v1/users/{user}/memories": lambda c, ids: c.memories.list(),
    "POST /v1/users/{user}/memories": lambda c, ids: c.memories.create("User is here."),
    "GET /v1/users/{user}/memories/{memory}": lambda c, ids: c.memories.get(ids["memory"]),
    "PATCH /v1/users/{user}/memories/{memory}": lambda c, ids: c.memories.update(ids["memory"], importance=0.7),
    "DELETE /v1/users/{user}/memories/{memory}": lambda c, ids: c.memories.delete(ids["gone_memory"]),
    "GET /v1/users/{user}/memories/{memory}/history": lambda c, ids: c.memories.history(ids["memory"]),
    "POST /v1/users/{user}/memories/{memory}/invalidate": lambda c, ids: c.memories.invalidate(ids["memory"]),
    "GET /v1/users/{user}/entities": lambda c, ids: c.entities.list(),
    "POST /v1/users/{user}/entities": lambda c, ids: c.entities.put("Lisbon", thread_id="t"),
    "GET /v1/users/{user}/entities/{entity}": lambda c, ids: c.entities.get(ids["entity"]),
    "PATCH /v1/users/{user}/entities/{entity}": lambda c, ids: c.entities.update(ids["entity"], type="place"),
    "DELETE /v1/users/{user}/entities/{entity}": lambda c, ids: c.entities.delete(ids["gone_entity"]),
    "GET /v1/users/{user}/entities/{entity}/threads": lambda c, ids: c.entities.refs(ids["entity"]),
    "GET /v1/users/{user}/threads/{thread}/entities": lambda c, ids: c.entities.thread_refs("t"),
    "GET /v1/users/{user}/profile": lambda c, ids: c.profile.get(),
    "POST /v1/users/{user}/profile/refresh": lambda c, ids: c.profile.refresh(),
    "GET /v1/users/{user}/profile/versions": lambda c, ids: c.profile.versions(),
    "GET /v1/users/{user}/threads/{thread}/reflection": lambda c, ids: c.threads.reflection("ended"),
    "POST /v1/users/{user}/threads/{thread}/reflection/retry": lambda c, ids: c.threads.retry_reflection("ended"),
    "GET /v1/users/{user}/agents/{agent}/session": lambda c, ids: c.sessions.open("a"),
    "PUT /v1/users/{user}/agents/{agent}/session": lambda c, ids: c.sessions.set("a", "t"),
    "GET /v1/users/{user}/agents/{agent}/notes": lambda c, ids: c.notes.get("a"),
    "PUT /v1/users/{user}/agents/{agent}/notes": lambda c, ids: c.notes.put("a", "# Notes"),
    "POST /v1/users/{user}/agents/{agent}/notes/ops": lambda c, ids: c.notes.edit("a", "append", content="More."),
    "GET /v1/users/{user}/agents/{agent}/notes/history": lambda c, ids: c.notes.history("a"),
    "POST /v1/users/{user}/tools/{name}": lambda c, ids: c.tools.call("get_profile"),
    "GET /v1/users/{user}/jobs": lambda c, ids: c.jobs.list(),
    "POST /v1/users/{user}/jobs/{job}/retry": lambda c, ids: c.jobs.retry(ids["job"]),
    "GET /v1/users/{user}/export": lambda c, ids: c.users.export(),
    "POST /v1/users/{user}/import": lambda c, ids: c.users.import_(
        ids["user_export"], ids["user"] + "-import", on_conflict="skip"
    ),
    "DELETE /v1/users/{user}": lambda c, ids: c.users.erase(ids["user"] + "-import"),
}


def route_table() -> List[str]:
    """The routes of httpapi/routes.go: "METHOD /path" (the proxy, MCP and
    web routes, which serve other clients, have no method)."""
    src = (REPO / "httpapi" / "routes.go").read_text()
    return re.findall(r'\{"((?:GET|POST|PUT|PATCH|DELETE) /[^"]*)"', src)


def test_table_is_the_route_table() -> None:
    routes = route_table()
    assert len(routes) >= 60
    assert sorted(set(routes)) == sorted(CALLS), "routes.go and the SDK's CALLS differ: give each new route a method"


def pattern(route: str) -> Tuple[str, "re.Pattern[str]"]:
    method, path = route.split(" ", 1)
    return method, re.compile("^" + re.sub(r"\\\{[a-z]+\\\}", "[^/?]+", re.escape(path)) + r"(\?.*)?$")


def test_every_route(make_client: Any, user: str) -> None:
    sent: List[Tuple[str, str]] = []
    c = make_client(record=sent)
    c.threads.create(id="t")
    c.threads.create(id="gone")
    c.threads.create(id="ended")
    c.messages.append("ended", [{"role": "user", "content": "I live in Porto."}])
    ids = {
        "user": user,
        "key": c.keys.create(f"user:{user}").key.id,
        "memory": c.memories.create("User likes tea.").id,
        "gone_memory": c.memories.create("User likes coffee.").id,
        "entity": c.entities.put("Porto", type="place").id,
        "gone_entity": c.entities.put("Braga").id,
        "export": c.threads.export("t"),
        "user_export": c.users.export(),
    }
    c.threads.end("ended")
    ids["job"] = c.jobs.list().data[0].id

    for route, call in CALLS.items():
        sent.clear()
        try:
            call(c, ids)
        except agentmem.AgentmemError as e:
            # Answers of the route's handler are fine (a job not dead to
            # retry, a profile not made yet); those of the router are not.
            assert not e.message.startswith(("No route for", "Method ")), f"{route}: {e}"
        method, want = pattern(route)
        assert sent, f"{route}: nothing sent"
        assert sent[-1][0] == method and want.match(sent[-1][1]), f"{route}: sent {sent[-1]}"
