import { isRequestId } from "@flashgate/auth";
import { type PurchaseService, refusals } from "@flashgate/sale";
import { Hono } from "hono";
import type { AppEnv } from "../env.ts";
import { type Guards, keyPattern, type Operation, serve } from "../operation.ts";
import { orderJson, orderSchema } from "../order-json.ts";
import { ApiError } from "../problem.ts";

export const ownPurchase: Operation = {
  method: "get",
  path: "/v1/purchases/{requestId}",
  summary: "The caller's own purchase under that Idempotency-Key",
  security: "user",
  parameters: [{ name: "requestId", in: "path", pattern: keyPattern, description: "the Idempotency-Key" }],
  responses: { 200: { description: "The order", schema: orderSchema } },
  problems: ["UNAUTHORIZED", "NOT_FOUND", "UNAVAILABLE"],
};

/** The caller's own order by its key; POST is served by place-purchase.ts. */
export function purchaseRoutes(purchases: PurchaseService, guards: Guards) {
  const router = new Hono<AppEnv>();
  serve(
    router,
    ownPurchase,
    async (c) => {
      const requestId = c.req.param("requestId") ?? "";
      if (!isRequestId(requestId)) throw new ApiError("NOT_FOUND", "no such purchase");
      const order = await purchases.ownOrder(c.get("userId"), requestId).catch(() => {
        throw ApiError.of(refusals.databaseDown);
      });
      if (!order) throw new ApiError("NOT_FOUND", "no such purchase");
      return c.json(orderJson(order));
    },
    guards,
  );
  return router;
}
