"""API keys against `serve --auth apikey`, through both clients: the admin
key made with `agentmem keys create`, user and tenant keys made with it,
and the errors of a missing, revoked or too narrow key."""

from __future__ import annotations

import secrets
from typing import Any, Tuple

import pytest

import agentmem

from support import Server


def test_api_keys(make_client: Any, auth_server: Tuple[Server, str]) -> None:
    server, admin_token = auth_server
    bob_id = "bob-" + secrets.token_hex(4)

    nobody = make_client(url=server.url, user=bob_id)
    with pytest.raises(agentmem.UnauthorizedError) as e:
        nobody.threads.list()
    assert (e.value.code, e.value.status) == ("unauthorized", 401)
    with pytest.raises(agentmem.UnauthorizedError):
        make_client(url=server.url, api_key="am_not_a_key").me()

    admin = make_client(url=server.url, api_key=admin_token)
    assert (admin.me().kind, admin.me().via) == ("admin", "apikey")
    key = admin.keys.create(f"user:{bob_id}", name="bob")

    bob = make_client(url=server.url, api_key=key.token, user=bob_id)
    me = bob.me()
    assert (me.kind, me.user_id, me.key_id) == ("user", bob_id, key.key.id)
    bob.threads.create(id="t")
    assert [t.id for t in bob.threads.list()] == ["t"]
    assert [t.id for t in admin.threads.list(user=bob_id)] == ["t"]
    # Another user's data is not found, exactly as data that does not exist.
    with pytest.raises(agentmem.NotFoundError):
        bob.threads.list(user="carol")
    # Operators' routes need an admin key.
    with pytest.raises(agentmem.ForbiddenError) as f:
        bob.stats()
    assert (f.value.code, f.value.status) == ("forbidden", 403)
    with pytest.raises(agentmem.ForbiddenError):
        bob.users.erase(bob_id)

    admin.keys.revoke(key.key.id)
    with pytest.raises(agentmem.UnauthorizedError):
        bob.me()
    assert {e.action for e in admin.audit.list(user_id=bob_id)} == {"key.create", "key.revoke"}


def test_tenant_keys(make_client: Any, auth_server: Tuple[Server, str]) -> None:
    server, admin_token = auth_server
    tenant = "acme-" + secrets.token_hex(4)
    admin = make_client(url=server.url, api_key=admin_token)
    key = admin.keys.create(f"tenant:{tenant}")

    acme = make_client(url=server.url, api_key=key.token, user="alice")
    acme.threads.create(id="t")
    acme.messages.append("t", [{"role": "user", "content": "Hello from a tenant."}])

    # The admin names the tenant's user with a slash, escaped in the path.
    stored = f"tenant:{tenant}/user:alice"
    assert [u.user_id for u in admin.users.list(user_id=stored)] == [stored]
    assert [m.content for m in admin.messages.list("t", user=stored)] == ["Hello from a tenant."]
    # The admin's own alice is another user.
    assert admin.threads.list(user="alice").data == []
    assert admin.users.erase(stored).messages == 1
