import { loadSkuFromDatabase, withScripts } from "@flashgate/cache";
import { createPool, warmPool } from "@flashgate/db";
import { createLogger } from "@flashgate/logger";
import { idempotencyKey, serveApp, stackEnv, userToken } from "@flashgate/testkit";
import { Redis } from "ioredis";
import { createApp } from "../src/app.ts";
import { loadConfig } from "../src/config.ts";

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
    new Redis(config.REDIS_URL, { enableOfflineQueue: false, maxRetriesPerRequest: 0, connectTimeout: 1000 }),
  );
  redis.on("error", () => {});
  await new Promise((resolve) => redis.once("ready", resolve));
  const subscriber = redis.duplicate({ enableOfflineQueue: true });
  subscriber.on("error", () => {});
  const pool = createPool(config.DATABASE_URL, {
    connectionLimit: config.DB_POOL_SIZE,
    multipleStatements: true,
  });
  if (!options.databaseUrl) await warmPool(pool, config.DB_POOL_SIZE);
  const app = createApp({
    config,
    redis,
    subscriber,
    pool,
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
      redis.disconnect();
      subscriber.disconnect();
    },
  };
}

export type ApiHarness = Awaited<ReturnType<typeof startApi>>;
