"""Writes the synchronous client, src/agentmem/_client.py, from the
asynchronous one, src/agentmem/_async_client.py: one source for both, as
httpcore does. Run it after editing the async client:

    python scripts/unasync.py          # rewrites _client.py
    python scripts/unasync.py --check  # exits 1 if _client.py is stale

The async source keeps to what these rules turn into plain Python: no
Awaitable in annotations, asyncio only for asyncio.sleep, and names of
async things spelled Async* (AsyncClient, AsyncIterator, httpx.AsyncClient).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src" / "agentmem"
ASYNC = SRC / "_async_client.py"
SYNC = SRC / "_client.py"

# (pattern, replacement), applied in order, line by line.
RULES = [
    (r"^import asyncio$", "import time"),
    (r"\basyncio\.sleep\b", "time.sleep"),
    (r"\basync def\b", "def"),
    (r"\basync (for|with)\b", r"\1"),
    (r"\bawait ", ""),
    (r"\b__aenter__\b", "__enter__"),
    (r"\b__aexit__\b", "__exit__"),
    (r"\baclose\b", "close"),
    (r"(?<![A-Za-z0-9])Async(?=[A-Z])", ""),  # AsyncClient, _AsyncResource, AsyncIterator, httpx.AsyncClient
]

HEADER = '''"""Client: agentmem's REST API, every route, synchronous.

Generated from _async_client.py by scripts/unasync.py: do not edit.
"""
'''


def generate(source: str) -> str:
    lines = source.splitlines(keepends=True)
    # The async module's docstring tells how this file is made; the header
    # says it instead.
    if lines and lines[0].startswith('"""'):
        end = next(i for i, line in enumerate(lines) if i > 0 and line.rstrip().endswith('"""'))
        lines = lines[end + 1 :]
        while lines and not lines[0].strip():
            lines = lines[1:]
    out = []
    for line in lines:
        for pattern, replacement in RULES:
            line = re.sub(pattern, replacement, line)
        out.append(line)
    return HEADER + "\n" + "".join(out)


def main(argv: list[str]) -> int:
    want = generate(ASYNC.read_text(encoding="utf-8"))
    if "--check" in argv:
        if SYNC.read_text(encoding="utf-8") != want:
            print(f"{SYNC} is stale: run python scripts/unasync.py", file=sys.stderr)
            return 1
        return 0
    SYNC.write_text(want, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
