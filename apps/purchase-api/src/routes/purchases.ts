import { findOrder } from "@flashgate/db";
import type { PurchaseResult, PurchaseService } from "@flashgate/sale";
import { type Context, Hono } from "hono";
import type { Pool } from "mysql2/promise";
import { z } from "zod";
import { jsonBody } from "../body.ts";
import type { AppEnv } from "../env.ts";
import type { Metrics } from "../metrics.ts";
import { orderJson } from "../order-json.ts";
import { ApiError, problem } from "../problem.ts";

const id = z.number().int().positive().max(Number.MAX_SAFE_INTEGER);
const purchaseBody = z.strictObject({ activityId: id, skuId: id });
const idempotencyKey = /^[A-Za-z0-9_-]{8,64}$/;

function toResponse(c: Context, result: PurchaseResult): Response {
  switch (result.kind) {
    case "CREATED": {
      const order = orderJson(result.order);
      c.header("location", `/v1/purchases/${order.requestId}`);
      return c.json(order, 201);
    }
    case "REPLAYED":
      return c.json(orderJson(result.order), 200);
    case "SOLD_OUT":
      return problem(c, "SOLD_OUT", "no units left");
    case "ALREADY_PURCHASED":
      return problem(c, "ALREADY_PURCHASED", result.detail);
    case "IDEMPOTENCY_KEY_REUSED":
      return problem(c, "IDEMPOTENCY_KEY_REUSED", "this Idempotency-Key was used for another request");
    case "ACTIVITY_NOT_OPEN":
      return problem(c, "ACTIVITY_NOT_OPEN", result.detail);
    case "NOT_FOUND":
      return problem(c, "NOT_FOUND", "no such activity or SKU");
    case "RATE_LIMITED":
      return problem(c, "RATE_LIMITED", "too many requests for this SKU", result.retryAfterS);
    case "UNAVAILABLE":
      return problem(c, "UNAVAILABLE", result.detail, result.retryAfterS);
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
      return toResponse(c, result);
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
