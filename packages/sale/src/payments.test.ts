import type { PaymentEvent } from "@flashgate/db";
import { describe, expect, it } from "vitest";
import { decidePayment } from "./payments.ts";

const event = (fields: Partial<PaymentEvent> = {}): PaymentEvent => ({
  eventId: "e1",
  orderId: "order-0001",
  status: "SUCCEEDED",
  amountCents: 1999,
  currency: "EUR",
  ...fields,
});
const order = (state: "PENDING" | "PAID" | "CLOSED", amountCents = 1999, currency = "EUR") => ({
  state,
  amountCents,
  currency,
});

describe("the payment policy", () => {
  it.each([
    ["the right amount for a PENDING order pays it", order("PENDING"), event(), "PAID", true, false],
    [
      "a failed payment is recorded and moves nothing",
      order("PENDING"),
      event({ status: "FAILED" }),
      "FAILED_RECORDED",
      false,
      false,
    ],
    [
      "a failed payment of a closed order owes nothing back",
      order("CLOSED"),
      event({ status: "FAILED" }),
      "FAILED_RECORDED",
      false,
      false,
    ],
    [
      "a wrong amount is refunded",
      order("PENDING"),
      event({ amountCents: 1998 }),
      "AMOUNT_MISMATCH",
      false,
      true,
    ],
    [
      "a wrong currency is refunded",
      order("PENDING"),
      event({ currency: "USD" }),
      "AMOUNT_MISMATCH",
      false,
      true,
    ],
    [
      "money for an order closed meanwhile is refunded",
      order("CLOSED"),
      event(),
      "REFUND_REQUIRED",
      false,
      true,
    ],
    ["a second payment of a paid order is refunded", order("PAID"), event(), "ALREADY_PAID", false, true],
    ["money for an unknown order is refunded", undefined, event(), "UNKNOWN_ORDER", false, true],
  ] as const)("%s", (_name, locked, payment, outcome, pays, needsRefund) => {
    expect(decidePayment(locked, payment)).toEqual({ outcome, pays, needsRefund });
  });
});
