// The types of the client, derived from the generated ones
// (src/generated/openapi.ts), so that they follow docs/openapi.json.
import type { components, operations } from "./generated/openapi.js";
import type { OperationID } from "./generated/operations.js";

export type { OperationID };

/** Schemas holds the document's named schemas: Schemas["Thread"], … */
export type Schemas = components["schemas"];

type Op<K extends OperationID> = operations[K];

// Defined keeps the keys of T whose type is not never (openapi-typescript
// writes `query?: never` for an operation without query parameters).
type Defined<T> = { [P in keyof T as [Exclude<T[P], undefined>] extends [never] ? never : P]: T[P] };

// WithDefaultUser makes a path's user optional, and the path too when
// user is all it holds: the client fills in its own user when the call
// names none.
type UserOptional<Path> = Omit<Path, "user"> & { user?: string };
type WithDefaultUser<P> = P extends { path: { user: string } }
  ? Omit<P, "path"> &
      ({} extends Omit<P["path"], "user"> ? { path?: UserOptional<P["path"]> } : { path: UserOptional<P["path"]> })
  : P;

type BodyOf<O extends { requestBody?: unknown }> = [NonNullable<O["requestBody"]>] extends [never]
  ? {}
  : NonNullable<O["requestBody"]> extends { content: { "application/json": infer B } }
    ? undefined extends O["requestBody"]
      ? { body?: B }
      : { body: B }
    : {};

/**
 * Params are the parameters of an operation, as the document declares
 * them: `path`, `query` and `header` objects, and the JSON `body`. The
 * path's `user` may be left out when the client has a user.
 */
export type Params<K extends OperationID> = WithDefaultUser<Defined<Omit<Op<K>["parameters"], "cookie">>> &
  BodyOf<Op<K>>;

/** Body is the JSON request body of an operation. */
export type Body<K extends OperationID> =
  Op<K> extends { requestBody?: { content: { "application/json": infer B } } } ? B : never;

/** Query is the query parameters of an operation. */
export type Query<K extends OperationID> = NonNullable<Op<K>["parameters"]["query"]>;

type SuccessStatus = 200 | 201 | 202 | 203 | 204;

// Content is what a response carries: the type of its body (the union of
// its media types' bodies: an export is JSON or, with format=markdown, a
// string), or void when it has none.
type Content<R> = R extends { content?: infer C }
  ? [NonNullable<C>] extends [never]
    ? void
    : NonNullable<C>[keyof NonNullable<C>]
  : void;

/** Result is what an operation answers on success. */
export type Result<K extends OperationID> = {
  [S in keyof Op<K>["responses"]]: S extends SuccessStatus ? Content<Op<K>["responses"][S]> : never;
}[keyof Op<K>["responses"]];

/** Item is the type of a list operation's items (its page's `data`). */
export type Item<K extends OperationID> = Result<K> extends { data: (infer T)[]; next_cursor: string } ? T : never;

/** ListOperationID names the operations that answer pages of a list. */
export type ListOperationID = { [K in OperationID]: [Item<K>] extends [never] ? never : K }[OperationID];

/** ErrorCode is one of the codes of the API's errors. */
export type ErrorCode = Schemas["ErrorDetail"]["code"];

// The domain types, by their names in the document.
export type Thread = Schemas["Thread"];
export type ThreadPage = Schemas["ThreadPage"];
export type Message = Schemas["Message"];
export type MessageInput = Schemas["MessageInput"];
export type MessagePage = Schemas["MessagePage"];
export type ToolCall = Schemas["ToolCall"];
export type ChatMessage = Schemas["ChatMessage"];
export type Context = Schemas["Context"];
export type ContextRequest = Schemas["ContextRequest"];
export type TurnRequest = Schemas["TurnRequest"];
export type Turn = Schemas["Turn"];
export type SearchRequest = Schemas["SearchRequest"];
export type SearchResponse = Schemas["SearchResponse"];
export type SearchResult = Schemas["SearchResult"];
export type FactsResponse = Schemas["FactsResponse"];
export type Memory = Schemas["Memory"];
export type MemoryInput = Schemas["MemoryInput"];
export type MemoryUpdate = Schemas["MemoryUpdate"];
export type Profile = Schemas["Profile"];
export type Notes = Schemas["Notes"];
export type NotesOp = Schemas["NotesOp"];
export type Entity = Schemas["Entity"];
export type EntityInput = Schemas["EntityInput"];
export type EntityRef = Schemas["EntityRef"];
export type Element = Schemas["Element"];
export type ElementInput = Schemas["ElementInput"];
export type Session = Schemas["Session"];
export type APIKey = Schemas["APIKey"];
export type NewKey = Schemas["NewKey"];
export type Caller = Schemas["Caller"];
