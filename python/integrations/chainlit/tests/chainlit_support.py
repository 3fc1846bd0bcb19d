"""Helpers of the Chainlit integration's tests."""

from __future__ import annotations

import asyncio
from typing import Any, Awaitable, Callable

import pytest


async def settle() -> None:
    """Waits for the tasks Chainlit started (it persists steps and elements
    in tasks of their own), and the tasks they start."""
    while True:
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        if not tasks:
            return
        await asyncio.gather(*tasks)


async def wait_until(what: str, check: Callable[[], Awaitable[Any]], timeout: float = 60) -> Any:
    """Returns check()'s first true value, awaiting it again until timeout
    seconds have passed (then fails naming what was awaited)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        value = await check()
        if value:
            return value
        if asyncio.get_running_loop().time() > deadline:
            pytest.fail(f"timed out after {timeout}s waiting for {what}")
        await asyncio.sleep(0.1)
