import { randomUUID } from "node:crypto";
import { binlogPosition } from "@flashgate/cdc";
import { readSkuSnapshot, type SkuSnapshot } from "@flashgate/db";
import type { Pool } from "mysql2/promise";
import { activitySkusKey, buyerField, skuKeys, skuRef, unitsBackChannel } from "./keys.ts";
import type { FlashgateRedis } from "./scripts.ts";

/** Keys of an ended sale linger this long for the back-office, then expire. */
export const endedGraceMs = 24 * 3600 * 1000;

/** Buyers written per command while staging a load: any number of buyers, bounded arguments per call. */
const buyersPerChunk = 1000;

/** How long a staging hash may outlive a crashed load. */
const stagingTtlMs = 10 * 60_000;

/** "ended": the sale ended longer ago than the grace, so nothing is kept (the answer is the closed window). */
export type LoadResult = "loaded" | "newer_in_cache" | "unknown_sku" | "ended";

/**
 * Rebuilds one SKU's maintained state from MySQL, fenced by the binlog position of the read: the
 * same function serves first loads, FLUSHALL recovery and drift repair. The buyers go into a staging
 * hash of this load alone, in chunks, which load.lua then swaps in whole. `force` replaces the state
 * whatever its position: only after the binlog source changed, when cached positions mean nothing.
 */
export async function loadSkuFromDatabase(
  pool: Pool,
  redis: FlashgateRedis,
  activityId: number,
  skuId: number,
  options: { force?: boolean } = {},
): Promise<LoadResult> {
  const snapshot = await readSkuSnapshot(pool, activityId, skuId);
  if (!snapshot) return "unknown_sku";
  return writeSkuSnapshot(redis, activityId, skuId, snapshot, options);
}

/** The Redis half of a load: stages the read's buyers, then swaps the SKU's state in whole (load.lua). */
export async function writeSkuSnapshot(
  redis: FlashgateRedis,
  activityId: number,
  skuId: number,
  snapshot: SkuSnapshot,
  options: { force?: boolean } = {},
): Promise<Exclude<LoadResult, "unknown_sku">> {
  if (snapshot.endsAt.getTime() + endedGraceMs <= Date.now()) return "ended";
  const keys = skuKeys(activityId, skuId);
  const staging = `${keys.loadPrefix}${randomUUID()}`;
  for (let i = 0; i < snapshot.buyers.length; i += buyersPerChunk) {
    const fields = snapshot.buyers.slice(i, i + buyersPerChunk).flatMap((user) => [buyerField(user), 1]);
    const replies = await redis
      .multi()
      .hset(staging, ...fields)
      .pexpire(staging, stagingTtlMs)
      .exec();
    const failed = replies?.find(([error]) => error);
    if (failed) throw failed[0];
  }
  const applied = await redis.fgLoad(
    keys.sku,
    keys.reservations,
    keys.reservationRequests,
    staging,
    binlogPosition(snapshot.binlogFile, snapshot.binlogPos, 0),
    snapshot.available,
    snapshot.priceCents,
    snapshot.currency,
    snapshot.startsAt.getTime(),
    snapshot.endsAt.getTime(),
    snapshot.rebuyAfterClose ? 1 : 0,
    endedGraceMs,
    snapshot.buyers.length,
    options.force ? 1 : 0,
    unitsBackChannel,
    skuRef(activityId, skuId),
  );
  await redis.sadd(activitySkusKey(activityId), String(skuId));
  return applied === 1 ? "loaded" : "newer_in_cache";
}
