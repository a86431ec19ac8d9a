import type { Pool, PoolConnection } from "mysql2/promise";
import { machineBusyMs } from "./env.ts";
import type { Systems } from "./systems.ts";

// What the CDC scenarios (the burst and the steady rates) write, and how they read each part's CPU.

/**
 * One writer's transaction, as a decision writes it: its PENDING orders, and their units taken from its
 * SKUs' stock in one UPDATE (the orders spread evenly over those SKUs).
 */
export async function commitOrders(
  connection: PoolConnection,
  activityId: number,
  orders: { requestId: string; skuId: number; userId: number }[],
  skus: { first: number; count: number },
) {
  const rows = orders.map(
    (o) =>
      `('${o.requestId}', ${activityId}, ${o.skuId}, ${o.userId}, 'PENDING', 1000, 'EUR', NOW(3), NOW(3) + INTERVAL 1 DAY)`,
  );
  await connection.query("START TRANSACTION");
  await connection.query(
    `INSERT INTO sale_order (request_id, activity_id, sku_id, user_id, state, amount_cents, currency, created_at, expires_at) VALUES ${rows.join(",")}`,
  );
  await connection.query(
    "UPDATE sale_stock SET available = available - ? WHERE activity_id = ? AND sku_id BETWEEN ? AND ?",
    [orders.length / skus.count, activityId, skus.first, skus.first + skus.count - 1],
  );
  await connection.query("COMMIT");
}

/** `count` writers side by side, each on a connection of its own, released after. */
export async function withWriters(
  pool: Pool,
  count: number,
  writer: (w: number, connection: PoolConnection) => Promise<void>,
) {
  const connections = await Promise.all(Array.from({ length: count }, () => pool.getConnection()));
  try {
    await Promise.all(connections.map((connection, w) => writer(w, connection)));
  } finally {
    for (const connection of connections) connection.release();
  }
}

/** Each part's CPU time so far (ms): the stack's servers, the maintainers, this process (the writers), the machine. */
export function cpuByPart(systems: Systems, stackCpu: () => Record<string, number>): Record<string, number> {
  const own = process.cpuUsage();
  return {
    ...stackCpu(),
    maintainers: systems.flashgate.maintainersCpuMs(),
    "bench (writers)": (own.user + own.system) / 1000,
    machine: machineBusyMs(),
  };
}

/** CPU µs per event of each part between two readings: the machine's cores allow cores × 1,000,000 / machine. */
export const cpuPerEvent = (before: Record<string, number>, after: Record<string, number>, events: number) =>
  Object.fromEntries(
    Object.keys(after).map((part) => [part, Math.round(((after[part] - before[part]) * 1000) / events)]),
  );
