"""examples/langchain/chat.py runs, against a real server, as its
docstring says."""

from __future__ import annotations

import subprocess
import sys

from support import REPO, Server


def test_example(server: Server, user: str) -> None:
    for _ in range(2):  # a second run begins afresh
        out = subprocess.run(
            [sys.executable, "examples/langchain/chat.py", "--url", server.url, "--user", user],
            cwd=REPO,
            check=True,
            capture_output=True,
            text=True,
            timeout=120,
        ).stdout
        assert "  1 user: I'm vegetarian. Plan three days in Lisbon for me.\n" in out
        assert '  4 assistant: search_memory({"query": "food"})\n' in out
        assert "  6 assistant: Day 1: Alfama, lunch at a vegetarian tasca.\n" in out
        assert "  7 " not in out
        assert "] User is vegetarian.\n" in out.split("The retriever finds:")[1]
