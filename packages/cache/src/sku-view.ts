import { skuKeys } from "./keys.ts";
import type { FlashgateRedis } from "./scripts.ts";

export interface CachedSku {
  available: number;
  priceCents: number;
  currency: string;
  startsMs: number;
  endsMs: number;
  rebuy: boolean;
  position: string;
  liveReservations: number;
  buyers: number;
}

/** The cache's view of one SKU, or undefined when Redis does not hold it (never loaded, expired, or lost). */
export async function readCachedSku(
  redis: FlashgateRedis,
  activityId: number,
  skuId: number,
  nowMs = Date.now(),
): Promise<CachedSku | undefined> {
  const keys = skuKeys(activityId, skuId);
  const [[, hash], [, reservations], [, buyers]] = (await redis
    .multi()
    .hgetall(keys.sku)
    .zcount(keys.reservations, nowMs, "+inf")
    .scard(keys.buyers)
    .exec()) as [[null, Record<string, string>], [null, number], [null, number]];
  if (!hash || hash.available === undefined) return undefined;
  return {
    available: Number(hash.available),
    priceCents: Number(hash.price_cents),
    currency: hash.currency,
    startsMs: Number(hash.starts_ms),
    endsMs: Number(hash.ends_ms),
    rebuy: hash.rebuy === "1",
    position: hash.pos,
    liveReservations: reservations,
    buyers,
  };
}

export type PublicSkuState = "NOT_STARTED" | "OPEN" | "SOLD_OUT" | "ENDED";

export function publicState(sku: CachedSku, nowMs = Date.now()): PublicSkuState {
  if (nowMs < sku.startsMs) return "NOT_STARTED";
  if (nowMs >= sku.endsMs) return "ENDED";
  return sku.available - sku.liveReservations > 0 ? "OPEN" : "SOLD_OUT";
}
