"""examples/llama_index/chat.py runs, against a real server, as its
docstring says."""

from __future__ import annotations

import subprocess
import sys

from support import REPO, Server


def test_example(server: Server, user: str) -> None:
    for _ in range(2):  # a second run begins afresh
        out = subprocess.run(
            [sys.executable, "examples/llama_index/chat.py", "--url", server.url, "--user", user],
            cwd=REPO,
            check=True,
            capture_output=True,
            text=True,
            timeout=120,
        ).stdout
        first, second, third = out.split("the model was sent:")
        assert first.count("  user: ") == 2 and first.count("  assistant: ") == 2
        assert "- User is vegetarian." in second and "  user: Where should I eat tonight?" in second
        assert "<agentmem>\n- User is vegetarian.\n</agentmem>" in third
