import { cacheEpochKey, type FlashgateRedis, loadSkuFromDatabase, rebuildQueueKey } from "@flashgate/cache";
import type { Logger } from "@flashgate/logger";
import type { Pool, RowDataPacket } from "mysql2/promise";
import type { MaintainerMetrics } from "./metrics.ts";

async function inParallel<T>(items: T[], width: number, task: (item: T) => Promise<void>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, items.length) }, async () => {
      while (next < items.length) await task(items[next++]);
    }),
  );
}

/**
 * Detects lost Redis data (FLUSHALL, a restart without persistence) by the epoch key the maintainer
 * sets after a full load, and rebuilds every SKU of a live or recent sale from MySQL. Also serves the
 * SKUs the API asked for (it finds them missing and queues them).
 */
export function createRebuilder(deps: {
  redis: FlashgateRedis;
  pool: Pool;
  metrics: MaintainerMetrics;
  logger: Logger;
}) {
  const { redis, pool, metrics, logger } = deps;
  let running: Promise<void> | undefined;

  async function rebuildAll(reason: string): Promise<number> {
    const started = Date.now();
    const [rows] = await pool.query<RowDataPacket[]>(
      `SELECT s.activity_id, s.sku_id FROM sale_stock s JOIN activity a ON a.id = s.activity_id
        WHERE a.ends_at > NOW(3) - INTERVAL 1 DAY`,
    );
    await inParallel(rows, 8, async (row) => {
      await loadSkuFromDatabase(pool, redis, Number(row.activity_id), Number(row.sku_id));
    });
    metrics.rebuilds.inc({ reason }, rows.length);
    await redis.set(cacheEpochKey, String(Date.now()));
    logger.info({ skus: rows.length, reason, ms: Date.now() - started }, "cache rebuilt from MySQL");
    return rows.length;
  }

  async function drainQueue(): Promise<number> {
    const requested = (await redis.spop(rebuildQueueKey, 100)) as string[];
    await inParallel(requested, 8, async (entry) => {
      const [activityId, skuId] = entry.split(":").map(Number);
      if (Number.isSafeInteger(activityId) && Number.isSafeInteger(skuId))
        await loadSkuFromDatabase(pool, redis, activityId, skuId);
    });
    if (requested.length) metrics.rebuilds.inc({ reason: "requested" }, requested.length);
    return requested.length;
  }

  /** One pass of the watchdog: full rebuild when the epoch is gone, then queued SKUs. Never overlaps itself. */
  async function check(): Promise<void> {
    if (running) return running;
    running = (async () => {
      if (!(await redis.exists(cacheEpochKey))) await rebuildAll("epoch-missing");
      await drainQueue();
    })().finally(() => {
      running = undefined;
    });
    return running;
  }

  return { rebuildAll, drainQueue, check };
}

export type Rebuilder = ReturnType<typeof createRebuilder>;
