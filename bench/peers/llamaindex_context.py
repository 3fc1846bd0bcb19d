"""The context for the next model call: LlamaIndex's Memory, and agentmem.

Loads the first N turns of the everyday conversation (a JSON-lines file
that `go test ./internal/workload -run TestExport -args -export FILE`
writes: the turns BenchmarkServe_ContextEveryday loads into agentmem too)
into `llama_index.core.memory.Memory` with its defaults (the token-limited
chat history in SQLAlchemy's in-memory SQLite, cl100k token counts, no
memory blocks, no model), then times `get()`, the messages for the next
LLM call, over repeated calls: p50 and p99 in milliseconds. `aget()` is
timed too, called inside one running event loop, which spares `get()`'s
`asyncio_run`.

With --agentmem URL (a running `agentmem serve`), the same turns are
loaded into it through the API (a user of their own for each size, in
batches of 1,000), indexed by its workers, and its context endpoint is
timed from this process too, right after the peer and under the same
load: a keep-alive connection, the request encoded and the answer
decoded with the json module, each request a miss of the context cache
(see contextRequest in cmd/agentmem/context_bench_test.go).

    python llamaindex_context.py --data /tmp/everyday.jsonl --sizes 100,10000,100000 [--agentmem http://127.0.0.1:8080]

bench/peers/run.sh runs it in a virtual environment of requirements.txt.
"""

import argparse
import asyncio
import http.client
import json
import os
import platform
import statistics
import sys
import time
import urllib.parse
from importlib import metadata

from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.memory import Memory


def load(path, n):
    turns = []
    with open(path) as f:
        for line in f:
            if len(turns) == n:
                break
            turns.append(json.loads(line))
    if len(turns) < n:
        sys.exit(f"{path} has {len(turns)} turns, fewer than {n}: export more (-n)")
    return turns


def quantile(sorted_ms, q):
    # The same index as the Go side's: sorted[int(q * (len - 1))].
    return sorted_ms[int(q * (len(sorted_ms) - 1))]


def summary(lat_ns):
    ms = sorted(x / 1e6 for x in lat_ns)
    return {"p50_ms": quantile(ms, 0.5), "p99_ms": quantile(ms, 0.99), "mean_ms": statistics.fmean(ms)}


def measure(turns, token_limit, calls, warmup, batch):
    memory = Memory.from_defaults(session_id="bench", token_limit=token_limit)
    start = time.perf_counter()
    for i in range(0, len(turns), batch):
        memory.put_messages([ChatMessage(role=t["role"], content=t["content"]) for t in turns[i : i + batch]])
    load_s = time.perf_counter() - start

    for _ in range(warmup):
        got = memory.get()
    lat = []
    for _ in range(calls):
        t = time.perf_counter_ns()
        got = memory.get()
        lat.append(time.perf_counter_ns() - t)

    async def timed_aget():
        for _ in range(warmup):
            await memory.aget()
        alat = []
        for _ in range(calls):
            t = time.perf_counter_ns()
            await memory.aget()
            alat.append(time.perf_counter_ns() - t)
        return alat

    alat = asyncio.run(timed_aget())
    tokens = sum(memory._estimate_token_count(m) for m in got)
    return {
        "messages": len(turns),
        "token_limit": token_limit,
        "returned_messages": len(got),
        "returned_tokens": tokens,
        "load_s": load_s,
        "calls": calls,
        "get": summary(lat),
        "aget": summary(alat),
    }


class Agentmem:
    """agentmem's REST API over one keep-alive connection."""

    def __init__(self, url):
        u = urllib.parse.urlsplit(url)
        self.conn = http.client.HTTPConnection(u.hostname, u.port)
        self.key = 0  # makes each context request another key of the cache

    def call(self, method, path, body=None):
        self.conn.request(method, path, body=None if body is None else json.dumps(body),
                          headers={"Content-Type": "application/json"})
        resp = self.conn.getresponse()
        data = resp.read()
        if resp.status not in (200, 201):
            sys.exit(f"agentmem: {method} {path}: {resp.status} {data[:300]!r}")
        return data

    def load(self, user, turns, batch):
        self.call("POST", f"/v1/users/{user}/threads", {"id": "t"})
        for i in range(0, len(turns), batch):
            self.call("POST", f"/v1/users/{user}/threads/t/messages", {"messages": turns[i : i + batch]})

    def wait_indexed(self, timeout_s=1800):
        deadline = time.monotonic() + timeout_s
        while b'agentmem_jobs_backlog{kind="index"}' in self.call("GET", "/metrics"):
            if time.monotonic() > deadline:
                sys.exit("agentmem: not indexed in time")
            time.sleep(0.2)

    def context(self, user, budget):
        # trim never reads the summarize policy; the cache's key holds it.
        self.key += 1
        body = {"budget_tokens": budget, "strategy": "trim", "summarize": {"trigger_turns": self.key}}
        c = json.loads(self.call("POST", f"/v1/users/{user}/threads/t/context", body))
        if c["telemetry"]["cache_hit"] or not c["messages"]:
            sys.exit(f"agentmem: context: {c['telemetry']}")
        return c

    def measure(self, user, budget, calls, warmup):
        self.conn.close()  # idle while the peer loaded: the server may have closed it; the next request connects
        for _ in range(warmup):
            c = self.context(user, budget)
        lat = []
        for _ in range(calls):
            t = time.perf_counter_ns()
            c = self.context(user, budget)
            lat.append(time.perf_counter_ns() - t)
        r = summary(lat)
        r.update(budget=budget, returned_messages=len(c["messages"]), returned_tokens=c["telemetry"]["used_tokens"])
        return r


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", required=True, help="the everyday conversation, one JSON turn a line")
    p.add_argument("--sizes", default="100,10000,100000", help="comma-separated message counts")
    p.add_argument("--calls", type=int, default=1000, help="timed get() calls per size")
    p.add_argument("--warmup", type=int, default=20, help="untimed get() calls first")
    p.add_argument("--token-limit", type=int, default=30000, help="Memory's token_limit (its default: 30000)")
    p.add_argument("--batch", type=int, default=1000, help="messages per put_messages() (and append) while loading")
    p.add_argument("--agentmem", help="URL of a running agentmem serve to time too")
    p.add_argument("--budgets", default="21000,30000", help="agentmem's context budgets (tokens)")
    args = p.parse_args()

    sizes = [int(s) for s in args.sizes.split(",")]
    turns = load(args.data, max(sizes))
    print(
        f"# llama-index-core {metadata.version('llama-index-core')}, SQLAlchemy {metadata.version('SQLAlchemy')}, "
        f"aiosqlite {metadata.version('aiosqlite')}, tiktoken {metadata.version('tiktoken')}, "
        f"Python {platform.python_version()}, load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}",
        file=sys.stderr,
    )
    am = Agentmem(args.agentmem) if args.agentmem else None
    if am:
        for n in sizes:
            am.load(f"peers-{n}", turns[:n], args.batch)
        am.wait_indexed()
    for n in sizes:
        r = measure(turns[:n], args.token_limit, args.calls, args.warmup, args.batch)
        if am:
            r["agentmem"] = [am.measure(f"peers-{n}", int(b), args.calls, args.warmup) for b in args.budgets.split(",")]
        r["load_average"] = os.getloadavg()
        print(json.dumps(r), flush=True)
        print(
            f"llamaindex n={n}: get p50 {r['get']['p50_ms']:.2f} ms, p99 {r['get']['p99_ms']:.2f} ms; "
            f"aget p50 {r['aget']['p50_ms']:.2f} ms, p99 {r['aget']['p99_ms']:.2f} ms; "
            f"{r['returned_messages']} messages, {r['returned_tokens']} tokens; loaded in {r['load_s']:.1f} s",
            file=sys.stderr,
        )
        for a in r.get("agentmem", []):
            print(
                f"agentmem n={n} budget {a['budget']}: p50 {a['p50_ms']:.2f} ms, p99 {a['p99_ms']:.2f} ms; "
                f"{a['returned_messages']} messages, {a['returned_tokens']} tokens",
                file=sys.stderr,
            )


if __name__ == "__main__":
    main()
