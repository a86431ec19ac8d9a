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
  // Named fields only: the hash also holds one field per buyer.
  const [[, fields], [, reservations]] = (await redis
    .multi()
    .hmget(keys.sku, "available", "price_cents", "currency", "starts_ms", "ends_ms", "rebuy", "pos", "buyers")
    .zcount(keys.reservations, nowMs, "+inf")
    .exec()) as [[null, (string | null)[]], [null, number]];
  const [available, priceCents, currency, startsMs, endsMs, rebuy, position, buyers] = fields;
  if (available === null) return undefined;
  return {
    available: Number(available),
    priceCents: Number(priceCents),
    currency: String(currency),
    startsMs: Number(startsMs),
    endsMs: Number(endsMs),
    rebuy: rebuy === "1",
    position: String(position),
    liveReservations: reservations,
    buyers: Number(buyers ?? 0),
  };
}

export type PublicSkuState = "NOT_STARTED" | "OPEN" | "SOLD_OUT" | "ENDED";

export function publicState(sku: CachedSku, nowMs = Date.now()): PublicSkuState {
  if (nowMs < sku.startsMs) return "NOT_STARTED";
  if (nowMs >= sku.endsMs) return "ENDED";
  return sku.available - sku.liveReservations > 0 ? "OPEN" : "SOLD_OUT";
}
