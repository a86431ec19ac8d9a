import { binlogPosition } from "@flashgate/cdc";
import { readSkuSnapshot } from "@flashgate/db";
import type { Pool } from "mysql2/promise";
import { activitySkusKey, skuKeys } from "./keys.ts";
import type { FlashgateRedis } from "./scripts.ts";

/** Keys of an ended sale linger this long for the back-office, then expire. */
export const endedGraceMs = 24 * 3600 * 1000;

export type LoadResult = "loaded" | "newer_in_cache" | "unknown_sku";

/**
 * Rebuilds one SKU's maintained state from MySQL, fenced by the binlog position of the read: the
 * same function serves first loads, FLUSHALL recovery and drift repair.
 */
export async function loadSkuFromDatabase(
  pool: Pool,
  redis: FlashgateRedis,
  activityId: number,
  skuId: number,
): Promise<LoadResult> {
  const snapshot = await readSkuSnapshot(pool, activityId, skuId);
  if (!snapshot) return "unknown_sku";
  const keys = skuKeys(activityId, skuId);
  const applied = await redis.fgLoad(
    keys.sku,
    keys.reservations,
    keys.reservationRequests,
    binlogPosition(snapshot.binlogFile, snapshot.binlogPos, 0),
    snapshot.available,
    snapshot.priceCents,
    snapshot.currency,
    snapshot.startsAt.getTime(),
    snapshot.endsAt.getTime(),
    snapshot.rebuyAfterClose ? 1 : 0,
    snapshot.endsAt.getTime() + endedGraceMs,
    ...snapshot.buyers,
  );
  await redis.sadd(activitySkusKey(activityId), String(skuId));
  return applied === 1 ? "loaded" : "newer_in_cache";
}
