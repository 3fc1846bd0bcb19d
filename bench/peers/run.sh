#!/usr/bin/env bash
# The context for the next model call: agentmem against LlamaIndex's Memory
# on the same everyday conversation at 100, 10,000 and 100,000 messages
# (docs/benchmarks.md, "The context against LlamaIndex's Memory").
#
#   bash bench/peers/run.sh                  # all three sizes, SQLite
#   SIZES=100,10000 bash bench/peers/run.sh  # fewer
#
# Steps: a virtual environment of requirements.txt under /tmp (made once;
# VENV names another); the conversation exported from package workload
# (DATA, /tmp/agentmem-everyday.jsonl); a real `agentmem serve` on a new
# SQLite file, which llamaindex_context.py loads and times from Python
# right after timing the peer (the same process, the same load); then
# BenchmarkServe_ContextEveryday (another serve, timed by the Go client,
# and in process); and a table of both with the ratios. OUT (a new
# directory under /tmp) keeps the raw outputs. Not part of any test run: a
# benchmark, minutes long at 100,000 messages.
set -euo pipefail
cd "$(dirname "$0")/../.."
SIZES=${SIZES:-100,10000,100000}
VENV=${VENV:-/tmp/agentmem-peers-venv}
DATA=${DATA:-/tmp/agentmem-everyday.jsonl}
OUT=${OUT:-$(mktemp -d /tmp/agentmem-peers.XXXXXX)}
mkdir -p "$OUT"
max=$(tr , '\n' <<<"$SIZES" | sort -n | tail -n1)

if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q -r bench/peers/requirements.txt
fi
go test ./internal/workload -run '^TestExport$' -count 1 -args -export "$DATA" -n "$max" >/dev/null
go build -o "$OUT/agentmem" ./cmd/agentmem

# The serve the Python side times; stopped on exit (its own PID only).
"$OUT/agentmem" serve --addr 127.0.0.1:0 --db "sqlite:$OUT/agentmem.db" --log-level warn >"$OUT/serve.out" 2>"$OUT/serve.err" &
serve=$!
trap 'kill "$serve" 2>/dev/null || true; wait "$serve" 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do
  url=$(sed -n 's/^listening on //p' "$OUT/serve.out")
  [ -n "$url" ] && break
  sleep 0.1
done
[ -n "$url" ] || { cat "$OUT/serve.err"; exit 1; }

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)" | tee "$OUT/load.txt"
"$VENV/bin/python" bench/peers/llamaindex_context.py --data "$DATA" --sizes "$SIZES" --agentmem "$url" >"$OUT/llamaindex.jsonl"
kill "$serve" && wait "$serve" 2>/dev/null || true
echo "load average after the Python side: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT/load.txt"
go test ./cmd/agentmem -run '^$' -bench "Serve_ContextEveryday/sqlite/msgs=(${SIZES//,/|})\$" -benchtime 1x -timeout 60m | tee "$OUT/agentmem.txt"
echo "load average after the Go side: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT/load.txt"

"$VENV/bin/python" - "$OUT/llamaindex.jsonl" "$OUT/agentmem.txt" <<'EOF'
import json, re, sys

peer = {r["messages"]: r for r in map(json.loads, open(sys.argv[1]))}
go = {}
for line in open(sys.argv[2]):
    m = re.match(r"BenchmarkServe_ContextEveryday/sqlite/msgs=(\d+)\S*\s+\d+\s+\d+ ns/op\s+(.*)", line)
    if m:
        fields = m.group(2).split()
        go[int(m.group(1))] = {unit: float(v) for v, unit in zip(fields[::2], fields[1::2])}
print("\nms, p50 / p99; LlamaIndex: the better of get() and aget(); ratio: LlamaIndex / agentmem over HTTP")
print("messages | LlamaIndex | budget | agentmem over HTTP from Python | ratio | over HTTP, Go client | ratio | in process")
for n in sorted(peer):
    p = peer[n]
    p50 = min(p["get"]["p50_ms"], p["aget"]["p50_ms"])
    p99 = min(p["get"]["p99_ms"], p["aget"]["p99_ms"])
    for a in p.get("agentmem", []):
        k = f"{a['budget'] // 1000}k"
        o = go.get(n, {})
        row = [f"{n:,}", f"{p50:.2f} / {p99:.2f} ({p['returned_messages']} msgs)", f"{a['budget']:,} ({a['returned_messages']} msgs)",
               f"{a['p50_ms']:.2f} / {a['p99_ms']:.2f}", f"×{p50 / a['p50_ms']:.1f} / ×{p99 / a['p99_ms']:.1f}"]
        if f"{k}-http-p50-ms" in o:
            h50, h99 = o[f"{k}-http-p50-ms"], o[f"{k}-http-p99-ms"]
            row += [f"{h50:.2f} / {h99:.2f}", f"×{p50 / h50:.1f} / ×{p99 / h99:.1f}", f"{o[f'{k}-inproc-p50-ms']:.2f} / {o[f'{k}-inproc-p99-ms']:.2f}"]
        print(" | ".join(row))
EOF
echo "raw outputs: $OUT"
