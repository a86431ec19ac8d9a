import { type FlashgateRedis, publicState, readCachedSku } from "@flashgate/cache";
import type { PurchaseService } from "@flashgate/sale";
import { Hono } from "hono";
import { z } from "zod";
import { pathId } from "../body.ts";
import type { AppEnv } from "../env.ts";
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

/** Public product-page view, served from the cache only. */
export function skuViewRoutes(deps: { redis: FlashgateRedis; purchases: PurchaseService }) {
  return new Hono<AppEnv>().get("/:activityId/skus/:skuId", async (c) => {
    const activityId = pathId(c, "activityId");
    const skuId = pathId(c, "skuId");
    const sku = await readCachedSku(deps.redis, activityId, skuId).catch(() => {
      throw new ApiError("UNAVAILABLE", "the cache is unavailable", 1);
    });
    if (!sku) {
      const missing = await deps.purchases.missingSku(activityId, skuId).catch(() => {
        throw new ApiError("UNAVAILABLE", "the database is unavailable", 2);
      });
      if (missing === "NOT_FOUND") throw new ApiError("NOT_FOUND", "no such activity or SKU");
      if (missing === "ENDED") throw new ApiError("ACTIVITY_NOT_OPEN", "the sale has ended");
      throw new ApiError("UNAVAILABLE", "this SKU's cache is being rebuilt", 1);
    }
    c.header("cache-control", "public, max-age=1");
    return c.json<z.output<typeof skuViewSchema>>({
      state: publicState(sku),
      available: Math.max(0, sku.available - sku.liveReservations),
      priceCents: sku.priceCents,
      currency: sku.currency,
    });
  });
}
