import { type FlashgateRedis, type LoadResult, writeSkuLoad } from "@flashgate/cache";
import { binlogPosition } from "@flashgate/cdc";
import { readSkuSnapshot } from "@flashgate/db";
import type { Pool } from "mysql2/promise";

/**
 * Rebuilds one SKU's maintained state from MySQL, fenced by the binlog position of the read: the
 * same function serves first loads, FLUSHALL recovery and drift repair.
 */
export async function loadSkuFromDatabase(
  pool: Pool,
  redis: FlashgateRedis,
  activityId: number,
  skuId: number,
  options: { force?: boolean } = {},
): Promise<LoadResult | "unknown_sku"> {
  const snapshot = await readSkuSnapshot(pool, activityId, skuId);
  if (!snapshot) return "unknown_sku";
  const position = binlogPosition(snapshot.binlogFile, snapshot.binlogPos, 0);
  return writeSkuLoad(redis, activityId, skuId, { ...snapshot, position }, options);
}
