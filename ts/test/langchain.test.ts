import { strict as assert } from "node:assert";
import { after, before, describe, it } from "node:test";
import {
  AIMessage,
  ChatMessage,
  HumanMessage,
  SystemMessage,
  ToolMessage,
  type BaseMessage,
} from "@langchain/core/messages";
import { ChatPromptTemplate, MessagesPlaceholder } from "@langchain/core/prompts";
import { RunnableWithMessageHistory } from "@langchain/core/runnables";
import { FakeChatModel, FakeListChatModel } from "@langchain/core/utils/testing";
import { AgentmemClient } from "../src/index.js";
import { AgentmemChatMessageHistory } from "../src/langchain.js";
import { forEachBackend, startServer, waitFor, type Server } from "./server.js";

// shape is what a test compares of a LangChain message.
function shape(m: BaseMessage) {
  const out: Record<string, unknown> = { type: m.type, content: m.content };
  if (m.name) out.name = m.name;
  if (AIMessage.isInstance(m) && (m.tool_calls?.length ?? 0) > 0) {
    out.tool_calls = m.tool_calls!.map((c) => ({ id: c.id, name: c.name, args: c.args }));
  }
  if (AIMessage.isInstance(m) && (m.invalid_tool_calls?.length ?? 0) > 0) {
    out.invalid_tool_calls = m.invalid_tool_calls!.map((c) => ({ id: c.id, name: c.name, args: c.args }));
  }
  if (ToolMessage.isInstance(m)) {
    out.tool_call_id = m.tool_call_id;
    if (m.status) out.status = m.status;
  }
  return out;
}

forEachBackend((backend) => {
  describe("langchain", () => {
    let server: Server;
    let client: AgentmemClient;
    before(async () => {
      server = await startServer(backend);
      client = new AgentmemClient({ baseUrl: server.baseUrl, user: "lc" });
    });
    after(() => server?.stop());

    it("keeps human, AI (with tool calls), system and tool messages, and reads them back", async () => {
      const history = new AgentmemChatMessageHistory({
        client,
        threadId: "roundtrip",
        thread: { agent_id: "planner", tags: ["lc"] },
      });
      assert.deepEqual(await history.getMessages(), [], "no thread yet: no messages");
      const messages = [
        new SystemMessage("You are a travel planner."),
        new HumanMessage({ content: "Weather in Lisbon?", name: "alice" }),
        new AIMessage({
          content: "",
          tool_calls: [{ id: "c1", name: "weather", args: { city: "Lisbon", days: 3 }, type: "tool_call" }],
        }),
        new ToolMessage({ content: "sunny, 24°C", tool_call_id: "c1", name: "weather", status: "success" }),
        new AIMessage("Sunny all three days."),
      ];
      await history.addMessages(messages);
      await history.addMessage(new HumanMessage("Thanks!"));
      await history.addUserMessage("And Porto?");
      await history.addAIMessage("Cloudy.");

      const got = await history.getMessages();
      assert.deepEqual(
        got.map(shape),
        [...messages, new HumanMessage("Thanks!"), new HumanMessage("And Porto?"), new AIMessage("Cloudy.")].map(shape),
      );
      assert.ok(
        got.every((m) => typeof m.id === "string" && m.id.length > 0),
        "each message has agentmem's ID",
      );

      // As agentmem stores them: roles, tool calls as OpenAI's, in order.
      const stored = [];
      for await (const m of client.allMessages("roundtrip")) stored.push(m);
      assert.deepEqual(
        stored.map((m) => [m.role, m.content]),
        [
          ["system", "You are a travel planner."],
          ["user", "Weather in Lisbon?"],
          ["assistant", ""],
          ["tool", "sunny, 24°C"],
          ["assistant", "Sunny all three days."],
          ["user", "Thanks!"],
          ["user", "And Porto?"],
          ["assistant", "Cloudy."],
        ],
      );
      assert.equal(stored[1]!.name, "alice");
      assert.deepEqual(stored[2]!.tool_calls, [
        { id: "c1", type: "function", function: { name: "weather", arguments: '{"city":"Lisbon","days":3}' } },
      ]);
      assert.equal(stored[3]!.tool_call_id, "c1");
      const th = await client.getThread("roundtrip");
      assert.equal(th.agent_id, "planner");
      assert.deepEqual(th.tags, ["lc"]);
    });

    it("maps content blocks, ChatMessage roles, and tool calls agentmem got from elsewhere", async () => {
      const history = new AgentmemChatMessageHistory({ client, threadId: "blocks" });
      const blocks = new HumanMessage({
        content: [
          { type: "text", text: "What is in " },
          { type: "text", text: "this picture?" },
        ],
      });
      await history.addMessages([
        blocks,
        new ChatMessage("Fine.", "assistant"),
        new ChatMessage("Be brief.", "system"),
      ]);
      const [first] = await client.listMessages("blocks").then((p) => p.data);
      assert.equal(first!.content, "What is in this picture?", "agentmem gets the text");
      const got = await history.getMessages();
      assert.deepEqual(got.map(shape), [
        shape(blocks),
        { type: "ai", content: "Fine." },
        { type: "system", content: "Be brief." },
      ]);
      await assert.rejects(history.addMessage(new ChatMessage("x", "critic")), /critic/);

      // Appended through the API: arguments that are no JSON object are an invalid tool call.
      await client.appendMessages("blocks", [
        {
          role: "assistant",
          content: "",
          tool_calls: [{ id: "c9", type: "function", function: { name: "f", arguments: "not json" } }],
        },
      ]);
      const last = (await history.getMessages()).at(-1)!;
      assert.deepEqual(shape(last), {
        type: "ai",
        content: "",
        invalid_tool_calls: [{ id: "c9", name: "f", args: "not json" }],
      });
    });

    it("clear deletes the thread; the next message creates it again", async () => {
      const history = new AgentmemChatMessageHistory({
        client,
        threadId: "cleared",
        user: "lc-other",
        thread: { title: "Kept title" },
      });
      await history.addMessages([new HumanMessage("one"), new AIMessage("two")]);
      assert.equal((await history.getMessages()).length, 2);
      await history.clear();
      assert.deepEqual(await history.getMessages(), []);
      await history.clear(); // twice is fine
      await history.addMessage(new HumanMessage("three"));
      assert.deepEqual(
        (await history.getMessages()).map((m) => m.content),
        ["three"],
      );
      const th = await client.forUser("lc-other").getThread("cleared");
      assert.equal(th.title, "Kept title");
      assert.equal(th.message_count, 1);
    });

    it("works with RunnableWithMessageHistory (a fake chat model that echoes its prompt)", async () => {
      const prompt = ChatPromptTemplate.fromMessages([
        ["system", "You are terse."],
        new MessagesPlaceholder("history"),
        ["human", "{question}"],
      ]);
      const chain = prompt.pipe(new FakeChatModel({}));
      const withHistory = new RunnableWithMessageHistory({
        runnable: chain,
        getMessageHistory: (sessionId: string) => new AgentmemChatMessageHistory({ client, threadId: sessionId }),
        inputMessagesKey: "question",
        historyMessagesKey: "history",
      });
      const config = { configurable: { sessionId: "runnable" } };
      const first = await withHistory.invoke({ question: "I live in Porto." }, config);
      assert.equal(first.content, "You are terse.\nI live in Porto.");
      const second = await withHistory.invoke({ question: "Where do I live?" }, config);
      // The model saw the first turn, read back from agentmem.
      assert.equal(
        second.content,
        "You are terse.\nI live in Porto.\nYou are terse.\nI live in Porto.\nWhere do I live?",
      );

      const stored = [];
      for await (const m of client.allMessages("runnable")) stored.push([m.role, m.content]);
      assert.deepEqual(stored, [
        ["user", "I live in Porto."],
        ["assistant", "You are terse.\nI live in Porto."],
        ["user", "Where do I live?"],
        ["assistant", second.content],
      ]);

      // agentmem learns from the turns: the memory is found by search.
      await waitFor("the turn's memory", async () => {
        const res = await client.search({ query: "Porto", scopes: ["memories"] });
        return res.results.some((r) => /Porto/.test(r.text));
      });
    });

    it("works with RunnableWithMessageHistory whose input is the messages", async () => {
      const withHistory = new RunnableWithMessageHistory({
        runnable: new FakeListChatModel({ responses: ["Hello!", "Bye!"] }),
        getMessageHistory: (sessionId: string) => new AgentmemChatMessageHistory({ client, threadId: sessionId }),
      });
      const config = { configurable: { sessionId: "list" } };
      await withHistory.invoke([new HumanMessage("Hi")], config);
      await withHistory.invoke([new HumanMessage("Goodbye")], config);
      const history = new AgentmemChatMessageHistory({ client, threadId: "list" });
      assert.deepEqual(
        (await history.getMessages()).map((m) => [m.type, m.content]),
        [
          ["human", "Hi"],
          ["ai", "Hello!"],
          ["human", "Goodbye"],
          ["ai", "Bye!"],
        ],
      );
    });

    it("with context, reads the thread's context window instead of every message", async () => {
      const full = new AgentmemChatMessageHistory({ client, threadId: "long" });
      const turns: BaseMessage[] = [];
      for (let i = 0; i < 30; i++) {
        turns.push(
          new HumanMessage(`Question ${i}: ${"tell me more about the city ".repeat(10)}`),
          new AIMessage(`Answer ${i}.`),
        );
      }
      await full.addMessages(turns);
      const windowed = new AgentmemChatMessageHistory({
        client,
        threadId: "long",
        context: { strategy: "trim", budget_tokens: 400 },
      });
      const got = await windowed.getMessages();
      assert.ok(got.length > 0 && got.length < 60, `${got.length} messages within 400 tokens`);
      assert.equal(got.at(-1)!.content, "Answer 29.", "the newest message is in the window");
      assert.deepEqual(
        await new AgentmemChatMessageHistory({ client, threadId: "none", context: {} }).getMessages(),
        [],
      );
    });
  });
});
