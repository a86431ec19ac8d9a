import { type FlashgateRedis, redisClient, type SkuLoad, skuKeys, withScripts } from "@flashgate/cache";
import { binlogPosition, topicPartitions, topics } from "@flashgate/cdc";
import { createPool } from "@flashgate/db";
import { maintainerEnv } from "@flashgate/stack";
import { compareSku } from "@flashgate/sync";
import { expect } from "vitest";
import { stackEnv } from "./env.ts";
import { eventually } from "./eventually.ts";
import { type AppProcess, startAppProcess } from "./processes.ts";

const hour = 3600_000;

/** A SKU as a load writes it into Redis: on sale for an hour around now, 10 units, no buyers, read at position 1000. */
export const openSkuLoad = (fields: Partial<SkuLoad> = {}): SkuLoad => ({
  position: binlogPosition("binlog.000002", 1000, 0),
  available: 10,
  priceCents: 1999,
  currency: "EUR",
  startsAt: new Date(Date.now() - hour),
  endsAt: new Date(Date.now() + hour),
  rebuyAfterClose: false,
  admission: null,
  buyers: [],
  ...fields,
});

/** A cache-maintainer on the test stack, as its own database account. */
export const startMaintainer = (env: Record<string, string> = {}) =>
  startAppProcess("cache-maintainer", { ...maintainerEnv(stackEnv()), ...env });

/**
 * One counter or gauge of the maintainer's /metrics, summed over its labels; with `labels` (as Prometheus
 * prints them, `topic="flashgate.sale"`) only the series that has exactly those.
 */
export async function maintainerMetric(
  maintainer: AppProcess,
  name: string,
  labels?: string,
): Promise<number> {
  const text = await (await fetch(`${maintainer.url}/metrics`)).text();
  const matches = (line: string) =>
    labels === undefined
      ? line.startsWith(`${name} `) || line.startsWith(`${name}{`)
      : line.startsWith(`${name}{${labels}} `);
  return text
    .split("\n")
    .filter(matches)
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(" ") + 1)), 0);
}

/** Until every maintainer consumes some of the sale topic's partitions and together all of them. */
export const awaitPartitionsShared = (maintainers: AppProcess[]) =>
  eventually(
    async () => {
      const owned = await Promise.all(
        maintainers.map((maintainer) =>
          maintainerMetric(maintainer, "flashgate_kafka_assigned_partitions", `topic="${topics.sale}"`),
        ),
      );
      expect(owned.every((n) => n > 0) && owned.reduce((a, b) => a + b, 0)).toBe(topicPartitions);
    },
    { timeoutMs: 60_000 },
  );

export function clients() {
  const env = stackEnv();
  const redis: FlashgateRedis = withScripts(redisClient(env.REDIS_URL));
  // A dropped connection is reconnected by ioredis; a test that needs Redis fails on its own commands.
  redis.on("error", () => {});
  const pool = createPool(env.DATABASE_URL, { connectionLimit: 4 });
  // Teardown of a connection that is already gone has nothing left to do.
  const quit = () => redis.quit().catch(() => redis.disconnect());
  return { redis, pool, close: async () => Promise.all([pool.end(), quit()]) };
}

/** Waits until Redis tells exactly what MySQL holds for the SKU. */
export async function expectConverged(
  c: ReturnType<typeof clients>,
  activityId: number,
  skuId: number,
  timeoutMs = 30_000,
) {
  const started = Date.now();
  await eventually(
    async () => expect((await compareSku(c.pool, c.redis, activityId, skuId)).equal).toBe(true),
    { timeoutMs },
  );
  return Date.now() - started;
}

export const cachedAvailable = async (redis: FlashgateRedis, activityId: number, skuId: number) =>
  Number(await redis.hget(skuKeys(activityId, skuId).sku, "available"));
