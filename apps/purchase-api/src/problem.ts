import type { Context } from "hono";

export const errorStatus = {
  INVALID_REQUEST: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  PAYLOAD_TOO_LARGE: 413,
  SOLD_OUT: 409,
  ALREADY_PURCHASED: 409,
  IDEMPOTENCY_KEY_REUSED: 409,
  ACTIVITY_NOT_OPEN: 409,
  INVALID_STATE: 409,
  RATE_LIMITED: 429,
  UNAVAILABLE: 503,
  INTERNAL: 500,
} as const;

export type ErrorCode = keyof typeof errorStatus;

const titles: Record<ErrorCode, string> = {
  INVALID_REQUEST: "Invalid request",
  UNAUTHORIZED: "Unauthorized",
  FORBIDDEN: "Forbidden",
  NOT_FOUND: "Not found",
  PAYLOAD_TOO_LARGE: "Payload too large",
  SOLD_OUT: "Sold out",
  ALREADY_PURCHASED: "Already purchased",
  IDEMPOTENCY_KEY_REUSED: "Idempotency key reused",
  ACTIVITY_NOT_OPEN: "Activity not open",
  INVALID_STATE: "Invalid state",
  RATE_LIMITED: "Too many requests",
  UNAVAILABLE: "Service unavailable",
  INTERNAL: "Internal error",
};

/** The one error type of the API; the error handler turns it into RFC 9457 problem details. */
export class ApiError extends Error {
  override name = "ApiError";
  readonly code: ErrorCode;
  readonly retryAfterS: number | undefined;
  constructor(code: ErrorCode, detail: string, retryAfterS?: number) {
    super(detail);
    this.code = code;
    this.retryAfterS = retryAfterS;
  }
}

/** An RFC 9457 problem response. Expected rejections build it directly: no exception, no stack capture. */
export function problem(c: Context, code: ErrorCode, detail: string, retryAfterS?: number): Response {
  const status = errorStatus[code];
  const headers: Record<string, string> = { "content-type": "application/problem+json" };
  if (retryAfterS !== undefined || status === 429 || status === 503)
    headers["retry-after"] = String(retryAfterS ?? 1);
  const body = {
    type: `https://flashgate.dev/problems/${code.toLowerCase().replaceAll("_", "-")}`,
    title: titles[code],
    status,
    detail,
    code: code === "PAYLOAD_TOO_LARGE" ? "INVALID_REQUEST" : code,
    traceId: c.get("traceId"),
  };
  return new Response(JSON.stringify(body), { status, headers });
}

export const problemOf = (c: Context, error: ApiError) =>
  problem(c, error.code, error.message, error.retryAfterS);
