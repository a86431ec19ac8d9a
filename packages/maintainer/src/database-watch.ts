import { countLostChanges, createPool, readReplicaStatus } from "@flashgate/db";
import type { Logger } from "@flashgate/logger";
import type { Pool } from "mysql2/promise";
import type { MaintainerMetrics } from "./metrics.ts";

/**
 * Reports the database's standing for Prometheus and the dashboard: how far each replica is behind —
 * every node asked directly (a switchover changes which one replicates), the one that does reporting
 * its lag, a node that replicates nothing being the primary — and how many changes failovers have lost
 * (the rows of lost_change: the same figure from every maintainer).
 */
export function createDatabaseWatch(deps: {
  pool: Pool;
  nodeUrls: string[];
  metrics: MaintainerMetrics;
  logger: Logger;
}) {
  const { metrics, logger } = deps;
  const nodes = deps.nodeUrls.map((url) => ({
    name: new URL(url).host,
    pool: createPool(url, { connectionLimit: 1 }),
  }));

  async function check(): Promise<void> {
    metrics.lostChangesRecorded.set(await countLostChanges(deps.pool));
    await Promise.all(
      nodes.map(async ({ name, pool }) => {
        try {
          const status = await readReplicaStatus(pool);
          if (!status) {
            metrics.replicaLag.remove({ node: name });
            metrics.replicaRunning.remove({ node: name });
            return;
          }
          metrics.replicaRunning.set({ node: name }, status.receiving && status.applying ? 1 : 0);
          // Unknown while it does not apply: the alert fires on "not running", not on a made-up lag.
          metrics.replicaLag.set({ node: name }, status.secondsBehind ?? Number.NaN);
        } catch (error) {
          metrics.replicaRunning.set({ node: name }, 0);
          metrics.replicaLag.set({ node: name }, Number.NaN);
          logger.warn({ node: name, err: (error as Error).message }, "database node unreachable");
        }
      }),
    );
  }

  return { check, close: () => Promise.all(nodes.map(({ pool }) => pool.end())) };
}
