import type { IncomingMessage, ServerResponse } from "node:http";
import { createJwksVerifier, createJwtVerifier, type TokenVerifier } from "@flashgate/auth";
import type { FlashgateRedis, RedisClient } from "@flashgate/cache";
import type { Logger } from "@flashgate/logger";
import {
  createBackOffice,
  createOverloadGuard,
  createPaymentService,
  createPurchaseService,
  createTicketService,
  type PurchaseQueueOptions,
} from "@flashgate/sale";
import { operationalRoutes } from "@flashgate/telemetry";
import { getRequestListener } from "@hono/node-server";
import { Hono } from "hono";
import { HTTPException } from "hono/http-exception";
import type { Pool } from "mysql2/promise";
import { requireAdmin, requireUser } from "./auth.ts";
import type { PurchaseApiConfig } from "./config.ts";
import type { AppEnv } from "./env.ts";
import { createMetrics, type Metrics, purchaseObserver } from "./metrics.ts";
import { openApiDocument } from "./openapi.ts";
import type { Guards } from "./operation.ts";
import { ApiError, errorReply, problemReply, replyResponse } from "./problem.ts";
import { adminRoutes } from "./routes/admin.ts";
import { docsRoutes } from "./routes/docs.ts";
import { paymentRoutes } from "./routes/payments.ts";
import { placePurchase, placePurchaseHandler } from "./routes/place-purchase.ts";
import { purchaseRoutes } from "./routes/purchases.ts";
import { createViewCache, skuViewHandler, skuViewIds, skuViewRoutes } from "./routes/sku-view.ts";
import { ticketRoutes } from "./routes/tickets.ts";
import { traceIdOf } from "./trace.ts";

export interface AppDeps {
  config: PurchaseApiConfig;
  redis: FlashgateRedis;
  /** A second connection, only for hearing that units came back; without it no sold-out shortcut. */
  subscriber?: RedisClient;
  pool: Pool;
  readPool: Pool;
  /** The readiness probe's own connection. */
  probePool: Pool;
  logger: Logger;
  metrics?: Metrics;
  /** The purchase queue, where an activity's admission (else PURCHASE_ADMISSION) queues buyers (ADR 0030). */
  queue?: Pick<PurchaseQueueOptions, "send" | "accepting" | "backlog">;
}

export function createApp(deps: AppDeps) {
  const { config, redis, subscriber, pool, readPool, probePool, logger, queue } = deps;
  const metrics = deps.metrics ?? createMetrics();
  const guard = createOverloadGuard({
    maxInFlight: config.DB_MAX_IN_FLIGHT,
    maxQueue: config.DB_MAX_QUEUE,
    maxWaitMs: config.DB_QUEUE_TIMEOUT_MS,
  });
  const observer = purchaseObserver(metrics, logger);
  const purchases = createPurchaseService({
    redis,
    pool,
    readPool,
    guard,
    batch: {
      maxSize: config.DB_MAX_BATCH,
      maxConcurrent: config.DB_MAX_IN_FLIGHT,
      maxWaitMs: config.DB_QUEUE_TIMEOUT_MS,
      gatherMs: config.DB_BATCH_GATHER_MS,
    },
    limits: {
      reservationTtlMs: config.RESERVATION_TTL_MS,
      rateLimit: config.RATE_LIMIT,
      rateWindowMs: config.RATE_WINDOW_MS,
    },
    soldOutCacheMs: config.SOLD_OUT_CACHE_MS,
    subscriber,
    queue: queue && {
      ...queue,
      admission: config.PURCHASE_ADMISSION,
      afterWaitMs: config.QUEUE_AFTER_WAIT_MS,
      reservationTtlMs: config.QUEUE_RESERVATION_TTL_MS,
      maxBacklog: config.QUEUE_MAX_BACKLOG,
    },
    observer,
  });
  const tickets = createTicketService({ redis, readPool, subscriber, maxWaiters: config.TICKET_MAX_WAITERS });
  const claimRules = { issuer: config.JWT_ISSUER, audience: config.JWT_AUDIENCE };
  const verifyUser: TokenVerifier = config.AUTH_JWKS_URL
    ? createJwksVerifier({
        url: config.AUTH_JWKS_URL,
        issuer: String(config.JWT_ISSUER),
        audience: String(config.JWT_AUDIENCE),
      })
    : createJwtVerifier(config.AUTH_JWT_SECRET, claimRules);
  const verifyAdmin = createJwtVerifier(config.ADMIN_JWT_SECRET, claimRules);

  const app = new Hono<AppEnv>();
  app.use(async (c, next) => {
    const traceId = traceIdOf(c.req.header("x-request-id"));
    c.set("traceId", traceId);
    // Set before the response exists: Hono then writes it once instead of copying the response.
    c.header("x-request-id", traceId);
    const started = performance.now();
    await next();
    metrics.requestDuration.observe(
      { route: c.req.routePath, status: c.res.status },
      (performance.now() - started) / 1000,
    );
  });

  const operational = operationalRoutes(
    { redis: () => redis.ping(), database: () => probePool.query("SELECT 1") },
    metrics.registry,
  );
  app.route("/", operational.probes);
  const guards: Guards = { user: requireUser(verifyUser), admin: requireAdmin(verifyAdmin, verifyUser) };
  app.route("/", docsRoutes(openApiDocument));
  app.route("/", purchaseRoutes(purchases, guards));
  app.route(
    "/",
    ticketRoutes(tickets, guards, (error) => observer.dependencyFailed("redis", "ticket-standing", error)),
  );
  const views = createViewCache(config.VIEW_CACHE_MS);
  app.route("/", skuViewRoutes({ redis, purchases, views }));
  app.route(
    "/",
    paymentRoutes({ payments: createPaymentService(pool), secret: config.PAYMENT_WEBHOOK_SECRET }),
  );
  app.route("/", adminRoutes(createBackOffice({ pool, redis }), guards));

  app.notFound((c) =>
    replyResponse(problemReply("NOT_FOUND", `no route for ${c.req.method} ${c.req.path}`, c.get("traceId"))),
  );
  app.onError((error, c) => {
    const traceId = c.get("traceId");
    if (error instanceof HTTPException) {
      const code =
        error.status === 401
          ? "UNAUTHORIZED"
          : error.status === 413
            ? "PAYLOAD_TOO_LARGE"
            : "INVALID_REQUEST";
      error = new ApiError(code, error.message || "invalid request");
    }
    return replyResponse(
      errorReply(error, traceId, (err) =>
        logger.error({ err, traceId, path: c.req.path }, "unhandled error"),
      ),
    );
  });

  // The node:http listener: the floods (purchases, product-page views) go straight to their handlers,
  // everything else to Hono.
  const purchaseListener = placePurchaseHandler({ purchases, verifyUser, metrics, logger });
  const viewListener = skuViewHandler({ redis, purchases, views, metrics, logger });
  const honoListener = getRequestListener(app.fetch);
  const listener = (incoming: IncomingMessage, outgoing: ServerResponse) => {
    if (incoming.method === "POST" && incoming.url === placePurchase.path) {
      purchaseListener(incoming, outgoing);
      return;
    }
    const view = skuViewIds(incoming);
    if (view) viewListener(incoming, outgoing, view);
    else honoListener(incoming, outgoing);
  };
  // The operators' port: the probes again, and the metrics the public port does not serve.
  const operations = new Hono().route("/", operational.probes).route("/", operational.metrics);
  return Object.assign(app, { metrics, listener, metricsListener: getRequestListener(operations.fetch) });
}
