import { strict as assert } from "node:assert";
import { after, before, describe, it } from "node:test";
import { AgentmemClient, AgentmemError, type ClientOptions } from "../src/index.js";
import { forEachBackend, startServer, waitFor, type Server } from "./server.js";

// rejectsWith asserts that p fails with an AgentmemError of code and status.
async function rejectsWith(p: Promise<unknown>, code: string, status: number): Promise<AgentmemError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof AgentmemError, `want AgentmemError, got ${String(err)}`);
    assert.equal(err.code, code, err.message);
    assert.equal(err.status, status, err.message);
    assert.ok(err.message.length > 0);
    return err;
  }
  assert.fail(`want AgentmemError ${code}, got success`);
}

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const v of it) out.push(v);
  return out;
}

// Fetches is a fetch that records the requests it passes on to the real
// one, and whose answers a test may replace.
function recordingFetch(
  answer?: (n: number, url: string, init?: RequestInit) => Promise<Response | undefined> | Response | undefined,
) {
  const requests: { method: string; url: string; headers: Headers; body?: string }[] = [];
  const f: typeof fetch = async (input, init) => {
    const url = String(input);
    requests.push({
      method: init?.method ?? "GET",
      url,
      headers: new Headers(init?.headers),
      body: init?.body as string | undefined,
    });
    const replaced = await answer?.(requests.length, url, init);
    return replaced ?? fetch(input, init);
  };
  return { fetch: f, requests };
}

forEachBackend((backend) => {
  describe("client", () => {
    let server: Server;
    let opts: ClientOptions;
    before(async () => {
      server = await startServer(backend);
      opts = { baseUrl: server.baseUrl };
    });
    after(() => server?.stop());

    it("threads: create, get, update, list, end, delete, restore", async () => {
      const c = new AgentmemClient({ ...opts, user: "alice" });
      const th = await c.createThread({ id: "trip", agent_id: "planner", tags: ["travel"] });
      assert.equal(th.id, "trip");
      assert.equal(th.user_id, "alice");
      assert.equal(th.status, "active");
      assert.deepEqual(th.tags, ["travel"]);
      assert.equal((await c.getThread("trip")).agent_id, "planner");

      const up = await c.updateThread("trip", { title: "Lisbon", tags: ["travel", "2026"] });
      assert.equal(up.title, "Lisbon");
      await c.createThread({ id: "other", tags: ["travel"] });
      const page = await c.listThreads({ tag: ["travel", "2026"] }); // repeated tag=: all of them
      assert.deepEqual(
        page.data.map((t) => t.id),
        ["trip"],
      );
      assert.equal(page.next_cursor, "");
      assert.deepEqual(
        (await collect(c.allThreads({ agent_id: "planner" }))).map((t) => t.id),
        ["trip"],
      );

      assert.equal((await c.endThread("trip")).status, "ended");
      await c.deleteThread("other");
      await rejectsWith(c.getThread("other"), "not_found", 404);
      assert.deepEqual(
        (await c.listThreads({ deleted: true })).data.map((t) => t.id),
        ["other"],
      );
      const conflict = await rejectsWith(c.createThread({ id: "other" }), "conflict", 409);
      assert.match(conflict.message, /deleted/);
      assert.equal((await c.restoreThread("other")).id, "other");
      await c.deleteThread("other", { permanent: true });
      await rejectsWith(c.restoreThread("other"), "not_found", 404);
    });

    it("threads: the cursor iterator follows next_cursor over several pages", async () => {
      const c = new AgentmemClient({ ...opts, user: "pager" });
      for (let i = 0; i < 5; i++) await c.createThread({ id: `t${i}` });
      const first = await c.listThreads({ limit: 2 });
      assert.equal(first.data.length, 2);
      assert.notEqual(first.next_cursor, "");
      const { fetch, requests } = recordingFetch();
      const all = await collect(new AgentmemClient({ ...opts, user: "pager", fetch }).allThreads({ limit: 2 }));
      assert.deepEqual(all.map((t) => t.id).sort(), ["t0", "t1", "t2", "t3", "t4"]);
      assert.equal(requests.length, 3, "pages of 2, 2 and 1");
      assert.ok(requests.slice(1).every((r) => new URL(r.url).searchParams.has("cursor")));
      // From a cursor on: the rest.
      const rest = await collect(c.allThreads({ limit: 2, cursor: first.next_cursor }));
      assert.equal(rest.length, 3);
      // The generic paginate, over another list.
      assert.equal((await collect(c.paginate("listThreads", { query: { limit: 4 } }))).length, 5);
    });

    it("messages: append with tool calls, list, iterate", async () => {
      const c = new AgentmemClient({ ...opts, user: "alice" });
      await c.createThread({ id: "chat" });
      const stored = await c.appendMessages("chat", [
        { role: "user", content: "Plan three days in Lisbon." },
        {
          role: "assistant",
          content: "",
          tool_calls: [{ id: "c1", type: "function", function: { name: "weather", arguments: '{"city":"Lisbon"}' } }],
        },
        { role: "tool", tool_call_id: "c1", content: "sunny, 24°C" },
        { role: "assistant", content: "Day 1: Alfama and the castle." },
      ]);
      assert.deepEqual(
        stored.map((m) => m.seq),
        [1, 2, 3, 4],
      );
      assert.equal(stored[1]!.tool_calls?.[0]?.function.name, "weather");
      assert.ok(stored.every((m) => m.id && m.token_count >= 0));

      const page = await c.listMessages("chat", { after_seq: 2, limit: 10 });
      assert.deepEqual(
        page.data.map((m) => [m.seq, m.role, m.tool_call_id]),
        [
          [3, "tool", "c1"],
          [4, "assistant", undefined],
        ],
      );
      const desc = await c.listMessages("chat", { order: "desc", limit: 1 });
      assert.equal(desc.data[0]!.seq, 4);
      const all = await collect(c.allMessages("chat", { limit: 3 }));
      assert.deepEqual(
        all.map((m) => m.seq),
        [1, 2, 3, 4],
      );
      await rejectsWith(c.appendMessages("chat", [{ role: "robot" as "user", content: "x" }]), "invalid", 400);
      await rejectsWith(c.appendMessages("nope", [{ role: "user", content: "x" }]), "not_found", 404);
    });

    it("messages: an append carries an Idempotency-Key, and its retry stores once", async () => {
      const c = new AgentmemClient({ ...opts, user: "idem" });
      await c.createThread({ id: "t" });

      // A key given twice with the same batch: the original answer.
      const a = await c.appendMessages("t", [{ role: "user", content: "once" }], { idempotencyKey: "turn-1" });
      const b = await c.appendMessages("t", [{ role: "user", content: "once" }], { idempotencyKey: "turn-1" });
      assert.deepEqual(
        b.map((m) => m.id),
        a.map((m) => m.id),
      );
      // The same key with another batch is a conflict.
      await rejectsWith(
        c.appendMessages("t", [{ role: "user", content: "other" }], { idempotencyKey: "turn-1" }),
        "conflict",
        409,
      );

      // A generated key: the first attempt is stored but its answer lost on
      // the way; the client retries with the same key, which stores nothing
      // more.
      const { fetch, requests } = recordingFetch(async (n, url, init) => {
        if (n === 1) {
          await globalThis.fetch(url, init);
          throw new TypeError("fetch failed (answer lost)");
        }
        return undefined;
      });
      const lossy = new AgentmemClient({ ...opts, user: "idem", fetch, retryBaseDelayMs: 10 });
      const got = await lossy.appendMessages("t", [{ role: "user", content: "twice?" }]);
      assert.equal(requests.length, 2);
      const key = requests[0]!.headers.get("Idempotency-Key");
      assert.ok(key && key.length >= 16, "a generated key");
      assert.equal(requests[1]!.headers.get("Idempotency-Key"), key);
      assert.equal(got[0]!.seq, 2);
      const msgs = await collect(c.allMessages("t"));
      assert.deepEqual(
        msgs.map((m) => m.content),
        ["once", "twice?"],
      );

      // Each call has a key of its own.
      const { fetch: f2, requests: r2 } = recordingFetch();
      const c2 = new AgentmemClient({ ...opts, user: "idem", fetch: f2 });
      await c2.appendMessages("t", [{ role: "user", content: "x" }]);
      await c2.appendMessages("t", [{ role: "user", content: "x" }]);
      assert.notEqual(r2[0]!.headers.get("Idempotency-Key"), r2[1]!.headers.get("Idempotency-Key"));
      assert.equal((await c.getThread("t")).message_count, 4);
    });

    it("retries an idempotent call after a 503, waiting its Retry-After", async () => {
      const c = new AgentmemClient({ ...opts, user: "retry" });
      await c.createThread({ id: "t" });
      const unavailable = () =>
        new Response(JSON.stringify({ error: { code: "unavailable", message: "The database is busy." } }), {
          status: 503,
          headers: { "Content-Type": "application/json", "Retry-After": "1" },
        });
      const { fetch, requests } = recordingFetch((n) => (n === 1 ? unavailable() : undefined));
      const start = Date.now();
      const th = await new AgentmemClient({ ...opts, user: "retry", fetch }).getThread("t");
      assert.equal(th.id, "t");
      assert.equal(requests.length, 2);
      assert.ok(Date.now() - start >= 950, `waited ${Date.now() - start} ms, want Retry-After's second`);

      // A POST that is not idempotent is sent once, and its 503 thrown.
      const once = recordingFetch(() => unavailable());
      await rejectsWith(
        new AgentmemClient({ ...opts, user: "retry", fetch: once.fetch }).createMemory({ text: "x" }),
        "unavailable",
        503,
      );
      assert.equal(once.requests.length, 1);

      // A Retry-After longer than retryMaxDelayMs is not waited for.
      const long = recordingFetch(() => unavailable());
      await rejectsWith(
        new AgentmemClient({ ...opts, user: "retry", fetch: long.fetch, retryMaxDelayMs: 500 }).getThread("t"),
        "unavailable",
        503,
      );
      assert.equal(long.requests.length, 1);

      // maxRetries attempts after the first, then the error.
      const always = recordingFetch(() => new Response("upstream down", { status: 502 }));
      const err = await rejectsWith(
        new AgentmemClient({ ...opts, user: "retry", fetch: always.fetch, maxRetries: 2, retryBaseDelayMs: 1 }).search({
          query: "x",
        }),
        "unavailable",
        502,
      );
      assert.equal(always.requests.length, 3);
      assert.match(err.message, /upstream down/, "a body that is not the API's error is in the message");

      // A server that cannot be reached: code unavailable, status 0.
      const gone = new AgentmemClient({ baseUrl: "http://127.0.0.1:1", user: "retry", maxRetries: 0 });
      await rejectsWith(gone.getThread("t"), "unavailable", 0);
    });

    it("context: messages, text and responses formats", async () => {
      const c = new AgentmemClient({ ...opts, user: "ctx" });
      await c.createThread({ id: "t" });
      await c.appendMessages("t", [
        { role: "user", content: "Plan three days in Lisbon." },
        { role: "assistant", content: "Day 1: Alfama and the castle." },
      ]);
      const ctx = await c.buildContext("t", {
        input: "And on day 2?",
        budget_tokens: 8000,
        model: "gpt-4o",
        format: "messages",
        system: "You are a travel planner.",
      });
      assert.ok("messages" in ctx);
      assert.deepEqual(
        ctx.messages.map((m) => [m.role, m.content]),
        [
          ["system", "You are a travel planner."],
          ["user", "Plan three days in Lisbon."],
          ["assistant", "Day 1: Alfama and the castle."],
          ["user", "And on day 2?"],
        ],
      );
      assert.equal(ctx.telemetry.budget_tokens, 8000);
      const text = await c.buildContext("t", { input: "And on day 2?", format: "text" });
      assert.ok("text" in text && text.text.includes("Alfama"));
      const resp = await c.buildContext("t", { input: "And on day 2?", format: "responses" });
      assert.ok("input" in resp);
      await rejectsWith(c.buildContext("t", { budget_tokens: 1, input: "And on day 2?" }), "unprocessable", 422);
    });

    it("turns: begin a thread, store only what a resent history adds, augment", async () => {
      const c = new AgentmemClient({ ...opts, user: "turn" });
      const ask = { role: "user", content: "Plan three days in Lisbon." } as const;
      let turn = await c.beginTurn({ thread_id: "trip", messages: [ask] });
      // The thread is begun, the message stored as seq 1, a full context built.
      assert.equal(turn.thread?.id, "trip");
      assert.equal(turn.mode, "full");
      assert.deepEqual(
        turn.stored.map((m) => [m.seq, m.content]),
        [[1, "Plan three days in Lisbon."]],
      );
      assert.equal(turn.held, 0);
      assert.ok(turn.context && "messages" in turn.context && turn.context.messages.length > 0);
      assert.equal(turn.context.telemetry.format, "messages");

      const reply = { role: "assistant", content: "Day 1: Alfama." } as const;
      await c.appendMessages("trip", [reply]);
      // The client resends its history with the new turn: only the new
      // turn is stored, and its own messages are kept (augment).
      const { fetch, requests } = recordingFetch();
      turn = await new AgentmemClient({ ...opts, user: "turn", fetch }).beginTurn({
        thread_id: "trip",
        continue: true,
        messages: [ask, reply, { role: "user", content: "And on day 2?" }],
        context: { system: "You plan trips.", budget_tokens: 8000 },
      });
      assert.equal(requests.length, 1);
      assert.equal(requests[0]!.method, "POST");
      assert.equal(new URL(requests[0]!.url).pathname, "/v1/users/turn/turns");
      assert.equal(turn.mode, "augment");
      assert.equal(turn.held, 2);
      assert.deepEqual(
        turn.stored.map((m) => [m.seq, m.content]),
        [[3, "And on day 2?"]],
      );
      assert.ok(turn.context && "messages" in turn.context);
      assert.equal(turn.context.messages.at(-1)?.content, "And on day 2?");
      assert.equal(turn.context.telemetry.budget_tokens, 8000);

      // Without a thread: the agent's active session; mode off builds no context.
      turn = await c.beginTurn({ agent_id: "planner", mode: "off", messages: [{ role: "user", content: "Hi" }] });
      assert.equal(turn.context, undefined);
      assert.equal((await c.getSession("planner")).thread_id, turn.thread?.id);

      const next = { role: "user", content: "And on day 2?" } as const;
      await rejectsWith(c.beginTurn({ thread_id: "nope", continue: true, messages: [next] }), "not_found", 404);
      // A mode the types refuse, as a JavaScript caller may send it.
      await rejectsWith(c.beginTurn({ mode: "sometimes" as "auto", messages: [next] }), "invalid", 400);
      assert.deepEqual(
        (await collect(c.allMessages("trip"))).map((m) => m.seq),
        [1, 2, 3],
      );

      // It is not retried: the turn may have been stored before a 503.
      const once = recordingFetch(
        () =>
          new Response(JSON.stringify({ error: { code: "unavailable", message: "Busy." } }), {
            status: 503,
            headers: { "Content-Type": "application/json", "Retry-After": "0" },
          }),
      );
      await rejectsWith(
        new AgentmemClient({ ...opts, user: "turn", fetch: once.fetch }).beginTurn({ messages: [next] }),
        "unavailable",
        503,
      );
      assert.equal(once.requests.length, 1);
    });

    it("memories and search", async () => {
      const c = new AgentmemClient({ ...opts, user: "mem" });
      const m = await c.createMemory({ text: "User is vegetarian.", category: "preference", agent_id: "planner" });
      assert.equal(m.kind, "fact");
      assert.equal((await c.getMemory(m.id)).text, "User is vegetarian.");
      const up = await c.updateMemory(m.id, { importance: 0.9 });
      assert.equal(up.importance, 0.9);
      assert.ok((await c.getMemoryHistory(m.id)).data.length >= 1);
      assert.deepEqual(
        (await c.listMemories({ category: "preference" })).data.map((x) => x.id),
        [m.id],
      );

      const res = await c.search({ query: "vegetarian dishes", scopes: ["memories"], top_k: 5 });
      assert.equal(res.results[0]?.id, m.id);
      assert.equal(res.results[0]?.kind, "memory");
      const facts = await c.getFacts({ query: "Is the user vegetarian?" });
      assert.ok(
        facts.facts.some((f) => f.id === m.id),
        JSON.stringify(facts),
      );

      const porto = await c.createMemory({ text: "User lives in Porto." });
      const inv = await c.invalidateMemory(porto.id, { reason: "moved to Lisbon" });
      assert.ok(inv.invalid_at);
      assert.deepEqual(
        (await collect(c.allMemories())).map((x) => x.id),
        [m.id],
      );
      assert.equal((await collect(c.allMemories({ include_invalid: true, limit: 1 }))).length, 2);
      await c.deleteMemory(porto.id);
      await rejectsWith(c.getMemory(porto.id), "not_found", 404);
      await rejectsWith(c.search({ query: "" }), "invalid", 400);
    });

    it("profile", async () => {
      const c = new AgentmemClient({ ...opts, user: "prof" });
      await rejectsWith(c.getProfile(), "not_found", 404);
      await c.createMemory({ text: "User lives in Porto." });
      const p = await c.refreshProfile();
      assert.match(p.text, /Porto/);
      assert.equal((await c.getProfile()).version, p.version);
      assert.deepEqual(
        (await collect(c.allProfileVersions())).map((v) => v.version),
        [p.version],
      );
    });

    it("notes: put, edit, versions, conflicts", async () => {
      const c = new AgentmemClient({ ...opts, user: "notes" });
      assert.equal((await c.getNotes("planner")).version, 0);
      const v1 = await c.putNotes("planner", {
        content: "# Alice\n\n## Goals\n- Run a marathon\n",
        expected_version: 0,
      });
      assert.equal(v1.version, 1);
      const v2 = await c.editNotes("planner", {
        operation: "replace_section_by_header",
        section_header: "## Goals",
        content: "- Swim a mile",
        expected_version: 1,
      });
      assert.equal(v2.content, "# Alice\n\n## Goals\n- Swim a mile\n");
      await rejectsWith(
        c.editNotes("planner", { operation: "append", content: "x", expected_version: 1 }),
        "conflict",
        409,
      );
      await rejectsWith(
        c.editNotes("planner", { operation: "delete_section_by_header", section_header: "Nope" }),
        "unprocessable",
        422,
      );
      assert.equal((await c.editNotes("planner", { operation: "read" })).version, 2);
      assert.deepEqual(
        (await collect(c.allNotesHistory("planner"))).map((n) => n.version),
        [2, 1],
      );
    });

    it("entities", async () => {
      const c = new AgentmemClient({ ...opts, user: "ent" });
      await c.createThread({ id: "trip" });
      const e = await c.putEntity({ name: "Task Management", type: "workflow", thread_id: "trip", action: "created" });
      assert.ok(e.aliases.includes("my task"));
      const found = await c.listEntities({ q: "my task workflow" });
      assert.equal(found.data[0]?.id, e.id);
      assert.deepEqual(
        (await collect(c.allEntityThreads(e.id))).map((r) => [r.thread_id, r.action]),
        [["trip", "created"]],
      );
      assert.equal((await collect(c.allThreadEntities("trip")))[0]?.entity_id, e.id);
      const renamed = await c.updateEntity(e.id, { name: "Tasks" });
      assert.equal(renamed.name, "Tasks");
      assert.equal((await c.getEntity(e.id)).name, "Tasks");
      assert.deepEqual(
        (await collect(c.allEntities({ type: "workflow" }))).map((x) => x.id),
        [e.id],
      );
      await c.deleteEntity(e.id);
      await rejectsWith(c.getEntity(e.id), "not_found", 404);
    });

    it("elements and sessions", async () => {
      const c = new AgentmemClient({ ...opts, user: "el" });
      await c.createThread({ id: "t" });
      const [msg] = await c.appendMessages("t", [{ role: "assistant", content: "See the guide." }]);
      const el = await c.createElement("t", {
        type: "text",
        name: "Ref #1",
        content: "Lisbon guide",
        message_id: msg!.id,
      });
      assert.equal(el.thread_id, "t");
      assert.deepEqual(
        (await collect(c.allElements("t", { message_id: msg!.id }))).map((x) => x.id),
        [el.id],
      );
      await rejectsWith(c.getSession("planner"), "not_found", 404);
      const s = await c.getSession("planner", { create: true });
      assert.ok(s.thread_id);
      assert.equal((await c.setSession("planner", "t")).thread_id, "t");
      assert.equal((await c.getSession("planner")).thread_id, "t");
    });

    it("call reaches every operation: health, me, tools, exports, import, erasure", async () => {
      const c = new AgentmemClient({ ...opts, user: "gen" });
      assert.equal(typeof (await c.call("getHealth")), "object");
      assert.equal((await c.me()).kind, "admin");
      assert.ok((await c.call("listTools")).tools.length > 0);
      const doc = await c.call("getOpenAPI");
      assert.equal((doc as { openapi?: string }).openapi?.startsWith("3.1"), true);

      await c.createThread({ id: "t", title: "Export me" });
      await c.appendMessages("t", [{ role: "user", content: "Hello there." }]);
      const md = await c.call("exportThread", { path: { thread: "t" }, query: { format: "markdown" } });
      assert.equal(typeof md, "string");
      assert.match(md as string, /Hello there\./);
      const exp = await c.call("exportThread", { path: { thread: "t" } });
      assert.equal(typeof exp, "object");
      const other = c.forUser("gen2");
      const imported = await other.call("importThread", { body: exp as never });
      assert.equal(imported.id, "t");
      assert.equal((await collect(other.allMessages("t")))[0]?.content, "Hello there.");
      // path.user names another user than the client's.
      assert.equal((await c.call("getThread", { path: { user: "gen2", thread: "t" } })).user_id, "gen2");

      const erased = await c.call("deleteUser", { path: { user: "gen2" } });
      assert.equal(erased.deleted.threads, 1);
      await rejectsWith(other.getThread("t"), "not_found", 404);
    });

    it("user scoping: forUser, and a user route without a user", async () => {
      const alice = new AgentmemClient({ ...opts, user: "scope-a" });
      await alice.createThread({ id: "mine" });
      await rejectsWith(alice.forUser("scope-b").getThread("mine"), "not_found", 404);
      const nobody = new AgentmemClient(opts);
      await assert.rejects(nobody.getThread("mine"), /needs a user/);
      assert.equal((await nobody.call("getThread", { path: { user: "scope-a", thread: "mine" } })).id, "mine");
    });
  });

  describe("client with --auth apikey", () => {
    let server: Server;
    before(async () => {
      server = await startServer(backend, ["--auth", "apikey"]);
    });
    after(() => server?.stop());

    it("keys: create, use, scope, revoke", async () => {
      const anon = new AgentmemClient({ baseUrl: server.baseUrl, user: "alice" });
      await rejectsWith(anon.listThreads(), "unauthorized", 401);
      const admin = new AgentmemClient({ baseUrl: server.baseUrl, apiKey: server.adminKey });
      assert.equal((await admin.me()).via, "apikey");

      const nk = await admin.createKey({ scope: "user:alice", name: "alice-app", expires_in: "90d" });
      assert.match(nk.token, /^am_/);
      assert.deepEqual(nk.key.scope, { kind: "user", user_id: "alice" });
      assert.ok((await collect(admin.allKeys())).some((k) => k.id === nk.key.id));

      const alice = new AgentmemClient({ baseUrl: server.baseUrl, apiKey: nk.token, user: "alice" });
      await alice.createThread({ id: "t" });
      await alice.appendMessages("t", [{ role: "user", content: "hi" }]);
      assert.equal((await alice.me()).user_id, "alice");
      await rejectsWith(alice.forUser("bob").listThreads(), "not_found", 404);
      await rejectsWith(alice.allKeys().next(), "forbidden", 403);
      // The admin reaches alice's thread.
      assert.equal((await admin.forUser("alice").getThread("t")).message_count, 1);

      const revoked = await admin.revokeKey(nk.key.id);
      assert.equal(revoked.id, nk.key.id);
      await rejectsWith(alice.getThread("t"), "unauthorized", 401);
      await waitFor(
        "the audit log",
        async () => (await admin.call("listAuditEvents", { query: { action: "key.revoke" } })).data.length > 0,
      );
    });
  });
});
