// Helpers that run a real `agentmem serve` for the tests, on SQLite and,
// where AGENTMEM_TEST_POSTGRES is set, on PostgreSQL.
import { spawn, execFileSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { describe, it } from "node:test";

/** repoRoot is the agentmem repository's root (ts/ is in it). */
export const repoRoot = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");

let binary: string | undefined;

/**
 * agentmemBinary answers the path of an agentmem binary: AGENTMEM_BIN (the
 * test script builds one for all test files), or one built here with go
 * build, once per process.
 */
export function agentmemBinary(): string {
  if (process.env.AGENTMEM_BIN) return process.env.AGENTMEM_BIN;
  if (binary === undefined) {
    const dir = mkdtempSync(join(tmpdir(), "agentmem-ts-bin-"));
    process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
    binary = join(dir, "agentmem");
    execFileSync("go", ["build", "-o", binary, "./cmd/agentmem"], { cwd: repoRoot, stdio: "inherit" });
  }
  return binary;
}

/** A Backend gives each server an empty database of its kind. */
export interface Backend {
  name: "sqlite" | "postgres";
  /** database answers the --db value of a new, empty database, and how to drop it. */
  database(dir: string): { db: string; drop(): void };
}

const sqlite: Backend = {
  name: "sqlite",
  database: (dir) => ({ db: "sqlite:" + join(dir, "agentmem.db"), drop() {} }),
};

// postgres gives each server a fresh schema am_ts_<random> of the test
// database (as the Go tests' testutil.MustCreateSchema does), created and
// dropped with psql; the server reaches it by the search_path of its DSN.
function postgres(dsn: string): Backend {
  return {
    name: "postgres",
    database() {
      const schema = "am_ts_" + randomBytes(8).toString("hex");
      psql(dsn, `CREATE SCHEMA ${schema}`);
      const u = new URL(dsn);
      u.searchParams.set("search_path", schema);
      u.searchParams.set("synchronous_commit", "off"); // no fsync per commit: see testutil.MustCreateSchema
      return { db: u.toString(), drop: () => psql(dsn, `DROP SCHEMA ${schema} CASCADE`) };
    },
  };
}

function psql(dsn: string, sql: string): void {
  execFileSync("psql", [dsn, "-v", "ON_ERROR_STOP=1", "-qAtc", sql], {
    stdio: ["ignore", "ignore", "inherit"],
    env: { ...process.env, PGOPTIONS: "-c client_min_messages=warning" }, // no NOTICE per dropped table
  });
}

/**
 * forEachBackend declares the suite once per backend: SQLite always,
 * PostgreSQL where AGENTMEM_TEST_POSTGRES is set. Without it PostgreSQL's
 * suite is skipped, saying why, except on CI (CI=true), where a skipped
 * suite would pass silently: there it fails.
 */
export function forEachBackend(suite: (backend: Backend) => void): void {
  describe("sqlite", () => suite(sqlite));
  const dsn = process.env.AGENTMEM_TEST_POSTGRES;
  if (dsn) {
    describe("postgres", () => suite(postgres(dsn)));
    return;
  }
  describe("postgres", () => {
    it("needs AGENTMEM_TEST_POSTGRES", (t) => {
      if (process.env.CI === "true") {
        throw new Error("AGENTMEM_TEST_POSTGRES is not set; CI must run the PostgreSQL suite");
      }
      t.skip("AGENTMEM_TEST_POSTGRES not set");
    });
  });
}

/** Server is a running agentmem serve. */
export interface Server {
  baseUrl: string;
  /** adminKey is an admin API key, for a server with --auth apikey. */
  adminKey?: string;
  stop(): Promise<void>;
}

/**
 * startServer runs agentmem serve on a new, empty database of backend, on
 * a free port of 127.0.0.1, and answers once it listens. args are more
 * flags of serve; with --auth apikey, an admin key is created first.
 * The server has no model: the tests need no network and no key.
 */
export async function startServer(backend: Backend, args: string[] = []): Promise<Server> {
  const bin = agentmemBinary();
  const dir = mkdtempSync(join(tmpdir(), "agentmem-ts-"));
  const { db, drop } = backend.database(dir);
  const env = serverEnv();
  let adminKey: string | undefined;
  if (args.includes("apikey")) {
    adminKey = execFileSync(bin, ["keys", "create", "--scope", "admin", "--name", "ts-test", "--db", db], {
      env,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    }).trim();
  }
  const child = spawn(bin, ["serve", "--addr", "127.0.0.1:0", "--db", db, ...args], {
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr!.on("data", (b: Buffer) => {
    stderr = (stderr + b.toString()).slice(-4000);
  });
  const cleanup = () => {
    try {
      drop();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
  let baseUrl: string;
  try {
    baseUrl = await listening(child, () => stderr);
  } catch (err) {
    await stop(child);
    cleanup();
    throw err;
  }
  return {
    baseUrl,
    adminKey,
    async stop() {
      await stop(child);
      cleanup();
    },
  };
}

// serverEnv is the tests' environment without what would give the server
// a model or other settings (AGENTMEM_*, OPENAI_*, AZURE_OPENAI_*).
function serverEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!/^(AGENTMEM_|OPENAI_|AZURE_OPENAI_)/.test(k)) env[k] = v;
  }
  return env;
}

// listening answers the server's URL from its "listening on http://…"
// line, or fails when it exits first or takes more than a minute.
function listening(child: ChildProcess, stderr: () => string): Promise<string> {
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    const timer = setTimeout(() => fail(new Error("agentmem serve did not listen within 60 s:\n" + stderr())), 60_000);
    const onExit = (code: number | null) =>
      fail(new Error(`agentmem serve exited (${code}) before listening:\n${stderr()}`));
    function fail(err: Error) {
      clearTimeout(timer);
      child.off("exit", onExit);
      reject(err);
    }
    child.on("exit", onExit);
    lines.on("line", (line) => {
      const m = /^listening on (http:\/\/\S+)/.exec(line);
      if (m) {
        clearTimeout(timer);
        child.off("exit", onExit);
        resolve(m[1]!);
      }
    });
  });
}

// stop stops the server gracefully (SIGTERM), or kills it after 10 s.
function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill("SIGTERM");
  });
}

/** waitFor polls check until it answers true, or fails after timeoutMs. */
export async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
