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

export function problem(c: Context, error: ApiError): Response {
  const status = errorStatus[error.code];
  const headers: Record<string, string> = { "content-type": "application/problem+json" };
  if (error.retryAfterS !== undefined || status === 429 || status === 503)
    headers["retry-after"] = String(error.retryAfterS ?? 1);
  const body = {
    type: `https://flashgate.dev/problems/${error.code.toLowerCase().replaceAll("_", "-")}`,
    title: titles[error.code],
    status,
    detail: error.message,
    code: error.code === "PAYLOAD_TOO_LARGE" ? "INVALID_REQUEST" : error.code,
    traceId: c.get("traceId"),
  };
  return new Response(JSON.stringify(body), { status, headers });
}
