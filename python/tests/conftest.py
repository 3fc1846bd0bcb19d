"""Fixtures: a real `agentmem serve` per backend, and clients of it.

The binary is built once per session from the repository (go build). Each
backend gets its own servers on a fresh database: an SQLite file in a
temporary directory, and, when AGENTMEM_TEST_POSTGRES is set, a schema of
its own in that database, dropped at the end. Without it the PostgreSQL
cases skip, except on CI (CI=true), where they fail: a suite skipped there
would pass silently.

Every test that takes ``client`` or ``make_client`` runs twice: with
agentmem.Client, and with agentmem.AsyncClient driven through an event loop
(``Synced``), so that one test checks both clients.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import shutil
import subprocess
import urllib.parse
from pathlib import Path
from typing import Any, Callable, Iterator, List, Optional, Tuple

import httpx
import pytest

import agentmem

from support import REPO, Server, Synced, server_env


@pytest.fixture(scope="session")
def binary(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The agentmem binary, built once per session."""
    go = shutil.which("go") or "/usr/local/go/bin/go"
    out = tmp_path_factory.mktemp("bin") / "agentmem"
    subprocess.run([go, "build", "-o", str(out), "./cmd/agentmem"], cwd=REPO, check=True)
    return out


def _psql(dsn: str, sql: str) -> None:
    subprocess.run(["psql", dsn, "-v", "ON_ERROR_STOP=1", "-qc", sql], check=True, capture_output=True, text=True)


def _with_params(dsn: str, **params: str) -> str:
    u = urllib.parse.urlsplit(dsn)
    q = dict(urllib.parse.parse_qsl(u.query))
    q.update(params)
    return urllib.parse.urlunsplit(u._replace(query=urllib.parse.urlencode(q)))


@pytest.fixture(scope="session", params=["sqlite", "postgres"])
def new_db(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[], str]]:
    """Returns a function that makes a fresh, empty database of the
    backend and returns its --db."""
    if request.param == "sqlite":
        yield lambda: "sqlite:" + str(tmp_path_factory.mktemp("sqlite") / "agentmem.db")
        return
    dsn = os.environ.get("AGENTMEM_TEST_POSTGRES", "")
    if not dsn:
        if os.environ.get("CI") == "true":
            pytest.fail("AGENTMEM_TEST_POSTGRES is not set; CI must run the PostgreSQL suite")
        pytest.skip("AGENTMEM_TEST_POSTGRES not set")
    schemas: List[str] = []

    def make() -> str:
        schema = "am_py_" + secrets.token_hex(8)
        _psql(dsn, f"CREATE SCHEMA {schema}")
        schemas.append(schema)
        # synchronous_commit off spares the fsyncs, as the Go tests do.
        return _with_params(dsn, search_path=schema, synchronous_commit="off")

    yield make
    for schema in schemas:
        _psql(dsn, f"DROP SCHEMA {schema} CASCADE")


@pytest.fixture(scope="session")
def server(binary: Path, new_db: Callable[[], str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server without authentication (every caller is the admin)."""
    s = Server(binary, new_db(), tmp_path_factory.mktemp("log") / "serve.log")
    yield s
    s.stop()


@pytest.fixture(scope="session")
def auth_server(
    binary: Path, new_db: Callable[[], str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Tuple[Server, str]]:
    """A server with --auth apikey, and its admin key, made as the README
    says: `agentmem keys create --scope admin` on the database."""
    db = new_db()
    out = subprocess.run(
        [str(binary), "keys", "create", "--scope", "admin", "--name", "python-tests", "--db", db],
        check=True,
        capture_output=True,
        text=True,
        env=server_env(),
    )
    token = out.stdout.strip()
    s = Server(binary, db, tmp_path_factory.mktemp("log") / "serve-auth.log", "--auth", "apikey")
    yield s, token
    s.stop()


@pytest.fixture
def user() -> str:
    """A user of the test's own, so that tests on one server do not meet."""
    return "u-" + secrets.token_hex(4)


Requests = List[Tuple[str, str]]  # (method, raw path and query) of each request sent


@pytest.fixture(params=["sync", "async"])
def client_kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def client_factory(client_kind: str) -> Iterator[Callable[..., Any]]:
    """Returns a function that makes a client of the kind of the test's
    parameter: make(url, api_key=…, user=…, record=list, transport=…,
    **Client options). With record, each request sent is appended to it
    as (method, path and query)."""
    loop = asyncio.new_event_loop()
    closers: List[Callable[[], None]] = []

    def make(
        url: str,
        *,
        api_key: Optional[str] = None,
        user: Optional[str] = None,
        record: Optional[Requests] = None,
        transport: Any = None,
        **options: Any,
    ) -> Any:
        def sent(r: httpx.Request) -> None:
            if record is not None:
                record.append((r.method, r.url.raw_path.decode()))

        if client_kind == "sync":
            http = httpx.Client(event_hooks={"request": [sent]}, transport=transport, timeout=30)
            closers.append(http.close)
            return agentmem.Client(url, api_key, user, http_client=http, **options)

        async def async_sent(r: httpx.Request) -> None:
            sent(r)

        ahttp = httpx.AsyncClient(event_hooks={"request": [async_sent]}, transport=transport, timeout=30)
        closers.append(lambda: loop.run_until_complete(ahttp.aclose()))
        return Synced(agentmem.AsyncClient(url, api_key, user, http_client=ahttp, **options), loop)

    yield make
    for close in closers:
        close()
    loop.run_until_complete(loop.shutdown_asyncgens())  # iterations broken off
    loop.close()


@pytest.fixture
def make_client(client_factory: Callable[..., Any], server: Server, user: str) -> Callable[..., Any]:
    """client_factory of the server and the test's user by default."""

    def make(*, url: Optional[str] = None, user: Optional[str] = user, **kwargs: Any) -> Any:
        return client_factory(url or server.url, user=user, **kwargs)

    return make


@pytest.fixture
def client(make_client: Callable[..., Any]) -> Any:
    """A client of the server, of the test's user."""
    return make_client()
