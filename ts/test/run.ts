// The entry of npm test: builds agentmem once (unless AGENTMEM_BIN names a
// binary), then runs every test file with Node's test runner, which runs
// each file in a process of its own; they share the binary through
// AGENTMEM_BIN.
import { spawnSync, execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { repoRoot } from "./server.js";

const here = dirname(fileURLToPath(import.meta.url));
let dir: string | undefined;
let bin = process.env.AGENTMEM_BIN;
if (!bin) {
  dir = mkdtempSync(join(tmpdir(), "agentmem-ts-bin-"));
  bin = join(dir, "agentmem");
  console.log(`building agentmem into ${bin}`);
  execFileSync("go", ["build", "-o", bin, "./cmd/agentmem"], { cwd: repoRoot, stdio: "inherit" });
}
const files = readdirSync(here)
  .filter((f) => f.endsWith(".test.js"))
  .map((f) => join(here, f));
const args = ["--test", ...process.argv.slice(2), ...files];
const r = spawnSync(process.execPath, args, { stdio: "inherit", env: { ...process.env, AGENTMEM_BIN: bin } });
if (dir) rmSync(dir, { recursive: true, force: true });
process.exit(r.status ?? 1);
