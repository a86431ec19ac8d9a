import type { Order } from "@flashgate/db";

export const orderJson = (order: Order) => ({
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
