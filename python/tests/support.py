"""Helpers of the tests: a running server, the async client called as
the sync one, and waiting on a condition."""

from __future__ import annotations

import asyncio
import inspect
import os
import select
import shutil
import subprocess
import threading
import time
from pathlib import Path
from typing import Any, Callable, Dict, Iterator

import pytest

import agentmem
from agentmem._async_client import _AsyncResource

REPO = Path(__file__).resolve().parents[2]

# Variables of the test run that must not reach the server: a model or an
# API key there would make answers depend on the machine.
SERVER_ENV_DROP = ("OPENAI_", "AZURE_OPENAI_", "AGENTMEM_")


def server_env() -> Dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(SERVER_ENV_DROP)}


class Server:
    """A running `agentmem serve`; its log (stderr, and stdout after the
    first line) is in ``log``."""

    def __init__(self, binary: Path, db: str, log: Path, *args: str) -> None:
        self.db = db
        self.log = log
        self._log = open(log, "wb")
        self.proc = subprocess.Popen(
            [str(binary), "serve", "--addr", "127.0.0.1:0", "--db", db, *args],
            stdout=subprocess.PIPE,
            stderr=self._log,
            env=server_env(),
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
