"""The README's Python example runs, as it is, against a real server, and
prints what its comments say."""

from __future__ import annotations

import re
import subprocess
import sys

from support import REPO, Server


def readme_example() -> str:
    """The python block of the README's "## Python" section."""
    readme = (REPO / "README.md").read_text()
    section = readme[readme.index("\n## Python\n") :]
    section = section[: section.index("\n## ", 1)]
    m = re.search(r"```python\n(.*?)```", section, re.S)
    assert m, "README.md's Python section has no python block"
    return m.group(1)


def test_readme_example(server: Server) -> None:
    code = readme_example()
    assert 'agentmem.Client("http://127.0.0.1:8080"' in code
    # The example's user, alice, is of this server alone: no other test
    # names her.
    code = code.replace("http://127.0.0.1:8080", server.url)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "dinner I am vegetarian and I live in Porto.",
        'not_found 404 Thread "nope" not found.',
    ]
