import type { ErrorCode } from "./types.js";

/**
 * AgentmemError is a failed call: the API's error (`code`, `message`, and
 * the HTTP `status`), or a server that could not be reached (code
 * "unavailable", status 0, the network error as `cause`).
 */
export class AgentmemError extends Error {
  /** code is the API's error code: "not_found", "conflict", "invalid", … */
  readonly code: ErrorCode;
  /** status is the HTTP status; 0 when no answer came. */
  readonly status: number;
  /** requestId is the answer's X-Request-ID, to find the request in the server's log. */
  readonly requestId: string | undefined;

  constructor(code: ErrorCode, message: string, status: number, options?: { requestId?: string; cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = "AgentmemError";
    this.code = code;
    this.status = status;
    this.requestId = options?.requestId;
  }
}

/**
 * codeOf returns the code of an answer that is not the API's error body
 * (from a proxy on the way, say), from its status.
 */
export function codeOf(status: number): ErrorCode {
  switch (status) {
    case 400:
    case 415:
      return "invalid";
    case 401:
      return "unauthorized";
    case 403:
      return "forbidden";
    case 404:
      return "not_found";
    case 409:
      return "conflict";
    case 413:
    case 414:
      return "too_large";
    case 422:
      return "unprocessable";
    case 429:
      return "rate_limited";
    case 502:
    case 503:
    case 504:
      return "unavailable";
    default:
      return "internal";
  }
}

/** errorFromResponse reads a non-2xx answer into an AgentmemError. */
export async function errorFromResponse(resp: Response): Promise<AgentmemError> {
  const requestId = resp.headers.get("X-Request-ID") ?? undefined;
  const text = await resp.text().catch(() => "");
  try {
    const body = JSON.parse(text) as { error?: { code?: unknown; message?: unknown } };
    const { code, message } = body.error ?? {};
    if (typeof code === "string" && typeof message === "string") {
      return new AgentmemError(code as ErrorCode, message, resp.status, { requestId });
    }
  } catch {
    // Not the API's body: described below.
  }
  const start = text.length > 200 ? text.slice(0, 200) + "…" : text;
  const message = `HTTP ${resp.status}${start ? ": " + start : ""}`;
  return new AgentmemError(codeOf(resp.status), message, resp.status, { requestId });
}
