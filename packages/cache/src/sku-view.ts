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
  // One script call: a view is what a crowd reloads, and a MULTI costs it four commands.
  const fields = (await redis.fgView(keys.sku, keys.reservations, nowMs)) as (string | number | null)[];
  if (fields.length === 0) return undefined;
  const [available, priceCents, currency, startsMs, endsMs, rebuy, position, buyers, reservations] = fields;
  return {
    available: Number(available),
    priceCents: Number(priceCents),
    currency: String(currency),
    startsMs: Number(startsMs),
    endsMs: Number(endsMs),
    rebuy: rebuy === "1",
    position: String(position),
    liveReservations: Number(reservations),
    buyers: Number(buyers ?? 0),
  };
}

export type PublicSkuState = "NOT_STARTED" | "OPEN" | "SOLD_OUT" | "ENDED";

export function publicState(sku: CachedSku, nowMs = Date.now()): PublicSkuState {
  if (nowMs < sku.startsMs) return "NOT_STARTED";
  if (nowMs >= sku.endsMs) return "ENDED";
  return sku.available - sku.liveReservations > 0 ? "OPEN" : "SOLD_OUT";
}
