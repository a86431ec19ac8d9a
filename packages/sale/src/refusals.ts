import type { Order } from "@flashgate/db";
import type { Ticket } from "./ticket.ts";

/** The codes a refused purchase carries: the API answers each as the problem of that code. */
export const refusalCodes = [
  "NOT_FOUND",
  "SOLD_OUT",
  "ALREADY_PURCHASED",
  "IDEMPOTENCY_KEY_REUSED",
  "ACTIVITY_NOT_OPEN",
  "RATE_LIMITED",
  "UNAVAILABLE",
] as const;
export type RefusalCode = (typeof refusalCodes)[number];

/** A refused purchase as its buyer reads it; one worth retrying says when. */
export interface Refusal {
  readonly kind: RefusalCode;
  readonly detail: string;
  readonly retryAfterS?: number;
}

/** Every refusal a purchase (or a SKU's view) can meet, each worded once. */
export const refusals = {
  unknownSku: { kind: "NOT_FOUND", detail: "no such activity or SKU" },
  soldOut: { kind: "SOLD_OUT", detail: "no units left" },
  alreadyPurchased: { kind: "ALREADY_PURCHASED", detail: "this user already holds an order for this SKU" },
  purchaseInProgress: { kind: "ALREADY_PURCHASED", detail: "another purchase of this user is in progress" },
  keyReused: { kind: "IDEMPOTENCY_KEY_REUSED", detail: "this Idempotency-Key was used for another request" },
  notOpen: { kind: "ACTIVITY_NOT_OPEN", detail: "the sale is not open" },
  notStarted: { kind: "ACTIVITY_NOT_OPEN", detail: "the sale has not started" },
  ended: { kind: "ACTIVITY_NOT_OPEN", detail: "the sale has ended" },
  rateLimited: { kind: "RATE_LIMITED", detail: "too many requests for this SKU" },
  cacheDown: { kind: "UNAVAILABLE", detail: "the cache is unavailable", retryAfterS: 1 },
  databaseDown: { kind: "UNAVAILABLE", detail: "the database is unavailable", retryAfterS: 2 },
  overloaded: { kind: "UNAVAILABLE", detail: "too many purchases in flight", retryAfterS: 1 },
  contended: {
    kind: "UNAVAILABLE",
    detail: "the stock stayed locked by other transactions; retry with the same Idempotency-Key",
    retryAfterS: 1,
  },
  queueFull: {
    kind: "UNAVAILABLE",
    detail: "the purchase queue is full; retry with the same Idempotency-Key",
    retryAfterS: 5,
  },
  standingUnread: {
    kind: "UNAVAILABLE",
    detail: "where this purchase stands cannot be read now",
    retryAfterS: 1,
  },
  rebuilding: { kind: "UNAVAILABLE", detail: "this SKU's cache is being rebuilt", retryAfterS: 1 },
  outcomeUnknown: {
    kind: "UNAVAILABLE",
    detail: "the outcome is unknown; retry with the same Idempotency-Key",
    retryAfterS: 1,
  },
} as const satisfies Record<string, Refusal>;

/**
 * What a buyer is told: their order, new or already placed with this key, their place in the queue
 * (its ticket, ADR 0030), or a refusal.
 */
export type PurchaseResult = DecidedResult | { kind: "QUEUED"; requestId: string; ticket: Ticket };

/** What the database decided for a buyer: their order, or a refusal. */
export type DecidedResult = { kind: "CREATED" | "REPLAYED"; order: Order } | Refusal;
