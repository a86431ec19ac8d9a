import { skuRef } from "@flashgate/cache";
import { skuSaleEnd } from "@flashgate/db";
import type { Pool } from "mysql2/promise";

export interface SkuWindow {
  endsMs: number;
}

/**
 * Whether a SKU exists in MySQL and when its sale ends, asked at most once per SKU per ttl and never
 * twice at the same time: requests for SKUs missing from Redis must not turn into a flood of reads.
 */
export function createSkuWindows(pool: Pool, ttlMs = 1000, maxKeys = 10_000) {
  const known = new Map<string, { window: SkuWindow | undefined; until: number }>();
  const pending = new Map<string, Promise<SkuWindow | undefined>>();
  return async function skuWindow(activityId: number, skuId: number): Promise<SkuWindow | undefined> {
    const key = skuRef(activityId, skuId);
    const cached = known.get(key);
    if (cached && cached.until > Date.now()) return cached.window;
    const inFlight = pending.get(key);
    if (inFlight) return inFlight;
    const lookup = skuSaleEnd(pool, activityId, skuId)
      .then((endsAt) => {
        const window = endsAt ? { endsMs: endsAt.getTime() } : undefined;
        if (known.size >= maxKeys) known.clear();
        known.set(key, { window, until: Date.now() + ttlMs });
        return window;
      })
      .finally(() => pending.delete(key));
    pending.set(key, lookup);
    return lookup;
  };
}
