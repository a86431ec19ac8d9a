import { cdcKeys, type FlashgateRedis } from "@flashgate/cache";
import { skusChangedSince } from "@flashgate/db";
import type { Logger } from "@flashgate/logger";
import type { Pool } from "mysql2/promise";
import type { MaintainerMetrics } from "./metrics.ts";
import type { Rebuilder } from "./rebuild.ts";

/** Rows written this close to the last applied heartbeat are read again: clocks and commits overlap. */
const overlapMs = 2000;

/**
 * While CDC is stalled — neither a heartbeat nor any change applied for `stallMs`: the task FAILED,
 * Connect or Kafka down, a position lost — buyers must still be sold what MySQL holds. Each pass then
 * loads from MySQL the SKUs whose stock row or sale window changed since the last heartbeat applied,
 * fenced by position exactly as a rebuild is; once CDC flows again its older changes are no-ops under
 * that fence, so nothing is applied twice and the cache converges from the stream.
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
    const [beat, moved] = await Promise.all([
      redis.get(cdcKeys.heartbeatApplied),
      redis.get(cdcKeys.changesApplied),
    ]);
    const beatAt = Number(beat ?? 0) || startedAt;
    // Behind is not stalled: while the stream still delivers (a burst's backlog, a replay after a
    // restart), its heartbeats are queued behind its changes, and reloading those SKUs from MySQL every
    // second would only compete with the stream for MySQL, Redis and the CPU. A maintainer just started
    // gives the stream the stall time to show it moves.
    const quietSince = Math.max(beatAt, Number(moved ?? 0), startedAt);
    const stalled = Date.now() - quietSince >= stallMs;
    metrics.cdcStalled.set(stalled ? 1 : 0);
    if (!stalled) {
      if (since) {
        // One last pass: a change committed after the previous pass but before the position the stream
        // resumed from (a reset connector streams from "now") would otherwise reach neither.
        await rebuilder.rebuildSkus((await skusChangedSince(pool, since)).skus, "cdc-stalled");
        logger.info("CDC flows again: the cache follows the binlog");
      }
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
    since = new Date(changed.nextSince.getTime() - overlapMs);
  }

  return { check };
}
