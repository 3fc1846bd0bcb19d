// Package @agentmem/client: a typed client of agentmem's REST API, from
// its OpenAPI document (docs/openapi.json). The LangChain.js chat history
// is in @agentmem/client/langchain.
export { AgentmemClient } from "./client.js";
export type { ClientOptions, CallOptions } from "./client.js";
export { AgentmemError } from "./errors.js";
export { operations } from "./generated/operations.js";
export type { components, operations as Operations, paths } from "./generated/openapi.js";
export type * from "./types.js";
