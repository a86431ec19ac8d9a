import {
  type Order,
  type PaidOrder,
  type PaymentDecision,
  type PaymentEvent,
  recordPayment,
} from "@flashgate/db";
import type { Pool } from "mysql2/promise";

export const paymentOutcomes = [
  "PAID",
  "FAILED_RECORDED",
  "REFUND_REQUIRED",
  "ALREADY_PAID",
  "AMOUNT_MISMATCH",
  "UNKNOWN_ORDER",
] as const;
export type PaymentOutcome = (typeof paymentOutcomes)[number];

/** The payment policy: what a provider's event does to the order it names. */
export function decidePayment(
  order: PaidOrder | undefined,
  event: PaymentEvent,
): PaymentDecision<PaymentOutcome> {
  let outcome: PaymentOutcome;
  if (!order) outcome = "UNKNOWN_ORDER";
  else if (event.status === "FAILED") outcome = "FAILED_RECORDED";
  else if (order.amountCents !== event.amountCents || order.currency !== event.currency)
    outcome = "AMOUNT_MISMATCH";
  else if (order.state === "CLOSED") outcome = "REFUND_REQUIRED";
  else if (order.state === "PAID") outcome = "ALREADY_PAID";
  else outcome = "PAID";
  return {
    outcome,
    pays: outcome === "PAID",
    // Money taken that did not pay its order goes back, whatever the reason.
    needsRefund: event.status === "SUCCEEDED" && outcome !== "PAID",
  };
}

export type PaymentResult =
  | { kind: "processed"; outcome: PaymentOutcome; order: Order }
  | { kind: "duplicate"; outcome: PaymentOutcome }
  | { kind: "unknown_order" };

export function createPaymentService(pool: Pool) {
  return {
    /** Applies a (verified) provider event exactly once; a replay of the event gets its first outcome. */
    async apply(event: PaymentEvent): Promise<PaymentResult> {
      const record = await recordPayment(pool, event, decidePayment);
      if (record.kind === "duplicate") return record;
      if (!record.order) return { kind: "unknown_order" };
      return { kind: "processed", outcome: record.outcome, order: record.order };
    },
  };
}

export type PaymentService = ReturnType<typeof createPaymentService>;
