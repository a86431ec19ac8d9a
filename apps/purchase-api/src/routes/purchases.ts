import { findOrder } from "@flashgate/db";
import type { PurchaseResult, PurchaseService } from "@flashgate/sale";
import { Hono } from "hono";
import type { Pool } from "mysql2/promise";
import { z } from "zod";
import { jsonBody } from "../body.ts";
import type { AppEnv } from "../env.ts";
import type { Metrics } from "../metrics.ts";
import { orderJson } from "../order-json.ts";
import { ApiError } from "../problem.ts";

const id = z.number().int().positive().max(Number.MAX_SAFE_INTEGER);
const purchaseBody = z.strictObject({ activityId: id, skuId: id });
const idempotencyKey = /^[A-Za-z0-9_-]{8,64}$/;

function toResponse(result: PurchaseResult): { status: 200 | 201; order: ReturnType<typeof orderJson> } {
  switch (result.kind) {
    case "CREATED":
      return { status: 201, order: orderJson(result.order) };
    case "REPLAYED":
      return { status: 200, order: orderJson(result.order) };
    case "SOLD_OUT":
      throw new ApiError("SOLD_OUT", "no units left");
    case "ALREADY_PURCHASED":
      throw new ApiError("ALREADY_PURCHASED", result.detail);
    case "IDEMPOTENCY_KEY_REUSED":
      throw new ApiError("IDEMPOTENCY_KEY_REUSED", "this Idempotency-Key was used for another request");
    case "ACTIVITY_NOT_OPEN":
      throw new ApiError("ACTIVITY_NOT_OPEN", result.detail);
    case "NOT_FOUND":
      throw new ApiError("NOT_FOUND", "no such activity or SKU");
    case "RATE_LIMITED":
      throw new ApiError("RATE_LIMITED", "too many requests for this SKU", result.retryAfterS);
    case "UNAVAILABLE":
      throw new ApiError("UNAVAILABLE", result.detail, result.retryAfterS);
  }
}

export function purchaseRoutes(deps: { purchases: PurchaseService; pool: Pool; metrics: Metrics }) {
  return new Hono<AppEnv>()
    .post("/", async (c) => {
      const key = c.req.header("idempotency-key");
      if (!key || !idempotencyKey.test(key)) {
        throw new ApiError("INVALID_REQUEST", "Idempotency-Key must be 8–64 characters of [A-Za-z0-9_-]");
      }
      const { value } = await jsonBody(c, purchaseBody);
      const result = await deps.purchases.purchase({ requestId: key, userId: c.get("userId"), ...value });
      deps.metrics.admissions.inc({ outcome: result.kind });
      const { status, order } = toResponse(result);
      if (status === 201) c.header("location", `/v1/purchases/${order.requestId}`);
      return c.json(order, status);
    })
    .get("/:requestId", async (c) => {
      const requestId = c.req.param("requestId");
      if (!idempotencyKey.test(requestId)) throw new ApiError("NOT_FOUND", "no such purchase");
      const order = await findOrder(deps.pool, requestId).catch(() => {
        throw new ApiError("UNAVAILABLE", "the database is unavailable", 2);
      });
      // Another user's order is indistinguishable from a missing one.
      if (!order || order.userId !== c.get("userId")) throw new ApiError("NOT_FOUND", "no such purchase");
      return c.json(orderJson(order));
    });
}
