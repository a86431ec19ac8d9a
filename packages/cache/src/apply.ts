import type { SkuChange } from "@flashgate/cdc";
import { activitySkusKey, endedGraceMs, skuKeys, skuRef, unitsBackChannel } from "./keys.ts";
import type { FlashgateRedis } from "./scripts.ts";

export interface ApplyResult {
  applied: number;
  skipped: number;
  /** Index of the first change not handled (0-based), when the verdict is REBUILD. */
  stoppedAt: number;
  verdict: "OK" | "REBUILD" | "GONE";
}

/** One EVALSHA per batch of one SKU's changes, in commit order, each guarded by binlog position. */
export async function applySkuChanges(
  redis: FlashgateRedis,
  activityId: number,
  skuId: number,
  changes: SkuChange[],
): Promise<ApplyResult> {
  const keys = skuKeys(activityId, skuId);
  const [applied, skipped, stoppedAt, verdict] = (await redis.fgApply(
    keys.sku,
    keys.reservations,
    keys.reservationRequests,
    JSON.stringify(changes),
    endedGraceMs,
    unitsBackChannel,
    skuRef(activityId, skuId),
  )) as [number, number, number, ApplyResult["verdict"]];
  if (verdict === "GONE") await redis.srem(activitySkusKey(activityId), String(skuId));
  return { applied, skipped, stoppedAt: stoppedAt - 1, verdict };
}

export interface ActivityWindow {
  position: string;
  startsMs: number;
  endsMs: number;
  rebuy: boolean;
  /** sync, queued or auto; none or null: as the purchase API's PURCHASE_ADMISSION. */
  admission?: string | null;
}

/**
 * Copies an activity's window into each of its cached SKUs (each SKU is its own slot). Each SKU
 * succeeds or fails on its own: the failures are returned, for the caller to handle SKU by SKU.
 */
export async function applyActivityChange(
  redis: FlashgateRedis,
  activityId: number,
  window: ActivityWindow,
): Promise<{ applied: number; failed: { skuId: number; error: unknown }[] }> {
  const skus = (await redis.smembers(activitySkusKey(activityId))).map(Number);
  const results = await Promise.allSettled(
    skus.map((skuId) => {
      const keys = skuKeys(activityId, skuId);
      return redis.fgActivity(
        keys.sku,
        keys.reservations,
        keys.reservationRequests,
        window.position,
        window.startsMs,
        window.endsMs,
        window.rebuy ? 1 : 0,
        endedGraceMs,
        window.admission ?? "",
      );
    }),
  );
  const failed = results.flatMap((result, i) =>
    result.status === "rejected" ? [{ skuId: skus[i], error: result.reason as unknown }] : [],
  );
  const applied = results.filter((result) => result.status === "fulfilled" && result.value === 1).length;
  return { applied, failed };
}

/** An activity row was deleted: its SKUs can no longer be sold, so their cache state goes. */
export async function removeActivity(redis: FlashgateRedis, activityId: number): Promise<void> {
  const setKey = activitySkusKey(activityId);
  for (const sku of await redis.smembers(setKey)) {
    const keys = skuKeys(activityId, Number(sku));
    await redis.del(keys.sku, keys.reservations, keys.reservationRequests);
  }
  await redis.del(setKey);
}
