import { isRequestId } from "@flashgate/auth";
import { findOrder } from "@flashgate/db";
import { Hono } from "hono";
import type { Pool } from "mysql2/promise";
import type { AppEnv } from "../env.ts";
import { orderJson } from "../order-json.ts";
import { ApiError } from "../problem.ts";

/** GET /v1/purchases/:requestId — the caller's own order; POST is served by place-purchase.ts. */
export function purchaseRoutes(deps: { pool: Pool }) {
  return new Hono<AppEnv>().get("/:requestId", async (c) => {
    const requestId = c.req.param("requestId");
    if (!isRequestId(requestId)) throw new ApiError("NOT_FOUND", "no such purchase");
    const order = await findOrder(deps.pool, requestId).catch(() => {
      throw new ApiError("UNAVAILABLE", "the database is unavailable", 2);
    });
    // Another user's order is indistinguishable from a missing one.
    if (!order || order.userId !== c.get("userId")) throw new ApiError("NOT_FOUND", "no such purchase");
    return c.json(orderJson(order));
  });
}
