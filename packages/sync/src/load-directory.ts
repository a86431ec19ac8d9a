import {
  type DirectoryEntry,
  type FlashgateRedis,
  markDirectoryComplete,
  markDirectoryIncomplete,
  presentEntries,
  readDirectory,
  skuRef,
  writeDirectory,
} from "@flashgate/cache";
import { binlogPosition } from "@flashgate/cdc";
import { readSaleDirectory } from "@flashgate/db";
import type { Pool } from "mysql2/promise";

/**
 * Loads the sale directory whole from MySQL, fenced by the read's position: every activity and SKU that
 * exists, and a deletion for each entry the directory holds that MySQL no longer does (a change CDC never
 * delivered). Then marks it complete: from then on the API answers ids the cache lacks from it alone.
 * `force` (after the binlog source changed) first marks it incomplete, since its positions fence nothing.
 */
export async function loadDirectoryFromDatabase(
  pool: Pool,
  redis: FlashgateRedis,
  options: { force?: boolean } = {},
): Promise<{ activities: number; skus: number; removed: number }> {
  if (options.force) await markDirectoryIncomplete(redis);
  const read = await readSaleDirectory(pool);
  const position = binlogPosition(read.binlogFile, read.binlogPos, 0);
  const entries: DirectoryEntry[] = [
    ...read.activities.map(({ activityId, endsAt }) => ({
      kind: "activity" as const,
      activityId,
      position,
      endsMs: endsAt.getTime(),
    })),
    ...read.skus.map(({ activityId, skuId }) => ({
      kind: "sku" as const,
      activityId,
      skuId,
      position,
      exists: true,
    })),
  ];
  const activities = new Set(read.activities.map((activity) => activity.activityId));
  const skus = new Set(read.skus.map((sku) => skuRef(sku.activityId, sku.skuId)));
  let removed = 0;
  for (const [activityId, fields] of await readDirectory(redis)) {
    const present = presentEntries(fields);
    const stale: DirectoryEntry[] = present.skus
      .filter((skuId) => !skus.has(skuRef(activityId, skuId)))
      .map((skuId) => ({ kind: "sku", activityId, skuId, position, exists: false }));
    if (present.window && !activities.has(activityId))
      stale.push({ kind: "activity", activityId, position, endsMs: undefined });
    removed += stale.length;
    entries.push(...stale);
  }
  await writeDirectory(redis, entries, options);
  await markDirectoryComplete(redis);
  return { activities: read.activities.length, skus: read.skus.length, removed };
}
