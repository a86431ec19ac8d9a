import { isDatabaseUnavailable } from "@flashgate/db";
import type { Refusal } from "@flashgate/sale";
import { z } from "zod";

/** Every code the API answers a failure with: its status and its problem's title (RFC 9457). */
export const problems = {
  INVALID_REQUEST: { status: 400, title: "Invalid request" },
  UNAUTHORIZED: { status: 401, title: "Unauthorized" },
  FORBIDDEN: { status: 403, title: "Forbidden" },
  NOT_FOUND: { status: 404, title: "Not found" },
  PAYLOAD_TOO_LARGE: { status: 413, title: "Payload too large" },
  SOLD_OUT: { status: 409, title: "Sold out" },
  ALREADY_PURCHASED: { status: 409, title: "Already purchased" },
  IDEMPOTENCY_KEY_REUSED: { status: 409, title: "Idempotency key reused" },
  ACTIVITY_NOT_OPEN: { status: 409, title: "Activity not open" },
  INVALID_STATE: { status: 409, title: "Invalid state" },
  RATE_LIMITED: { status: 429, title: "Too many requests" },
  UNAVAILABLE: { status: 503, title: "Service unavailable" },
  INTERNAL: { status: 500, title: "Internal error" },
} as const satisfies Record<string, { status: number; title: string }>;

export type ErrorCode = keyof typeof problems;

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
  /** A refusal of the sale's, thrown where a Hono route meets it. */
  static of(refusal: Refusal): ApiError {
    return new ApiError(refusal.kind, refusal.detail, refusal.retryAfterS);
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
  (Object.keys(problems) as ErrorCode[]).map((code) => [
    code,
    JSON.stringify({
      type: problemType(code),
      title: problems[code].title,
      status: problems[code].status,
    }).slice(0, -1),
  ]),
);

/** RFC 9457 problem details. Expected rejections build them directly: no exception, no stack capture. */
export function problemReply(code: ErrorCode, detail: string, traceId: string, retryAfterS?: number): Reply {
  const { status } = problems[code];
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
