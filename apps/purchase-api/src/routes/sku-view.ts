import { type FlashgateRedis, publicState, readCachedSku } from "@flashgate/cache";
import { type PurchaseService, refusals } from "@flashgate/sale";
import { Hono } from "hono";
import { z } from "zod";
import { pathId } from "../body.ts";
import type { AppEnv } from "../env.ts";
import { type Operation, pathIds, serve } from "../operation.ts";
import { currencySchema } from "../order-json.ts";
import { ApiError } from "../problem.ts";

const skuViewSchema = z.strictObject({
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
  responses: {
    200: {
      description: "The SKU's state and units left",
      schema: skuViewSchema,
      headers: ["ETag", "Cache-Control"],
    },
    304: {
      description: "The view the client holds (If-None-Match names its ETag) is still the current one",
      bodyless: true,
    },
  },
  problems: ["INVALID_REQUEST", "NOT_FOUND", "ACTIVITY_NOT_OPEN", "UNAVAILABLE"],
};

/** If-None-Match names this ETag, or any ("*"); weak comparison, as RFC 9110 asks for GET. */
function holdsCurrent(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  const weak = (tag: string) => tag.trim().replace(/^W\//, "");
  return ifNoneMatch.split(",").some((tag) => tag.trim() === "*" || weak(tag) === weak(etag));
}

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
    const view: z.output<typeof skuViewSchema> = {
      state: publicState(sku),
      available: Math.max(0, sku.available - sku.liveReservations),
      priceCents: sku.priceCents,
      currency: sku.currency,
    };
    // The view's own values are its validator: a storefront or CDN revalidating gets 304 and no body.
    const etag = `W/"${view.state}.${view.available}.${view.priceCents}.${view.currency}"`;
    c.header("etag", etag);
    c.header("cache-control", "public, max-age=1");
    if (holdsCurrent(c.req.header("if-none-match"), etag)) return c.body(null, 304);
    return c.json(view);
  });
  return router;
}
