import { AgentmemError, errorFromResponse } from "./errors.js";
import { operations } from "./generated/operations.js";
import type {
  APIKey,
  Body,
  Caller,
  Context,
  ContextRequest,
  Element,
  ElementInput,
  Entity,
  EntityInput,
  FactsResponse,
  Item,
  ListOperationID,
  Memory,
  MemoryInput,
  MemoryUpdate,
  Message,
  MessageInput,
  NewKey,
  Notes,
  NotesOp,
  OperationID,
  Params,
  Profile,
  Query,
  Result,
  SearchRequest,
  SearchResponse,
  Session,
  Thread,
  Turn,
  TurnRequest,
} from "./types.js";

/** ClientOptions configure an AgentmemClient. */
export interface ClientOptions {
  /** baseUrl is the server's root, e.g. http://127.0.0.1:8080. */
  baseUrl: string;
  /** apiKey, when set, is sent as `Authorization: Bearer apiKey`. */
  apiKey?: string;
  /** user is the user of the user routes (/v1/users/{user}/…) when a call names none. */
  user?: string;
  /** maxRetries is how often an idempotent call is retried after its first attempt (3; 0 for none). */
  maxRetries?: number;
  /** retryBaseDelayMs is the back-off before the first retry (250); it doubles up to retryMaxDelayMs. */
  retryBaseDelayMs?: number;
  /** retryMaxDelayMs caps the back-off (10000); a Retry-After longer than it is not waited for. */
  retryMaxDelayMs?: number;
  /** headers are sent with every request. */
  headers?: Record<string, string>;
  /** fetch sends the requests (globalThis.fetch by default). */
  fetch?: typeof fetch;
}

/** CallOptions apply to one call. */
export interface CallOptions {
  /** signal aborts the call, retries included. */
  signal?: AbortSignal;
  /** headers are sent with this call's request. */
  headers?: Record<string, string>;
  /**
   * idempotent says whether the call may be retried (see AgentmemClient);
   * by default the client decides from the operation.
   */
  idempotent?: boolean;
}

// ParamsArg makes the params argument optional when nothing in it is required.
type ParamsArg<K extends OperationID> = {} extends Params<K> ? [params?: Params<K>] : [params: Params<K>];

// The POSTs that change nothing when sent twice, so may be retried like a
// GET, PUT or DELETE (as the Go client does): a second build, search, end,
// restore or invalidation answers what the first did.
const idempotentPosts: ReadonlySet<OperationID> = new Set<OperationID>([
  "buildContext",
  "search",
  "getFacts",
  "endThread",
  "restoreThread",
  "invalidateMemory",
]);

/**
 * AgentmemClient calls an agentmem server's REST API.
 *
 * `call(operationId, params)` reaches every operation of docs/openapi.json;
 * named methods cover the common ones, for the client's `user` (`forUser`
 * gives a client of another user), and `all…` methods iterate over a list
 * across its pages.
 *
 * Failures throw AgentmemError with the API's code, status and message.
 * Idempotent calls (GET, PUT and DELETE; the POSTs that change nothing
 * twice: context, search, facts, end, restore, invalidate; appends, which
 * always carry an Idempotency-Key) are retried when the server could not
 * be reached or answered 429, 502, 503 or 504, after what its Retry-After
 * asks or an exponential back-off. Other calls are sent once: a retry could
 * store twice what the first attempt stored before its answer was lost.
 */
export class AgentmemClient {
  readonly baseUrl: string;
  readonly user: string | undefined;
  readonly #options: ClientOptions;

  constructor(options: ClientOptions) {
    this.#options = { ...options };
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.user = options.user;
  }

  /** forUser returns a client like this one whose calls are for user. */
  forUser(user: string): AgentmemClient {
    return new AgentmemClient({ ...this.#options, user });
  }

  /**
   * call sends the operation operationId with its parameters and answers
   * its result: the decoded JSON, a string for a text answer (metrics, a
   * Markdown export), undefined for 204.
   */
  async call<K extends OperationID>(
    operationId: K,
    ...args: [...ParamsArg<K>, options?: CallOptions]
  ): Promise<Result<K>> {
    const params = (args[0] ?? {}) as {
      path?: Record<string, unknown>;
      query?: Record<string, unknown>;
      header?: Record<string, unknown>;
      body?: unknown;
    };
    const options = (args[1] ?? {}) as CallOptions;
    const op = operations[operationId];
    if (op === undefined) {
      throw new TypeError(`agentmem: unknown operation ${String(operationId)}`);
    }
    const url = this.#url(op.path, params.path ?? {}, params.query ?? {});
    const headers: Record<string, string> = { Accept: "application/json", ...this.#options.headers };
    if (this.#options.apiKey) {
      headers["Authorization"] = `Bearer ${this.#options.apiKey}`;
    }
    for (const [k, v] of Object.entries(params.header ?? {})) {
      if (v !== undefined && v !== null) headers[k] = String(v);
    }
    Object.assign(headers, options.headers);
    let body: string | undefined;
    if (op.body && params.body !== undefined) {
      headers["Content-Type"] = "application/json";
      body = JSON.stringify(params.body);
    }
    const idempotent = options.idempotent ?? this.#idempotent(operationId, op.method, headers);
    const resp = await this.#send(
      `${op.method} ${op.path}`,
      url,
      { method: op.method, headers, body, signal: options.signal },
      idempotent,
    );
    if (!resp.ok) {
      throw await errorFromResponse(resp);
    }
    if (resp.status === 204) {
      await resp.body?.cancel();
      return undefined as Result<K>;
    }
    const text = await resp.text();
    const type = resp.headers.get("Content-Type") ?? "";
    if (/^application\/([\w.+-]*\+)?json/i.test(type)) {
      return JSON.parse(text) as Result<K>;
    }
    return text as unknown as Result<K>;
  }

  /**
   * paginate iterates over the items of a list operation from params'
   * cursor on, following next_cursor page by page.
   */
  async *paginate<K extends ListOperationID>(
    operationId: K,
    ...args: [...ParamsArg<K>, options?: CallOptions]
  ): AsyncGenerator<Item<K>, void, undefined> {
    const params = (args[0] ?? {}) as { query?: { cursor?: string } };
    const options = args[1] as CallOptions | undefined;
    const call = this.call as (id: K, params: unknown, options?: CallOptions) => Promise<unknown>;
    let cursor = params.query?.cursor ?? "";
    for (;;) {
      const query = { ...params.query, cursor: cursor || undefined };
      const page = (await call.call(this, operationId, { ...params, query }, options)) as {
        data: Item<K>[];
        next_cursor: string;
      };
      yield* page.data;
      if (!page.next_cursor) return;
      if (page.next_cursor === cursor) {
        throw new AgentmemError(
          "internal",
          "The server answered the same next cursor again; stopping rather than looping.",
          0,
        );
      }
      cursor = page.next_cursor;
    }
  }

  // Threads.

  /** createThread creates a thread (its id, agent_id, title, metadata and tags are optional). */
  createThread(thread: Body<"createThread"> = {}, options?: CallOptions): Promise<Thread> {
    return this.call("createThread", { body: thread }, options);
  }

  getThread(threadId: string, options?: CallOptions): Promise<Thread> {
    return this.call("getThread", { path: { thread: threadId } }, options);
  }

  /** updateThread changes a thread's title, metadata, tags, agent or status; absent fields stay. */
  updateThread(threadId: string, update: Body<"updateThread">, options?: CallOptions): Promise<Thread> {
    return this.call("updateThread", { path: { thread: threadId }, body: update }, options);
  }

  /** deleteThread deletes a thread softly (it can be restored), or for good with permanent. */
  async deleteThread(threadId: string, query?: Query<"deleteThread">, options?: CallOptions): Promise<void> {
    await this.call("deleteThread", { path: { thread: threadId }, query }, options);
  }

  restoreThread(threadId: string, options?: CallOptions): Promise<Thread> {
    return this.call("restoreThread", { path: { thread: threadId } }, options);
  }

  /** endThread ends a thread: its summary and reflection are written in the background. */
  endThread(threadId: string, options?: CallOptions): Promise<Thread> {
    return this.call("endThread", { path: { thread: threadId } }, options);
  }

  /** listThreads answers a page of the user's threads, newest updated first. */
  listThreads(query?: Query<"listThreads">, options?: CallOptions) {
    return this.call("listThreads", { query }, options);
  }

  allThreads(query?: Query<"listThreads">, options?: CallOptions): AsyncGenerator<Thread, void, undefined> {
    return this.paginate("listThreads", { query }, options);
  }

  // Messages.

  /**
   * appendMessages appends a batch of messages to a thread, atomically, and
   * answers them as stored (IDs, seqs, token counts). The batch carries an
   * Idempotency-Key, options.idempotencyKey or a new random one, so that
   * retries of this call store it once.
   */
  async appendMessages(
    threadId: string,
    messages: MessageInput[],
    options?: CallOptions & { idempotencyKey?: string },
  ): Promise<Message[]> {
    const key = options?.idempotencyKey ?? crypto.randomUUID();
    const out = await this.call(
      "appendMessages",
      { path: { thread: threadId }, header: { "Idempotency-Key": key }, body: { messages } },
      options,
    );
    return out.messages;
  }

  /** listMessages answers a page of a thread's messages, oldest first (order=desc: newest first). */
  listMessages(threadId: string, query?: Query<"listMessages">, options?: CallOptions) {
    return this.call("listMessages", { path: { thread: threadId }, query }, options);
  }

  allMessages(
    threadId: string,
    query?: Query<"listMessages">,
    options?: CallOptions,
  ): AsyncGenerator<Message, void, undefined> {
    return this.paginate("listMessages", { path: { thread: threadId }, query }, options);
  }

  // Context, search and facts.

  /** buildContext builds the context of a thread's next model call within a token budget. */
  buildContext(threadId: string, request: ContextRequest = {}, options?: CallOptions): Promise<Context> {
    return this.call("buildContext", { path: { thread: threadId }, body: request }, options);
  }

  /**
   * beginTurn is what agentmem's OpenAI proxy does before it calls the
   * model, for an app that calls its model itself. It finds the thread
   * (thread_id, begun when it does not exist, not_found instead with
   * continue; without one, the active session of agent_id), stores the
   * messages the thread does not hold yet (a resent history stores only
   * what follows the thread's newest messages), and answers the thread,
   * the messages stored, how many it held already and the context of the
   * mode (auto, full, augment or off: none), in the messages format.
   * Append the model's reply afterwards (appendMessages(turn.thread.id, …)).
   * It is not retried: its messages may have been stored before an answer
   * was lost.
   */
  beginTurn(request: TurnRequest, options?: CallOptions): Promise<Turn> {
    return this.call("beginTurn", { body: request }, options);
  }

  /** search searches the user's memories, messages, chunks and summaries. */
  search(request: SearchRequest, options?: CallOptions): Promise<SearchResponse> {
    return this.call("search", { body: request }, options);
  }

  /** getFacts answers a question from what is known about the user, citing its facts. */
  getFacts(request: SearchRequest, options?: CallOptions): Promise<FactsResponse> {
    return this.call("getFacts", { body: request }, options);
  }

  // Memories.

  createMemory(memory: MemoryInput, options?: CallOptions): Promise<Memory> {
    return this.call("createMemory", { body: memory }, options);
  }

  getMemory(memoryId: string, options?: CallOptions): Promise<Memory> {
    return this.call("getMemory", { path: { memory: memoryId } }, options);
  }

  updateMemory(memoryId: string, update: MemoryUpdate, options?: CallOptions): Promise<Memory> {
    return this.call("updateMemory", { path: { memory: memoryId }, body: update }, options);
  }

  async deleteMemory(memoryId: string, options?: CallOptions): Promise<void> {
    await this.call("deleteMemory", { path: { memory: memoryId } }, options);
  }

  /** invalidateMemory marks a memory as no longer holding; it is kept, with its history. */
  invalidateMemory(
    memoryId: string,
    invalidation: Body<"invalidateMemory"> = {},
    options?: CallOptions,
  ): Promise<Memory> {
    return this.call("invalidateMemory", { path: { memory: memoryId }, body: invalidation }, options);
  }

  getMemoryHistory(memoryId: string, options?: CallOptions) {
    return this.call("getMemoryHistory", { path: { memory: memoryId } }, options);
  }

  listMemories(query?: Query<"listMemories">, options?: CallOptions) {
    return this.call("listMemories", { query }, options);
  }

  allMemories(query?: Query<"listMemories">, options?: CallOptions): AsyncGenerator<Memory, void, undefined> {
    return this.paginate("listMemories", { query }, options);
  }

  // Profile.

  getProfile(options?: CallOptions): Promise<Profile> {
    return this.call("getProfile", {}, options);
  }

  /** refreshProfile synthesises the user's profile now. */
  refreshProfile(options?: CallOptions): Promise<Profile> {
    return this.call("refreshProfile", {}, options);
  }

  allProfileVersions(options?: CallOptions): AsyncGenerator<Profile, void, undefined> {
    return this.paginate("listProfileVersions", {}, options);
  }

  // An agent's notes about the user.

  getNotes(agentId: string, options?: CallOptions): Promise<Notes> {
    return this.call("getNotes", { path: { agent: agentId } }, options);
  }

  /** putNotes overwrites the notes; with expected_version, only if nobody wrote since (409 otherwise). */
  putNotes(agentId: string, notes: Body<"putNotes">, options?: CallOptions): Promise<Notes> {
    return this.call("putNotes", { path: { agent: agentId }, body: notes }, options);
  }

  /** editNotes applies one operation (append, replace_section_by_header, …) to the notes. */
  editNotes(agentId: string, op: NotesOp, options?: CallOptions): Promise<Notes> {
    const idempotent = op.operation === undefined || op.operation === "read";
    return this.call("editNotes", { path: { agent: agentId }, body: op }, { idempotent, ...options });
  }

  allNotesHistory(agentId: string, options?: CallOptions): AsyncGenerator<Notes, void, undefined> {
    return this.paginate("listNotesHistory", { path: { agent: agentId } }, options);
  }

  // Entities.

  /** putEntity creates an entity, or merges into the user's entity of that name. */
  putEntity(entity: EntityInput, options?: CallOptions): Promise<Entity> {
    return this.call("putEntity", { body: entity }, options);
  }

  getEntity(entityId: string, options?: CallOptions): Promise<Entity> {
    return this.call("getEntity", { path: { entity: entityId } }, options);
  }

  updateEntity(entityId: string, update: Body<"updateEntity">, options?: CallOptions): Promise<Entity> {
    return this.call("updateEntity", { path: { entity: entityId }, body: update }, options);
  }

  async deleteEntity(entityId: string, options?: CallOptions): Promise<void> {
    await this.call("deleteEntity", { path: { entity: entityId } }, options);
  }

  listEntities(query?: Query<"listEntities">, options?: CallOptions) {
    return this.call("listEntities", { query }, options);
  }

  allEntities(query?: Query<"listEntities">, options?: CallOptions): AsyncGenerator<Entity, void, undefined> {
    return this.paginate("listEntities", { query }, options);
  }

  allEntityThreads(entityId: string, query?: Query<"listEntityThreads">, options?: CallOptions) {
    return this.paginate("listEntityThreads", { path: { entity: entityId }, query }, options);
  }

  allThreadEntities(threadId: string, query?: Query<"listThreadEntities">, options?: CallOptions) {
    return this.paginate("listThreadEntities", { path: { thread: threadId }, query }, options);
  }

  // Elements and sessions.

  /** createElement attaches a citation or file reference to a thread, or to one of its messages. */
  createElement(threadId: string, element: ElementInput, options?: CallOptions): Promise<Element> {
    return this.call("createElement", { path: { thread: threadId }, body: element }, options);
  }

  allElements(
    threadId: string,
    query?: Query<"listElements">,
    options?: CallOptions,
  ): AsyncGenerator<Element, void, undefined> {
    return this.paginate("listElements", { path: { thread: threadId }, query }, options);
  }

  /** getSession answers the active thread of the user and agent; with create, makes one if none. */
  getSession(agentId: string, query?: Query<"getSession">, options?: CallOptions): Promise<Session> {
    return this.call("getSession", { path: { agent: agentId }, query }, options);
  }

  setSession(agentId: string, threadId: string, options?: CallOptions): Promise<Session> {
    return this.call("setSession", { path: { agent: agentId }, body: { thread_id: threadId } }, options);
  }

  // The caller and API keys (admin).

  /** me answers who the caller is. */
  me(options?: CallOptions): Promise<Caller> {
    return this.call("getMe", {}, options);
  }

  /** createKey creates an API key; its token is in the answer, once. */
  createKey(key: Body<"createKey">, options?: CallOptions): Promise<NewKey> {
    return this.call("createKey", { body: key }, options);
  }

  allKeys(query?: Query<"listKeys">, options?: CallOptions): AsyncGenerator<APIKey, void, undefined> {
    return this.paginate("listKeys", { query }, options);
  }

  revokeKey(keyId: string, options?: CallOptions): Promise<APIKey> {
    return this.call("revokeKey", { path: { key: keyId } }, options);
  }

  // #url returns the URL of a path template with its parameters, the
  // client's user standing for a missing {user}, and the query: an array
  // value repeats its parameter, undefined and null leave it out.
  #url(template: string, path: Record<string, unknown>, query: Record<string, unknown>): string {
    const p = template.replace(/\{([^}]+)\}/g, (_, name: string) => {
      const v = path[name] ?? (name === "user" ? this.user : undefined);
      if (v === undefined || v === null || v === "") {
        throw new TypeError(
          name === "user"
            ? `agentmem: ${template} needs a user: give the client one (new AgentmemClient({ user }) or forUser) or path.user`
            : `agentmem: ${template} needs path.${name}`,
        );
      }
      return encodeURIComponent(String(v));
    });
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) {
      for (const item of Array.isArray(v) ? v : [v]) {
        if (item !== undefined && item !== null) q.append(k, String(item));
      }
    }
    const qs = q.toString();
    return this.baseUrl + p + (qs ? "?" + qs : "");
  }

  #idempotent(operationId: OperationID, method: string, headers: Record<string, string>): boolean {
    if (method === "GET" || method === "PUT" || method === "DELETE") return true;
    if (operationId === "appendMessages") {
      return Object.keys(headers).some((h) => h.toLowerCase() === "idempotency-key");
    }
    return idempotentPosts.has(operationId);
  }

  // #send sends a request, retrying it as the class's doc says when it is
  // idempotent, and answers the last response.
  async #send(
    what: string,
    url: string,
    init: RequestInit & { signal?: AbortSignal | undefined },
    idempotent: boolean,
  ): Promise<Response> {
    const doFetch = this.#options.fetch ?? globalThis.fetch;
    const retries = idempotent ? Math.max(this.#options.maxRetries ?? 3, 0) : 0;
    for (let n = 0; ; n++) {
      let resp: Response;
      try {
        resp = await doFetch(url, init);
      } catch (err) {
        if (init.signal?.aborted) throw err;
        if (n < retries) {
          await sleep(this.#backoff(n), init.signal);
          continue;
        }
        throw new AgentmemError(
          "unavailable",
          `${what}: the server could not be reached: ${String((err as Error)?.message ?? err)}`,
          0,
          { cause: err },
        );
      }
      if (n < retries && retryable(resp.status)) {
        const delay = this.#retryDelay(resp.headers.get("Retry-After"), n);
        if (delay !== undefined) {
          await resp.body?.cancel();
          await sleep(delay, init.signal);
          continue;
        }
      }
      return resp;
    }
  }

  // #retryDelay answers the wait before retry n+1: what Retry-After asks,
  // or undefined when that is longer than retryMaxDelayMs (the caller then
  // learns at once), or the back-off.
  #retryDelay(retryAfter: string | null, n: number): number | undefined {
    const most = this.#options.retryMaxDelayMs ?? 10_000;
    if (retryAfter) {
      let ms = Number.NaN;
      if (/^\d+$/.test(retryAfter.trim())) ms = Number(retryAfter) * 1000;
      else if (!Number.isNaN(Date.parse(retryAfter))) ms = Math.max(Date.parse(retryAfter) - Date.now(), 0);
      if (!Number.isNaN(ms)) return ms <= most ? ms : undefined;
    }
    return this.#backoff(n);
  }

  // #backoff answers the wait before retry n+1: retryBaseDelayMs doubled n
  // times, at most retryMaxDelayMs, half of it random (so that clients that
  // failed together do not retry together).
  #backoff(n: number): number {
    const base = this.#options.retryBaseDelayMs ?? 250;
    const most = this.#options.retryMaxDelayMs ?? 10_000;
    const d = Math.min(base * 2 ** n, most);
    return d / 2 + Math.random() * (d / 2);
  }
}

/** retryable reports whether an answer may be retried: refused before anything was done, or unavailable for now. */
function retryable(status: number): boolean {
  return status === 429 || status === 502 || status === 503 || status === 504;
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const t = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
