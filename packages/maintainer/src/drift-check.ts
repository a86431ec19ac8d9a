import type { FlashgateRedis } from "@flashgate/cache";
import type { Logger } from "@flashgate/logger";
import { publishDriftCheck, reconcile } from "@flashgate/sync";
import type { Pool } from "mysql2/promise";
import type { MaintainerMetrics } from "./metrics.ts";

/**
 * The periodic drift check: every live SKU compared with MySQL (repaired when asked), the SKUs still
 * drifted in a gauge an alert watches, each one logged with both views, the verdicts published for the
 * dashboard.
 */
export function createDriftCheck(deps: {
  pool: Pool;
  redis: FlashgateRedis;
  metrics: MaintainerMetrics;
  logger: Logger;
  repair: boolean;
}) {
  const { pool, redis, metrics, logger } = deps;
  return async () => {
    const check = await reconcile(pool, redis, { repair: deps.repair });
    metrics.driftedSkus.set(check.drifted.length - check.repaired);
    metrics.driftLastCheck.set(check.checkedAt / 1000);
    metrics.driftRepairs.inc(check.repaired);
    await publishDriftCheck(redis, check);
    for (const sku of check.drifted) {
      logger.warn(
        { activityId: sku.activityId, skuId: sku.skuId, database: sku.database, cache: sku.cache },
        "drift detected",
      );
    }
  };
}
