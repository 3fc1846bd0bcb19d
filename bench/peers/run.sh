#!/usr/bin/env bash
# The context for the next model call: agentmem against LlamaIndex's Memory
# on the same everyday conversation at 100, 10,000 and 100,000 messages
# (docs/benchmarks.md, "The context against LlamaIndex's Memory").
#
#   bash bench/peers/run.sh                  # all three sizes, SQLite
#   SIZES=100,10000 bash bench/peers/run.sh  # fewer
#
# Steps: a virtual environment of requirements.txt under /tmp (made once;
# VENV names another), the conversation exported from package workload
# (DATA, /tmp/agentmem-everyday.jsonl), the peer (llamaindex_context.py),
# then agentmem (BenchmarkServe_ContextEveryday: a real serve over HTTP,
# and in process), and a table of both with the ratios. OUT (a new
# directory under /tmp) keeps the raw outputs. Not part of any test run: a
# benchmark, minutes long at 100,000 messages on each side.
set -euo pipefail
cd "$(dirname "$0")/../.."
SIZES=${SIZES:-100,10000,100000}
VENV=${VENV:-/tmp/agentmem-peers-venv}
DATA=${DATA:-/tmp/agentmem-everyday.jsonl}
OUT=${OUT:-$(mktemp -d /tmp/agentmem-peers.XXXXXX)}
max=$(tr , '\n' <<<"$SIZES" | sort -n | tail -n1)

if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q -r bench/peers/requirements.txt
fi
go test ./internal/workload -run '^TestExport$' -count 1 -args -export "$DATA" -n "$max" >/dev/null

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)" | tee "$OUT/load.txt"
"$VENV/bin/python" bench/peers/llamaindex_context.py --data "$DATA" --sizes "$SIZES" >"$OUT/llamaindex.jsonl"
echo "load average after the peer: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT/load.txt"
go test ./cmd/agentmem -run '^$' -bench "Serve_ContextEveryday/sqlite/msgs=(${SIZES//,/|})\$" -benchtime 1x -timeout 60m | tee "$OUT/agentmem.txt"
echo "load average after agentmem: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT/load.txt"

"$VENV/bin/python" - "$OUT/llamaindex.jsonl" "$OUT/agentmem.txt" <<'EOF'
import json, re, sys

peer = {r["messages"]: r for r in map(json.loads, open(sys.argv[1]))}
ours = {}
for line in open(sys.argv[2]):
    m = re.match(r"BenchmarkServe_ContextEveryday/sqlite/msgs=(\d+)\S*\s+\d+\s+\d+ ns/op\s+(.*)", line)
    if m:
        fields = m.group(2).split()
        ours[int(m.group(1))] = {unit: float(v) for v, unit in zip(fields[::2], fields[1::2])}
print("\nmessages | LlamaIndex get() p50 / p99 (best of get, aget) | agentmem budget: HTTP p50 / p99, in process p50 / p99 | ratio over HTTP p50 / p99")
for n in sorted(peer):
    p = peer[n]
    p50 = min(p["get"]["p50_ms"], p["aget"]["p50_ms"])
    p99 = min(p["get"]["p99_ms"], p["aget"]["p99_ms"])
    head = f"{n:>7} | {p50:.2f} / {p99:.2f} ms ({p['returned_messages']} messages)"
    for k in ("21k", "30k"):
        o = ours.get(n, {})
        if f"{k}-http-p50-ms" not in o:
            continue
        h50, h99 = o[f"{k}-http-p50-ms"], o[f"{k}-http-p99-ms"]
        print(f"{head} | {k}: {h50:.2f} / {h99:.2f} ms, {o[f'{k}-inproc-p50-ms']:.2f} / {o[f'{k}-inproc-p99-ms']:.2f} ms "
              f"({o[f'{k}-messages']:.0f} messages) | ×{p50 / h50:.1f} / ×{p99 / h99:.1f}")
EOF
echo "raw outputs: $OUT"
