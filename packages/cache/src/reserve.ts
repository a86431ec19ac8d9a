import { skuKeys } from "./keys.ts";
import type { FlashgateRedis } from "./scripts.ts";

export type ReserveOutcome =
  | { outcome: "RESERVED"; effectiveAvailable: number; queued: boolean }
  | { outcome: "NOT_LOADED" }
  | { outcome: "RATE_LIMITED"; retryAfterMs: number }
  | { outcome: "NOT_STARTED" }
  | { outcome: "ENDED" }
  | { outcome: "ALREADY" }
  | { outcome: "BOUGHT" }
  | { outcome: "IN_FLIGHT"; requestId: string }
  | { outcome: "SOLD_OUT" };

export interface ReserveInput {
  activityId: number;
  skuId: number;
  userId: string;
  requestId: string;
  nowMs?: number;
}

export interface FastPathLimits {
  reservationTtlMs: number;
  rateLimit: number;
  rateWindowMs: number;
}

/** Which admitted buyers this API queues now (ADR 0030), by their activity's admission. */
export interface Queueing {
  /** The admission of an activity without its own (PURCHASE_ADMISSION). */
  fallback: "sync" | "queued" | "auto";
  /** off: nobody is queued (no queue, or it refuses sends); calm: queued activities'; busy: auto ones' too. */
  now: "off" | "calm" | "busy";
  /** How long a queued buyer's reservation lasts: beyond the queue's worst wait. */
  reservationTtlMs: number;
}

const noQueue: Queueing = { fallback: "sync", now: "off", reservationTtlMs: 0 };

/** The KEYS, then the ARGV, of one reserve.lua call (see the script's header); the bench replays them. */
export function reserveArguments(
  input: ReserveInput,
  limits: FastPathLimits,
  queueing: Queueing = noQueue,
): (string | number)[] {
  const keys = skuKeys(input.activityId, input.skuId);
  return [
    keys.sku,
    keys.reservations,
    keys.reservationRequests,
    `${keys.ratePrefix}${input.userId}`,
    input.userId,
    input.requestId,
    input.nowMs ?? Date.now(),
    limits.reservationTtlMs,
    limits.rateLimit,
    limits.rateWindowMs,
    queueing.reservationTtlMs,
    queueing.fallback,
    queueing.now,
  ];
}

/** One EVALSHA: rate limit, sale window, one-per-user, availability and a TTL-bounded reservation. */
export async function reserveUnit(
  redis: FlashgateRedis,
  input: ReserveInput,
  limits: FastPathLimits,
  queueing?: Queueing,
): Promise<ReserveOutcome> {
  const reply = (await redis.fgReserve(...reserveArguments(input, limits, queueing))) as
    | string
    | [string, number | string, number?];
  const [outcome, detail, queued] = typeof reply === "string" ? [reply, undefined, undefined] : reply;
  switch (outcome) {
    case "RESERVED":
      return { outcome, effectiveAvailable: Number(detail), queued: queued === 1 };
    case "RATE_LIMITED":
      return { outcome, retryAfterMs: Math.max(1, Number(detail)) };
    case "IN_FLIGHT":
      return { outcome, requestId: String(detail) };
    case "SOLD_OUT":
    case "NOT_LOADED":
    case "NOT_STARTED":
    case "ENDED":
    case "ALREADY":
    case "BOUGHT":
      return { outcome };
    default:
      throw new Error(`reserve script returned ${outcome}`);
  }
}

export async function releaseReservation(
  redis: FlashgateRedis,
  input: Omit<ReserveInput, "nowMs">,
): Promise<boolean> {
  const keys = skuKeys(input.activityId, input.skuId);
  return (
    (await redis.fgRelease(keys.reservations, keys.reservationRequests, input.userId, input.requestId)) === 1
  );
}
