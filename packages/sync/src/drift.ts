import { buyerField, type FlashgateRedis, skuKeys } from "@flashgate/cache";
import { readSkuSnapshot, type SkuSnapshot } from "@flashgate/db";
import type { Pool } from "mysql2/promise";

export interface SkuState {
  available: number;
  /** Blocking buyers' user ids, ascending. */
  buyers: string[];
  priceCents: number;
  currency: string;
  startsMs: number;
  endsMs: number;
}

/** A MySQL read in the cache's terms. */
export const databaseState = (snapshot: SkuSnapshot | undefined): SkuState | undefined =>
  snapshot && {
    available: snapshot.available,
    buyers: snapshot.buyers,
    priceCents: snapshot.priceCents,
    currency: snapshot.currency,
    startsMs: snapshot.startsAt.getTime(),
    endsMs: snapshot.endsAt.getTime(),
  };

/**
 * The one rule for "the cache tells the truth": same applied availability and blocking buyers, and the
 * same price and sale window that the fast path and the product page answer with.
 */
export function cacheMatches(database: SkuState | undefined, cache: SkuState | undefined): boolean {
  if (!database || !cache) return database === cache;
  return (
    cache.available === database.available &&
    cache.buyers.join(",") === database.buyers.join(",") &&
    cache.priceCents === database.priceCents &&
    cache.currency === database.currency &&
    cache.startsMs === database.startsMs &&
    cache.endsMs === database.endsMs
  );
}

const buyerPrefix = buyerField("");

export async function readCacheState(
  redis: FlashgateRedis,
  activityId: number,
  skuId: number,
): Promise<(SkuState & { position: string }) | undefined> {
  const keys = skuKeys(activityId, skuId);
  const hash = await redis.hgetall(keys.sku);
  if (hash.available === undefined) return undefined;
  const buyers = Object.keys(hash)
    .filter((field) => field.startsWith(buyerPrefix))
    .map((field) => field.slice(buyerPrefix.length));
  return {
    available: Number(hash.available),
    buyers: buyers.sort((a, b) => Number(a) - Number(b)),
    priceCents: Number(hash.price_cents),
    currency: String(hash.currency),
    startsMs: Number(hash.starts_ms),
    endsMs: Number(hash.ends_ms),
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
  const [snapshot, cache] = await Promise.all([
    readSkuSnapshot(pool, activityId, skuId),
    readCacheState(redis, activityId, skuId),
  ]);
  const database = databaseState(snapshot);
  return { database, cache, equal: cacheMatches(database, cache) };
}
