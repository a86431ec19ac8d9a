import { isRequestId } from "@flashgate/auth";
import type { PurchaseService } from "@flashgate/sale";
import { Hono } from "hono";
import type { AppEnv } from "../env.ts";
import { orderJson } from "../order-json.ts";
import { ApiError } from "../problem.ts";

/** GET /v1/purchases/:requestId — the caller's own order; POST is served by place-purchase.ts. */
export function purchaseRoutes(purchases: PurchaseService) {
  return new Hono<AppEnv>().get("/:requestId", async (c) => {
    const requestId = c.req.param("requestId");
    if (!isRequestId(requestId)) throw new ApiError("NOT_FOUND", "no such purchase");
    const order = await purchases.ownOrder(c.get("userId"), requestId).catch(() => {
      throw new ApiError("UNAVAILABLE", "the database is unavailable", 2);
    });
    if (!order) throw new ApiError("NOT_FOUND", "no such purchase");
    return c.json(orderJson(order));
  });
}
