import { isDatabaseUnavailable } from "@flashgate/db";
import { z } from "zod";

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

/** A response as plain parts, written by Hono or straight to a node:http response. */
export interface Reply {
  status: number;
  headers: Record<string, string>;
  body: string;
}

const problemType = (code: ErrorCode) =>
  `https://flashgate.dev/problems/${code.toLowerCase().replaceAll("_", "-")}`;

/** The code a problem carries on the wire: a body too large is an invalid request (its status says which). */
export const wireCode = (code: ErrorCode) => (code === "PAYLOAD_TOO_LARGE" ? "INVALID_REQUEST" : code);

/** RFC 9457 problem details as every failure answers them; `codes` narrows `code` to a route's. */
export const problemSchema = (codes: readonly string[]) =>
  z.strictObject({
    type: z.url(),
    title: z.string(),
    status: z.number().int(),
    detail: z.string(),
    code: z.enum(codes as [string, ...string[]]),
    traceId: z.string(),
  });

// The fixed members of each code's problem, serialised once: a sold-out storm sends the same one
// a hundred thousand times, and only detail and traceId differ.
const problemHeads = new Map(
  (Object.keys(errorStatus) as ErrorCode[]).map((code) => [
    code,
    JSON.stringify({ type: problemType(code), title: titles[code], status: errorStatus[code] }).slice(0, -1),
  ]),
);

/** RFC 9457 problem details. Expected rejections build them directly: no exception, no stack capture. */
export function problemReply(code: ErrorCode, detail: string, traceId: string, retryAfterS?: number): Reply {
  const status = errorStatus[code];
  const headers: Record<string, string> = { "content-type": "application/problem+json" };
  if (retryAfterS !== undefined || status === 429 || status === 503)
    headers["retry-after"] = String(retryAfterS ?? 1);
  // The rest of an oversized body is never read: the connection ends with this answer.
  if (status === 413) headers.connection = "close";
  const body = `${problemHeads.get(code)},"detail":${JSON.stringify(detail)},"code":"${wireCode(code)}","traceId":${JSON.stringify(traceId)}}`;
  return { status, headers, body };
}

/**
 * The one rule from a thrown error to a reply: API errors say what is wrong, an unavailable database is a 503,
 * anything else is a 500 whose detail (stack, SQL) stays in the log, joined by trace id.
 */
export function errorReply(error: unknown, traceId: string, logUnexpected: (error: unknown) => void): Reply {
  if (error instanceof ApiError) return problemReply(error.code, error.message, traceId, error.retryAfterS);
  if (isDatabaseUnavailable(error))
    return problemReply("UNAVAILABLE", "a dependency is unavailable", traceId, 2);
  logUnexpected(error);
  return problemReply("INTERNAL", "internal error", traceId);
}

export const replyResponse = (reply: Reply) =>
  new Response(reply.body, { status: reply.status, headers: reply.headers });
