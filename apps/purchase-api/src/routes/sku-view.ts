import type { IncomingMessage, ServerResponse } from "node:http";
import { parseId } from "@flashgate/auth";
import { type FlashgateRedis, publicState, readCachedSku, skuRef } from "@flashgate/cache";
import type { Logger } from "@flashgate/logger";
import { type PurchaseService, refusals } from "@flashgate/sale";
import { Hono } from "hono";
import { z } from "zod";
import { memo, writeReply } from "../bare-route.ts";
import { pathId } from "../body.ts";
import type { AppEnv } from "../env.ts";
import type { Metrics } from "../metrics.ts";
import { type Operation, pathIds, routePath, serve } from "../operation.ts";
import { currencySchema } from "../order-json.ts";
import { ApiError, errorReply, type Reply } from "../problem.ts";
import { traceIdOf } from "../trace.ts";

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

interface SkuViewDeps {
  redis: FlashgateRedis;
  purchases: PurchaseService;
  views: ViewCache;
}

type SkuViewBody = z.output<typeof skuViewSchema>;

/** Views this process answered from Redis, at most this many at once. */
const maxCachedViews = 10_000;

/**
 * A SKU's view as this process last read it, for `freshMs`: a crowd reloading one product page costs
 * Redis one read per SKU per instance that often. Well within the freshness every answer states
 * (`max-age=1`): a storefront's CDN may hold it longer.
 */
export function createViewCache(freshMs: number) {
  const views = new Map<string, RenderedView & { until: number }>();
  return {
    get(activityId: number, skuId: number): RenderedView | undefined {
      const held = views.get(skuRef(activityId, skuId));
      return held && held.until > performance.now() ? held : undefined;
    },
    set(activityId: number, skuId: number, view: RenderedView) {
      if (freshMs === 0) return;
      if (views.size >= maxCachedViews) views.clear();
      views.set(skuRef(activityId, skuId), { ...view, until: performance.now() + freshMs });
    },
  };
}

/** A view as it is sent: its body and, from the view's own values, its validator. */
interface RenderedView {
  etag: string;
  body: string;
}

function render(view: SkuViewBody): RenderedView {
  return {
    etag: `W/"${view.state}.${view.available}.${view.priceCents}.${view.currency}"`,
    body: JSON.stringify(view),
  };
}

type ViewCache = ReturnType<typeof createViewCache>;

/** If-None-Match names this ETag, or any ("*"); weak comparison, as RFC 9110 asks for GET. */
function holdsCurrent(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  const weak = (tag: string) => tag.trim().replace(/^W\//, "");
  return ifNoneMatch.split(",").some((tag) => tag.trim() === "*" || weak(tag) === weak(etag));
}

/** The view from the cache only; a SKU it holds no state for is answered from the sale directory. */
async function readView(deps: SkuViewDeps, activityId: number, skuId: number): Promise<RenderedView> {
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
  const view = render({
    state: publicState(sku),
    available: Math.max(0, sku.available - sku.liveReservations),
    priceCents: sku.priceCents,
    currency: sku.currency,
  });
  deps.views.set(activityId, skuId, view);
  return view;
}

async function viewReply(
  deps: SkuViewDeps,
  activityId: number,
  skuId: number,
  ifNoneMatch: string | undefined,
): Promise<Reply> {
  const { etag, body } = deps.views.get(activityId, skuId) ?? (await readView(deps, activityId, skuId));
  // A storefront or CDN revalidating the view it holds gets 304 and no body.
  const headers = { etag, "cache-control": "public, max-age=1" };
  if (holdsCurrent(ifNoneMatch, etag)) return { status: 304, headers, body: "" };
  return { status: 200, headers: { ...headers, "content-type": "application/json" }, body };
}

const viewPath = /^\/v1\/activities\/(\d{1,16})\/skus\/(\d{1,16})$/;

/** The ids of a plain view request (no query, valid ids), which the bare handler serves; else undefined. */
export function skuViewIds(incoming: IncomingMessage): { activityId: number; skuId: number } | undefined {
  if (incoming.method !== "GET") return undefined;
  const match = viewPath.exec(incoming.url ?? "");
  const activityId = match && parseId(match[1]);
  const skuId = match && parseId(match[2]);
  return activityId && skuId ? { activityId, skuId } : undefined;
}

/**
 * The public view straight on node:http: the product page is what a crowd reloads, and a flood of it
 * must not take the CPU that buyers need. Anything else on its path (a query, an invalid id) goes to
 * the Hono route, which answers it by the same rule.
 */
export function skuViewHandler(deps: SkuViewDeps & { metrics: Metrics; logger: Logger }) {
  const duration = memo((status: number) =>
    deps.metrics.requestDuration.child({ route: routePath(skuView), status }),
  );
  return (
    incoming: IncomingMessage,
    outgoing: ServerResponse,
    ids: { activityId: number; skuId: number },
  ) => {
    const started = performance.now();
    const traceId = traceIdOf(incoming.headers["x-request-id"]);
    viewReply(deps, ids.activityId, ids.skuId, incoming.headers["if-none-match"])
      .catch((error) =>
        errorReply(error, traceId, (err) =>
          deps.logger.error({ err, traceId, path: incoming.url }, "unhandled error"),
        ),
      )
      .then((reply) => {
        writeReply(outgoing, reply, traceId);
        duration(reply.status).observe((performance.now() - started) / 1000);
      })
      .catch((err) => deps.logger.error({ err, traceId, path: incoming.url }, "reply failed"));
  };
}

/** The same view through Hono, for what the bare handler leaves: its path with a query or a bad id. */
export function skuViewRoutes(deps: SkuViewDeps) {
  const router = new Hono<AppEnv>();
  serve(router, skuView, async (c) => {
    const reply = await viewReply(
      deps,
      pathId(c, "activityId"),
      pathId(c, "skuId"),
      c.req.header("if-none-match"),
    );
    for (const [name, value] of Object.entries(reply.headers)) c.header(name, value);
    return reply.status === 304 ? c.body(null, 304) : c.body(reply.body, 200);
  });
  return router;
}
