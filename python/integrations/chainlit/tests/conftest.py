"""Fixtures: the SDK tests' agentmem servers, and Chainlit with an
AgentmemDataLayer on them.

The servers are python/tests/conftest.py's, loaded from there: a real
`agentmem serve` per backend (SQLite; PostgreSQL when
AGENTMEM_TEST_POSTGRES is set, and a failure rather than a skip without it
when CI=true), built once per session. Chainlit writes its .chainlit
directory into its app root when imported, so that root is a temporary
directory, set before anything imports Chainlit.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, AsyncIterator

SDK_TESTS = Path(__file__).resolve().parents[3] / "tests"
sys.path.insert(0, str(SDK_TESTS))  # for the SDK conftest's "from support import …"
_spec = importlib.util.spec_from_file_location("agentmem_sdk_conftest", SDK_TESTS / "conftest.py")
assert _spec is not None and _spec.loader is not None
sdk_conftest = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sdk_conftest)

# The SDK tests' fixtures, as this directory's.
binary = sdk_conftest.binary
new_db = sdk_conftest.new_db
server = sdk_conftest.server
user = sdk_conftest.user

os.environ.setdefault("CHAINLIT_APP_ROOT", tempfile.mkdtemp(prefix="chainlit-root-"))

import chainlit.data  # noqa: E402
import pytest_asyncio  # noqa: E402
from chainlit.config import config  # noqa: E402
from chainlit_support import settle  # noqa: E402

import agentmem  # noqa: E402
from agentmem.chainlit import AgentmemDataLayer  # noqa: E402


@pytest_asyncio.fixture
async def layer(server: Any) -> AsyncIterator[AgentmemDataLayer]:
    """An AgentmemDataLayer on the server, installed as Chainlit's data
    layer (what @cl.data_layer does)."""
    dl = AgentmemDataLayer(agentmem.AsyncClient(server.url))
    config.code.data_layer = lambda: dl
    chainlit.data._data_layer = None
    chainlit.data._data_layer_initialized = False
    yield dl
    await settle()
    await dl.close()
    config.code.data_layer = None
    chainlit.data._data_layer = None
    chainlit.data._data_layer_initialized = False
