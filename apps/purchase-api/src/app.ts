import { randomUUID } from "node:crypto";
import { createJwtVerifier } from "@flashgate/auth";
import type { FlashgateRedis } from "@flashgate/cache";
import { isDatabaseUnreachable } from "@flashgate/db";
import type { Logger } from "@flashgate/logger";
import { createOverloadGuard, createPurchaseService } from "@flashgate/sale";
import { Hono } from "hono";
import { HTTPException } from "hono/http-exception";
import type { Pool } from "mysql2/promise";
import { requireAdmin, requireUser } from "./auth.ts";
import type { PurchaseApiConfig } from "./config.ts";
import type { AppEnv } from "./env.ts";
import { createMetrics, type Metrics } from "./metrics.ts";
import { ApiError, problemOf } from "./problem.ts";
import { adminRoutes } from "./routes/admin.ts";
import { healthRoutes } from "./routes/health.ts";
import { paymentRoutes } from "./routes/payments.ts";
import { purchaseRoutes } from "./routes/purchases.ts";
import { skuViewRoutes } from "./routes/sku-view.ts";

export interface AppDeps {
  config: PurchaseApiConfig;
  redis: FlashgateRedis;
  pool: Pool;
  logger: Logger;
  metrics?: Metrics;
}

const traceIdPattern = /^[A-Za-z0-9-]{8,64}$/;

export function createApp(deps: AppDeps) {
  const { config, redis, pool, logger } = deps;
  const metrics = deps.metrics ?? createMetrics();
  const guard = createOverloadGuard({
    maxInFlight: config.DB_MAX_IN_FLIGHT,
    maxQueue: config.DB_MAX_QUEUE,
    maxWaitMs: config.DB_QUEUE_TIMEOUT_MS,
  });
  const purchases = createPurchaseService({
    redis,
    pool,
    guard,
    limits: {
      reservationTtlMs: config.RESERVATION_TTL_MS,
      rateLimit: config.RATE_LIMIT,
      rateWindowMs: config.RATE_WINDOW_MS,
    },
    soldOutCacheMs: config.SOLD_OUT_CACHE_MS,
    observer: metrics.observer,
  });
  const verifyUser = createJwtVerifier(config.AUTH_JWT_SECRET);
  const verifyAdmin = createJwtVerifier(config.ADMIN_JWT_SECRET);

  const app = new Hono<AppEnv>();
  app.use(async (c, next) => {
    const given = c.req.header("x-request-id");
    const traceId = given && traceIdPattern.test(given) ? given : randomUUID();
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

  app.route("/", healthRoutes({ redis, pool, registry: metrics.registry }));
  app.use("/v1/purchases/*", requireUser(verifyUser));
  app.use("/v1/purchases", requireUser(verifyUser));
  app.route("/v1/purchases", purchaseRoutes({ purchases, pool, metrics }));
  app.route("/v1/activities", skuViewRoutes({ redis, purchases }));
  app.route("/v1/payments", paymentRoutes({ pool, secret: config.PAYMENT_WEBHOOK_SECRET }));
  app.use("/admin/v1/*", requireAdmin(verifyAdmin, verifyUser));
  app.route("/admin/v1", adminRoutes({ pool, redis }));

  app.notFound((c) => problemOf(c, new ApiError("NOT_FOUND", `no route for ${c.req.method} ${c.req.path}`)));
  app.onError((error, c) => {
    if (error instanceof ApiError) return problemOf(c, error);
    if (error instanceof HTTPException) {
      const code =
        error.status === 401
          ? "UNAUTHORIZED"
          : error.status === 413
            ? "PAYLOAD_TOO_LARGE"
            : "INVALID_REQUEST";
      return problemOf(c, new ApiError(code, error.message || "invalid request"));
    }
    if (isDatabaseUnreachable(error)) {
      return problemOf(c, new ApiError("UNAVAILABLE", "a dependency is unavailable", 2));
    }
    // Never leak a stack, SQL or secret to the caller: the detail stays in the log, joined by trace id.
    logger.error({ err: error, traceId: c.get("traceId"), path: c.req.path }, "unhandled error");
    return problemOf(c, new ApiError("INTERNAL", "internal error"));
  });
  return Object.assign(app, { purchases, metrics, guard });
}
