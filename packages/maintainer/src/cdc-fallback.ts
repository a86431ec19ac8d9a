import { cdcKeys, type FlashgateRedis } from "@flashgate/cache";
import { skusChangedSince } from "@flashgate/db";
import type { Logger } from "@flashgate/logger";
import type { Pool } from "mysql2/promise";
import type { MaintainerMetrics } from "./metrics.ts";
import type { Rebuilder } from "./rebuild.ts";

/** Rows written this close to the last applied heartbeat are read again: clocks and commits overlap. */
const overlapMs = 2000;

/**
 * While CDC is stalled — no heartbeat applied for `stallMs`: the task FAILED, Connect or Kafka down, a
 * position lost — buyers must still be sold what MySQL holds. Each pass then loads from MySQL the SKUs
 * whose stock row or sale window changed since CDC last delivered, fenced by position exactly as a
 * rebuild is; once CDC flows again its older changes are no-ops under that fence, so nothing is
 * applied twice and the cache converges from the stream.
 */
export function createCdcFallback(deps: {
  pool: Pool;
  redis: FlashgateRedis;
  rebuilder: Rebuilder;
  metrics: MaintainerMetrics;
  logger: Logger;
  stallMs: number;
}) {
  const { pool, redis, rebuilder, metrics, logger, stallMs } = deps;
  const startedAt = Date.now();
  let since: Date | undefined;

  async function check(): Promise<void> {
    const beatAt = Number((await redis.get(cdcKeys.heartbeatApplied)) ?? 0) || startedAt;
    const stalled = Date.now() - beatAt >= stallMs;
    metrics.cdcStalled.set(stalled ? 1 : 0);
    if (!stalled) {
      if (since) logger.info("CDC flows again: the cache follows the binlog");
      since = undefined;
      return;
    }
    if (!since) {
      logger.error(
        { lastHeartbeatMsAgo: Date.now() - beatAt },
        "CDC stalled: no heartbeat applied; loading changed SKUs from MySQL until it flows again",
      );
      since = new Date(beatAt - overlapMs);
    }
    const changed = await skusChangedSince(pool, since);
    await rebuilder.rebuildSkus(changed.skus, "cdc-stalled");
    since = new Date(changed.now.getTime() - overlapMs);
  }

  return { check };
}
