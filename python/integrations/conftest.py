"""Fixtures of every integration's tests, the SDK's own (../tests): a real
`agentmem serve` per backend (``server``: SQLite, and PostgreSQL when
AGENTMEM_TEST_POSTGRES is set; on CI, CI=true, a PostgreSQL case without
it fails rather than skips), the go-built ``binary``, a ``user`` of the
test's own; and ``client``, an agentmem.Client of the server and user.

Each integration's tests run in a virtual environment of their own
(../../test makes .venv-NAME from NAME/requirements.txt), from their
directory, so pytest loads this file for each. ``support`` (wait_for,
Server) is importable from the tests too.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Iterator

import pytest

import agentmem

SDK_TESTS = Path(__file__).resolve().parents[1] / "tests"
sys.path.insert(0, str(SDK_TESTS))

from support import Server  # noqa: E402 (found on the path just set)


def _load_sdk_conftest() -> ModuleType:
    spec = importlib.util.spec_from_file_location("agentmem_sdk_conftest", SDK_TESTS / "conftest.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


_sdk = _load_sdk_conftest()
# The SDK's fixtures, registered here by name.
binary = _sdk.binary
new_db = _sdk.new_db
server = _sdk.server
user = _sdk.user


@pytest.fixture
def client(server: Server, user: str) -> Iterator[agentmem.Client]:
    """A Client of the server, of the test's user."""
    with agentmem.Client(server.url, user=user) as c:
        yield c
