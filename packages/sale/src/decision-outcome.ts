import type { PurchaseDecision } from "@flashgate/db";
import { type DecidedResult, refusals } from "./refusals.ts";

/**
 * Whether the reservation stays until CDC applies the order (apply.lua then removes it): it must, for
 * as long as it is the only sign in Redis that this user's order holds a unit — a new order, or the
 * still-unapplied order of an earlier attempt with the same key.
 */
export const holdsItsUnit = (decision: PurchaseDecision, reservation: "counted" | "inherited") =>
  decision.kind === "created" ||
  (decision.kind === "replayed" && reservation === "inherited" && decision.order.state !== "CLOSED");

/** What the buyer is told of a database decision. */
export function decisionResult(decision: PurchaseDecision): DecidedResult {
  switch (decision.kind) {
    case "created":
      return { kind: "CREATED", order: decision.order };
    case "replayed":
      return { kind: "REPLAYED", order: decision.order };
    case "sold_out":
      return refusals.soldOut;
    case "not_open":
      return refusals.notOpen;
    case "unknown_sku":
      return refusals.unknownSku;
    case "already_purchased":
      return refusals.alreadyPurchased;
    case "key_reused":
      return refusals.keyReused;
  }
}
