// Compile-time checks of the client's types (tsc fails when one breaks):
// parameters and results follow docs/openapi.json.
import { strict as assert } from "node:assert";
import { test } from "node:test";
import type { AgentmemClient, Message, Result, Thread, Turn } from "../src/index.js";

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
function expectType<T extends true>(_: T) {}

// Never called: tsc checks it.
async function typeChecks(c: AgentmemClient) {
  const th = await c.call("getThread", { path: { thread: "t" } });
  expectType<Equal<typeof th, Thread>>(true);
  expectType<Equal<Result<"deleteThread">, void>>(true);
  expectType<Equal<Result<"exportThread">, string | import("../src/index.js").Schemas["ThreadExport"]>>(true);
  const msgs = await c.appendMessages("t", [{ role: "user", content: "hi" }]);
  expectType<Equal<typeof msgs, Message[]>>(true);
  for await (const m of c.paginate("listMessages", { path: { thread: "t" }, query: { limit: 2 } })) {
    expectType<Equal<typeof m, Message>>(true);
  }
  await c.call("getProfile"); // the path's user is the client's
  const turn = await c.beginTurn({ thread_id: "t", messages: [{ role: "user", content: "hi" }] });
  expectType<Equal<typeof turn, Turn>>(true);
  expectType<Equal<typeof turn.stored, Message[]>>(true);
  // @ts-expect-error the thread is required
  await c.call("getThread", { path: {} });
  // @ts-expect-error an unknown operation
  await c.call("getThreads", {});
  // @ts-expect-error a role the API does not take
  await c.appendMessages("t", [{ role: "robot", content: "hi" }]);
  // @ts-expect-error a turn needs its messages
  await c.beginTurn({ thread_id: "t" });
  // @ts-expect-error search needs a query
  await c.search({ top_k: 5 });
  // @ts-expect-error listThreads takes no such parameter
  await c.listThreads({ colour: "red" });
  // @ts-expect-error getThread is no list
  c.paginate("getThread", { path: { thread: "t" } });
}

test("the types are checked by tsc", () => {
  assert.equal(typeof typeChecks, "function");
});
