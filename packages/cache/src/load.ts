import { randomUUID } from "node:crypto";
import { activitySkusKey, buyerField, endedGraceMs, skuKeys, skuRef, unitsBackChannel } from "./keys.ts";
import type { FlashgateRedis } from "./scripts.ts";

/** Buyers written per command while staging a load: any number of buyers, bounded arguments per call. */
const buyersPerChunk = 1000;

/** How long a staging hash may outlive a crashed load. */
const stagingTtlMs = 10 * 60_000;

/** One SKU as the database holds it, read at `position` (a binlog position, as CDC events carry). */
export interface SkuLoad {
  position: string;
  available: number;
  priceCents: number;
  currency: string;
  startsAt: Date;
  endsAt: Date;
  rebuyAfterClose: boolean;
  /** How its admitted buyers are answered (sync, queued, auto); null: as the purchase API's default. */
  admission: string | null;
  /** Users whose order blocks another purchase, ascending. */
  buyers: string[];
  /** Each buyer's order's key, in the order of `buyers`; without them a buyer's key is unknown ("1"). */
  buyerKeys?: string[];
}

/** "ended": the sale ended longer ago than the grace, so nothing is kept (the answer is the closed window). */
export type LoadResult = "loaded" | "newer_in_cache" | "ended";

/**
 * Writes one SKU's state as read from the database, fenced by the read's position: the buyers go into a
 * staging hash of this load alone, in chunks, which load.lua then swaps in whole unless the cache
 * already holds a newer position. `force` replaces the state whatever its position: only after the
 * binlog source changed, when cached positions mean nothing.
 */
export async function writeSkuLoad(
  redis: FlashgateRedis,
  activityId: number,
  skuId: number,
  snapshot: SkuLoad,
  options: { force?: boolean } = {},
): Promise<LoadResult> {
  if (snapshot.endsAt.getTime() + endedGraceMs <= Date.now()) return "ended";
  const keys = skuKeys(activityId, skuId);
  const staging = `${keys.loadPrefix}${randomUUID()}`;
  for (let i = 0; i < snapshot.buyers.length; i += buyersPerChunk) {
    const fields = snapshot.buyers
      .slice(i, i + buyersPerChunk)
      .flatMap((user, j) => [buyerField(user), snapshot.buyerKeys?.[i + j] ?? 1]);
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
    snapshot.position,
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
    snapshot.admission ?? "",
  );
  await redis.sadd(activitySkusKey(activityId), String(skuId));
  return applied === 1 ? "loaded" : "newer_in_cache";
}
