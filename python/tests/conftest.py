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
import inspect
import os
import secrets
import select
import shutil
import subprocess
import threading
import time
import urllib.parse
from pathlib import Path
from typing import Any, Callable, Iterator, List, Optional, Tuple

import httpx
import pytest

import agentmem
from agentmem._async_client import _AsyncResource

REPO = Path(__file__).resolve().parents[2]

# Variables of the test run that must not reach the server: a model or an
# API key there would make answers depend on the machine.
_SERVER_ENV_DROP = ("OPENAI_", "AZURE_OPENAI_", "AGENTMEM_")


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


class Server:
    """A running `agentmem serve`; its log (stderr, and stdout after the
    first line) is in ``log``."""

    def __init__(self, binary: Path, db: str, log: Path, *args: str) -> None:
        self.db = db
        self.log = log
        env = {k: v for k, v in os.environ.items() if not k.startswith(_SERVER_ENV_DROP)}
        self._log = open(log, "wb")
        self.proc = subprocess.Popen(
            [str(binary), "serve", "--addr", "127.0.0.1:0", "--db", db, *args],
            stdout=subprocess.PIPE,
            stderr=self._log,
            env=env,
        )
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], 120)
        line = self.proc.stdout.readline().decode() if ready else ""
        if not line.startswith("listening on "):
            self.stop()
            pytest.fail(f"serve printed {line!r}, want 'listening on http://…'; its log:\n{log.read_text()}")
        self.url = line[len("listening on ") :].strip()
        # Keep reading stdout, so that the server never blocks on it.
        threading.Thread(target=shutil.copyfileobj, args=(self.proc.stdout, self._log), daemon=True).start()

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._log.close()


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
    env = {k: v for k, v in os.environ.items() if not k.startswith(_SERVER_ENV_DROP)}
    out = subprocess.run(
        [str(binary), "keys", "create", "--scope", "admin", "--name", "python-tests", "--db", db],
        check=True,
        capture_output=True,
        text=True,
        env=env,
    )
    token = out.stdout.strip()
    s = Server(binary, db, tmp_path_factory.mktemp("log") / "serve-auth.log", "--auth", "apikey")
    yield s, token
    s.stop()


@pytest.fixture
def user() -> str:
    """A user of the test's own, so that tests on one server do not meet."""
    return "u-" + secrets.token_hex(4)


class Synced:
    """An AsyncClient (or one of its resources) called as a Client: each
    coroutine runs to its end on loop, and each async iterator is iterated
    item by item on it."""

    def __init__(self, target: Any, loop: asyncio.AbstractEventLoop) -> None:
        self._target = target
        self._loop = loop

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._target, name)
        if isinstance(value, (_AsyncResource, agentmem.AsyncClient)):
            return Synced(value, self._loop)
        if not callable(value) or inspect.isclass(value):
            return value

        def call(*args: Any, **kwargs: Any) -> Any:
            result = value(*args, **kwargs)
            if inspect.iscoroutine(result):
                result = self._loop.run_until_complete(result)
            if hasattr(result, "__anext__"):
                return self._iterate(result)
            if isinstance(result, agentmem.AsyncClient):
                return Synced(result, self._loop)
            return result

        return call

    def _iterate(self, it: Any) -> Iterator[Any]:
        while True:
            try:
                yield self._loop.run_until_complete(it.__anext__())
            except StopAsyncIteration:
                return


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
        if client_kind == "sync":
            hooks = (
                {"request": [lambda r: record.append((r.method, r.url.raw_path.decode()))]}
                if record is not None
                else {}
            )
            http = httpx.Client(event_hooks=hooks, transport=transport, timeout=30)
            closers.append(http.close)
            return agentmem.Client(url, api_key, user, http_client=http, **options)

        async def hook(r: httpx.Request) -> None:
            if record is not None:
                record.append((r.method, r.url.raw_path.decode()))

        ahttp = httpx.AsyncClient(event_hooks={"request": [hook]}, transport=transport, timeout=30)
        closers.append(lambda: loop.run_until_complete(ahttp.aclose()))
        return Synced(agentmem.AsyncClient(url, api_key, user, http_client=ahttp, **options), loop)

    yield make
    for close in closers:
        close()
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


def wait_for(what: str, check: Callable[[], Any], timeout: float = 60) -> Any:
    """Returns check()'s first true value, polling it until timeout
    seconds have passed (then fails naming what was awaited)."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.1)
