import { redisClient, withScripts } from "@flashgate/cache";
import { warmPool } from "@flashgate/db";
import { createLogger } from "@flashgate/logger";
import { createApp, createPools } from "@flashgate/purchase-api/app";
import { loadConfig } from "@flashgate/purchase-api/config";
import { loadSkuFromDatabase } from "@flashgate/sync";
import { expect } from "vitest";
import { idempotencyKey, serveApp, userToken } from "./api-harness.ts";
import { type clients, expectConverged } from "./cache-harness.ts";
import { stackEnv } from "./env.ts";
import { freshIds } from "./ids.ts";
import { createSale } from "./sale-fixture.ts";

export interface ApiHarnessOptions {
  redisUrl?: string;
  databaseUrl?: string;
  env?: Record<string, string>;
}

/** A real purchase-api over real HTTP against the test stack (or a proxy in front of it). */
export async function startApi(options: ApiHarnessOptions = {}) {
  const env = stackEnv();
  const config = loadConfig({
    ...env,
    ...(options.redisUrl ? { REDIS_URL: options.redisUrl } : {}),
    ...(options.databaseUrl ? { DATABASE_URL: options.databaseUrl } : {}),
    LOG_LEVEL: "silent",
    RATE_LIMIT: "1000",
    ...options.env,
  });
  const redis = withScripts(
    redisClient(config.REDIS_URL, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      connectTimeout: 1000,
    }),
  );
  redis.on("error", () => {});
  await new Promise((resolve) => redis.once("ready", resolve));
  const subscriber = redisClient(config.REDIS_URL, { connectTimeout: 1000 });
  subscriber.on("error", () => {});
  const { pool, readPool } = createPools(config);
  if (!options.databaseUrl) await warmPool(pool, config.DB_POOL_SIZE);
  const app = createApp({
    config,
    redis,
    subscriber,
    pool,
    readPool,
    logger: createLogger("purchase-api-test", "silent"),
  });
  const server = await serveApp(app.listener);

  const purchase = async (
    userId: number,
    body: unknown,
    key = idempotencyKey(),
    headers: Record<string, string> = {},
  ) => {
    const response = await fetch(`${server.url}/v1/purchases`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${userToken(config.AUTH_JWT_SECRET, userId)}`,
        "idempotency-key": key,
        "content-type": "application/json",
        ...headers,
      },
      body: typeof body === "string" ? body : JSON.stringify(body),
    });
    return {
      status: response.status,
      headers: response.headers,
      body: (await response.json()) as Record<string, unknown>,
      key,
    };
  };

  const transactions = async () => {
    const metric = await app.metrics.transactions.get();
    return metric.values.reduce((sum, value) => sum + value.value, 0);
  };

  return {
    app,
    url: server.url,
    config,
    redis,
    pool,
    purchase,
    transactions,
    load: (activityId: number, skuId: number) => loadSkuFromDatabase(pool, redis, activityId, skuId),
    async close() {
      await server.close();
      await pool.end().catch(() => {});
      await readPool.end().catch(() => {});
      redis.disconnect();
      subscriber.disconnect();
    },
  };
}

export type ApiHarness = Awaited<ReturnType<typeof startApi>>;

/** A one-unit sale, sold to user 1 and seen sold out by user 2 once the cache has caught up. */
export async function soldOutSale(c: ReturnType<typeof clients>, api: ApiHarness) {
  const sale = freshIds();
  await createSale(c.pool, { ...sale, units: 1 });
  await expectConverged(c, sale.activityId, sale.skuId);
  expect((await api.purchase(1, sale)).status).toBe(201);
  await expectConverged(c, sale.activityId, sale.skuId);
  expect((await api.purchase(2, sale)).body.code).toBe("SOLD_OUT");
  return sale;
}
