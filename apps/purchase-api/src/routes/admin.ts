import { isRequestId } from "@flashgate/auth";
import { type FlashgateRedis, skuVerdicts } from "@flashgate/cache";
import { closeOrder, restock, skuDatabaseView, upsertActivity, upsertSku } from "@flashgate/db";
import { Hono } from "hono";
import type { Pool } from "mysql2/promise";
import { z } from "zod";
import { jsonBody, pathId } from "../body.ts";
import type { AppEnv } from "../env.ts";
import { orderJson } from "../order-json.ts";
import { ApiError } from "../problem.ts";

const activityBody = z
  .strictObject({
    name: z.string().min(1).max(200),
    startsAt: z.iso.datetime({ offset: true }),
    endsAt: z.iso.datetime({ offset: true }),
    paymentTimeoutS: z.number().int().min(10).max(86_400).default(900),
    rebuyAfterClose: z.boolean().default(false),
  })
  .refine((a) => Date.parse(a.endsAt) > Date.parse(a.startsAt), {
    message: "endsAt must be after startsAt",
    path: ["endsAt"],
  });

const skuBody = z.strictObject({
  initialStock: z.number().int().min(0).max(10_000_000),
  priceCents: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
  currency: z.string().regex(/^[A-Z]{3}$/),
});

const restockBody = z.strictObject({
  delta: z
    .number()
    .int()
    .min(-10_000_000)
    .max(10_000_000)
    .refine((d) => d !== 0, "must not be zero"),
  reason: z.string().min(1).max(500),
});

/** The back-office. Every mutation writes MySQL only; Redis follows through CDC. */
export function adminRoutes(deps: { pool: Pool; redis: FlashgateRedis }) {
  const { pool, redis } = deps;
  return new Hono<AppEnv>()
    .put("/activities/:id", async (c) => {
      const id = pathId(c, "id");
      const { value } = await jsonBody(c, activityBody);
      const result = await upsertActivity(pool, {
        id,
        name: value.name,
        startsAt: new Date(value.startsAt),
        endsAt: new Date(value.endsAt),
        paymentTimeoutS: value.paymentTimeoutS,
        rebuyAfterClose: value.rebuyAfterClose,
      });
      return c.json({ id, ...value, result }, result === "created" ? 201 : 200);
    })
    .put("/activities/:id/skus/:skuId", async (c) => {
      const activityId = pathId(c, "id");
      const skuId = pathId(c, "skuId");
      const { value } = await jsonBody(c, skuBody);
      const result = await upsertSku(pool, { activityId, skuId, ...value, operator: c.get("operator") });
      if (result === "no_activity") throw new ApiError("NOT_FOUND", "no such activity");
      return c.json({ activityId, skuId, ...value, result }, result === "created" ? 201 : 200);
    })
    .post("/activities/:id/skus/:skuId/restock", async (c) => {
      const activityId = pathId(c, "id");
      const skuId = pathId(c, "skuId");
      const { value } = await jsonBody(c, restockBody);
      const result = await restock(pool, { activityId, skuId, ...value, operator: c.get("operator") });
      if (result.kind === "not_found") throw new ApiError("NOT_FOUND", "no such SKU");
      if (result.kind === "below_zero")
        throw new ApiError(
          "INVALID_STATE",
          `a correction of ${value.delta} would take available (${result.available}) below zero`,
        );
      return c.json({ activityId, skuId, delta: value.delta, available: result.available });
    })
    .get("/activities/:id/skus/:skuId", async (c) => {
      const activityId = pathId(c, "id");
      const skuId = pathId(c, "skuId");
      const database = await skuDatabaseView(pool, activityId, skuId);
      if (!database) throw new ApiError("NOT_FOUND", "no such SKU");
      // The drift check's own fenced and settled verdict: "behind" while CDC catches up is not drift.
      const [check] = await skuVerdicts(pool, redis, [{ activityId, skuId }]);
      return c.json({
        database,
        cache: check.cache
          ? {
              stock: check.cache.available,
              reservations: check.cache.reservations,
              buyers: check.cache.buyers,
              appliedPosition: check.cache.position,
            }
          : null,
        drift: check.verdict,
      });
    })
    .post("/orders/:requestId/close", async (c) => {
      const requestId = c.req.param("requestId");
      if (!isRequestId(requestId)) throw new ApiError("NOT_FOUND", "no such order");
      const result = await closeOrder(pool, requestId);
      if (result.kind === "not_found") throw new ApiError("NOT_FOUND", "no such order");
      if (result.kind === "not_pending")
        throw new ApiError("INVALID_STATE", `the order is ${result.order.state}, only PENDING orders close`);
      return c.json(orderJson(result.order));
    });
}
