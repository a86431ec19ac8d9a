import { type FlashgateRedis, publicState, readCachedSku } from "@flashgate/cache";
import { type PurchaseService, refusals } from "@flashgate/sale";
import { Hono } from "hono";
import { z } from "zod";
import { pathId } from "../body.ts";
import type { AppEnv } from "../env.ts";
import { type Operation, pathIds, serve } from "../operation.ts";
import { currencySchema } from "../order-json.ts";
import { ApiError } from "../problem.ts";

export const skuViewSchema = z.strictObject({
  state: z.enum(["NOT_STARTED", "OPEN", "SOLD_OUT", "ENDED"]),
  available: z
    .number()
    .int()
    .nonnegative()
    .describe("Units left, less those reserved by purchases in flight"),
  priceCents: z.number().int().nonnegative(),
  currency: currencySchema,
});

export const skuView: Operation = {
  method: "get",
  path: "/v1/activities/{activityId}/skus/{skuId}",
  summary: "A SKU's public view, from the cache (anyone)",
  security: "none",
  parameters: pathIds("activityId", "skuId"),
  responses: { 200: { description: "The SKU's state and units left", schema: skuViewSchema } },
  problems: ["INVALID_REQUEST", "NOT_FOUND", "ACTIVITY_NOT_OPEN", "UNAVAILABLE"],
};

/** Public product-page view, served from the cache only. */
export function skuViewRoutes(deps: { redis: FlashgateRedis; purchases: PurchaseService }) {
  const router = new Hono<AppEnv>();
  serve(router, skuView, async (c) => {
    const activityId = pathId(c, "activityId");
    const skuId = pathId(c, "skuId");
    const sku = await readCachedSku(deps.redis, activityId, skuId).catch(() => {
      throw ApiError.of(refusals.cacheDown);
    });
    if (!sku) {
      const missing = await deps.purchases.missingSku(activityId, skuId).catch(() => {
        throw ApiError.of(refusals.databaseDown);
      });
      if (missing === "NOT_FOUND") throw ApiError.of(refusals.unknownSku);
      if (missing === "ENDED") throw ApiError.of(refusals.ended);
      throw ApiError.of(refusals.rebuilding);
    }
    c.header("cache-control", "public, max-age=1");
    return c.json<z.output<typeof skuViewSchema>>({
      state: publicState(sku),
      available: Math.max(0, sku.available - sku.liveReservations),
      priceCents: sku.priceCents,
      currency: sku.currency,
    });
  });
  return router;
}
