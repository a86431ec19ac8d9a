import { readSkuSnapshot } from "@flashgate/db";
import type { Pool } from "mysql2/promise";
import { buyerField, skuKeys } from "./keys.ts";
import type { FlashgateRedis } from "./scripts.ts";

export interface SkuState {
  available: number;
  /** Blocking buyers' user ids, ascending. */
  buyers: string[];
}

/** The one rule for "the cache tells the truth": same applied availability, same blocking buyers. */
export function cacheMatches(database: SkuState | undefined, cache: SkuState | undefined): boolean {
  if (!database || !cache) return database === cache;
  return cache.available === database.available && cache.buyers.join(",") === database.buyers.join(",");
}

const buyerPrefix = buyerField("");

export async function readCacheState(redis: FlashgateRedis, activityId: number, skuId: number) {
  const keys = skuKeys(activityId, skuId);
  const hash = await redis.hgetall(keys.sku);
  if (hash.available === undefined) return undefined;
  const buyers = Object.keys(hash)
    .filter((field) => field.startsWith(buyerPrefix))
    .map((field) => field.slice(buyerPrefix.length));
  return {
    available: Number(hash.available),
    buyers: buyers.sort((a, b) => Number(a) - Number(b)),
    position: String(hash.pos),
  };
}

export interface SkuComparison {
  database: SkuState | undefined;
  cache: (SkuState & { position: string }) | undefined;
  equal: boolean;
}

/** MySQL beside Redis right now, without the drift check's fencing: for tests and tools that wait for convergence. */
export async function compareSku(
  pool: Pool,
  redis: FlashgateRedis,
  activityId: number,
  skuId: number,
): Promise<SkuComparison> {
  const [database, cache] = await Promise.all([
    readSkuSnapshot(pool, activityId, skuId),
    readCacheState(redis, activityId, skuId),
  ]);
  return { database, cache, equal: cacheMatches(database, cache) };
}
