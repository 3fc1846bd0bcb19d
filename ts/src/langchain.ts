// Package @agentmem/client/langchain: a LangChain.js chat message history
// kept in an agentmem thread.
import { BaseListChatMessageHistory } from "@langchain/core/chat_history";
import { AIMessage, HumanMessage, SystemMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import type { AgentmemClient } from "./client.js";
import { AgentmemError } from "./errors.js";
import type { Body, ChatMessage, ContextRequest, Message, MessageInput, ToolCall } from "./types.js";

/** AgentmemChatMessageHistoryInput configures an AgentmemChatMessageHistory. */
export interface AgentmemChatMessageHistoryInput {
  /** client calls the agentmem server. */
  client: AgentmemClient;
  /** threadId is the thread that holds the history (RunnableWithMessageHistory's sessionId, say). */
  threadId: string;
  /** user owns the thread; the client's user by default. */
  user?: string;
  /** thread is what a thread created by the history gets: agent_id, title, metadata, tags. */
  thread?: Omit<Body<"createThread">, "id">;
  /**
   * context, when set, makes getMessages answer the thread's context as
   * agentmem builds it for the next model call (the newest messages within
   * budget_tokens, a summary of older ones, what agentmem knows of the
   * user) rather than every message. It suits a RunnableWithMessageHistory
   * with a historyMessagesKey; without one, LangChain counts the history
   * to tell the new messages apart, and a windowed history miscounts.
   */
  context?: Omit<ContextRequest, "format">;
}

// The key in a message's metadata under which the history keeps what
// agentmem's message has no field for (content blocks, additional_kwargs,
// response_metadata, usage_metadata, invalid tool calls, a tool's status),
// so that a message reads back as it was added.
const metadataKey = "langchain";

/**
 * AgentmemChatMessageHistory is a LangChain.js chat message history kept in
 * an agentmem thread, for RunnableWithMessageHistory and anything else that
 * takes a BaseListChatMessageHistory. Human, AI, system and tool messages
 * are the thread's user, assistant, system and tool messages (an AI
 * message's tool calls are the assistant's tool_calls, their args as JSON),
 * so that agentmem searches them, learns memories from them and builds
 * contexts with them. The thread is created at the first addMessages;
 * clear deletes it for good (the memories learned from it stay).
 */
export class AgentmemChatMessageHistory extends BaseListChatMessageHistory {
  lc_namespace = ["langchain", "stores", "message", "agentmem"];

  readonly threadId: string;
  readonly #client: AgentmemClient;
  readonly #thread: Omit<Body<"createThread">, "id">;
  readonly #context: Omit<ContextRequest, "format"> | undefined;

  constructor(fields: AgentmemChatMessageHistoryInput) {
    super(fields);
    this.threadId = fields.threadId;
    this.#client = fields.user ? fields.client.forUser(fields.user) : fields.client;
    this.#thread = fields.thread ?? {};
    this.#context = fields.context;
  }

  /** getMessages answers the thread's messages, oldest first; none when it does not exist yet. */
  async getMessages(): Promise<BaseMessage[]> {
    try {
      if (this.#context !== undefined) {
        const ctx = await this.#client.buildContext(this.threadId, { ...this.#context, format: "messages" });
        return "messages" in ctx ? ctx.messages.map(fromAgentmem) : [];
      }
      const out: BaseMessage[] = [];
      for await (const m of this.#client.allMessages(this.threadId, { limit: 1000 })) {
        out.push(fromAgentmem(m));
      }
      return out;
    } catch (err) {
      if (err instanceof AgentmemError && err.code === "not_found") return [];
      throw err;
    }
  }

  async addMessage(message: BaseMessage): Promise<void> {
    await this.addMessages([message]);
  }

  /** addMessages appends messages to the thread in one atomic batch, creating the thread if need be. */
  override async addMessages(messages: BaseMessage[]): Promise<void> {
    if (messages.length === 0) return;
    const batch = messages.map(toAgentmem);
    // One key for both attempts: the first, refused 404, stored nothing.
    const idempotencyKey = crypto.randomUUID();
    try {
      await this.#client.appendMessages(this.threadId, batch, { idempotencyKey });
      return;
    } catch (err) {
      if (!(err instanceof AgentmemError && err.code === "not_found")) throw err;
    }
    try {
      await this.#client.createThread({ ...this.#thread, id: this.threadId });
    } catch (err) {
      // Created meanwhile by another writer: append to it.
      if (!(err instanceof AgentmemError && err.code === "conflict")) throw err;
    }
    await this.#client.appendMessages(this.threadId, batch, { idempotencyKey });
  }

  /** clear deletes the thread for good; the next addMessages creates it again. */
  override async clear(): Promise<void> {
    try {
      await this.#client.deleteThread(this.threadId, { permanent: true });
    } catch (err) {
      if (!(err instanceof AgentmemError && err.code === "not_found")) throw err;
    }
  }
}

type Extras = {
  content?: unknown;
  additional_kwargs?: Record<string, unknown>;
  response_metadata?: Record<string, unknown>;
  usage_metadata?: unknown;
  invalid_tool_calls?: unknown[];
  status?: string;
};

/**
 * toAgentmem maps a LangChain message to an agentmem message: human to
 * user, ai to assistant, system to system, tool to tool, a ChatMessage by
 * its role. Content blocks are sent as their text, and kept whole in the
 * message's metadata.
 */
export function toAgentmem(m: BaseMessage): MessageInput {
  const extras: Extras = {};
  const out: MessageInput = { role: roleOf(m), content: typeof m.content === "string" ? m.content : m.text };
  if (typeof m.content !== "string") extras.content = m.content;
  if (m.name) out.name = m.name;
  if (nonEmpty(m.additional_kwargs)) extras.additional_kwargs = m.additional_kwargs;
  if (nonEmpty(m.response_metadata)) extras.response_metadata = m.response_metadata;
  if (AIMessage.isInstance(m)) {
    if (m.tool_calls && m.tool_calls.length > 0) {
      out.tool_calls = m.tool_calls.map((c) => ({
        id: c.id ?? "",
        type: "function",
        function: { name: c.name, arguments: JSON.stringify(c.args ?? {}) },
      }));
    }
    if (m.invalid_tool_calls && m.invalid_tool_calls.length > 0) extras.invalid_tool_calls = m.invalid_tool_calls;
    if (m.usage_metadata) extras.usage_metadata = m.usage_metadata;
  }
  if (ToolMessage.isInstance(m)) {
    out.tool_call_id = m.tool_call_id;
    if (m.status) extras.status = m.status;
  }
  if (Object.keys(extras).length > 0) out.metadata = { [metadataKey]: extras };
  return out;
}

/**
 * fromAgentmem maps an agentmem message (of a thread, or of a context) to
 * a LangChain message, toAgentmem's inverse. A tool call whose arguments
 * are not a JSON object becomes an invalid tool call, as LangChain's own
 * parsers make it.
 */
export function fromAgentmem(m: Message | ChatMessage): BaseMessage {
  const meta = "metadata" in m ? m.metadata : undefined;
  const extras = (meta?.[metadataKey] ?? {}) as Extras;
  const fields = {
    content: (extras.content ?? m.content) as string,
    ...(m.name ? { name: m.name } : {}),
    ...("id" in m ? { id: m.id } : {}),
    ...(extras.additional_kwargs ? { additional_kwargs: extras.additional_kwargs } : {}),
    ...(extras.response_metadata ? { response_metadata: extras.response_metadata } : {}),
  };
  switch (m.role) {
    case "user":
      return new HumanMessage(fields);
    case "system":
      return new SystemMessage(fields);
    case "tool":
      return new ToolMessage({
        ...fields,
        tool_call_id: m.tool_call_id ?? "",
        ...(extras.status === "success" || extras.status === "error" ? { status: extras.status } : {}),
      });
    case "assistant": {
      const { valid, invalid } = toolCallsOf(m.tool_calls ?? []);
      const invalidCalls = [...((extras.invalid_tool_calls ?? []) as typeof invalid), ...invalid];
      return new AIMessage({
        ...fields,
        tool_calls: valid,
        ...(invalidCalls.length > 0 ? { invalid_tool_calls: invalidCalls } : {}),
        ...(extras.usage_metadata ? { usage_metadata: extras.usage_metadata as AIMessage["usage_metadata"] } : {}),
      });
    }
  }
}

function toolCallsOf(calls: ToolCall[]) {
  const valid: { id: string; name: string; args: Record<string, unknown>; type: "tool_call" }[] = [];
  const invalid: { id: string; name: string; args: string; error: string; type: "invalid_tool_call" }[] = [];
  for (const c of calls) {
    let args: unknown;
    try {
      args = c.function.arguments === "" ? {} : JSON.parse(c.function.arguments);
    } catch (err) {
      invalid.push({
        id: c.id,
        name: c.function.name,
        args: c.function.arguments,
        error: String(err),
        type: "invalid_tool_call",
      });
      continue;
    }
    if (args === null || typeof args !== "object" || Array.isArray(args)) {
      invalid.push({
        id: c.id,
        name: c.function.name,
        args: c.function.arguments,
        error: "arguments are not a JSON object",
        type: "invalid_tool_call",
      });
      continue;
    }
    valid.push({ id: c.id, name: c.function.name, args: args as Record<string, unknown>, type: "tool_call" });
  }
  return { valid, invalid };
}

// roleOf answers the agentmem role of a LangChain message.
function roleOf(m: BaseMessage): MessageInput["role"] {
  const type = m.type === "generic" ? (m as unknown as { role: string }).role : m.type;
  switch (type) {
    case "human":
    case "user":
      return "user";
    case "ai":
    case "assistant":
      return "assistant";
    case "system":
    case "developer":
      return "system";
    case "tool":
      return "tool";
  }
  throw new TypeError(
    `agentmem: a ${m.type} message${m.type === "generic" ? ` of role ${type}` : ""} has no agentmem role (user, assistant, system or tool)`,
  );
}

function nonEmpty(o: Record<string, unknown> | undefined): o is Record<string, unknown> {
  return o !== undefined && Object.keys(o).length > 0;
}
