// A LangChain.js chain whose chat history is an agentmem thread: each
// turn is stored in agentmem, which learns the user's memories from it,
// and the next turn's prompt carries the history read back from it.
//
//   agentmem serve                                     # http://127.0.0.1:8080
//   (cd ../../ts && npm ci && npm run build) && npm install && node main.mjs
//
// AGENTMEM_URL and AGENTMEM_API_KEY (for serve --auth apikey) say which
// server. The model is a fake that echoes its prompt, so that the example
// needs no key: put your own chat model (ChatOpenAI, …) in its place.
import { AgentmemClient } from "@agentmem/client";
import { AgentmemChatMessageHistory } from "@agentmem/client/langchain";
import {
  ChatPromptTemplate,
  MessagesPlaceholder,
} from "@langchain/core/prompts";
import { RunnableWithMessageHistory } from "@langchain/core/runnables";
import { FakeChatModel } from "@langchain/core/utils/testing";

const client = new AgentmemClient({
  baseUrl: process.env.AGENTMEM_URL ?? "http://127.0.0.1:8080",
  apiKey: process.env.AGENTMEM_API_KEY,
  user: "alice",
});

const prompt = ChatPromptTemplate.fromMessages([
  ["system", "You are a travel planner."],
  new MessagesPlaceholder("history"),
  ["human", "{question}"],
]);
const model = new FakeChatModel({}); // your chat model here
const chain = new RunnableWithMessageHistory({
  runnable: prompt.pipe(model),
  getMessageHistory: (sessionId) =>
    new AgentmemChatMessageHistory({
      client,
      threadId: sessionId,
      thread: { agent_id: "planner" },
    }),
  inputMessagesKey: "question",
  historyMessagesKey: "history",
});

const threadId = `lisbon-${Date.now()}`;
const config = { configurable: { sessionId: threadId } };
await chain.invoke(
  { question: "I'm vegetarian. Plan three days in Lisbon." },
  config,
);
const answer = await chain.invoke({ question: "And on day 2?" }, config);
console.log(
  `The model's second prompt, with the history from agentmem:\n${answer.content}\n`,
);

// The thread as agentmem keeps it.
for await (const m of client.allMessages(threadId)) {
  console.log(`${m.seq} ${m.role}: ${m.content.split("\n")[0]}`);
}

// What agentmem learned from it, once its background indexing is done.
let found = [];
for (let i = 0; i < 150 && found.length === 0; i++) {
  ({ results: found } = await client.search({
    query: "vegetarian",
    scopes: ["memories"],
  }));
  if (found.length === 0) await new Promise((r) => setTimeout(r, 200));
}
console.log(
  `\nMemories about "vegetarian": ${found.map((r) => r.text).join("; ") || "none yet"}`,
);
