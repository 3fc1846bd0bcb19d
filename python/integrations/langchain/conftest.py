"""The LangChain tests' own fixtures; the server's are in ../conftest.py."""

from __future__ import annotations

from typing import Any, AsyncIterator

import pytest_asyncio

import agentmem


@pytest_asyncio.fixture
async def async_client(server: Any, user: str) -> AsyncIterator[agentmem.AsyncClient]:
    """An AsyncClient of the server, of the test's user."""
    async with agentmem.AsyncClient(server.url, user=user) as c:
        yield c
