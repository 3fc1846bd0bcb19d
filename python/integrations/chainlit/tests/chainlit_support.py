"""Helpers of the Chainlit integration's tests."""

from __future__ import annotations

import asyncio


async def settle() -> None:
    """Waits for the tasks Chainlit started (it persists steps and elements
    in tasks of their own), and the tasks they start."""
    while True:
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        if not tasks:
            return
        await asyncio.gather(*tasks)
