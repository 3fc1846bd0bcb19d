// The README's client example and examples/langchainjs run as they are
// against a real server. They import the package by its name: copied into
// dist/, inside the package, they reach it by self-reference.
import { strict as assert } from "node:assert";
import { execFile } from "node:child_process";
import { copyFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { promisify } from "node:util";
import { repoRoot, startServer, type Server } from "./server.js";

const run = promisify(execFile);
const dist = join(repoRoot, "ts", "dist");

describe("examples", () => {
  let server: Server;
  before(async () => {
    server = await startServer({
      name: "sqlite",
      database: (dir) => ({ db: "sqlite:" + join(dir, "x.db"), drop() {} }),
    });
  });
  after(() => server?.stop());

  async function node(file: string): Promise<string> {
    const env: NodeJS.ProcessEnv = { ...process.env, AGENTMEM_URL: server.baseUrl };
    delete env.AGENTMEM_API_KEY;
    const { stdout } = await run(process.execPath, [file], { env, timeout: 60_000 });
    return stdout;
  }

  it("the README's client example", async () => {
    const readme = readFileSync(join(repoRoot, "ts", "README.md"), "utf8");
    const block = /```js\n([\s\S]*?)```/.exec(readme)?.[1];
    assert.ok(block, "a js block in ts/README.md");
    const file = join(dist, "readme-example.mjs");
    writeFileSync(file, block);
    const out = await node(file);
    assert.match(out, /\[ 1, 2 \]/);
    assert.match(out, /^trip /m);
    assert.match(out, /User lives in Porto\./);
    assert.match(out, /404 not_found Thread "no-such-thread" not found\./);
  });

  it("examples/langchainjs", async () => {
    const file = join(dist, "example-langchainjs.mjs");
    copyFileSync(join(repoRoot, "examples", "langchainjs", "main.mjs"), file);
    const out = await node(file);
    assert.match(out, /^4 assistant: /m);
    assert.match(out, /Memories about "vegetarian": User is vegetarian\./);
  });
});
