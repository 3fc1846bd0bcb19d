"""Fixtures: the SDK tests' agentmem servers, loaded from
python/tests/conftest.py: a real `agentmem serve` per backend (SQLite;
PostgreSQL when AGENTMEM_TEST_POSTGRES is set, and a failure rather than a
skip without it when CI=true), built once per session."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

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
