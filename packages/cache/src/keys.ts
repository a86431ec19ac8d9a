/**
 * Redis layout of one SKU. Every key carries the hash tag {a:s}, so each Lua call touches one slot and
 * runs unchanged on Redis Cluster.
 *   fg:{a:s}:sku      hash   available (as applied), price_cents, currency, starts_ms, ends_ms, rebuy,
 *                            pos (last applied binlog position), lag sample fields
 *   fg:{a:s}:buyers   set    user ids holding an order that blocks another purchase
 *   fg:{a:s}:res      zset   in-flight reservations: member user id, score expiry (ms)
 *   fg:{a:s}:resreq   hash   user id → request id of that reservation
 *   fg:{a:s}:rl:<u>   string per-user request counter of the current rate window
 */
export interface SkuKeys {
  sku: string;
  buyers: string;
  reservations: string;
  reservationRequests: string;
  ratePrefix: string;
}

export function skuKeys(activityId: number, skuId: number): SkuKeys {
  const tag = `{${activityId}:${skuId}}`;
  return {
    sku: `fg:${tag}:sku`,
    buyers: `fg:${tag}:buyers`,
    reservations: `fg:${tag}:res`,
    reservationRequests: `fg:${tag}:resreq`,
    ratePrefix: `fg:${tag}:rl:`,
  };
}

/** SKUs of an activity, so an activity change reaches each SKU's own slot. */
export const activitySkusKey = (activityId: number) => `fg:activity:${activityId}:skus`;

/** SKUs the API found missing in Redis; the maintainer rebuilds them from MySQL. */
export const rebuildQueueKey = "fg:rebuild";

/** Set by the maintainer once the cache holds everything; gone after FLUSHALL or a Redis restart without data. */
export const cacheEpochKey = "fg:epoch";
