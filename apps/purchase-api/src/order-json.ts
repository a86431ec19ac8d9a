import { type Order, orderStates } from "@flashgate/db";
import { z } from "zod";

const safeId = z.number().int().positive().max(Number.MAX_SAFE_INTEGER);

/** An ISO 4217 currency code, as every schema of the API writes it. */
export const currencySchema = z.string().regex(/^[A-Z]{3}$/);
export const orderStateSchema = z.enum(orderStates);

/** An order as the API answers it (one schema for the answer and the document). */
export const orderSchema = z.strictObject({
  orderId: z.string().describe("The order's id: payments and the back-office name the order by it"),
  requestId: z.string().describe("The buyer's Idempotency-Key; unique per user"),
  activityId: safeId,
  skuId: safeId,
  userId: safeId,
  state: orderStateSchema,
  amountCents: z.number().int().nonnegative(),
  currency: currencySchema,
  expiresAt: z.iso.datetime().describe("A PENDING order not paid by then is closed and its unit returned"),
});

export const orderJson = (order: Order): z.output<typeof orderSchema> => ({
  orderId: order.orderId,
  requestId: order.requestId,
  activityId: order.activityId,
  skuId: order.skuId,
  userId: Number(order.userId),
  state: order.state,
  amountCents: order.amountCents,
  currency: order.currency,
  expiresAt: order.expiresAt.toISOString(),
});
