import type { Pool, RowDataPacket } from "mysql2/promise";

/**
 * Whether a SKU exists in MySQL, asked at most once per SKU per ttl and never twice at the same time:
 * requests for SKUs missing from Redis must not turn into a flood of database reads.
 */
export function createSkuExistence(pool: Pool, ttlMs = 1000, maxKeys = 10_000) {
  const known = new Map<string, { exists: boolean; until: number }>();
  const pending = new Map<string, Promise<boolean>>();
  return async function skuExists(activityId: number, skuId: number): Promise<boolean> {
    const key = `${activityId}:${skuId}`;
    const cached = known.get(key);
    if (cached && cached.until > Date.now()) return cached.exists;
    const inFlight = pending.get(key);
    if (inFlight) return inFlight;
    const lookup = pool
      .query<RowDataPacket[]>("SELECT 1 FROM sale_stock WHERE activity_id = ? AND sku_id = ?", [
        activityId,
        skuId,
      ])
      .then(([rows]) => {
        if (known.size >= maxKeys) known.clear();
        known.set(key, { exists: rows.length > 0, until: Date.now() + ttlMs });
        return rows.length > 0;
      })
      .finally(() => pending.delete(key));
    pending.set(key, lookup);
    return lookup;
  };
}
