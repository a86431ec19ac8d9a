import { once } from "node:events";
import { createLogger } from "@flashgate/logger";
import { loadConfig } from "@flashgate/purchase-api/config";
import { startPurchaseApi } from "@flashgate/purchase-api/start";
import { loadDirectoryFromDatabase, loadSkuFromDatabase } from "@flashgate/sync";
import { expect } from "vitest";
import { idempotencyKey, userToken } from "./api-harness.ts";
import { type clients, expectConverged } from "./cache-harness.ts";
import { appTierEnv } from "./env.ts";
import { freshIds } from "./ids.ts";
import { createSale } from "./sale-fixture.ts";

/** A purchase's ticket as the API answers it (ADR 0030). */
export interface TicketAnswer {
  requestId: string;
  state: "QUEUED" | "CREATED" | "REFUSED";
  skuId: number;
  queuedAt?: string;
  order?: { orderId: string; userId: number };
  refusal?: { code: string; status: number };
}

export interface ApiHarnessOptions {
  redisUrl?: string;
  databaseUrl?: string;
  env?: Record<string, string>;
}

/**
 * A real purchase-api in this process, over real HTTP, against the tier's Redis and database (the test
 * stack's, a fast tier's, or a proxy in front of them).
 */
export async function startApi(options: ApiHarnessOptions = {}) {
  // No purchase queue unless the test asks for one: a queue writer in every test's API would share
  // the queue's buyers out among them.
  const { KAFKA_BROKERS: _, ...env } = appTierEnv();
  const config = loadConfig({
    ...env,
    ...(options.redisUrl ? { REDIS_URL: options.redisUrl } : {}),
    ...(options.databaseUrl ? { DATABASE_URL: options.databaseUrl } : {}),
    LOG_LEVEL: "silent",
    RATE_LIMIT: "1000",
    // Tests read a view right after changing it; its freshness has a test of its own.
    VIEW_CACHE_MS: "0",
    // Every test client shares one loopback address; a stampede of them is the test, not an attack.
    HTTP_MAX_CONNECTIONS: "100000",
    HTTP_MAX_CONNECTIONS_PER_ADDRESS: "100000",
    METRICS_PORT: "0",
    ...options.env,
  });
  const api = await startPurchaseApi(config, createLogger("purchase-api-test", "silent"), {
    port: 0,
    host: "127.0.0.1",
  });
  const { app, redis, pool } = api;
  if (redis.status !== "ready") await once(redis, "ready");

  const purchase = async (
    userId: number,
    body: unknown,
    key = idempotencyKey(),
    headers: Record<string, string> = {},
  ) => {
    const response = await fetch(`${api.url}/v1/purchases`, {
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

  /** A buyer's ticket (GET /v1/tickets/{key}), held up to `waitS` seconds while it is queued. */
  const ticket = async (userId: number, key: string, waitS = 0) => {
    const response = await fetch(`${api.url}/v1/tickets/${key}?wait=${waitS}`, {
      headers: { authorization: `Bearer ${userToken(config.AUTH_JWT_SECRET, userId)}` },
    });
    return { status: response.status, body: (await response.json()) as TicketAnswer };
  };

  /** The ticket followed (each poll held up to 10 s) until it is no longer queued: its last answer. */
  const outcome = async (userId: number, key: string) => {
    for (;;) {
      const answer = await ticket(userId, key, 10);
      expect(answer.status).toBe(200);
      if (answer.body.state !== "QUEUED") return answer.body;
    }
  };

  const transactions = async () => {
    const metric = await app.metrics.transactions.get();
    return metric.values.reduce((sum, value) => sum + value.value, 0);
  };

  return {
    app,
    url: api.url,
    metricsUrl: api.metricsUrl,
    config,
    redis,
    pool,
    purchase,
    ticket,
    outcome,
    transactions,
    load: (activityId: number, skuId: number) => loadSkuFromDatabase(pool, redis, activityId, skuId),
    /** What the maintainer does at its first start: the sale directory, loaded whole. */
    loadDirectory: () => loadDirectoryFromDatabase(pool, redis),
    close: api.close,
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
