import { strict as assert } from "node:assert";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { operations } from "../src/generated/operations.js";
import { repoRoot } from "./server.js";

// The generated types and operation table are what docs/openapi.json
// gives today: after a change of the API, npm run generate (and this test
// fails until then).
test("src/generated is what docs/openapi.json gives", () => {
  const r = spawnSync(process.execPath, [join(repoRoot, "ts", "scripts", "generate.mjs"), "--check"], {
    encoding: "utf8",
  });
  assert.equal(r.status, 0, r.stderr || r.stdout);
});

test("every operation of docs/openapi.json is in the client's table", () => {
  const spec = JSON.parse(readFileSync(join(repoRoot, "docs", "openapi.json"), "utf8")) as {
    paths: Record<string, Record<string, { operationId?: string }>>;
  };
  const want: Record<string, { method: string; path: string }> = {};
  for (const [path, item] of Object.entries(spec.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (op.operationId) want[op.operationId] = { method: method.toUpperCase(), path };
    }
  }
  const got = Object.fromEntries(
    Object.entries(operations).map(([id, op]) => [id, { method: op.method, path: op.path }]),
  );
  assert.deepEqual(got, want);
});
