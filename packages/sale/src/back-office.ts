import type { FlashgateRedis } from "@flashgate/cache";
import {
  type ActivityInput,
  closeOrder,
  restock,
  type SkuInput,
  skuDatabaseView,
  upsertActivity,
  upsertSku,
} from "@flashgate/db";
import { skuVerdicts } from "@flashgate/sync";
import type { Pool } from "mysql2/promise";

/** The back-office: every change is written to MySQL only; Redis follows through CDC. */
export function createBackOffice(deps: { pool: Pool; redis: FlashgateRedis }) {
  const { pool, redis } = deps;
  return {
    saveActivity: (activity: ActivityInput) => upsertActivity(pool, activity),
    saveSku: (sku: SkuInput) => upsertSku(pool, sku),
    restock: (correction: Parameters<typeof restock>[1]) => restock(pool, correction),
    closeOrder: (orderId: string) => closeOrder(pool, orderId),

    /**
     * A SKU as MySQL has it, beside what the cache holds and the drift check's own fenced and settled
     * verdict ("behind" while CDC catches up is not drift). Undefined for an unknown SKU.
     */
    async skuView(activityId: number, skuId: number) {
      const database = await skuDatabaseView(pool, activityId, skuId);
      if (!database) return undefined;
      const [check] = await skuVerdicts(pool, redis, [{ activityId, skuId }]);
      return {
        database,
        cache: check.cache
          ? {
              stock: check.cache.available,
              reservations: check.cache.reservations,
              buyers: check.cache.buyers,
              appliedPosition: check.cache.position,
            }
          : null,
        drift: check.verdict,
      };
    },
  };
}

export type BackOffice = ReturnType<typeof createBackOffice>;
