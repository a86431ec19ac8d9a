import type { Order } from "@flashgate/db";
import type { DecidedResult } from "./refusals.ts";

/**
 * Where a queued purchase stands (ADR 0030): in line, or decided — the order as the writer created it,
 * or the refusal's code and words.
 */
export type Ticket = { activityId: number; skuId: number; queuedAtMs: number } & (
  | { state: "QUEUED" }
  | { state: "CREATED"; order: Order; decidedAtMs: number }
  | { state: "REFUSED"; code: string; detail: string; decidedAtMs: number }
);

export const encodeTicket = (ticket: Ticket): string => JSON.stringify(ticket);

/** A ticket as stored; an order's dates come back as dates. */
export function decodeTicket(stored: string): Ticket {
  const ticket = JSON.parse(stored) as Ticket;
  if (ticket.state !== "CREATED") return ticket;
  const { createdAt, expiresAt } = ticket.order as unknown as Record<"createdAt" | "expiresAt", string>;
  return {
    ...ticket,
    order: { ...ticket.order, createdAt: new Date(createdAt), expiresAt: new Date(expiresAt) },
  };
}

/** A queued place's ticket once decided: the order as created, or the refusal's code and words. */
export function decidedTicket(
  queued: { activityId: number; skuId: number; queuedAtMs: number },
  answer: DecidedResult,
  decidedAtMs: number,
): Ticket {
  const place = { activityId: queued.activityId, skuId: queued.skuId, queuedAtMs: queued.queuedAtMs };
  return "order" in answer
    ? { ...place, state: "CREATED", order: answer.order, decidedAtMs }
    : { ...place, state: "REFUSED", code: answer.kind, detail: answer.detail, decidedAtMs };
}
